"""Compute Cohen's kappa of two raters and Fleiss' kappa of many, from label tables or from counts."""

import numpy as np
from scipy import sparse

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
        if weights not in ("unweighted", "linear", "quadratic"):
            raise ValueError(f"weights must be 'unweighted', 'linear', 'quadratic' or a matrix; got {weights!r}")
        positions = np.arange(n_categories, dtype=float)
        return _position_distance(positions[:, None], positions[None, :], weights)
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


def _kappa_reason(rows: FloatArray, columns: FloatArray) -> str:
    """Say why kappa is undefined, from the two raters' category counts."""
    if rows.sum() == 0:
        return NO_SHARED_UNITS
    used_rows, used_columns = rows > 0, columns > 0
    if used_rows.sum() == 1 and used_columns.sum() == 1 and np.array_equal(used_rows, used_columns):
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
        raise UndefinedStatistic(_kappa_reason(table.sum(axis=1), table.sum(axis=0)))
    return float(value)


def _position_distance(first: FloatArray, second: FloatArray, weights: KappaWeights) -> FloatArray:
    """Return the disagreement weight of each pair of category positions."""
    if weights == "unweighted":
        return (first != second).astype(float)
    if weights == "linear":
        return np.abs(first - second)
    if weights == "quadratic":
        return (first - second) ** 2
    raise ValueError(f"weights must be 'unweighted', 'linear' or 'quadratic'; got {weights!r}")


def _expected_disagreement(rows: FloatArray, columns: FloatArray, weights: KappaWeights) -> FloatArray:
    """Return sum_ij rows_i columns_j d(i, j) for each resample (one per row), d a distance between positions.

    Computed from sums over the categories, never from a K x K matrix, so that many distinct values (decimal
    scores) cost memory in proportion to K, not K squared.
    """
    positions = np.arange(rows.shape[1], dtype=float)
    row_total, column_total = rows.sum(axis=1), columns.sum(axis=1)
    if weights == "unweighted":
        return row_total * column_total - (rows * columns).sum(axis=1)
    if weights == "quadratic":
        squares = positions**2
        return (
            column_total * (rows @ squares)
            - 2 * (rows @ positions) * (columns @ positions)
            + row_total * (columns @ squares)
        )
    # sum_j c_j |i - j| = i (2 C(i) - C) - 2 S(i) + S, with C(i), S(i) the sums of c_j and j c_j over j <= i.
    counted = np.cumsum(columns, axis=1)
    moment = np.cumsum(columns * positions, axis=1)
    distances = positions * (2 * counted - column_total[:, None]) - 2 * moment + moment[:, -1:]
    return (rows * distances).sum(axis=1)


def _both_orientations(values: FloatArray) -> FloatArray:
    """Return the values as given followed by the same values with A and B swapped (signs flipped)."""
    return np.concatenate([values, -values])


def _cohen_statistic(
    first: FloatArray,
    second: FloatArray,
    weights: KappaWeights,
    labels: ArrayLike | None,
    name: str,
    *,
    both_orientations: bool = False,
) -> _Statistic:
    both = ~np.isnan(first) & ~np.isnan(second)
    x, y = first[both], second[both]
    copies = 1
    if both_orientations:
        x, y, copies = _both_orientations(x), _both_orientations(y), 2
    # Without labels the categories are the values both raters gave on the units both rated, as in R
    # irr::kappa2 (which drops incomplete units first): a value seen only on a unit the other rater skipped
    # must not shift the positions that the weights count.
    categories = _ordered_categories(labels, x, y)
    if both_orientations and not np.array_equal(categories, -categories[::-1]):
        raise ValueError(
            "over both orientations the categories must be symmetric around 0 (signed scores); "
            f"got {categories.tolist()}"
        )
    size, n_shared = categories.size, int(both.sum())
    # Values become category codes (positions), never floats handed to a classifier metric: scikit-learn takes
    # non-integer floats such as a median of 2.5 for a continuous target and refuses them.
    codes_x, codes_y = _codes(x, categories), _codes(y, categories)
    units = np.tile(np.arange(n_shared), copies)
    disagreement = np.bincount(units, _position_distance(codes_x, codes_y, weights), minlength=n_shared)
    ones, shape = np.ones(units.size), (n_shared, size)
    row_indicator = sparse.csr_array((ones, (units, codes_x)), shape=shape)
    column_indicator = sparse.csr_array((ones, (units, codes_y)), shape=shape)

    def kappas(unit_weights: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        rows, columns = unit_weights @ row_indicator, unit_weights @ column_indicator
        total = rows.sum(axis=1)
        expected = _expected_disagreement(rows, columns, weights)
        kappa = np.full(total.shape, np.nan)
        defined = (total > 0) & (expected > 0)
        kappa[defined] = 1 - (unit_weights @ disagreement)[defined] * total[defined] / expected[defined]
        return kappa, rows, columns

    def point() -> float:
        if not both.any():
            raise UndefinedStatistic(NO_SHARED_UNITS)
        kappa, rows, columns = kappas(np.ones((1, n_shared)))
        if not np.isfinite(kappa[0]):
            raise UndefinedStatistic(_kappa_reason(rows[0], columns[0]))
        return float(kappa[0])

    return _Statistic(name, both, point, lambda resamples: kappas(resamples.weights[:, both])[0])


def cohen_kappa(
    first: ArrayLike,
    second: ArrayLike,
    *,
    weights: KappaWeights = "unweighted",
    labels: ArrayLike | None = None,
    both_orientations: bool = False,
    seed: int = 0,
    n_boot: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Estimate:
    """Compute Cohen's kappa of two raters on the units both rated.

    Values are coded as categories, so any finite numbers work (half-point medians such as 2.5 included).
    ``labels`` is the full ordered category set; weights count distances between positions in it. It defaults
    to the values the two raters gave on the units both rated (as R irr::kappa2, which drops incomplete units
    first); pass a declared scale, e.g. ``SIGNED_SCALE``, to make the weights follow score differences on the
    whole scale. ``both_orientations`` (signed scores or winners only) counts every unit once as given and once
    with A and B swapped, so the result does not depend on which response of a pair is called A.
    """
    _check_bootstrap(n_boot, confidence)
    a, b = _vector(first, "first"), _vector(second, "second")
    _same_length(first=a, second=b)
    name = f"cohen_kappa_{weights}" + ("_both_orientations" if both_orientations else "")
    statistic = _cohen_statistic(a, b, weights, labels, name, both_orientations=both_orientations)
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
