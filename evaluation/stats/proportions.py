"""Proportions: Wilson score intervals, accuracy per group (micro and macro averages) and discriminability."""

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from evaluation.stats._common import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    ArrayLike,
    _binary,
    _check_confidence,
    _Serialisable,
)


@dataclass(frozen=True)
class Proportion(_Serialisable):
    """A proportion ``successes / n`` with its Wilson score interval; None with a reason when ``n`` is 0."""

    successes: int
    n: int
    value: float | None
    low: float | None
    high: float | None
    confidence: float
    undefined_reason: str | None = None


def wilson_interval(successes: int, n: int, *, confidence: float = DEFAULT_CONFIDENCE) -> Proportion:
    """Return the proportion with its Wilson score interval (Wilson 1927; no continuity correction).

    ``(p + z²/2n ± z sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)`` with ``z`` the ``(1 + confidence) / 2`` normal
    quantile; the same as ``scipy.stats.binomtest(k, n).proportion_ci(method="wilson")``.
    """
    _check_confidence(confidence)
    if n < 0 or not 0 <= successes <= max(n, 0):
        raise ValueError(f"need 0 <= successes <= n, got {successes} of {n}")
    if n == 0:
        return Proportion(successes, n, None, None, None, confidence, "no observations")
    z = float(stats.norm.ppf((1 + confidence) / 2))
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z / denominator * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return Proportion(successes, n, p, max(0.0, centre - half), min(1.0, centre + half), confidence)


@dataclass(frozen=True)
class MacroAverage(_Serialisable):
    """The unweighted mean of group accuracies with a stratified percentile bootstrap interval."""

    value: float | None
    low: float | None
    high: float | None
    n_groups: int
    confidence: float
    n_resamples: int
    seed: int
    undefined_reason: str | None = None


@dataclass(frozen=True)
class GroupAccuracy(_Serialisable):
    """Accuracy per group with Wilson intervals, the micro average (pooled items) and the macro average."""

    groups: dict[Hashable, Proportion]
    micro: Proportion
    macro: MacroAverage


def accuracy_by_group(
    groups: Sequence[Hashable],
    correct: ArrayLike,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> GroupAccuracy:
    """Return accuracy per group, micro average (all items pooled) and macro average (mean of group accuracies).

    ``correct[i]`` is 1 when item ``i`` (of group ``groups[i]``) was answered correctly; an unparseable answer
    must be passed as 0. The macro interval resamples items with replacement within each group: the resampled
    successes of group g are then exactly Binomial(n_g, p_g), which is what is drawn.
    """
    _check_confidence(confidence)
    values = _binary(correct, "correct")
    if len(groups) != len(values):
        raise ValueError(f"groups has {len(groups)} entries but correct has {len(values)}")
    keys = list(dict.fromkeys(groups))
    index = {key: i for i, key in enumerate(keys)}
    codes = np.fromiter((index[key] for key in groups), dtype=np.int64, count=len(groups))
    totals = np.bincount(codes, minlength=len(keys))
    successes = np.bincount(codes, weights=values, minlength=len(keys)).round().astype(np.int64)
    per_group = {
        key: wilson_interval(int(successes[i]), int(totals[i]), confidence=confidence) for i, key in enumerate(keys)
    }
    micro = wilson_interval(int(successes.sum()), int(totals.sum()), confidence=confidence)
    if not keys:
        macro = MacroAverage(None, None, None, 0, confidence, n_resamples, seed, "no groups")
    else:
        rates = successes / totals
        rng = np.random.default_rng(seed)
        resampled = rng.binomial(totals, rates, size=(n_resamples, len(keys))) / totals
        low, high = np.quantile(resampled.mean(axis=1), [(1 - confidence) / 2, (1 + confidence) / 2])
        macro = MacroAverage(float(rates.mean()), float(low), float(high), len(keys), confidence, n_resamples, seed)
    return GroupAccuracy(per_group, micro, macro)


@dataclass(frozen=True)
class ProportionDifference(_Serialisable):
    """``a - b`` for two independent proportions with Newcombe's hybrid score interval; None without data."""

    a: Proportion
    b: Proportion
    difference: float | None
    low: float | None
    high: float | None
    confidence: float


def proportion_difference(
    successes_a: int, n_a: int, successes_b: int, n_b: int, *, confidence: float = DEFAULT_CONFIDENCE
) -> ProportionDifference:
    """Return ``p_a - p_b`` of two independent samples with Newcombe's interval (1998, method 10).

    From the Wilson intervals ``[l, u]`` of each: ``d - sqrt((p_a - l_a)² + (u_b - p_b)²)`` to
    ``d + sqrt((u_a - p_a)² + (p_b - l_b)²)``. Used where the items differ (a held-out probe set beside the main one),
    so no pairing is possible.
    """
    a = wilson_interval(successes_a, n_a, confidence=confidence)
    b = wilson_interval(successes_b, n_b, confidence=confidence)
    if a.value is None or b.value is None:
        return ProportionDifference(a, b, None, None, None, confidence)
    d = a.value - b.value
    low = d - math.sqrt((a.value - a.low) ** 2 + (b.high - b.value) ** 2)
    high = d + math.sqrt((a.high - a.value) ** 2 + (b.value - b.low) ** 2)
    return ProportionDifference(a, b, d, max(-1.0, low), min(1.0, high), confidence)


def discriminability(accuracy: float, chance: float) -> float:
    """Return ``(accuracy - chance) / (1 - chance)``: 0 at chance level, 1 when perfect, negative below chance."""
    if not 0 <= chance < 1:
        raise ValueError("chance must be in [0, 1)")
    return (accuracy - chance) / (1 - chance)
