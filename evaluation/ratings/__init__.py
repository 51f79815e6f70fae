"""TrueSkill ratings from pairwise verdicts with margins: plain values in, JSON-ready results out, no ORM.

A verdict is ``(model_a, model_b, margin)``: a positive margin ``k`` means A won by ``k`` (``+`` to ``+++++``),
a negative one that B won by ``|k|``, zero a draw. Each decisive verdict is turned into ``f(|k|)`` sequential
TrueSkill win updates (the margin mapping), a draw into one drawn update. The two-player update is the exact
closed form of the TrueSkill factor graph for one-versus-one games (Herbrich, Minka and Graepel 2007), checked
against ``trueskill.rate_1vs1`` in the tests; it runs some three hundred times faster than the library's general
factor-graph solver, which is what makes 100,000 verdicts affordable.

TrueSkill is order dependent. Results here depend only on the multiset of verdicts, never on the order in which
they arrived: verdicts are first put in a canonical order, then rated in ``n_passes`` passes, each over a seeded
random permutation of that order, and the passes are averaged (``mu`` is the mean of the pass means; ``sigma``
is the standard deviation of the equal-weight mixture of the pass posteriors, which adds the spread caused by
order to the mean posterior variance). See docs/statistics.md for every formula and default.

The code lives in submodules by concept; import the names from ``evaluation.ratings``:

- ``update``: the TrueSkill environment and the exact one-versus-one update;
- ``margins``: the margin mapping ``f(|k|)``;
- ``display``: the Elo-like display scale with anchors;
- ``verdicts``: rating computation from verdicts (canonical order, seeded passes, averaging);
- ``pairing``: round-robin and adaptive pairing;
- ``agreement``: Kendall's tau-b between rankings;
- ``eqbench3``: EQ-Bench 3's settings and its judge calls turned into verdicts. The file reader is
  ``evaluation.eqbench``, outside this package.
"""

from evaluation.ratings.agreement import RankAgreement, rank_agreement
from evaluation.ratings.display import (
    DEFAULT_DISPLAY_CENTER,
    LOGISTIC_PROBIT_SCALE,
    DisplayScale,
    display_scale,
    elo_points_per_mu,
)
from evaluation.ratings.eqbench3 import (
    EQBENCH3_ANCHORS,
    EQBENCH3_BIN_SIZE,
    EQBENCH3_BIN_SIZE_FOR_SIGMA,
    EQBENCH3_ENVIRONMENT,
    EQBENCH3_MAX_POSSIBLE_DIFF,
    EQBENCH3_RANK_WINDOW,
    EqBenchJudgement,
    eqbench3_blend,
    eqbench3_margin,
    eqbench3_verdicts,
)
from evaluation.ratings.margins import (
    DEFAULT_MARGIN_MAPPING,
    DEFAULT_MAX_MARGIN,
    MARGIN_MAPPINGS,
    MarginMapping,
    margin_repeats,
)
from evaluation.ratings.pairing import PairChoice, pairs_adaptive, pairs_round_robin
from evaluation.ratings.update import DEFAULT_ENVIRONMENT, TrueSkillEnvironment, rate_1vs1
from evaluation.ratings.verdicts import (
    DEFAULT_CONSERVATIVE_K,
    DEFAULT_PASSES,
    ModelRating,
    Ratings,
    Verdict,
    pass_orders,
    rate_verdicts,
)

__all__ = [
    # update
    "DEFAULT_ENVIRONMENT",
    "TrueSkillEnvironment",
    "rate_1vs1",
    # margins
    "DEFAULT_MARGIN_MAPPING",
    "DEFAULT_MAX_MARGIN",
    "MARGIN_MAPPINGS",
    "MarginMapping",
    "margin_repeats",
    # display
    "DEFAULT_DISPLAY_CENTER",
    "LOGISTIC_PROBIT_SCALE",
    "DisplayScale",
    "display_scale",
    "elo_points_per_mu",
    # verdicts
    "DEFAULT_CONSERVATIVE_K",
    "DEFAULT_PASSES",
    "ModelRating",
    "Ratings",
    "Verdict",
    "pass_orders",
    "rate_verdicts",
    # pairing
    "PairChoice",
    "pairs_adaptive",
    "pairs_round_robin",
    # agreement
    "RankAgreement",
    "rank_agreement",
    # eqbench3
    "EQBENCH3_ANCHORS",
    "EQBENCH3_BIN_SIZE",
    "EQBENCH3_BIN_SIZE_FOR_SIGMA",
    "EQBENCH3_ENVIRONMENT",
    "EQBENCH3_MAX_POSSIBLE_DIFF",
    "EQBENCH3_RANK_WINDOW",
    "EqBenchJudgement",
    "eqbench3_blend",
    "eqbench3_margin",
    "eqbench3_verdicts",
]
