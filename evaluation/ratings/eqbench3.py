"""EQ-Bench 3's rating settings and its conversion of judge calls into verdicts (Paech 2025).

Pure arithmetic on ``EqBenchJudgement`` records: summed plus signs per matchup, the margin blend and the bins of
pseudo-wins, as EQ-Bench 3's solver does. Reading its ``pairwise_comparisons_compact.jsonl`` from disk is
``evaluation.eqbench.eqbench3_load``, outside this package.
"""

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from evaluation.ratings.update import TrueSkillEnvironment
from evaluation.ratings.verdicts import Verdict

# EQ-Bench 3 (Paech 2025): mu 1200, sigma 350/3, beta 350/6, no drift, no draws.
EQBENCH3_ENVIRONMENT = TrueSkillEnvironment(mu=1200.0, sigma=350.0 / 3.0, beta=350.0 / 6.0, tau=0.0, draw_probability=0)
EQBENCH3_ANCHORS: dict[str, float] = {"o3": 1500.0, "meta-llama/llama-3.2-1b-instruct": 200.0}
EQBENCH3_MAX_POSSIBLE_DIFF = 30
EQBENCH3_BIN_SIZE = 20
EQBENCH3_BIN_SIZE_FOR_SIGMA = 3
EQBENCH3_RANK_WINDOW = 16


@dataclass(frozen=True)
class EqBenchJudgement:
    """One EQ-Bench 3 judge call: which model was shown first and each side's total of ``+`` signs."""

    scenario_id: str
    iteration: str
    test_model: str
    neighbor_model: str
    test_shown_first: bool
    plus_for_test: int
    plus_for_other: int


def eqbench3_blend(x: float) -> float:
    """Return EQ-Bench 3's ``custom_blend`` of a normalised plus difference ``x`` in [0, 1].

    A linear slope of 5 blended by a smoothstep over [0, 0.11] into ``(1 - exp(-3 x^0.75)) / (1 - exp(-3))``.
    """
    x = min(max(x, 0.0), 1.0)
    if x == 0.0:
        return 0.0
    saturating = (1.0 - math.exp(-3.0 * x**0.75)) / (1.0 - math.exp(-3.0))
    if x >= 0.11:
        return saturating
    t = x / 0.11
    blend = t * t * (3.0 - 2.0 * t)
    return (1.0 - blend) * 5.0 * x + blend * saturating


def eqbench3_margin(plus_first: int, plus_second: int, *, bin_size: int = EQBENCH3_BIN_SIZE) -> int:
    """Return EQ-Bench 3's signed pseudo-win count for one logical matchup (both orders' plus counts summed).

    ``fraction = 0.5 ± blend(min(|diff| / 30, 1)) / 2`` and ``wins = clamp(ceil(|fraction - 0.5| / (0.5 /
    bin_size)), 1, bin_size)`` (``bin_fraction``); positive when the first model has more plus signs, 0 for a tie.
    """
    diff = plus_first - plus_second
    if diff == 0:
        return 0
    # The arithmetic follows compute_fraction_for_test and bin_fraction step by step, so rounding at the bin
    # edges matches EQ-Bench's own.
    fraction = min(1.0, eqbench3_blend(min(abs(diff) / EQBENCH3_MAX_POSSIBLE_DIFF, 1.0)) / 2.0 + 0.5)
    wins = max(1, min(bin_size, math.ceil((fraction - 0.5) / (0.5 / bin_size))))
    return wins if diff > 0 else -wins


def eqbench3_verdicts(
    judgements: Iterable[EqBenchJudgement],
    *,
    bin_size: int = EQBENCH3_BIN_SIZE,
    ladder: Sequence[str] | None = None,
    rank_window: int | None = None,
) -> list[Verdict]:
    """Turn EQ-Bench 3 judge calls into verdicts ``(model_a, model_b, ±pseudo-wins)`` as its solver does.

    Calls are grouped by (model pair, scenario, iteration); each model's plus signs are summed over the group
    (normally the two presentation orders) and ``eqbench3_margin`` gives the signed count of pseudo-wins
    (``model_a`` < ``model_b`` alphabetically). With ``ladder`` (models worst to best or best to worst) and
    ``rank_window``, pairs more than ``rank_window`` places apart are dropped, as EQ-Bench's final solve does.
    """
    groups: dict[tuple[str, str, str, str], list[int]] = {}
    for judgement in judgements:
        first, second = sorted((judgement.test_model, judgement.neighbor_model))
        totals = groups.setdefault((first, second, judgement.scenario_id, judgement.iteration), [0, 0])
        if judgement.test_model == first:
            totals[0] += judgement.plus_for_test
            totals[1] += judgement.plus_for_other
        else:
            totals[0] += judgement.plus_for_other
            totals[1] += judgement.plus_for_test
    position = {name: i for i, name in enumerate(ladder or ())}
    verdicts = []
    for (first, second, _, _), (plus_first, plus_second) in groups.items():
        if rank_window is not None:
            if first not in position or second not in position:
                raise ValueError(f"the ladder lacks {first if first not in position else second!r}")
            if abs(position[first] - position[second]) > rank_window:
                continue
        verdicts.append(Verdict(first, second, eqbench3_margin(plus_first, plus_second, bin_size=bin_size)))
    return verdicts
