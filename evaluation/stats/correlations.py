"""Correlations across models (Pearson, Spearman) and per-dimension cross-lingual gaps against the overall
language bias."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats

from evaluation.stats._common import _Serialisable


@dataclass(frozen=True)
class Correlation(_Serialisable):
    """A correlation coefficient with its p-value and sample size; None with a reason when undefined."""

    r: float | None
    p_value: float | None
    n: int
    method: str
    undefined_reason: str | None = None


def correlation(x: Sequence[float], y: Sequence[float], *, method: Literal["pearson", "spearman"]) -> Correlation:
    """Return Pearson's r or Spearman's rho with SciPy's p-value; None when n < 3 or a variable is constant."""
    a = np.asarray(x, dtype=float)
    b = np.asarray(y, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError("x and y must be one-dimensional and of equal length")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("x and y must be finite numbers")
    n = len(a)
    if n < 3:
        return Correlation(None, None, n, method, "needs at least three paired values")
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return Correlation(None, None, n, method, "a variable is constant")
    result = stats.pearsonr(a, b) if method == "pearson" else stats.spearmanr(a, b)
    return Correlation(float(result.statistic), float(result.pvalue), n, method)


@dataclass(frozen=True)
class DimensionGap(_Serialisable):
    """One dimension: each model's cross-lingual gap and its correlation with the overall language bias."""

    dimension: str
    gaps: dict[str, float]
    mean_gap: float | None
    correlation: Correlation


@dataclass(frozen=True)
class CrossLingualGaps(_Serialisable):
    """Per-dimension gaps ``score(language_a) - score(language_b)`` and the overall bias per model."""

    language_a: str
    language_b: str
    overall_bias: dict[str, float]
    dimensions: list[DimensionGap]
    leave_dimension_out: bool


def cross_lingual_gaps(
    scores: Mapping[str, Mapping[str, Mapping[str, float]]],
    *,
    language_a: str,
    language_b: str,
    overall_bias: Mapping[str, float] | None = None,
    leave_dimension_out: bool = False,
) -> CrossLingualGaps:
    """Relate each dimension's cross-lingual gap to a model's overall language bias (Pearson r across models).

    ``scores[dimension][language][model]``; the gap of a model on a dimension is its score in ``language_a``
    minus its score in ``language_b``. The overall bias defaults to the model's mean gap over the dimensions it
    has in both languages; ``leave_dimension_out`` recomputes it without the dimension being correlated, which
    removes the part-whole inflation of r. Scores must be comparable across languages (accuracies, or ratings
    on a common anchored scale).
    """
    gaps: dict[str, dict[str, float]] = {}
    for dimension, by_language in scores.items():
        a, b = by_language.get(language_a, {}), by_language.get(language_b, {})
        gaps[dimension] = {model: float(a[model]) - float(b[model]) for model in a if model in b}

    def mean_bias(skip: str | None) -> dict[str, float]:
        collected: dict[str, list[float]] = {}
        for dimension, by_model in gaps.items():
            if dimension == skip:
                continue
            for model, gap in by_model.items():
                collected.setdefault(model, []).append(gap)
        return {model: float(np.mean(values)) for model, values in collected.items()}

    bias = dict(overall_bias) if overall_bias is not None else mean_bias(None)
    dimensions = []
    for dimension, by_model in gaps.items():
        reference = bias if overall_bias is not None or not leave_dimension_out else mean_bias(dimension)
        shared = [model for model in by_model if model in reference]
        result = correlation(
            [by_model[model] for model in shared], [reference[model] for model in shared], method="pearson"
        )
        mean_gap = float(np.mean(list(by_model.values()))) if by_model else None
        dimensions.append(DimensionGap(dimension, by_model, mean_gap, result))
    return CrossLingualGaps(language_a, language_b, bias, dimensions, leave_dimension_out)
