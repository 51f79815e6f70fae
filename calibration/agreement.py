"""Agreement statistics for label tables: plain arrays in, JSON-ready results out, no ORM.

A label table is a float array of shape (units, raters) with NaN for a missing rating. Its values are nominal
category codes, ordinal or interval scores, or signed pairwise scores from -5 to +5 (+k: A wins by k plus signs,
0: tie, -k: B wins by k). The winner of a signed score is its sign.

Every coefficient comes back as an ``Estimate`` with a percentile bootstrap interval. The bootstrap resamples
units (comparisons) with replacement: resample ``b`` takes the units
``numpy.random.default_rng(seed).integers(0, n_units, size=(n_boot, n_units))[b]``, so all coefficients computed
from one seed on one set of units see the same resamples; that is what makes the paired bootstrap paired. A
coefficient that cannot be computed (one rater, no variation, nothing in common) has ``value=None`` and says why
in ``undefined_reason``. Resamples in which it is undefined are left out of the interval and counted in
``n_boot_defined``. No result ever holds NaN. See docs/agreement.md for the definitions and their sources.
"""

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
from functools import cached_property
from typing import Literal

import krippendorff
import numpy as np
import numpy.typing as npt
from scipy import stats
from sklearn.metrics import cohen_kappa_score

Level = Literal["nominal", "ordinal", "interval", "ratio"]
KappaWeights = Literal["unweighted", "linear", "quadratic"]
Coefficient = Literal[
    "alpha_nominal",
    "alpha_ordinal",
    "alpha_interval",
    "cohen_unweighted",
    "cohen_linear",
    "cohen_quadratic",
    "percent_agreement",
    "percent_agreement_without_ties",
    "spearman",
]
ArrayLike = npt.ArrayLike
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

LEVELS: tuple[Level, ...] = ("nominal", "ordinal", "interval", "ratio")
DEFAULT_RESAMPLES = 1000
DEFAULT_CONFIDENCE = 0.95
SCALE_MAX = 5
SIGNED_SCALE = tuple(float(score) for score in range(-SCALE_MAX, SCALE_MAX + 1))
LENGTH_RATIO = 1.3

NO_SHARED_UNITS = "no unit was rated by both raters"
NO_PAIRABLE_UNITS = "no unit has ratings from two or more raters"
NO_RATINGS = "no ratings: every cell of the table is missing"


class UndefinedStatistic(ValueError):
    """Signal that a coefficient is undefined on the given data; the message says why."""


def _plain(value: object) -> object:
    if isinstance(value, _Serialisable):
        return value.as_dict()
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


class _Serialisable:
    def as_dict(self) -> dict[str, object]:
        """Return the result as plain, JSON-serialisable Python values."""
        return {field.name: _plain(getattr(self, field.name)) for field in fields(self)}


@dataclass(frozen=True)
class Estimate(_Serialisable):
    """One coefficient with its percentile bootstrap interval; ``value`` is None exactly when it is undefined.

    ``ci_low``/``ci_high`` are None when no resample gave a defined value (or ``n_boot`` is 0); ``p_value`` is
    set by the statistics that come with a test (binomial tests, paired differences).
    """

    statistic: str
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n_units: int
    undefined_reason: str | None = None
    p_value: float | None = None
    n_boot: int = 0
    n_boot_defined: int = 0
    confidence: float = DEFAULT_CONFIDENCE


@dataclass(frozen=True)
class PairAgreement(_Serialisable):
    """The pairwise coefficients of two raters; a coefficient that does not apply to the level is None."""

    rater_a: str
    rater_b: str
    cohen_kappa: Estimate
    cohen_kappa_linear: Estimate | None
    cohen_kappa_quadratic: Estimate | None
    percent_agreement: Estimate
    percent_agreement_without_ties: Estimate | None
    spearman: Estimate | None


@dataclass(frozen=True)
class AgreementReport(_Serialisable):
    """Every coefficient of a label table with its interval, as printed by ``manage.py agreement``.

    For a signed table (``signed=True``) the nominal coefficients (``alpha_winner``, Fleiss' kappa, unweighted
    Cohen's kappa, percent agreement) are computed on the winner, the others on the signed score.
    """

    level: Level
    signed: bool
    raters: tuple[str, ...]
    categories: tuple[float, ...]
    n_units: int
    n_ratings: int
    seed: int
    n_boot: int
    confidence: float
    undefined_reason: str | None
    alpha: Estimate
    alpha_winner: Estimate | None
    fleiss_kappa: Estimate
    pairs: tuple[PairAgreement, ...]


@dataclass(frozen=True)
class PositionBias(_Serialisable):
    """Position bias of one judge that gave a verdict in both orders (AB: A shown first; BA: B shown first)."""

    n_comparisons: int
    n_parsed_ab: int
    n_parsed_ba: int
    flip_rate: Estimate
    reversal_rate: Estimate
    first_position_win_rate: Estimate
    margin_asymmetry: Estimate
    position_offset: Estimate


# --- bootstrap machinery --------------------------------------------------------------------------------


class _Resamples:
    """Unit indices of every bootstrap resample, drawn once from the seed and shared by all coefficients."""

    def __init__(self, n_units: int, *, seed: int, n_boot: int) -> None:
        self.n_units = n_units
        self.n_boot = n_boot
        if n_units == 0 or n_boot == 0:
            self.indices = np.zeros((0, n_units), dtype=np.intp)
        else:
            self.indices = np.random.default_rng(seed).integers(0, n_units, size=(n_boot, n_units))

    @cached_property
    def weights(self) -> FloatArray:
        """Return how often each unit occurs in each resample, shape (resamples, units)."""
        count = self.indices.shape[0]
        offsets = self.indices + self.n_units * np.arange(count)[:, None]
        occurrences = np.bincount(offsets.ravel(), minlength=count * self.n_units)
        return occurrences.reshape(count, self.n_units).astype(float)


@dataclass(frozen=True)
class _Statistic:
    """A coefficient as a point formula (raising UndefinedStatistic) and a batch formula over resamples.

    The batch formula returns one value per resample, NaN where the coefficient is undefined in that resample.
    """

    name: str
    units: BoolArray
    point: Callable[[], float]
    batch: Callable[[_Resamples], FloatArray]


def _percentile_interval(draws: FloatArray, confidence: float) -> tuple[float | None, float | None]:
    if draws.size == 0:
        return None, None
    tail = (1 - confidence) / 2
    low, high = np.quantile(draws, [tail, 1 - tail])
    return float(low), float(high)


def _defined_draws(statistic: _Statistic, resamples: _Resamples) -> FloatArray:
    if resamples.indices.shape[0] == 0:
        return np.empty(0)
    return statistic.batch(resamples)


def _point(statistic: _Statistic) -> float:
    value = statistic.point()
    if not np.isfinite(value):
        raise UndefinedStatistic(f"{statistic.name} is not a finite number on these data")
    return float(value)


def _estimate(statistic: _Statistic, resamples: _Resamples, confidence: float) -> Estimate:
    common = {"statistic": statistic.name, "n_units": int(statistic.units.sum()), "confidence": confidence}
    try:
        value = _point(statistic)
    except UndefinedStatistic as exc:
        return Estimate(
            **common, value=None, ci_low=None, ci_high=None, undefined_reason=str(exc), n_boot=resamples.n_boot
        )
    draws = _defined_draws(statistic, resamples)
    draws = draws[np.isfinite(draws)]
    low, high = _percentile_interval(draws, confidence)
    return Estimate(
        **common, value=value, ci_low=low, ci_high=high, n_boot=resamples.n_boot, n_boot_defined=int(draws.size)
    )


def _difference(first: _Statistic, second: _Statistic, resamples: _Resamples, confidence: float) -> Estimate:
    common = {
        "statistic": f"{first.name} of judge A minus judge B",
        "n_units": int((first.units | second.units).sum()),
        "confidence": confidence,
        "n_boot": resamples.n_boot,
    }
    values = []
    for label, statistic in (("judge A", first), ("judge B", second)):
        try:
            values.append(_point(statistic))
        except UndefinedStatistic as exc:
            return Estimate(**common, value=None, ci_low=None, ci_high=None, undefined_reason=f"{label}: {exc}")
    first_draws, second_draws = _defined_draws(first, resamples), _defined_draws(second, resamples)
    both = np.isfinite(first_draws) & np.isfinite(second_draws)
    differences = first_draws[both] - second_draws[both]
    low, high = _percentile_interval(differences, confidence)
    p_value = None
    if differences.size:
        tail = min(int((differences <= 0).sum()), int((differences >= 0).sum()))
        p_value = min(1.0, 2 * (tail + 1) / (differences.size + 1))
    return Estimate(
        **common,
        value=values[0] - values[1],
        ci_low=low,
        ci_high=high,
        p_value=p_value,
        n_boot_defined=int(differences.size),
    )


def _check_bootstrap(n_boot: int, confidence: float) -> None:
    if n_boot < 0:
        raise ValueError(f"the number of bootstrap resamples must be 0 or more, got {n_boot}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence}")


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


# --- Krippendorff's alpha -------------------------------------------------------------------------------


def _alpha_value(counts: FloatArray, domain: FloatArray, level: Level) -> float:
    pairable = counts.sum(axis=1) >= 2
    if not pairable.any():
        raise UndefinedStatistic(NO_PAIRABLE_UNITS)
    counts = counts[pairable]
    present = counts.sum(axis=0) > 0
    if present.sum() < 2:
        raise UndefinedStatistic(
            f"every rating on units with two or more ratings is {domain[present][0]:g}: "
            "with no variation, agreement is undefined"
        )
    try:
        with np.errstate(all="ignore"):
            value = krippendorff.alpha(
                value_counts=counts[:, present], value_domain=domain[present], level_of_measurement=level
            )
    except ValueError as exc:
        raise UndefinedStatistic(str(exc)) from exc
    if not np.isfinite(value):
        raise UndefinedStatistic("the expected disagreement is zero")
    return float(value)


def _alpha_statistic(table: FloatArray, level: Level, name: str) -> _Statistic:
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}; got {level!r}")
    domain, counts = _value_counts(table)

    def point() -> float:
        reason = _rater_reason(table.shape[1]) or (NO_RATINGS if domain.size == 0 else None)
        if reason:
            raise UndefinedStatistic(reason)
        return _alpha_value(counts, domain, level)

    def batch(resamples: _Resamples) -> FloatArray:
        draws = np.full(resamples.indices.shape[0], np.nan)
        for row, units in enumerate(resamples.indices):
            with contextlib.suppress(UndefinedStatistic):
                draws[row] = _alpha_value(counts[units], domain, level)
        return draws

    return _Statistic(name, counts.sum(axis=1) >= 2, point, batch)


def krippendorff_alpha(
    table: ArrayLike,
    level: Level,
    *,
    seed: int = 0,
    n_boot: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Estimate:
    """Compute Krippendorff's alpha of a label table (units x raters, NaN missing) at a level of measurement.

    Units with fewer than two ratings carry no information about agreement and are not counted in ``n_units``.
    """
    _check_bootstrap(n_boot, confidence)
    array = _table(table)
    statistic = _alpha_statistic(array, level, f"krippendorff_alpha_{level}")
    return _estimate(statistic, _Resamples(array.shape[0], seed=seed, n_boot=n_boot), confidence)


def alpha_with_judge(
    experts: ArrayLike,
    judge: ArrayLike,
    level: Level,
    *,
    seed: int = 0,
    n_boot: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Estimate:
    """Compute Krippendorff's alpha of the experts' table with the judge added as one more rater.

    A judge without a single rating would leave the experts' own alpha unchanged, so that case is undefined.
    """
    _check_bootstrap(n_boot, confidence)
    statistic = _alpha_with_judge_statistic(experts, judge, level)
    return _estimate(statistic, _Resamples(len(statistic.units), seed=seed, n_boot=n_boot), confidence)


def _alpha_with_judge_statistic(experts: ArrayLike, judge: ArrayLike, level: Level) -> _Statistic:
    reference = np.asarray(experts, dtype=float)
    reference = _table(reference[:, None] if reference.ndim == 1 else reference)
    verdicts = _vector(judge, "judge")
    _same_length(experts=reference[:, 0], judge=verdicts)
    statistic = _alpha_statistic(np.column_stack([reference, verdicts]), level, f"krippendorff_alpha_{level}")
    if not np.isnan(verdicts).all():
        return statistic

    def point() -> float:
        raise UndefinedStatistic("the judge has no parseable verdict")

    return replace(statistic, point=point)


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


# --- percent agreement and correlation ------------------------------------------------------------------


def _ratio_statistic(
    name: str, numerator: BoolArray | FloatArray, denominator: BoolArray | FloatArray, reason: str
) -> _Statistic:
    top, bottom = np.asarray(numerator, dtype=float), np.asarray(denominator, dtype=float)

    def point() -> float:
        total = bottom.sum()
        if total == 0:
            raise UndefinedStatistic(reason)
        return float(top.sum() / total)

    def batch(resamples: _Resamples) -> FloatArray:
        totals = resamples.weights @ bottom
        ratios = np.full(totals.shape, np.nan)
        np.divide(resamples.weights @ top, totals, out=ratios, where=totals > 0)
        return ratios

    return _Statistic(name, bottom > 0, point, batch)


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


# --- experts' consensus ---------------------------------------------------------------------------------


def majority_winner(table: ArrayLike) -> FloatArray:
    """Return the plurality winner (-1, 0 or +1) of each unit's signed scores; NaN for an unrated unit.

    When the top count is shared (e.g. one vote for A and one for B, or one for A and one tie) the experts did
    not settle on a winner and the result is a tie (0).
    """
    signs = np.sign(_table(table))
    outcomes = np.array([-1.0, 0.0, 1.0])
    votes = (signs[:, :, None] == outcomes).sum(axis=1)
    top = votes.max(axis=1)
    shared = (votes == top[:, None]).sum(axis=1) > 1
    winners = np.where(shared, 0.0, outcomes[votes.argmax(axis=1)])
    return np.where(top == 0, np.nan, winners)


def median_score(table: ArrayLike, *, round_toward_tie: bool = False) -> FloatArray:
    """Return the median of each unit's scores; NaN for an unrated unit.

    With an even number of ratings the median can fall halfway (e.g. 2.5); ``round_toward_tie`` rounds such
    halves toward 0 so the result stays on the integer scale.
    """
    array = _table(table)
    medians = np.full(array.shape[0], np.nan)
    rated = ~np.isnan(array).all(axis=1)
    medians[rated] = np.nanmedian(array[rated], axis=1)
    if round_toward_tie:
        medians = np.sign(medians) * np.floor(np.abs(medians))
    return medians


# --- judges ---------------------------------------------------------------------------------------------


def _coefficient_statistic(
    coefficient: Coefficient, reference: ArrayLike, judge: FloatArray, categories: FloatArray
) -> _Statistic:
    if coefficient.startswith("alpha_"):
        return _alpha_with_judge_statistic(reference, judge, coefficient.removeprefix("alpha_"))
    column = np.asarray(reference, dtype=float)
    if column.ndim == 2 and column.shape[1] == 1:
        column = column[:, 0]
    column = _vector(column, "reference (one value per unit, e.g. the experts' majority or median)")
    _same_length(reference=column, judge=judge)
    if coefficient.startswith("cohen_"):
        weights: KappaWeights = coefficient.removeprefix("cohen_")
        return _cohen_statistic(column, judge, weights, categories, f"cohen_kappa_{weights}")
    if coefficient in ("percent_agreement", "percent_agreement_without_ties"):
        return _percent_statistic(column, judge, coefficient.endswith("without_ties"), coefficient)
    if coefficient == "spearman":
        return _spearman_statistic(column, judge, "spearman", ("the reference", "the judge"))
    raise ValueError(f"unknown coefficient {coefficient!r}")


def judge_difference(
    reference: ArrayLike,
    judge_a: ArrayLike,
    judge_b: ArrayLike,
    *,
    coefficient: Coefficient,
    labels: ArrayLike | None = None,
    seed: int = 0,
    n_boot: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Estimate:
    """Compare two judges against the same reference with a paired bootstrap over units.

    Return coefficient(judge A) - coefficient(judge B), its percentile interval from resamples that draw the
    same units for both judges, and the two-sided bootstrap p-value 2 * (k + 1) / (B + 1), capped at 1, where k
    counts the B resampled differences at or beyond zero on the smaller side (so it is never 0).
    ``reference`` is the experts' table (units x experts) for the ``alpha_*`` coefficients, where each judge is
    added as one more rater, and one value per unit (majority or median) for the others. Percent agreement
    compares values as given: pass winners to compare winners.
    """
    _check_bootstrap(n_boot, confidence)
    first, second = _vector(judge_a, "judge_a"), _vector(judge_b, "judge_b")
    _same_length(judge_a=first, judge_b=second)
    categories = np.empty(0)
    if coefficient.startswith("cohen_"):
        ref = np.asarray(reference, dtype=float).ravel()
        categories = _ordered_categories(labels, *(v[~np.isnan(v)] for v in (ref, first, second)))
    statistic_a = _coefficient_statistic(coefficient, reference, first, categories)
    statistic_b = _coefficient_statistic(coefficient, reference, second, categories)
    return _difference(statistic_a, statistic_b, _Resamples(len(first), seed=seed, n_boot=n_boot), confidence)


def position_bias(
    scores_ab: ArrayLike,
    scores_ba: ArrayLike,
    *,
    seed: int = 0,
    n_boot: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> PositionBias:
    """Measure a judge's position bias from its verdicts in both orders, both in canonical orientation.

    ``scores_ab[i]`` is the verdict with A shown first, ``scores_ba[i]`` the verdict with B shown first mapped
    back to canonical orientation (see ``canonical_score``); NaN marks an unparseable verdict. Report:

    - flip rate: share of comparisons with both verdicts whose winner (A, B or tie) changes with the order;
    - reversal rate: share whose winner swaps between A and B;
    - first-position win rate over all non-tie verdicts, with an exact two-sided binomial test against 0.5
      (verdicts of one comparison are not independent; the bootstrap interval accounts for that, the test not);
    - margin asymmetry: mean margin of the verdicts the first position wins minus that of those the second
      position wins (positive: the judge is more emphatic for whatever it reads first);
    - position offset: mean of (score_ab - score_ba) / 2 over comparisons with both verdicts, the shift in
      scale points toward the response shown first.
    """
    _check_bootstrap(n_boot, confidence)
    ab, ba = _vector(scores_ab, "scores_ab"), _vector(scores_ba, "scores_ba")
    _same_length(scores_ab=ab, scores_ba=ba)
    _check_signed(ab, "scores_ab")
    _check_signed(ba, "scores_ba")
    parsed_ab, parsed_ba = ~np.isnan(ab), ~np.isnan(ba)
    both = parsed_ab & parsed_ba
    ab0, ba0 = np.nan_to_num(ab), np.nan_to_num(ba)
    first_wins = (ab0 > 0).astype(float) + (ba0 < 0)
    second_wins = (ab0 < 0).astype(float) + (ba0 > 0)
    first_margins = np.where(ab0 > 0, ab0, 0) + np.where(ba0 < 0, -ba0, 0)
    second_margins = np.where(ab0 < 0, -ab0, 0) + np.where(ba0 > 0, ba0, 0)
    no_pair = "no comparison has a parseable verdict in both orders"
    if not (parsed_ab | parsed_ba).any():
        no_pair = "the judge has no parseable verdict"
    no_decisive = "no parseable verdict names a winner" if (parsed_ab | parsed_ba).any() else no_pair
    resamples = _Resamples(len(ab), seed=seed, n_boot=n_boot)

    def estimate(statistic: _Statistic) -> Estimate:
        return _estimate(statistic, resamples, confidence)

    flips = _ratio_statistic("flip_rate", both & (np.sign(ab0) != np.sign(ba0)), both, no_pair)
    reversals = _ratio_statistic("reversal_rate", both & (np.sign(ab0) * np.sign(ba0) < 0), both, no_pair)
    decisive = first_wins + second_wins
    first_rate = estimate(_ratio_statistic("first_position_win_rate", first_wins, decisive, no_decisive))
    if first_rate.value is not None:
        test = stats.binomtest(int(first_wins.sum()), int(decisive.sum()), 0.5, alternative="two-sided")
        first_rate = replace(first_rate, p_value=float(test.pvalue))
    offset = _ratio_statistic("position_offset", np.where(both, (ab0 - ba0) / 2, 0), both, no_pair)
    return PositionBias(
        n_comparisons=len(ab),
        n_parsed_ab=int(parsed_ab.sum()),
        n_parsed_ba=int(parsed_ba.sum()),
        flip_rate=estimate(flips),
        reversal_rate=estimate(reversals),
        first_position_win_rate=first_rate,
        margin_asymmetry=estimate(
            _margin_asymmetry_statistic(first_wins, second_wins, first_margins, second_margins, no_decisive)
        ),
        position_offset=estimate(offset),
    )


def _margin_asymmetry_statistic(
    first_wins: FloatArray,
    second_wins: FloatArray,
    first_margins: FloatArray,
    second_margins: FloatArray,
    no_decisive: str,
) -> _Statistic:
    def point() -> float:
        if not (first_wins.sum() or second_wins.sum()):
            raise UndefinedStatistic(no_decisive)
        for wins, position in ((first_wins, "first"), (second_wins, "second")):
            if not wins.sum():
                raise UndefinedStatistic(f"the {position} position never wins: there is no margin to compare")
        return float(first_margins.sum() / first_wins.sum() - second_margins.sum() / second_wins.sum())

    def batch(resamples: _Resamples) -> FloatArray:
        weights = resamples.weights
        first_count, second_count = weights @ first_wins, weights @ second_wins
        asymmetry = np.full(first_count.shape, np.nan)
        defined = (first_count > 0) & (second_count > 0)
        asymmetry[defined] = (weights[defined] @ first_margins) / first_count[defined] - (
            weights[defined] @ second_margins
        ) / second_count[defined]
        return asymmetry

    return _Statistic("margin_asymmetry", (first_wins + second_wins) > 0, point, batch)


def length_bias(
    scores: ArrayLike,
    length_a: ArrayLike,
    length_b: ArrayLike,
    *,
    min_ratio: float = LENGTH_RATIO,
    seed: int = 0,
    n_boot: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Estimate:
    """Return the share of non-tie verdicts that prefer the longer response, among clearly unequal pairs.

    A pair is clearly unequal when the longer response is more than ``min_ratio`` times the shorter (default:
    more than 30% longer). Lengths are given by the caller: words for English, characters for Chinese. The
    p-value is an exact two-sided binomial test against 0.5. NaN scores (unparseable verdicts) are left out.
    """
    _check_bootstrap(n_boot, confidence)
    verdicts = _vector(scores, "scores")
    a, b = _vector(length_a, "length_a"), _vector(length_b, "length_b")
    _same_length(scores=verdicts, length_a=a, length_b=b)
    if np.isnan(a).any() or np.isnan(b).any() or np.any(a < 0) or np.any(b < 0):
        raise ValueError("lengths must be known and non-negative")
    if min_ratio < 1:
        raise ValueError(f"min_ratio must be at least 1; got {min_ratio}")
    unequal = np.maximum(a, b) > min_ratio * np.minimum(a, b)
    decided = ~np.isnan(verdicts) & unequal & (np.nan_to_num(verdicts) != 0)
    winner = np.sign(np.nan_to_num(verdicts))
    longer_wins = decided & (((winner > 0) & (a > b)) | ((winner < 0) & (b > a)))
    if np.isnan(verdicts).all():
        reason = "the judge has no parseable verdict"
    else:
        reason = f"no non-tie verdict on a pair whose lengths differ by more than {round((min_ratio - 1) * 100)}%"
    statistic = _ratio_statistic("length_bias_longer_preferred", longer_wins, decided, reason)
    estimate = _estimate(statistic, _Resamples(len(verdicts), seed=seed, n_boot=n_boot), confidence)
    if estimate.value is None:
        return estimate
    test = stats.binomtest(int(longer_wins.sum()), int(decided.sum()), 0.5, alternative="two-sided")
    return replace(estimate, p_value=float(test.pvalue))


# --- verdict orientation and order combination ----------------------------------------------------------


def canonical_score(*, first_shown: Literal["A", "B"], winner: Literal["first", "second", "tie"], margin: int) -> int:
    """Return the signed score in canonical orientation (+: A wins) of a verdict given about the order shown.

    ``winner`` names the position the judge or expert preferred, ``margin`` the number of plus signs (1..5;
    0 for a tie).
    """
    if first_shown not in ("A", "B"):
        raise ValueError(f"first_shown must be 'A' or 'B'; got {first_shown!r}")
    if winner == "tie":
        if margin != 0:
            raise ValueError(f"a tie has margin 0; got {margin}")
        return 0
    if winner not in ("first", "second"):
        raise ValueError(f"winner must be 'first', 'second' or 'tie'; got {winner!r}")
    if not (isinstance(margin, int) and 1 <= margin <= SCALE_MAX):
        raise ValueError(f"a margin is a whole number from 1 to {SCALE_MAX}; got {margin!r}")
    a_wins = (winner == "first") == (first_shown == "A")
    return margin if a_wins else -margin


def _order_scores(score_ab: float | None, score_ba: float | None) -> tuple[int, int] | None:
    scores = []
    for score in (score_ab, score_ba):
        if score is None or np.isnan(score):
            return None
        if score != int(score) or abs(score) > SCALE_MAX:
            raise ValueError(f"a score is a whole number from -{SCALE_MAX} to {SCALE_MAX}; got {score!r}")
        scores.append(int(score))
    return scores[0], scores[1]


def combine_facet(
    score_ab: float | None, score_ba: float | None, *, inconsistent: Literal["tie", "drop"] = "tie"
) -> int | None:
    """Combine the verdicts of both orders by FACET's rule; return None when the pair is dropped.

    Both scores are in canonical orientation. A pair is consistent when both orders name the same winner (A, B,
    or a tie); it keeps the mean score, halves rounded toward the tie. An inconsistent pair counts as a tie or
    is dropped, as ``inconsistent`` says. A missing verdict (None or NaN) in either order drops the pair.
    """
    if inconsistent not in ("tie", "drop"):
        raise ValueError(f"inconsistent must be 'tie' or 'drop'; got {inconsistent!r}")
    scores = _order_scores(score_ab, score_ba)
    if scores is None:
        return None
    ab, ba = scores
    if np.sign(ab) != np.sign(ba):
        return 0 if inconsistent == "tie" else None
    total = ab + ba
    return int(np.sign(total)) * (abs(total) // 2)


def combine_summed(score_ab: float | None, score_ba: float | None) -> int | None:
    """Combine the verdicts of both orders by adding their signed margins, clipped to -5..+5.

    Both scores are in canonical orientation; a missing verdict (None or NaN) in either order gives None.
    """
    scores = _order_scores(score_ab, score_ba)
    if scores is None:
        return None
    return max(-SCALE_MAX, min(SCALE_MAX, scores[0] + scores[1]))


# --- the report -----------------------------------------------------------------------------------------


def _table_reason(table: FloatArray) -> str | None:
    reason = _rater_reason(table.shape[1])
    if reason:
        return reason
    rated = ~np.isnan(table)
    if not rated.any():
        return NO_RATINGS
    pairable = rated.sum(axis=1) >= 2
    if not pairable.any():
        return NO_PAIRABLE_UNITS
    values = np.unique(table[pairable][rated[pairable]])
    if values.size < 2:
        return (
            f"every rating on units with two or more ratings is {values[0]:g}: with no variation, agreement "
            "is undefined"
        )
    return None


def agreement_report(
    table: ArrayLike,
    level: Level,
    *,
    raters: Sequence[str] | None = None,
    signed: bool = False,
    seed: int = 0,
    n_boot: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> AgreementReport:
    """Compute every coefficient of a label table with its bootstrap interval, from one set of resamples.

    Krippendorff's alpha at ``level`` and Fleiss' kappa over all raters; for each pair of raters Cohen's kappa
    (plus linear and quadratic weights and Spearman's rho unless the level is nominal) and percent agreement.
    With ``signed`` the values are pairwise scores -5..+5: alpha is also given on the winner, the nominal
    coefficients use the winner, percent agreement is also given without ties, and weights follow the scale.
    """
    _check_bootstrap(n_boot, confidence)
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}; got {level!r}")
    array = _table(table)
    names = tuple(raters) if raters is not None else tuple(f"rater{i + 1}" for i in range(array.shape[1]))
    if len(names) != array.shape[1] or len(set(names)) != len(names):
        raise ValueError(f"give {array.shape[1]} distinct rater names, one per column")
    if signed:
        _check_signed(array)
    winners = np.sign(array) if signed else array
    categories = np.unique(array[~np.isnan(array)])
    scale = np.array(SIGNED_SCALE) if signed else categories
    winner_categories = np.array([-1.0, 0.0, 1.0]) if signed else categories
    resamples = _Resamples(array.shape[0], seed=seed, n_boot=n_boot)
    suffix = "_winner" if signed else ""

    def estimate(statistic: _Statistic) -> Estimate:
        return _estimate(statistic, resamples, confidence)

    def pair_agreement(i: int, j: int) -> PairAgreement:
        a, b, a_winners, b_winners = array[:, i], array[:, j], winners[:, i], winners[:, j]
        optional: dict[str, Estimate | None] = dict.fromkeys(
            ("cohen_kappa_linear", "cohen_kappa_quadratic", "percent_agreement_without_ties", "spearman")
        )
        if level != "nominal":
            for weights in ("linear", "quadratic"):
                name = f"cohen_kappa_{weights}"
                optional[name] = estimate(_cohen_statistic(a, b, weights, scale, name))
            optional["spearman"] = estimate(_spearman_statistic(a, b, "spearman", (names[i], names[j])))
        if signed:
            name = "percent_agreement_without_ties_winner"
            optional["percent_agreement_without_ties"] = estimate(_percent_statistic(a_winners, b_winners, True, name))
        unweighted = _cohen_statistic(
            a_winners, b_winners, "unweighted", winner_categories, f"cohen_kappa_unweighted{suffix}"
        )
        agreement = _percent_statistic(a_winners, b_winners, False, f"percent_agreement{suffix}")
        return PairAgreement(
            rater_a=names[i],
            rater_b=names[j],
            cohen_kappa=estimate(unweighted),
            percent_agreement=estimate(agreement),
            **optional,
        )

    alpha_winner = None
    if signed:
        alpha_winner = estimate(_alpha_statistic(winners, "nominal", "krippendorff_alpha_nominal_winner"))
    return AgreementReport(
        level=level,
        signed=signed,
        raters=names,
        categories=tuple(float(c) for c in categories),
        n_units=array.shape[0],
        n_ratings=int((~np.isnan(array)).sum()),
        seed=seed,
        n_boot=n_boot,
        confidence=confidence,
        undefined_reason=_table_reason(array),
        alpha=estimate(_alpha_statistic(array, level, f"krippendorff_alpha_{level}")),
        alpha_winner=alpha_winner,
        fleiss_kappa=estimate(_fleiss_statistic(winners, f"fleiss_kappa{suffix}")),
        pairs=tuple(pair_agreement(i, j) for i in range(len(names)) for j in range(i + 1, len(names))),
    )
