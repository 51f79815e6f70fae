"""Serve the comparisons of an actively ordered set: most informative for the judge choice first, draws recorded.

Registered with ``annotation.labelling.serving`` for the order "active" (``calibration.apps``): labelling serves such a
set
through it without importing calibration.

The draw itself (priorities, probabilities, the estimator that corrects for them) is pure and lives in
``annotation.labelling.active``; this module reads the set, its candidate judges' verdicts and the labels so far, and
records
each draw as a ``calibration.ServedComparison``. The candidate judges are those of the set's latest calibration run
with verdicts; before any, every priority is 0 and the draw is stratified random (still recorded).

Serving keeps what the stratified random order guarantees: strata (dimension, language) are served in turn (the one
with the lowest served share next), the experts assigned to a comparison when the set was built all label it
(an expert's next comparison is the earliest served one assigned to them, so overlap for reliability is kept), and
the left/right order each expert sees stays the seeded one of their assignment.
"""

import numpy as np
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import F

from annotation.labelling import active, serving
from annotation.labelling.models import Comparison, ComparisonSet, ExpertLabel, LabelAssignment
from calibration.models import CalibrationRun, JudgeVerdict, ServedComparison

ACTIVE = "active"


def _pending_served(comparison_set: ComparisonSet, expert: AbstractBaseUser, after: int | None):  # noqa: ANN202
    pending = LabelAssignment.objects.filter(
        comparison_set=comparison_set, expert=expert, labelled_at__isnull=True, comparison__served__isnull=False
    ).order_by(F("skipped_at").asc(nulls_first=True), "comparison__served__position")
    return pending.exclude(pk=after) if after is not None else pending


@serving.register(ACTIVE)
def active_next(
    *, comparison_set: ComparisonSet, expert: AbstractBaseUser, after: int | None = None
) -> LabelAssignment | None:
    """Return the expert's next assignment in active order, drawing (and recording) new comparisons as needed.

    The earliest served comparison the expert has not labelled comes first; when there is none, comparisons are
    drawn for the whole set until one assigned to this expert comes up (the others stay served for their experts).
    """
    nxt = _pending_served(comparison_set, expert, after).first()
    if nxt is not None:
        return nxt
    with transaction.atomic():
        # One draw at a time per set: positions are consecutive and every probability is that of its moment.
        ComparisonSet.objects.select_for_update().filter(pk=comparison_set.pk).first()
        nxt = _pending_served(comparison_set, expert, after).first()
        if nxt is not None:
            return nxt
        mine = set(
            LabelAssignment.objects.filter(
                comparison_set=comparison_set, expert=expert, labelled_at__isnull=True, comparison__served=None
            )
            .exclude(pk=after)
            .values_list("comparison_id", flat=True)
        )
        if not mine:
            return None
        state = _DrawState(comparison_set)
        while True:
            drawn = state.draw()
            if drawn is None:
                return None
            if drawn in mine:
                return LabelAssignment.objects.get(comparison_id=drawn, expert=expert)


class _DrawState:
    """The set's strata, what is served, the candidate judges' winners and current estimates, for one serve."""

    def __init__(self, comparison_set: ComparisonSet) -> None:
        self.comparison_set = comparison_set
        rows = Comparison.objects.filter(comparison_set=comparison_set).values_list("id", "dimension_id", "language")
        self.stratum = {pk: (dim, lang) for pk, dim, lang in rows}
        self.sizes: dict[tuple, int] = {}
        for key in self.stratum.values():
            self.sizes[key] = self.sizes.get(key, 0) + 1
        served = ServedComparison.objects.filter(comparison_set=comparison_set)
        self.served = set(served.values_list("comparison_id", flat=True))
        self.position = served.count()
        self.winners, self.best = _judge_winners_and_best(comparison_set, self.served)

    def draw(self) -> int | None:
        """Draw and record one comparison of the stratum served least so far; None when all are served."""
        served_per = {key: 0 for key in self.sizes}
        for pk in self.served:
            served_per[self.stratum[pk]] += 1
        open_strata = [k for k in sorted(self.sizes) if served_per[k] < self.sizes[k]]
        if not open_strata:
            return None
        key = min(open_strata, key=lambda k: (served_per[k] / self.sizes[k], k))
        candidates = sorted(pk for pk, k in self.stratum.items() if k == key and pk not in self.served)
        if self.winners:
            matrix = np.array([self.winners.get(pk, [np.nan] * len(self.best)) for pk in candidates], dtype=float)
            weights = active.priorities(matrix, np.asarray(self.best))
        else:
            weights = np.zeros(len(candidates))
        seed = self.comparison_set.seed
        rng = np.random.default_rng([abs(seed), int(seed < 0), self.position])
        index, probability = active.draw(weights, rng=rng)
        chosen = candidates[index]
        self.position += 1
        ServedComparison.objects.create(
            comparison_set=self.comparison_set,
            comparison_id=chosen,
            position=self.position,
            probability=probability,
            remaining=len(candidates),
            priority=float(weights[index]),
        )
        self.served.add(chosen)
        return chosen


def _judge_winners_and_best(comparison_set: ComparisonSet, served: set[int]) -> tuple[dict[int, list], list[float]]:
    """Return each comparison's winner per candidate judge and each judge's current P(best)."""
    from calibration.report import combine_orders  # deferred: the report's statistics load only when needed

    run = CalibrationRun.objects.filter(comparison_set=comparison_set, verdicts__isnull=False).order_by("-created_at")
    run = run.first()
    if run is None:
        return {}, []
    judge_ids = sorted(run.judge_runs.values_list("judge_id", flat=True))
    orders: dict[tuple[int, int], dict[str, float]] = {}
    verdicts = JudgeVerdict.objects.filter(calibration_run=run, parsed=True)
    for judge_id, comparison_id, order, score in verdicts.values_list("judge_id", "comparison_id", "order", "score"):
        orders.setdefault((comparison_id, judge_id), {})[order] = score
    winners: dict[int, list] = {}
    for (comparison_id, judge_id), both in orders.items():
        combined = combine_orders(run.combine_rule, both.get("AB"), both.get("BA"))
        row = winners.setdefault(comparison_id, [np.nan] * len(judge_ids))
        row[judge_ids.index(judge_id)] = np.nan if combined is None else float(np.sign(combined))
    scores: dict[int, list[int]] = {}
    for comparison_id, score in ExpertLabel.objects.filter(assignment__comparison_id__in=served).values_list(
        "assignment__comparison_id", "score"
    ):
        scores.setdefault(comparison_id, []).append(score)
    estimates, errors = [], []
    for j in range(len(judge_ids)):
        hits = []
        for comparison_id, given in scores.items():
            votes = np.sign(given)
            values, counts = np.unique(votes, return_counts=True)
            majority = values[counts.argmax()] if (counts == counts.max()).sum() == 1 else 0.0
            judged = winners.get(comparison_id, [np.nan] * len(judge_ids))[j]
            if not np.isnan(judged):
                hits.append(float(judged == majority))
        n = len(hits)
        mean = float(np.mean(hits)) if n else np.nan
        estimates.append(mean)
        # Before labels the judges are equally likely to be best; a wide error says so.
        errors.append(float(np.sqrt(max(mean * (1 - mean), 0.05) / n)) if n else 1.0)
    best = active.best_probabilities(np.nan_to_num(np.array(estimates), nan=0.5), np.array(errors), seed=len(served))
    return winners, [float(b) for b in best]
