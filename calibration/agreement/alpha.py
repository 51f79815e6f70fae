"""Compute Krippendorff's alpha of a label table, on its own or with a judge added as one more rater."""

import contextlib
from dataclasses import replace

import krippendorff
import numpy as np

from calibration.agreement.bootstrap import _check_bootstrap, _estimate, _Resamples, _Statistic
from calibration.agreement.core import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    LEVELS,
    NO_PAIRABLE_UNITS,
    NO_RATINGS,
    ArrayLike,
    Estimate,
    FloatArray,
    Level,
    UndefinedStatistic,
)
from calibration.agreement.tables import _rater_reason, _same_length, _table, _value_counts, _vector


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
    negative = table[table < 0]
    if level == "ratio" and negative.size:
        # The ratio metric ((c - k) / (c + k))^2 needs a true zero: it would count -1 and +1 as agreeing.
        raise ValueError(f"the ratio level needs values of 0 or more; got {negative[0]:g}")
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
