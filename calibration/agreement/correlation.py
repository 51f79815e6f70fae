"""Compute percent agreement and Spearman's rank correlation of two raters on the units both rated."""

import numpy as np
from scipy import stats

from calibration.agreement.bootstrap import _check_bootstrap, _estimate, _ratio_statistic, _Resamples, _Statistic
from calibration.agreement.core import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    NO_SHARED_UNITS,
    ArrayLike,
    BoolArray,
    Estimate,
    FloatArray,
    UndefinedStatistic,
)
from calibration.agreement.tables import _same_length, _vector


def _percent_statistic(first: FloatArray, second: FloatArray, exclude_ties: bool, name: str) -> _Statistic:
    both = ~np.isnan(first) & ~np.isnan(second)
    usable = both & (first != 0) & (second != 0) if exclude_ties else both
    reason = NO_SHARED_UNITS
    if both.any():
        reason = "every unit rated by both raters has a tie on at least one side"
    return _ratio_statistic(name, usable & (first == second), usable, reason)


def percent_agreement(
    first: ArrayLike,
    second: ArrayLike,
    *,
    exclude_ties: bool = False,
    seed: int = 0,
    n_boot: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Estimate:
    """Compute the share of units both raters rated on which their values are equal.

    Pass winners (``numpy.sign`` of signed scores) to compare winners. With ``exclude_ties`` units where either
    rater gave a tie (0) are left out, as in the MT-Bench judge-agreement "without tie" figures.
    """
    _check_bootstrap(n_boot, confidence)
    a, b = _vector(first, "first"), _vector(second, "second")
    _same_length(first=a, second=b)
    name = "percent_agreement_without_ties" if exclude_ties else "percent_agreement"
    return _estimate(
        _percent_statistic(a, b, exclude_ties, name), _Resamples(len(a), seed=seed, n_boot=n_boot), confidence
    )


def _weighted_ranks(values: FloatArray, weights: FloatArray) -> tuple[FloatArray, BoolArray]:
    distinct, codes = np.unique(values, return_inverse=True)
    indicator = np.zeros((values.size, distinct.size))
    indicator[np.arange(values.size), codes] = 1
    counts = weights @ indicator
    ranks = np.cumsum(counts, axis=1) - counts + (counts + 1) / 2
    return ranks[:, codes], (counts > 0).sum(axis=1) >= 2


def _spearman_batch(x: FloatArray, y: FloatArray, weights: FloatArray) -> FloatArray:
    x_ranks, x_varies = _weighted_ranks(x, weights)
    y_ranks, y_varies = _weighted_ranks(y, weights)
    rho = np.full(weights.shape[0], np.nan)
    defined = x_varies & y_varies
    w, xr, yr = weights[defined], x_ranks[defined], y_ranks[defined]
    total = w.sum(axis=1, keepdims=True)
    dx = xr - (w * xr).sum(axis=1, keepdims=True) / total
    dy = yr - (w * yr).sum(axis=1, keepdims=True) / total
    rho[defined] = (w * dx * dy).sum(axis=1) / np.sqrt((w * dx * dx).sum(axis=1) * (w * dy * dy).sum(axis=1))
    return rho


def _spearman_statistic(
    first: FloatArray, second: FloatArray, name: str, names: tuple[str, str] = ("the first rater", "the second rater")
) -> _Statistic:
    both = ~np.isnan(first) & ~np.isnan(second)
    x, y = first[both], second[both]

    def point() -> float:
        if both.sum() < 2:
            raise UndefinedStatistic(NO_SHARED_UNITS if not both.any() else "only one unit was rated by both raters")
        for values, who in ((x, names[0]), (y, names[1])):
            if np.unique(values).size < 2:
                raise UndefinedStatistic(
                    f"{who} gave the same score ({values[0]:g}) to every shared unit: correlation is undefined"
                )
        return float(stats.spearmanr(x, y).statistic)

    return _Statistic(name, both, point, lambda resamples: _spearman_batch(x, y, resamples.weights[:, both]))


def spearman(
    first: ArrayLike,
    second: ArrayLike,
    *,
    seed: int = 0,
    n_boot: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Estimate:
    """Compute Spearman's rank correlation of two raters' scores on the units both rated (ties get mean ranks)."""
    _check_bootstrap(n_boot, confidence)
    a, b = _vector(first, "first"), _vector(second, "second")
    _same_length(first=a, second=b)
    return _estimate(_spearman_statistic(a, b, "spearman"), _Resamples(len(a), seed=seed, n_boot=n_boot), confidence)
