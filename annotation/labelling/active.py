"""Active label allocation and its design-unbiased estimator: plain arrays, a seed, no ORM.

A comparison set in active order serves comparisons one at a time. Within the stratum (dimension, language) whose
served share is lowest, the next comparison is drawn from those not yet served with probability

    q_i = epsilon / R + (1 - epsilon) * w_i / sum(w)        (R comparisons left in the stratum)

where ``w_i`` is the comparison's priority: the chance that it changes which judge is chosen, i.e. the sum over
pairs of candidate judges that name different winners on it of P(judge j is best) * P(judge k is best). The
``epsilon`` share keeps every comparison drawable, so the probability of each draw is known and positive.

Because every draw has a recorded probability, the stratum total of any per-comparison quantity ``y`` (e.g. 1 when a
judge names the experts' majority winner) is estimated without bias by Raj's (1956) estimator for sequential
sampling with unequal probabilities without replacement: ``T_t = sum(y_s, s < t) + y_t / q_t`` is unbiased for the
total at every step, so their mean is too, with variance estimate ``sum((T_t - mean T)^2) / (n (n - 1))``.
Strata combine by their sizes.

Small strata made the plain interval too short: a comparison drawn through the uniform share alone contributes
``y / q = R / epsilon``. The uniform share is 0.5 (weights at most ``2 R``); the reported interval is Korn and
Graubard's for a share (``proportion_interval``), whose asymmetry follows the estimate's (a share near 1 is
over-estimated when its estimated variance is small), with Satterthwaite's degrees of freedom over the strata,
each stratum's counted with its kurtosis (``variance_freedom``: a few heavy weights make ``T_t`` heavy-tailed).
``scripts/bench_raj_coverage.py`` measures coverage on a sweep of strata, sizes, draws and agreement levels;
``tests/calibration/test_active_design.py`` asserts >= 0.94 on a smaller one.
"""

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.stats import beta, norm
from scipy.stats import t as student_t

EPSILON = 0.5
CONFIDENCE = 0.95
BEST_DRAWS = 512

FloatArray = npt.NDArray[np.float64]


def best_probabilities(estimates: FloatArray, standard_errors: FloatArray, *, seed: int = 0) -> FloatArray:
    """Return P(judge is best) under independent normal posteriors ``N(estimate, se^2)`` (Monte Carlo, seeded).

    Works on the last axis: shape (..., judges) in, same shape out. A judge without an estimate (NaN) gets 0.
    """
    mean = np.nan_to_num(np.asarray(estimates, dtype=float), nan=-np.inf)
    se = np.nan_to_num(np.asarray(standard_errors, dtype=float), nan=0.0)
    rng = np.random.default_rng(seed)
    noise = rng.standard_normal((BEST_DRAWS, *mean.shape))
    draws = np.where(np.isfinite(mean), mean + se * noise, -np.inf)
    best = draws.argmax(axis=-1)
    counts = (best[..., None] == np.arange(mean.shape[-1])).sum(axis=0)
    return counts / BEST_DRAWS


def priorities(judge_winners: FloatArray, best: FloatArray) -> FloatArray:
    """Return each comparison's priority: sum over judge pairs naming different winners of P(j best) * P(k best).

    ``judge_winners`` is comparisons x judges (-1, 0, +1; NaN when a judge has no verdict, which never counts as a
    disagreement); ``best`` the probability of each judge being the best (``best_probabilities``). Leading axes
    broadcast (e.g. seeds x comparisons x judges with seeds x 1 x judges).
    """
    winners = np.asarray(judge_winners, dtype=float)
    best = np.asarray(best, dtype=float)
    n_judges = winners.shape[-1]
    result = np.zeros(np.broadcast_shapes(winners.shape[:-1], best.shape[:-1]))
    for j in range(n_judges):
        for k in range(j + 1, n_judges):
            differ = winners[..., j] != winners[..., k]
            differ &= ~np.isnan(winners[..., j]) & ~np.isnan(winners[..., k])
            result = result + differ * (best[..., j] * best[..., k])
    return result


def draw_probabilities(
    weights: FloatArray, *, epsilon: float = EPSILON, remaining: npt.ArrayLike | None = None
) -> FloatArray:
    """Return the probability of drawing each remaining comparison: epsilon uniform plus the rest by weight.

    ``weights`` holds the priorities along the last axis; ``remaining`` (same shape, default all) marks the
    comparisons not yet served, the others get probability 0. Without any positive weight the draw is uniform.
    """
    w = np.clip(np.asarray(weights, dtype=float), 0.0, None)
    left = np.ones(w.shape, dtype=bool) if remaining is None else np.asarray(remaining, dtype=bool)
    w = np.where(left, w, 0.0)
    n = left.sum(axis=-1, keepdims=True)
    total = w.sum(axis=-1, keepdims=True)
    uniform = np.divide(left, n, out=np.zeros(w.shape), where=n > 0)
    share = np.divide(w, total, out=uniform.copy(), where=total > 0)
    return epsilon * uniform + (1.0 - epsilon) * share


def draw(weights: FloatArray, *, rng: np.random.Generator, epsilon: float = EPSILON) -> tuple[int, float]:
    """Draw one remaining comparison; return its index among ``weights`` and its probability."""
    q = draw_probabilities(weights, epsilon=epsilon)
    index = int(rng.choice(q.size, p=q / q.sum()))
    return index, float(q[index])


@dataclass(frozen=True)
class DesignEstimate:
    """A design-unbiased mean, its standard error, t degrees of freedom, 95% interval and served comparisons.

    ``low``/``high`` is the reported 95% interval (``proportion_interval`` for a share, else ``value +- half_width``);
    ``half_width`` is the symmetric t half-width ``t * se`` that precision planning uses.
    """

    value: float | None
    standard_error: float | None
    n: int
    degrees_of_freedom: float | None = None
    half_width: float | None = None
    low: float | None = None
    high: float | None = None

    def as_dict(self) -> dict:
        """Return the estimate as plain values."""
        return {
            "value": self.value,
            "standard_error": self.standard_error,
            "n": self.n,
            "degrees_of_freedom": self.degrees_of_freedom,
            "half_width": self.half_width,
            "low": self.low,
            "high": self.high,
        }


def raj_totals(values: FloatArray, probabilities: FloatArray) -> FloatArray:
    """Return Raj's ``T_t = sum(y_s, s < t) + y_t / q_t`` for draws in served order (last axis)."""
    y = np.asarray(values, dtype=float)
    q = np.asarray(probabilities, dtype=float)
    before = np.cumsum(y, axis=-1) - y
    return before + y / q


def raj_total(values: FloatArray, probabilities: FloatArray) -> tuple[float, float]:
    """Return Raj's estimate of a stratum total and its variance estimate from draws in served order."""
    t = raj_totals(values, probabilities)
    n = t.size
    if n == 0:
        return float("nan"), float("nan")
    variance = float(np.sum((t - t.mean()) ** 2) / (n * (n - 1))) if n > 1 else float("nan")
    return float(t.mean()), variance


def stratified_mean(
    values: FloatArray,
    probabilities: FloatArray,
    strata: npt.ArrayLike,
    sizes: dict,
    *,
    defined: FloatArray | None = None,
) -> DesignEstimate:
    """Estimate the population mean of ``values`` from draws in served order, stratum by stratum.

    ``strata`` names each draw's stratum; ``sizes`` maps every stratum to its number of comparisons. A stratum with
    no draw yet makes the mean undefined. With ``defined`` (1 where the value exists) the result is the ratio of
    the two estimated totals (values are then 0 where undefined), with a linearised standard error.
    """
    y = np.asarray(values, dtype=float)
    q = np.asarray(probabilities, dtype=float)
    keys = np.asarray(strata)
    known = defined is None
    d = np.ones_like(y) if known else np.asarray(defined, dtype=float)
    undefined = DesignEstimate(value=None, standard_error=None, n=int(y.size))
    parts: list[tuple[FloatArray, FloatArray]] = []
    for key in sizes:
        mask = keys == key
        if not mask.any():
            return undefined
        parts.append((raj_totals(y[mask], q[mask]), raj_totals(d[mask], q[mask])))
    total_y = sum(ty.mean() for ty, _td in parts)
    # With every value defined the population size is known, and dividing by it keeps the mean exactly unbiased.
    total_d = float(sum(sizes.values())) if known else sum(td.mean() for _ty, td in parts)
    if total_d <= 0:
        return undefined
    ratio = total_y / total_d
    variances, freedoms = [], []
    for ty, td in parts:
        residual = ty if known else ty - ratio * td  # linearisation of the ratio estimator
        n = residual.size
        if n < 2:
            return DesignEstimate(value=float(ratio), standard_error=None, n=int(y.size))
        variances.append(float(np.sum((residual - residual.mean()) ** 2) / (n * (n - 1))))
        freedoms.append(variance_freedom(residual))
    variance = sum(variances)
    standard_error = float(np.sqrt(variance) / total_d)
    # Satterthwaite over the strata, each variance estimate with its kurtosis-adjusted degrees of freedom.
    spread = sum(v**2 / f for v, f in zip(variances, freedoms, strict=True))
    freedom = float(variance**2 / spread) if spread > 0 else float(sum(freedoms))
    quantile = float(student_t.ppf(1 - (1 - CONFIDENCE) / 2, freedom))
    half_width = quantile * standard_error
    if np.all((y >= 0) & (y <= 1)):
        low, high = proportion_interval(float(ratio), standard_error, freedom, n=int(y.size))
    else:
        low, high = float(ratio) - half_width, float(ratio) + half_width
    return DesignEstimate(
        value=float(ratio), standard_error=standard_error, n=int(y.size), degrees_of_freedom=freedom,
        half_width=half_width, low=low, high=high,
    )


def variance_freedom(values: FloatArray) -> float:
    """Return the degrees of freedom of the sample variance of ``values``, allowing for their kurtosis.

    The variance of ``s^2`` is ``sigma^4 (2 / (n - 1) + (kappa - 3) / n)`` for values of kurtosis ``kappa``, so its
    degrees of freedom (``2 sigma^4 / Var(s^2)``) are ``n - 1`` for normal values and fewer for heavy-tailed ones,
    such as Raj's ``T_t`` when a few draws carry large weights ``y / q``. ``kappa`` is the moment estimate
    ``m4 / m2^2``; a light tail (``kappa < 3``) keeps ``n - 1``.
    """
    x = np.asarray(values, dtype=float)
    n = x.size
    centred = x - x.mean()
    m2 = float(np.mean(centred**2))
    kappa = float(np.mean(centred**4)) / m2**2 if m2 > 0 else 3.0
    return 2.0 / (2.0 / (n - 1) + max(kappa - 3.0, 0.0) / n)


def proportion_interval(
    value: float, standard_error: float, degrees_of_freedom: float, *, n: int, confidence: float = CONFIDENCE
) -> tuple[float, float]:
    """Return Korn and Graubard's (1998) interval for a design-weighted share (as R's ``svyciprop(method="beta")``).

    The Clopper-Pearson interval at the effective sample size ``n* = p (1 - p) / se^2``, shrunk by
    ``(z / t_df)^2`` for the degrees of freedom of the variance estimate. It is asymmetric where it should be: a
    share near 1 has a small estimated variance exactly when it is over-estimated, which made the symmetric
    ``value +- t se`` interval miss high. Where ``n*`` is undefined (a share of 0 or 1, or no spread) the ``n``
    draws stand in for it. The estimate is clipped to [0, 1] first (Raj's estimator can leave it).
    """
    p = min(max(value, 0.0), 1.0)
    alpha = 1.0 - confidence
    effective = p * (1.0 - p) / standard_error**2 if 0.0 < p < 1.0 and standard_error > 0 else float(n)
    effective *= (norm.ppf(1 - alpha / 2) / student_t.ppf(1 - alpha / 2, degrees_of_freedom)) ** 2
    successes = p * effective
    low = float(beta.ppf(alpha / 2, successes, effective - successes + 1)) if successes > 0 else 0.0
    high = float(beta.ppf(1 - alpha / 2, successes + 1, effective - successes)) if successes < effective else 1.0
    return low, high


def choose_by_lower_bound(
    estimates: FloatArray,
    standard_errors: FloatArray,
    *,
    confidence: float = 0.95,
    degrees_of_freedom: FloatArray | None = None,
) -> FloatArray:
    """Return the index of the judge with the highest lower bound ``estimate - z * se`` (last axis).

    With ``degrees_of_freedom`` (per judge) the t quantile replaces ``z``, as in ``DesignEstimate.half_width``.
    """
    if degrees_of_freedom is None:
        z = norm.ppf(1 - (1 - confidence) / 2)
    else:
        freedom = np.nan_to_num(np.asarray(degrees_of_freedom, dtype=float), nan=1.0)
        z = student_t.ppf(1 - (1 - confidence) / 2, np.maximum(freedom, 1.0))
    low = np.nan_to_num(np.asarray(estimates, dtype=float) - z * np.asarray(standard_errors, dtype=float), nan=-np.inf)
    return low.argmax(axis=-1)
