"""EQ-Bench 3's rating settings, its conversion of judge calls into verdicts, and its ratings (Paech 2025).

Pure arithmetic on ``EqBenchJudgement`` records: summed plus signs per matchup, the margin blend and the bins of
pseudo-wins, as EQ-Bench 3's solver does, then TrueSkill ratings in one of two modes (``eqbench3_rate``): our
order-independent averaging of shuffled passes, or a faithful replay of the solve that produced the published
ratings. Reading its ``pairwise_comparisons_compact.jsonl`` from disk is ``evaluation.eqbench.eqbench3_load``,
outside this package.
"""

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from evaluation.ratings.display import display_scale
from evaluation.ratings.update import TrueSkillEnvironment
from evaluation.ratings.verdicts import (
    DEFAULT_CONSERVATIVE_K,
    ModelRating,
    Ratings,
    Verdict,
    _rate_pass,
    rate_verdicts,
)

# EQ-Bench 3 (Paech 2025): mu 1200, sigma 350/3, beta 350/6, no drift, no draws.
EQBENCH3_ENVIRONMENT = TrueSkillEnvironment(mu=1200.0, sigma=350.0 / 3.0, beta=350.0 / 6.0, tau=0.0, draw_probability=0)
EQBENCH3_ANCHORS: dict[str, float] = {"o3": 1500.0, "meta-llama/llama-3.2-1b-instruct": 200.0}
EQBENCH3_MAX_POSSIBLE_DIFF = 30
EQBENCH3_BIN_SIZE = 20
EQBENCH3_BIN_SIZE_FOR_SIGMA = 3
EQBENCH3_RANK_WINDOW = 16
# merge_results_to_canonical.py at the data's commit re-solves the canonical ratings within 8 ladder places.
EQBENCH3_CANONICAL_RANK_WINDOW = 8
EQBENCH3_PASSES = 20
# The commit of github.com/EQ-bench/eqbench3 whose data ../shared/data/external/eqbench3 holds.
EQBENCH3_DATA_COMMIT = "8c3a125"
EqBenchMode = Literal["order_independent", "faithful"]
EQBENCH3_MODES: tuple[EqBenchMode, ...] = ("order_independent", "faithful")


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


def eqbench3_rate(
    judgements: Iterable[EqBenchJudgement],
    *,
    mode: EqBenchMode = "order_independent",
    ladder: Sequence[str] | None = None,
    n_passes: int = EQBENCH3_PASSES,
    seed: int = 0,
) -> Ratings:
    """Rate EQ-Bench 3 judge calls with its TrueSkill settings and anchors (o3 1500, llama-3.2-1b 200).

    ``order_independent`` (the default, as for our own runs): bins of 20 pseudo-wins, pairs more than 16 places
    apart on ``ladder`` left out when a ladder is given, and ``n_passes`` seeded shuffled passes averaged by
    ``rate_verdicts``, so the result depends only on the set of judge calls.

    ``faithful``: EQ-Bench 3's solver as it was at the data's commit (``EQBENCH3_DATA_COMMIT``): one pseudo-game
    per matchup (bin size 1; a draw is one drawn game), every model starting at the prior, and one sequential
    pass over the matchups in the order in which each one's first judge call comes in ``judgements`` (file
    order). Without ``ladder`` this is the final solve of a benchmark run (``core/elo.py``, no rank window);
    with the ladder the canonical ratings had before they were re-solved, it is the re-solve that wrote the
    published ratings (``merge_results_to_canonical.py``: pairs more than 8 places apart left out). The result
    depends on the order of ``judgements``; ``n_passes`` and ``seed`` are not used. ``sigma`` is the pass's own,
    which is what EQ-Bench publishes.
    """
    if mode == "order_independent":
        verdicts = eqbench3_verdicts(
            judgements, ladder=ladder, rank_window=EQBENCH3_RANK_WINDOW if ladder is not None else None
        )
        return rate_verdicts(
            verdicts,
            environment=EQBENCH3_ENVIRONMENT,
            margin_mapping="linear",
            max_margin=EQBENCH3_BIN_SIZE,
            n_passes=n_passes,
            seed=seed,
            anchors=EQBENCH3_ANCHORS,
        )
    if mode != "faithful":
        raise ValueError(f"unknown EQ-Bench 3 mode {mode!r}; expected one of {', '.join(EQBENCH3_MODES)}")
    window = EQBENCH3_CANONICAL_RANK_WINDOW if ladder is not None else None
    return _rate_in_file_order(eqbench3_verdicts(judgements, bin_size=1, ladder=ladder, rank_window=window))


def _rate_in_file_order(verdicts: list[Verdict]) -> Ratings:
    """Rate ``verdicts`` (margins -1, 0, +1) in one TrueSkill pass in the order given, as EQ-Bench's solver did."""
    environment = EQBENCH3_ENVIRONMENT
    models = sorted({name for verdict in verdicts for name in verdict[:2]})
    position = {name: i for i, name in enumerate(models)}
    steps = []
    counts = [0] * len(models)
    for model_a, model_b, margin in verdicts:
        a, b = position[model_a], position[model_b]
        counts[a] += 1
        counts[b] += 1
        winner, loser = (a, b) if margin >= 0 else (b, a)
        steps.append((winner, loser, 1, 0.0, margin == 0))
    mu, var = _rate_pass(steps, list(range(len(steps))), len(models), environment)
    scale = display_scale(dict(zip(models, mu, strict=True)), anchors=EQBENCH3_ANCHORS, environment=environment)
    ratings = []
    for i, model in enumerate(models):
        sigma = math.sqrt(var[i])
        low, high = scale.apply(mu[i] - 1.96 * sigma), scale.apply(mu[i] + 1.96 * sigma)
        if low is not None and high is not None and low > high:
            low, high = high, low
        ratings.append(
            ModelRating(
                model=model,
                mu=mu[i],
                sigma=sigma,
                conservative=mu[i] - DEFAULT_CONSERVATIVE_K * sigma,
                display=scale.apply(mu[i]),
                display_low=low,
                display_high=high,
                n_verdicts=counts[i],
                order_sd=0.0,
                pass_sigma=sigma,
            )
        )
    ratings.sort(key=lambda rating: (-rating.mu, rating.model))
    return Ratings(
        ratings=tuple(ratings),
        environment=environment,
        margin_mapping="linear",
        n_passes=1,
        seed=0,
        n_verdicts=len(steps),
        n_updates=float(len(steps)),
        conservative_k=DEFAULT_CONSERVATIVE_K,
        display_scale=scale,
    )
