"""Paired bootstrap: resampled column sums, mean differences between models with percentile intervals and
two-sided p-values, and the all-pairs table with Benjamini-Hochberg FDR."""

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from evaluation.stats._common import (
    DEFAULT_CONFIDENCE,
    DEFAULT_FDR,
    DEFAULT_RESAMPLES,
    ArrayLike,
    _check_confidence,
    _Serialisable,
)
from evaluation.stats.multiple_comparisons import benjamini_hochberg

# Resampled index blocks are drawn this many cells at a time, to bound memory for large item sets.
_BLOCK_CELLS = 2_000_000


def bootstrap_sums(values: ArrayLike, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> np.ndarray:
    """Return the column sums of ``values`` (items x columns) in each bootstrap resample of the items.

    Resample ``b`` draws ``n`` item indices with replacement from ``numpy.random.default_rng(seed)``, in blocks
    of whole resamples; the sums are ``counts @ values`` with ``counts[b, i]`` the times item ``i`` was drawn.
    Every column sees the same resamples, which is what makes a difference of columns a paired bootstrap.
    """
    matrix = np.asarray(values, dtype=float)
    if matrix.ndim == 1:
        matrix = matrix[:, None]
    n = matrix.shape[0]
    if n == 0:
        raise ValueError("cannot resample zero items")
    rng = np.random.default_rng(seed)
    rows_per_block = max(1, _BLOCK_CELLS // n)
    sums = np.empty((n_resamples, matrix.shape[1]))
    for start in range(0, n_resamples, rows_per_block):
        rows = min(rows_per_block, n_resamples - start)
        draws = rng.integers(0, n, size=(rows, n))
        flat = (draws + (np.arange(rows) * n)[:, None]).ravel()
        counts = np.bincount(flat, minlength=rows * n).reshape(rows, n)
        sums[start : start + rows] = counts @ matrix
    return sums


@dataclass(frozen=True)
class PairedDifference(_Serialisable):
    """Mean difference A - B over the same items with percentile interval and two-sided bootstrap p-value."""

    model_a: str
    model_b: str
    n_items: int
    n_resamples: int
    confidence: float
    seed: int
    mean_a: float | None = None
    mean_b: float | None = None
    difference: float | None = None
    low: float | None = None
    high: float | None = None
    p_value: float | None = None
    p_adjusted: float | None = None
    significant: bool | None = None
    undefined_reason: str | None = None


TOO_FEW_ITEMS = "the paired bootstrap needs at least two items"


def _difference_from_sums(
    observed: float, resampled: np.ndarray, n: int, confidence: float
) -> tuple[float, float, float, float]:
    # Shifted-null p-value (Efron & Tibshirani 1993, §16.4): how often a resampled difference lies at least as
    # far from the observed one as the observed one lies from zero; +1 in numerator and denominator
    # (Davison & Hinkley 1997, eq. 4.11) so that p is never 0.
    tolerance = 1e-9 * max(1.0, abs(observed))
    extreme = np.count_nonzero(np.abs(resampled - observed) >= abs(observed) - tolerance)
    p_value = (1 + extreme) / (1 + len(resampled))
    low, high = np.quantile(resampled / n, [(1 - confidence) / 2, (1 + confidence) / 2])
    return observed / n, float(low), float(high), float(min(1.0, p_value))


def paired_bootstrap(
    scores_a: ArrayLike,
    scores_b: ArrayLike,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
    model_a: str = "A",
    model_b: str = "B",
) -> PairedDifference:
    """Compare two models on the same items by the paired bootstrap of the mean difference A - B.

    ``scores_a[i]`` and ``scores_b[i]`` are the two models' scores on item ``i`` (1/0 for accuracy). The
    interval is the percentile interval of the resampled differences; the p-value is two-sided (see
    ``_difference_from_sums``). Items are resampled as in ``bootstrap_sums``; with the same seed and items,
    ``paired_bootstrap_all`` gives identical numbers for each pair.
    """
    _check_confidence(confidence)
    a = np.asarray(scores_a, dtype=float)
    b = np.asarray(scores_b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError("scores_a and scores_b must be one-dimensional and of equal length (the same items)")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("scores must be finite numbers")
    n = len(a)
    if n < 2:
        return PairedDifference(model_a, model_b, n, n_resamples, confidence, seed, undefined_reason=TOO_FEW_ITEMS)
    resampled = bootstrap_sums(np.column_stack([a, b]), n_resamples=n_resamples, seed=seed)
    difference, low, high, p_value = _difference_from_sums(
        float(a.sum() - b.sum()), resampled[:, 0] - resampled[:, 1], n, confidence
    )
    return PairedDifference(
        model_a, model_b, n, n_resamples, confidence, seed, float(a.mean()), float(b.mean()), difference, low, high,
        p_value,
    )  # fmt: skip


def paired_bootstrap_all(
    scores: Mapping[str, ArrayLike],
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
    q: float = DEFAULT_FDR,
) -> list[PairedDifference]:
    """Compare every pair of models on the same items, with Benjamini-Hochberg FDR over all the pairs.

    ``scores`` maps each model to its scores on the same items in the same order. All pairs share one set of
    resamples, so the whole table costs one resampling. Pairs follow the mapping's order (A before B).
    """
    _check_confidence(confidence)
    names = list(scores)
    if len(names) < 2:
        return []
    matrix = np.column_stack([np.asarray(scores[name], dtype=float) for name in names])
    if matrix.ndim != 2 or not np.all(np.isfinite(matrix)):
        raise ValueError("every model needs finite scores on the same items")
    n = matrix.shape[0]
    pairs = [(i, j) for i in range(len(names)) for j in range(i + 1, len(names))]
    if n < 2:
        return [
            PairedDifference(names[i], names[j], n, n_resamples, confidence, seed, undefined_reason=TOO_FEW_ITEMS)
            for i, j in pairs
        ]
    resampled = bootstrap_sums(matrix, n_resamples=n_resamples, seed=seed)
    totals = matrix.sum(axis=0)
    means = matrix.mean(axis=0)
    results = []
    for i, j in pairs:
        difference, low, high, p_value = _difference_from_sums(
            float(totals[i] - totals[j]), resampled[:, i] - resampled[:, j], n, confidence
        )
        results.append((i, j, difference, low, high, p_value))
    fdr = benjamini_hochberg([row[5] for row in results], q=q)
    return [
        PairedDifference(
            names[i],
            names[j],
            n,
            n_resamples,
            confidence,
            seed,
            mean_a=float(means[i]),
            mean_b=float(means[j]),
            difference=difference,
            low=low,
            high=high,
            p_value=p_value,
            p_adjusted=adjusted,
            significant=rejected,
        )
        for (i, j, difference, low, high, p_value), adjusted, rejected in zip(
            results, fdr.adjusted, fdr.rejected, strict=True
        )
    ]
