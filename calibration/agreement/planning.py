"""Plan the precision of a calibration: how many more labelled comparisons reach a target, no ORM.

The agreement of a judge with the experts is a mean of per-comparison indicators (the judge names the experts'
majority winner or not), so its standard error shrinks as ``1 / sqrt(n)``. Comparisons that share an item are
not independent: the design effect ``1 + (m - 1) * icc`` (Kish 1965; ``m`` the size-weighted mean number of
comparisons per item, ``icc`` the one-way ANOVA intra-item correlation) inflates the variance, so ``n`` labelled
comparisons are worth ``n / design_effect`` independent ones.

A projection that plugs in the values seen so far as if they were the true ones reaches its target only about half
the time, and for a small lead far less (the observed lead of two close judges is mostly noise). So both plans are
made for a stated assurance (80% by default):

- the half-width plan is the total at which the half-width is at most the target with that probability, allowing
  for the spread of the variance estimate (``comparisons_for_half_width_assured``);
- the lead plan is made at the lower confidence bound of the lead (one-sided, at the assurance level): with that
  confidence the true lead is at least that large, so the planned comparisons have at least the stated power. When
  the bound is not above zero, or the plan exceeds the affordable budget (``BUDGET_FACTOR`` times the comparisons so
  far unless given), the judges are reported as too close to separate. Each plan reports the probability that its
  comparisons settle the choice: the predictive probability (assurance) that the final paired test is significant,
  averaged over the lead's normal posterior under a flat prior (``settle_probability``).
"""

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from calibration.agreement.core import ArrayLike

ASSURANCE = 0.8
BUDGET_FACTOR = 20


def design_effect(values: ArrayLike, clusters: ArrayLike) -> float:
    """Return Kish's design effect ``1 + (m0 - 1) * icc`` of ``values`` clustered by ``clusters``; at least 1.

    ``icc`` is the one-way ANOVA estimator ``(MSB - MSW) / (MSB + (m0 - 1) MSW)`` with
    ``m0 = (N - sum(m_i^2) / N) / (k - 1)``, clipped at 0 (negative intra-cluster correlation is treated as none).
    NaN values are left out. With fewer than two clusters, or no replication inside clusters, it is 1.
    """
    y = np.asarray(values, dtype=float)
    groups = np.asarray(clusters)
    keep = ~np.isnan(y)
    y, groups = y[keep], groups[keep]
    if y.size < 2:
        return 1.0
    _labels, index, sizes = np.unique(groups, return_inverse=True, return_counts=True)
    k, total = sizes.size, y.size
    if k < 2 or k == total:
        return 1.0
    means = np.bincount(index, weights=y) / sizes
    grand = y.mean()
    msb = float(np.sum(sizes * (means - grand) ** 2) / (k - 1))
    msw = float(np.sum((y - means[index]) ** 2) / (total - k))
    m0 = (total - np.sum(sizes**2) / total) / (k - 1)
    denominator = msb + (m0 - 1) * msw
    icc = 0.0 if denominator <= 0 else max(0.0, (msb - msw) / denominator)
    mean_size = float(np.sum(sizes**2) / total)
    return 1.0 + (mean_size - 1.0) * icc


def comparisons_for_half_width(*, n: int, half_width: float, target: float) -> int | None:
    """Return the total comparisons at which the half-width ``half_width`` seen with ``n`` shrinks to ``target``.

    Half-width scales as ``1 / sqrt(n)``: ``n_target = n * (half_width / target) ** 2``, rounded up. None when the
    current half-width is unknown or the target is not positive.
    """
    if n <= 0 or target <= 0 or half_width is None or not math.isfinite(half_width):
        return None
    return max(n, math.ceil(n * (half_width / target) ** 2 - 1e-9))


def comparisons_for_half_width_assured(
    *, n: int, half_width: float, target: float, mean: float | None = None, assurance: float = ASSURANCE
) -> int | None:
    """Return the total comparisons at which the half-width is at most ``target`` with probability ``assurance``.

    The half-width is ``z * s * sqrt(deff / N)``, so it meets the target when the variance estimate ``s^2`` stays
    below ``target^2 * N / (z^2 deff)``. For 0/1 indicators with agreement ``mean`` the variance estimate of ``N``
    comparisons is approximately normal with variance ``sigma^2 (1 - 4 sigma^2) / N`` (``sigma^2 = mean (1 - mean)``);
    the current one adds its own uncertainty (``/ n``). The smallest ``N`` whose ``assurance`` quantile is below the
    bound is returned (never less than the point projection). Without ``mean`` it is the point projection.
    """
    projected = comparisons_for_half_width(n=n, half_width=half_width, target=target)
    if projected is None or mean is None or not 0 < mean < 1:
        return projected
    variance = mean * (1 - mean)
    spread = variance * max(0.0, 1 - 4 * variance)
    z = float(norm.ppf(assurance))
    # half_width^2 * n / variance = z_conf^2 * deff, the factor that turns a variance into a squared half-width.
    scale = half_width**2 * n / variance
    total = projected
    while total < 1000 * projected:
        if variance + z * math.sqrt(spread * (1 / n + 1 / total)) <= target**2 * total / scale:
            return total
        total = max(total + 1, math.ceil(total * 1.01))
    return None


def settle_probability(
    *,
    mean_difference: float,
    sd_difference: float,
    n: int,
    total: int,
    design_effect: float = 1.0,
    confidence: float = 0.95,
) -> float | None:
    """Return the predictive probability that ``total`` comparisons make the paired lead significant (two-sided).

    The lead's posterior after ``n`` comparisons is ``N(d, s^2 / n)`` with ``s^2 = sd^2 * deff`` (flat prior); the
    final mean over ``total`` comparisons then has predictive spread ``s * sqrt((total - n) / (total * n))``, and
    either sign counts (the choice is settled whichever judge turns out ahead). None without a variance.
    """
    if not sd_difference > 0 or n <= 0 or not math.isfinite(mean_difference):
        return None
    s = sd_difference * math.sqrt(design_effect)
    z = float(norm.ppf(1 - (1 - confidence) / 2))
    a = abs(mean_difference) * math.sqrt(total) / s
    if total <= n:
        return float(abs(mean_difference) * math.sqrt(n) / s > z)
    w = math.sqrt((total - n) / n)
    return float(norm.cdf((a - z) / w) + norm.cdf((-a - z) / w))


@dataclass(frozen=True)
class LeadPlan:
    """The comparisons that settle the choice between the top two judges with the stated assurance, or why not."""

    needed_total: int | None
    lower_bound: float
    budget_total: int
    too_close: bool
    settle_probability: float | None
    settle_probability_at_budget: float | None


def lead_plan(
    *,
    mean_difference: float,
    sd_difference: float,
    n: int,
    design_effect: float = 1.0,
    confidence: float = 0.95,
    power: float = 0.8,
    assurance: float = ASSURANCE,
    budget_total: int | None = None,
) -> LeadPlan:
    """Plan the comparisons for the lead at its one-sided ``assurance`` lower bound, within ``budget_total``.

    ``needed_total`` is the textbook paired sample size (``comparisons_for_lead``) for the lower bound
    ``|d| - z_assurance * sd * sqrt(deff / n)``, never less than ``n``. The judges are too close when that bound is
    not above zero or the plan exceeds the budget (default ``BUDGET_FACTOR * n``); ``needed_total`` is then None.
    """
    budget = budget_total if budget_total is not None else BUDGET_FACTOR * max(n, 1)
    se = sd_difference * math.sqrt(design_effect / n) if n > 0 and sd_difference > 0 else math.inf
    bound = abs(mean_difference) - float(norm.ppf(assurance)) * se if math.isfinite(se) else 0.0
    needed = None
    if bound > 0:
        needed = comparisons_for_lead(
            mean_difference=bound,
            sd_difference=sd_difference,
            design_effect=design_effect,
            confidence=confidence,
            power=power,
        )
        needed = None if needed is None else max(n, needed)
    too_close = needed is None or needed > budget
    if too_close:
        needed = None
    common = {
        "mean_difference": mean_difference,
        "sd_difference": sd_difference,
        "n": n,
        "design_effect": design_effect,
        "confidence": confidence,
    }
    return LeadPlan(
        needed_total=needed,
        lower_bound=float(bound),
        budget_total=int(budget),
        too_close=too_close,
        settle_probability=None if needed is None else settle_probability(total=needed, **common),
        settle_probability_at_budget=settle_probability(total=max(budget, n), **common),
    )


def comparisons_for_lead(
    *,
    mean_difference: float,
    sd_difference: float,
    design_effect: float = 1.0,
    confidence: float = 0.95,
    power: float = 0.8,
) -> int | None:
    """Return the comparisons at which a paired lead of ``mean_difference`` is significant (two-sided test).

    The point projection: ``lead_plan`` calls it at the lead's lower bound, which is what the page shows.

    Textbook sample size of a paired test: ``n = deff * ((z_(1-a/2) + z_power) * sd / d) ** 2`` with ``sd`` the
    standard deviation of the per-comparison difference. None when there is no lead (``d`` = 0) or no variance.
    """
    if not mean_difference or not math.isfinite(mean_difference) or not sd_difference > 0:
        return None
    z = norm.ppf(1 - (1 - confidence) / 2) + (norm.ppf(power) if power > 0.5 else 0.0)
    return math.ceil(design_effect * (z * sd_difference / abs(mean_difference)) ** 2 - 1e-9)


def expert_hours(*, comparisons: int, labels_per_comparison: float, seconds_per_label: float | None) -> float | None:
    """Return the expert hours that ``comparisons`` more comparisons cost; None without recorded times."""
    if seconds_per_label is None or not math.isfinite(seconds_per_label):
        return None
    return comparisons * labels_per_comparison * seconds_per_label / 3600.0


@dataclass(frozen=True)
class PlanRow:
    """The planning figures of one judge, or of the difference between the best two."""

    name: str
    value: float | None
    half_width: float | None
    n: int
    design_effect: float
    needed_total: int | None
    more_comparisons: int | None
    more_labels: int | None
    more_hours: float | None
    projected_total: int | None = None

    def as_dict(self) -> dict:
        """Return the row as plain values."""
        return dict(self.__dict__)


def _row(
    name: str,
    value: float | None,
    half_width: float | None,
    n: int,
    deff: float,
    needed: int | None,
    inputs: dict,
    projected: int | None = None,
) -> PlanRow:
    more = None if needed is None else max(0, needed - n)
    per = inputs.get("labels_per_comparison") or 0.0
    return PlanRow(
        name=name,
        value=value,
        half_width=half_width,
        n=n,
        design_effect=deff,
        needed_total=needed,
        more_comparisons=more,
        more_labels=None if more is None else math.ceil(more * per),
        more_hours=None
        if more is None
        else expert_hours(
            comparisons=more, labels_per_comparison=per, seconds_per_label=inputs.get("seconds_per_label")
        ),
        projected_total=projected,
    )


def plan(
    inputs: dict,
    *,
    target_half_width: float,
    confidence: float = 0.95,
    power: float = 0.8,
    assurance: float = ASSURANCE,
    budget_total: int | None = None,
) -> dict:
    """Return the planning rows from the report's planning inputs (``calibration.report.planning_inputs``).

    Each judge row gives the comparisons at which its agreement interval has half-width ``target_half_width`` with
    probability ``assurance`` (``projected_total`` is the point projection); the ``lead`` row those at which the
    top judge's lead over the second is significant at ``confidence`` with ``power``, planned at the lead's lower
    bound (``lead_plan``), or ``too_close`` when no affordable number does.
    """
    judges = []
    for name, row in sorted(inputs.get("judges", {}).items()):
        n, half = row["n"], row.get("half_width")
        projected = comparisons_for_half_width(n=n, half_width=half, target=target_half_width)
        needed = comparisons_for_half_width_assured(
            n=n, half_width=half, target=target_half_width, mean=row.get("value"), assurance=assurance
        )
        judges.append(
            _row(name, row.get("value"), half, n, row.get("design_effect", 1.0), needed, inputs, projected).as_dict()
        )
    lead = None
    diff = inputs.get("lead")
    if diff:
        lead_result = lead_plan(
            mean_difference=diff["mean"],
            sd_difference=diff["sd"],
            n=diff["n"],
            design_effect=diff.get("design_effect", 1.0),
            confidence=confidence,
            power=power,
            assurance=assurance,
            budget_total=budget_total,
        )
        projected = comparisons_for_lead(
            mean_difference=diff["mean"],
            sd_difference=diff["sd"],
            design_effect=diff.get("design_effect", 1.0),
            confidence=confidence,
            power=power,
        )
        half = None
        if diff["n"] > 0 and diff["sd"] > 0:
            half = float(norm.ppf(1 - (1 - confidence) / 2) * diff["sd"] * math.sqrt(diff["design_effect"] / diff["n"]))
        significant = half is not None and abs(diff["mean"]) > half
        lead = {
            **_row(
                f"{diff['first']} − {diff['second']}",
                diff["mean"],
                half,
                diff["n"],
                diff["design_effect"],
                lead_result.needed_total,
                inputs,
                projected,
            ).as_dict(),
            "first": diff["first"],
            "second": diff["second"],
            "significant_now": significant,
            "no_lead": not diff["mean"],
            "too_close": lead_result.too_close and not significant and bool(diff["mean"]),
            "lower_bound": lead_result.lower_bound,
            "budget_total": lead_result.budget_total,
            "settle_probability": lead_result.settle_probability,
            "settle_probability_at_budget": lead_result.settle_probability_at_budget,
        }
    return {
        "target_half_width": target_half_width,
        "confidence": confidence,
        "power": power,
        "assurance": assurance,
        "judges": judges,
        "lead": lead,
        "seconds_per_label": inputs.get("seconds_per_label"),
        "labels_per_comparison": inputs.get("labels_per_comparison"),
    }


def planning_inputs(
    *,
    agreements: dict[str, ArrayLike],
    items: ArrayLike,
    labels_per_comparison: float,
    seconds_per_label: float | None,
    confidence: float = 0.95,
) -> dict:
    """Summarise per-comparison agreement indicators (1, 0, NaN when undefined) for ``plan``.

    ``agreements`` maps a judge to its indicator per comparison; ``items`` names each comparison's item (the
    cluster). The half-width is the normal one, ``z * sd * sqrt(deff / n)``. The lead is the paired difference of
    the two judges with the highest agreement, over the comparisons both have.
    """
    z = float(norm.ppf(1 - (1 - confidence) / 2))
    clusters = np.asarray(items)
    judges, means = {}, {}
    for name, values in agreements.items():
        y = np.asarray(values, dtype=float)
        defined = ~np.isnan(y)
        n = int(defined.sum())
        deff = design_effect(y, clusters)
        value = float(y[defined].mean()) if n else None
        half = float(z * y[defined].std(ddof=1) * math.sqrt(deff / n)) if n > 1 else None
        judges[name] = {"value": value, "n": n, "half_width": half, "design_effect": deff}
        if value is not None:
            means[name] = value
    lead = None
    ranked = sorted(means, key=lambda k: (-means[k], k))
    if len(ranked) >= 2:
        first, second = ranked[0], ranked[1]
        diff = np.asarray(agreements[first], dtype=float) - np.asarray(agreements[second], dtype=float)
        defined = ~np.isnan(diff)
        n = int(defined.sum())
        lead = {
            "first": first,
            "second": second,
            "mean": float(diff[defined].mean()) if n else 0.0,
            "sd": float(diff[defined].std(ddof=1)) if n > 1 else 0.0,
            "n": n,
            "design_effect": design_effect(diff, clusters),
        }
    return {
        "judges": judges,
        "lead": lead,
        "labels_per_comparison": float(labels_per_comparison),
        "seconds_per_label": seconds_per_label,
        "confidence": confidence,
    }
