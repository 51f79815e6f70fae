"""TrueSkill and Bradley-Terry ratings from pairwise verdicts: plain values in, JSON-ready results out, no ORM.

A verdict is ``(model_a, model_b, margin)``: a positive margin ``k`` means A won by ``k`` (``+`` to ``+++++``),
a negative one that B won by ``|k|``, zero a draw. Each decisive verdict is turned into ``f(|k|)`` sequential
TrueSkill win updates (the margin mapping), a draw into one drawn update. The two-player update is the exact
closed form of the TrueSkill factor graph for one-versus-one games (Herbrich, Minka and Graepel 2007), checked
against ``trueskill.rate_1vs1`` in the tests; it runs some three hundred times faster than the library's general
factor-graph solver, which is what makes 100,000 verdicts affordable.

TrueSkill is order dependent. Results here depend only on the multiset of verdicts, never on the order in which
they arrived nor on the models' names: each of ``n_passes`` passes rates them in a seeded random order derived
from their content (models told apart by their records, not their labels), and the passes are averaged (``mu``
is the mean of the pass means; ``sigma`` is the standard deviation of the equal-weight mixture of the pass
posteriors, which adds the spread caused by order to the mean posterior variance). See docs/statistics.md for
every formula and default.

The code lives in submodules by concept; import the names from ``evaluation.ratings``:

- ``update``: the TrueSkill environment and the exact one-versus-one update;
- ``margins``: the margin mapping ``f(|k|)``;
- ``display``: the Elo-like display scale with anchors;
- ``verdicts``: rating computation from verdicts (label-free content order, seeded passes, averaging);
- ``pairing``: round-robin, adaptive pairing (pairs likely misordered, chosen jointly across strata) and "auto"
  (round-robin passes while the models are few, adaptive otherwise);
- ``agreement``: Kendall's tau-b between rankings, and Spearman, Kendall and Pearson-on-ranks correlations;
- ``bradley_terry``: Bradley-Terry maximum-likelihood strengths (ties half a win each way) with bootstrap
  intervals, rank intervals and rank stability;
- ``simulation`` (import it as a module; not re-exported): simulated tournaments with a judge fitted to
  EQ-Bench 3, for measuring pairing (``scripts/bench_pairing.py``);
- ``eqbench3``: EQ-Bench 3's settings, its judge calls turned into verdicts, and its ratings in our
  order-independent mode or replayed as its solver did at the data's commit. The file reader is
  ``evaluation.eqbench``, outside this package.
"""

from evaluation.ratings.agreement import (
    RankAgreement,
    RankCorrelations,
    competition_ranks,
    rank_agreement,
    rank_correlations,
)
from evaluation.ratings.bradley_terry import (
    DEFAULT_ELO_CENTER,
    DEFAULT_RESAMPLES,
    ELO_POINTS_PER_LOGIT,
    BradleyTerryRating,
    BradleyTerryRatings,
    bradley_terry,
    fit_strengths,
    mle_missing_reason,
    win_matrix,
)
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
    EQBENCH3_CANONICAL_RANK_WINDOW,
    EQBENCH3_DATA_COMMIT,
    EQBENCH3_ENVIRONMENT,
    EQBENCH3_MAX_POSSIBLE_DIFF,
    EQBENCH3_MODES,
    EQBENCH3_PASSES,
    EQBENCH3_RANK_WINDOW,
    EqBenchJudgement,
    EqBenchMode,
    eqbench3_blend,
    eqbench3_margin,
    eqbench3_rate,
    eqbench3_verdicts,
)
from evaluation.ratings.margins import (
    DEFAULT_MARGIN_MAPPING,
    DEFAULT_MAX_MARGIN,
    MARGIN_MAPPINGS,
    MarginMapping,
    margin_repeats,
)
from evaluation.ratings.pairing import (
    COVER_ROUNDS,
    EVEN_MATCH_SHRINK,
    PairChoice,
    pairs_adaptive,
    pairs_adaptive_batch,
    pairs_auto_batch,
    pairs_round_robin,
)
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
    "COVER_ROUNDS",
    "EVEN_MATCH_SHRINK",
    "PairChoice",
    "pairs_adaptive",
    "pairs_adaptive_batch",
    "pairs_auto_batch",
    "pairs_round_robin",
    # agreement
    "RankAgreement",
    "RankCorrelations",
    "competition_ranks",
    "rank_agreement",
    "rank_correlations",
    # bradley_terry
    "DEFAULT_ELO_CENTER",
    "DEFAULT_RESAMPLES",
    "ELO_POINTS_PER_LOGIT",
    "BradleyTerryRating",
    "BradleyTerryRatings",
    "bradley_terry",
    "fit_strengths",
    "mle_missing_reason",
    "win_matrix",
    # eqbench3
    "EQBENCH3_ANCHORS",
    "EQBENCH3_BIN_SIZE",
    "EQBENCH3_BIN_SIZE_FOR_SIGMA",
    "EQBENCH3_CANONICAL_RANK_WINDOW",
    "EQBENCH3_DATA_COMMIT",
    "EQBENCH3_ENVIRONMENT",
    "EQBENCH3_MAX_POSSIBLE_DIFF",
    "EQBENCH3_MODES",
    "EQBENCH3_PASSES",
    "EQBENCH3_RANK_WINDOW",
    "EqBenchJudgement",
    "EqBenchMode",
    "eqbench3_blend",
    "eqbench3_margin",
    "eqbench3_rate",
    "eqbench3_verdicts",
]
