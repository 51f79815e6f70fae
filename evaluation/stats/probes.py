"""EiCAP's probe analyses: score margins, turn decomposition, inter-model agreement, significance per subcategory.

A probe is a one-vs-k forced choice with one or more turns; its outcome is right only when every turn is (the
minimum across turns). Plain arrays and mappings in, JSON-ready results out; docs/eicap-analyses.md gives the
definitions.
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from evaluation.stats._common import (
    DEFAULT_CONFIDENCE,
    DEFAULT_FDR,
    DEFAULT_RESAMPLES,
    ArrayLike,
    _binary,
    _Serialisable,
)
from evaluation.stats.bootstrap import paired_bootstrap
from evaluation.stats.multiple_comparisons import benjamini_hochberg
from evaluation.stats.proportions import Proportion, wilson_interval

# The bins of the margin histograms: the same for every model, so that distributions can be laid over each other.
# Margins are differences of mean per-token log-probabilities (nats per token); the outer bins are open-ended.
MARGIN_EDGES = [round(-2.0 + 0.25 * i, 2) for i in range(17)]


def score_margin(means: Mapping[int, float | None], key: int) -> float | None:
    """Return the key's score minus the best distractor's: ``s(key) - max_j s(wrong_j)`` (EiCAP, Appendix G/I).

    ``means`` maps each option's index to its length-normalised log-probability; None when an option is unscored,
    the key is unknown or there is no distractor.
    """
    if key not in means or len(means) < 2 or any(v is None or not math.isfinite(v) for v in means.values()):
        return None
    best_wrong = max(v for option, v in means.items() if option != key)
    return float(means[key] - best_wrong)


@dataclass(frozen=True)
class MarginDistribution(_Serialisable):
    """The margins of one model's probes: summary and counts in ``MARGIN_EDGES`` bins (first and last open)."""

    n: int
    mean: float | None
    median: float | None
    q1: float | None
    q3: float | None
    share_positive: float | None
    counts: list[int]
    edges: list[float]


def margin_distribution(margins: ArrayLike, *, edges: Sequence[float] = MARGIN_EDGES) -> MarginDistribution:
    """Summarise margins: mean, quartiles, share above zero (the key ranked first) and bin counts.

    ``counts[0]`` holds margins below ``edges[0]``, ``counts[i]`` those in ``[edges[i-1], edges[i])``, the last
    those at or above ``edges[-1]``: ``len(edges) + 1`` counts.
    """
    values = np.asarray(margins, dtype=float).ravel()
    if not np.all(np.isfinite(values)):
        raise ValueError("margins must be finite numbers")
    counts = np.bincount(np.searchsorted(np.asarray(edges), values, side="right"), minlength=len(edges) + 1)
    if len(values) == 0:
        return MarginDistribution(0, None, None, None, None, None, counts.tolist(), list(edges))
    q1, median, q3 = (float(v) for v in np.quantile(values, [0.25, 0.5, 0.75]))
    return MarginDistribution(
        len(values), float(values.mean()), median, q1, q3, float(np.mean(values > 0)), counts.tolist(), list(edges)
    )


@dataclass(frozen=True)
class TurnDecomposition(_Serialisable):
    """Two-turn probes: accuracy on each turn, both wrong, the four-way split and the turn 1 - turn 2 gap."""

    n: int
    turn1: Proportion
    turn2: Proportion
    both_wrong: Proportion
    both_right: int
    only_first: int
    only_second: int
    gap: float | None
    gap_low: float | None
    gap_high: float | None
    gap_p: float | None
    undefined_reason: str | None = None


def turn_decomposition(
    first: ArrayLike,
    second: ArrayLike,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> TurnDecomposition:
    """Decompose two-turn probes (``first[i]``, ``second[i]``: turn 1 and turn 2 of probe ``i`` right, 1/0).

    Turn accuracies and both-wrong with Wilson intervals; the gap ``accuracy(turn 1) - accuracy(turn 2)`` with the
    paired bootstrap's percentile interval and two-sided p-value (the turns of a probe are resampled together).
    """
    a, b = _binary(first, "first"), _binary(second, "second")
    if a.shape != b.shape:
        raise ValueError("first and second must hold the same probes")
    n, ra, rb = len(a), a == 1, b == 1
    gap = paired_bootstrap(a, b, n_resamples=n_resamples, seed=seed, confidence=confidence)
    return TurnDecomposition(
        n,
        wilson_interval(int(ra.sum()), n, confidence=confidence),
        wilson_interval(int(rb.sum()), n, confidence=confidence),
        wilson_interval(int(np.sum(~ra & ~rb)), n, confidence=confidence),
        int(np.sum(ra & rb)),
        int(np.sum(ra & ~rb)),
        int(np.sum(~ra & rb)),
        gap.difference,
        gap.low,
        gap.high,
        gap.p_value,
        gap.undefined_reason,
    )


@dataclass(frozen=True)
class AgreementCell(_Serialisable):
    """Two models' outcomes on the probes both answered: how many, on how many they agree, and the fraction."""

    a: str
    b: str
    n: int
    same: int
    agreement: float | None


def outcome_agreement(outcomes: Mapping[str, Mapping[str, bool]]) -> list[AgreementCell]:
    """Return, for every ordered pair of models (itself included), the fraction of shared probes with one outcome.

    ``outcomes[model][probe]`` is whether the model got the probe right; a probe counts for a pair when both
    models answered it. The matrix is symmetric; the diagonal is 1 wherever a model answered anything.
    """
    names = list(outcomes)
    cells = []
    for a in names:
        for b in names:
            shared = outcomes[a].keys() & outcomes[b].keys()
            same = sum(outcomes[a][p] == outcomes[b][p] for p in shared)
            cells.append(AgreementCell(a, b, len(shared), same, same / len(shared) if shared else None))
    return cells


@dataclass(frozen=True)
class GroupDifference(_Serialisable):
    """One group's (subcategory's) paired difference, model minus baseline, with BH over the groups compared."""

    group: str
    n: int
    model: float | None
    baseline: float | None
    difference: float | None
    low: float | None
    high: float | None
    p_value: float | None
    p_adjusted: float | None
    significant: bool
    undefined_reason: str | None = None


@dataclass(frozen=True)
class GroupSignificance(_Serialisable):
    """A model against a baseline per group: the groups, how many differ significantly up and down (Sig./N)."""

    groups: list[GroupDifference]
    n_groups: int
    significant_better: int
    significant_worse: int
    q: float
    n_resamples: int


def significance_by_group(
    model: Mapping[str, float],
    baseline: Mapping[str, float],
    groups: Mapping[str, str],
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    q: float = DEFAULT_FDR,
    confidence: float = DEFAULT_CONFIDENCE,
) -> GroupSignificance:
    """Compare a model with a baseline in each group by the paired bootstrap, with Benjamini-Hochberg over groups.

    ``model[probe]`` and ``baseline[probe]`` are 1/0 outcomes, ``groups[probe]`` each probe's group; a group is
    compared on the probes both answered. EiCAP's Table 2 counts a model's subcategories with a significant
    improvement over the base model (``significant_better`` of ``n_groups``). Groups too small to resample (fewer
    than two shared probes) are listed, with their reason, and left out of the correction.
    """
    by_group: dict[str, list[str]] = {}
    for probe in sorted(model.keys() & baseline.keys()):
        if probe in groups:
            by_group.setdefault(groups[probe], []).append(probe)
    results = {
        group: paired_bootstrap(
            [model[p] for p in probes],
            [baseline[p] for p in probes],
            n_resamples=n_resamples,
            seed=seed,
            confidence=confidence,
        )
        for group, probes in sorted(by_group.items())
    }
    tested = [g for g, r in results.items() if r.p_value is not None]
    fdr = benjamini_hochberg([results[g].p_value for g in tested], q=q)
    adjusted = dict(zip(tested, zip(fdr.adjusted, fdr.rejected, strict=True), strict=True))
    rows = []
    for group, r in results.items():
        p_adjusted, rejected = adjusted.get(group, (None, False))
        rows.append(
            GroupDifference(
                group,
                r.n_items,
                r.mean_a,
                r.mean_b,
                r.difference,
                r.low,
                r.high,
                r.p_value,
                p_adjusted,
                bool(rejected),
                r.undefined_reason,
            )  # fmt: skip
        )
    better = sum(1 for r in rows if r.significant and (r.difference or 0) > 0)
    worse = sum(1 for r in rows if r.significant and (r.difference or 0) < 0)
    return GroupSignificance(rows, len(rows), better, worse, q, n_resamples)
