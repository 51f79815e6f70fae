"""Hold the bootstrap machinery: shared unit resamples, statistics, percentile intervals and paired differences.

A statistic pairs a point formula with a batch formula over all resamples at once; ``_estimate`` and
``_difference`` turn statistics into ``Estimate`` results.
"""

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from calibration.agreement.core import BoolArray, Estimate, FloatArray, UndefinedStatistic


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
