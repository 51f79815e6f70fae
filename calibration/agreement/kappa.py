"""Compute Cohen's kappa of two raters and Fleiss' kappa of many, from label tables or from counts."""

import numpy as np
from sklearn.metrics import cohen_kappa_score

from calibration.agreement.bootstrap import _check_bootstrap, _estimate, _Resamples, _Statistic
from calibration.agreement.core import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    NO_PAIRABLE_UNITS,
    NO_RATINGS,
    NO_SHARED_UNITS,
    ArrayLike,
    Estimate,
    FloatArray,
    KappaWeights,
    UndefinedStatistic,
)
from calibration.agreement.tables import (
    _codes,
    _ordered_categories,
    _rater_reason,
    _same_length,
    _table,
    _value_counts,
    _vector,
)

# --- Cohen's kappa --------------------------------------------------------------------------------------


def _disagreement_weights(weights: KappaWeights | ArrayLike, n_categories: int) -> FloatArray:
    if isinstance(weights, str):
        positions = np.arange(n_categories)
        distance = np.abs(positions[:, None] - positions[None, :]).astype(float)
        if weights == "unweighted":
            return (distance > 0).astype(float)
        if weights == "linear":
            return distance
        if weights == "quadratic":
            return distance**2
        raise ValueError(f"weights must be 'unweighted', 'linear', 'quadratic' or a matrix; got {weights!r}")
    matrix = np.asarray(weights, dtype=float)
    if matrix.shape != (n_categories, n_categories):
        raise ValueError(f"a weight matrix for {n_categories} categories must be {n_categories} x {n_categories}")
    return matrix


def _kappa_batch(confusion: FloatArray, disagreement: FloatArray) -> FloatArray:
    total = confusion.sum(axis=(1, 2))
    observed = np.einsum("bij,ij->b", confusion, disagreement)
    expected = np.einsum("bi,ij,bj->b", confusion.sum(axis=2), disagreement, confusion.sum(axis=1))
    kappa = np.full(total.shape, np.nan)
    defined = (total > 0) & (expected > 0)
    kappa[defined] = 1 - observed[defined] * total[defined] / expected[defined]
    return kappa


def _kappa_reason(confusion: FloatArray) -> str:
    if confusion.sum() == 0:
        return NO_SHARED_UNITS
    rows, columns = confusion.sum(axis=1) > 0, confusion.sum(axis=0) > 0
    if rows.sum() == 1 and columns.sum() == 1 and np.array_equal(rows, columns):
        return "both raters gave every shared unit the same single category: chance agreement is complete"
    return "the expected disagreement is zero under these weights"


def kappa_from_confusion(confusion: ArrayLike, weights: KappaWeights | ArrayLike = "unweighted") -> float:
    """Return Cohen's kappa of a K x K contingency table (rows: first rater, columns: second rater).

    ``weights`` is "unweighted", "linear" or "quadratic" (distances between category positions, as in
    scikit-learn and R irr::kappa2) or a K x K matrix of disagreement weights, zero on the diagonal.
    Raise UndefinedStatistic when the expected disagreement is zero.
    """
    table = np.asarray(confusion, dtype=float)
    if table.ndim != 2 or table.shape[0] != table.shape[1] or np.any(table < 0):
        raise ValueError("a contingency table is a square array of non-negative counts")
    value = _kappa_batch(table[None], _disagreement_weights(weights, table.shape[0]))[0]
    if not np.isfinite(value):
        raise UndefinedStatistic(_kappa_reason(table))
    return float(value)


def _cohen_statistic(
    first: FloatArray, second: FloatArray, weights: KappaWeights, categories: FloatArray, name: str
) -> _Statistic:
    both = ~np.isnan(first) & ~np.isnan(second)
    x, y = first[both], second[both]
    size = categories.size
    cells = _codes(x, categories) * size + _codes(y, categories)
    disagreement = _disagreement_weights(weights, size)

    def point() -> float:
        if not both.any():
            raise UndefinedStatistic(NO_SHARED_UNITS)
        confusion = np.bincount(cells, minlength=size * size).reshape(size, size).astype(float)
        if not np.isfinite(_kappa_batch(confusion[None], disagreement)[0]):
            raise UndefinedStatistic(_kappa_reason(confusion))
        sklearn_weights = None if weights == "unweighted" else weights
        return float(cohen_kappa_score(x, y, labels=categories, weights=sklearn_weights))

    def batch(resamples: _Resamples) -> FloatArray:
        indicator = np.zeros((cells.size, size * size))
        indicator[np.arange(cells.size), cells] = 1
        confusion = resamples.weights[:, both] @ indicator
        return _kappa_batch(confusion.reshape(-1, size, size), disagreement)

    return _Statistic(name, both, point, batch)


def cohen_kappa(
    first: ArrayLike,
    second: ArrayLike,
    *,
    weights: KappaWeights = "unweighted",
    labels: ArrayLike | None = None,
    seed: int = 0,
    n_boot: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Estimate:
    """Compute Cohen's kappa of two raters on the units both rated.

    ``labels`` is the full ordered category set; weights count distances between positions in it. It defaults
    to the values either rater used (as R irr::kappa2 does); pass the whole scale, e.g. ``SIGNED_SCALE``, to make
    the weights follow score differences.
    """
    _check_bootstrap(n_boot, confidence)
    a, b = _vector(first, "first"), _vector(second, "second")
    _same_length(first=a, second=b)
    categories = _ordered_categories(labels, a[~np.isnan(a)], b[~np.isnan(b)])
    statistic = _cohen_statistic(a, b, weights, categories, f"cohen_kappa_{weights}")
    return _estimate(statistic, _Resamples(len(a), seed=seed, n_boot=n_boot), confidence)


# --- Fleiss' kappa --------------------------------------------------------------------------------------


def _fleiss_batch(counts: FloatArray, weights: FloatArray) -> FloatArray:
    raters = counts.sum(axis=1)
    rated, pairable = raters >= 1, raters >= 2
    pairs = np.where(pairable, raters * (raters - 1), 1)
    agreement = np.where(pairable, (counts * (counts - 1)).sum(axis=1) / pairs, 0)
    proportions = counts / np.where(rated, raters, 1)[:, None]
    pairable_weight, rated_weight = weights @ pairable, weights @ rated
    kappa = np.full(weights.shape[0], np.nan)
    defined = pairable_weight > 0
    observed = (weights[defined] @ agreement) / pairable_weight[defined]
    prevalence = (weights[defined] @ proportions) / rated_weight[defined][:, None]
    chance = (prevalence**2).sum(axis=1)
    varied = chance < 1
    values = np.full(chance.shape, np.nan)
    values[varied] = (observed[varied] - chance[varied]) / (1 - chance[varied])
    kappa[defined] = values
    return kappa


def fleiss_kappa_from_counts(counts: ArrayLike) -> float:
    """Return Fleiss' kappa of a counts table (units x categories, the number of raters choosing each).

    Units may have different numbers of raters (Gwet 2014, as irrCAC::fleiss.kappa.raw): observed agreement
    averages over units with two or more ratings, category prevalence averages each unit's proportions over
    units with at least one rating. With equal counts this is Fleiss (1971). Raise UndefinedStatistic when no
    unit has two ratings or only one category occurs.
    """
    table = np.asarray(counts, dtype=float)
    if table.ndim != 2 or np.any(table < 0):
        raise ValueError("a counts table is a units x categories array of non-negative counts")
    raters = table.sum(axis=1)
    if not np.any(raters >= 2):
        raise UndefinedStatistic(NO_RATINGS if not raters.any() else NO_PAIRABLE_UNITS)
    value = _fleiss_batch(table, np.ones((1, table.shape[0])))[0]
    if not np.isfinite(value):
        raise UndefinedStatistic("every rating is the same category: with no variation, agreement is undefined")
    return float(value)


def _fleiss_statistic(table: FloatArray, name: str) -> _Statistic:
    _, counts = _value_counts(table)

    def point() -> float:
        reason = _rater_reason(table.shape[1])
        if reason:
            raise UndefinedStatistic(reason)
        return fleiss_kappa_from_counts(counts)

    return _Statistic(name, counts.sum(axis=1) >= 2, point, lambda resamples: _fleiss_batch(counts, resamples.weights))


def fleiss_kappa(
    table: ArrayLike,
    *,
    seed: int = 0,
    n_boot: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Estimate:
    """Compute Fleiss' kappa of a label table (units x raters, NaN missing), every distinct value a category."""
    _check_bootstrap(n_boot, confidence)
    array = _table(table)
    return _estimate(
        _fleiss_statistic(array, "fleiss_kappa"), _Resamples(len(array), seed=seed, n_boot=n_boot), confidence
    )
