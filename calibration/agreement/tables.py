"""Check label tables and per-unit vectors, and count the ratings each unit received in each category."""

import numpy as np
import numpy.typing as npt

from calibration.agreement.core import SCALE_MAX, ArrayLike, FloatArray

# --- input checks ---------------------------------------------------------------------------------------


def _table(table: ArrayLike) -> FloatArray:
    array = np.asarray(table, dtype=float)
    if array.ndim != 2:
        raise ValueError(f"a label table has shape (units, raters); got an array of shape {array.shape}")
    if np.isinf(array).any():
        raise ValueError("a label table holds finite values, with NaN for a missing rating")
    return array


def _vector(values: ArrayLike, name: str) -> FloatArray:
    array = np.asarray(values, dtype=float)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one value per unit; got an array of shape {array.shape}")
    if np.isinf(array).any():
        raise ValueError(f"{name} holds finite values, with NaN for a missing rating")
    return array


def _same_length(**vectors: FloatArray) -> None:
    lengths = {name: len(vector) for name, vector in vectors.items()}
    if len(set(lengths.values())) > 1:
        given = ", ".join(f"{name} ({length})" for name, length in lengths.items())
        raise ValueError(f"one value per unit is needed in each of {given}")


def _check_signed(values: FloatArray, name: str = "scores") -> None:
    rated = values[~np.isnan(values)]
    outside = rated[(np.abs(rated) > SCALE_MAX) | (rated != np.round(rated))]
    if outside.size:
        raise ValueError(f"{name} must be whole numbers from -{SCALE_MAX} to {SCALE_MAX}; got {outside[0]:g}")


def _rater_reason(n_raters: int) -> str | None:
    if n_raters == 0:
        return "no raters: agreement needs at least two"
    if n_raters == 1:
        return "only one rater: agreement needs at least two"
    return None


# --- category counts ------------------------------------------------------------------------------------


def _value_counts(table: FloatArray, categories: FloatArray | None = None) -> tuple[FloatArray, FloatArray]:
    rated = ~np.isnan(table)
    values = table[rated]
    domain = np.unique(values) if categories is None else categories
    counts = np.zeros((table.shape[0], domain.size))
    if values.size:
        codes = _codes(values, domain)
        np.add.at(counts, (np.nonzero(rated)[0], codes), 1)
    return domain, counts


def _codes(values: FloatArray, categories: FloatArray) -> npt.NDArray[np.intp]:
    if values.size and not categories.size:
        raise ValueError(f"rating {values[0]:g} is not among the categories (none were given)")
    positions = np.minimum(np.searchsorted(categories, values), max(categories.size - 1, 0))
    unknown = categories[positions] != values if values.size else np.zeros(0, dtype=bool)
    if np.any(unknown):
        raise ValueError(f"rating {values[np.argmax(unknown)]:g} is not among the categories {categories.tolist()}")
    return positions


def _ordered_categories(labels: ArrayLike | None, *arrays: FloatArray) -> FloatArray:
    if labels is None:
        return np.unique(np.concatenate(arrays)) if arrays else np.empty(0)
    categories = np.asarray(labels, dtype=float)
    if categories.ndim != 1 or np.any(np.diff(categories) <= 0):
        raise ValueError("labels must be the categories in strictly increasing order")
    return categories


def ratings_to_counts(table: ArrayLike, categories: ArrayLike | None = None) -> FloatArray:
    """Return the counts table (units x categories) of a label table: how many raters chose each category.

    The categories default to the sorted distinct values of the table.
    """
    array = _table(table)
    ordered = None if categories is None else _ordered_categories(categories)
    return _value_counts(array, ordered)[1]
