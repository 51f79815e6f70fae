"""Reads of screening shared by pages, the API and commands: queues, progress and round statistics."""

from collections import Counter, defaultdict
from dataclasses import dataclass

import numpy as np
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet
from django.utils.translation import gettext as _

from screening.models import Criterion, Review, ReviewAssignment, RoundItem, ScreeningRound


def round_overview(*, reviewer: AbstractBaseUser) -> list[tuple[ScreeningRound, int, int]]:
    """Return every round, open ones first and newest first, with the reviewer's (submitted, assigned)."""
    rounds = ScreeningRound.objects.select_related("benchmark").order_by("status", "-opened_at")
    overview = []
    for r in rounds:
        done, total = reviewer_progress(round=r, reviewer=reviewer)
        overview.append((r, done, total))
    return overview


def round_items(*, round: ScreeningRound) -> QuerySet[RoundItem]:
    """Return the items of a round with their dimensions, by uid."""
    return round.round_items.select_related("item", "item__dimension").order_by("item__uid")


def next_conflict(*, round: ScreeningRound) -> RoundItem | None:
    """Return the first item of the round, by uid, whose reviews are still in conflict."""
    return round.round_items.filter(outcome=RoundItem.Outcome.CONFLICT).order_by("item__uid").first()


def review_assignment(*, round: ScreeningRound, pk: int) -> ReviewAssignment | None:
    """Return an assignment of the round with the item, dimension and revision under review; None if none."""
    return (
        ReviewAssignment.objects.select_related(
            "round_item__item__dimension", "round_item__revision", "round_item__round"
        )
        .filter(pk=pk, round_item__round=round)
        .first()
    )


def round_item_reviews(*, round_item: RoundItem) -> list[tuple[AbstractBaseUser, Review | None]]:
    """Return (reviewer, their review or None) for every reviewer assigned to the item, by username."""
    return [
        (a.reviewer, getattr(a, "review", None))
        for a in round_item.assignments.select_related("reviewer", "review").order_by("reviewer__username")
    ]


def reviewer_queue(*, round: ScreeningRound, reviewer: AbstractBaseUser) -> QuerySet[ReviewAssignment]:
    """Return the reviewer's assignments in this round, in queue order."""
    return (
        ReviewAssignment.objects.filter(round_item__round=round, reviewer=reviewer)
        .select_related("round_item__item", "round_item__revision", "review")
        .order_by("position", "id")
    )


def reviewer_progress(*, round: ScreeningRound, reviewer: AbstractBaseUser) -> tuple[int, int]:
    """Return (submitted, assigned) for this reviewer in this round."""
    queue = reviewer_queue(round=round, reviewer=reviewer)
    done = queue.filter(review__status=Review.Status.SUBMITTED).count()
    return done, queue.count()


def next_assignment(
    *, round: ScreeningRound, reviewer: AbstractBaseUser, after: int | None = None
) -> ReviewAssignment | None:
    """Return the reviewer's next unsubmitted assignment (after the given one, wrapping around)."""
    pending = [a for a in reviewer_queue(round=round, reviewer=reviewer) if not _submitted(a)]
    if after is not None:
        later = [a for a in pending if a.pk != after]
        ids = [a.pk for a in pending]
        if after in ids:
            index = ids.index(after)
            later = pending[index + 1 :] + pending[:index]
        pending = later
    return pending[0] if pending else None


def _submitted(assignment: ReviewAssignment) -> bool:
    review = getattr(assignment, "review", None)
    return review is not None and review.status == Review.Status.SUBMITTED


@dataclass
class RoundStats:
    decisions: dict
    per_dimension: dict
    per_criterion: dict
    alpha: float | None
    alpha_note: str
    throughput: list[dict]
    progress: tuple[int, int]


def round_statistics(*, round: ScreeningRound) -> RoundStats:
    """Decisions per criterion and dimension, reviewer agreement (Krippendorff's alpha, nominal), throughput."""
    import krippendorff

    assignments = list(
        ReviewAssignment.objects.filter(round_item__round=round).select_related(
            "round_item__item__dimension", "reviewer", "review"
        )
    )
    submitted = [a for a in assignments if _submitted(a)]
    decisions = Counter(a.review.decision for a in submitted)
    per_dimension: dict = defaultdict(Counter)
    for a in submitted:
        per_dimension[a.round_item.item.dimension.name][a.review.decision] += 1
    per_criterion: dict = {}
    criteria = {c.code: c for c in round.criteria.all()}
    for code, criterion in criteria.items():
        values = [a.review.scores[code] for a in submitted if code in a.review.scores]
        if criterion.scale == Criterion.Scale.PASS_FAIL:
            passed = sum(1 for v in values if v == "pass")
            per_criterion[criterion.name] = {"n": len(values), "pass_rate": passed / len(values) if values else None}
        else:
            per_criterion[criterion.name] = {"n": len(values), "mean": float(np.mean(values)) if values else None}
    reviewers = sorted({a.reviewer for a in assignments}, key=lambda u: u.get_username())
    units = sorted({a.round_item_id for a in submitted})
    codes = {"accept": 0.0, "revise": 1.0, "reject": 2.0}
    alpha, note = None, ""
    if len(reviewers) < 2 or not units:
        note = _("Agreement needs at least two reviewers with submitted reviews.")
    else:
        matrix = np.full((len(reviewers), len(units)), np.nan)
        r_index = {u.pk: i for i, u in enumerate(reviewers)}
        u_index = {u: j for j, u in enumerate(units)}
        for a in submitted:
            matrix[r_index[a.reviewer_id], u_index[a.round_item_id]] = codes[a.review.decision]
        paired = np.sum(~np.isnan(matrix), axis=0) >= 2
        values = matrix[~np.isnan(matrix)]
        if not paired.any():
            note = _("No item has two submitted reviews yet.")
        elif len(set(values.tolist())) < 2:
            note = _("Every review has the same decision, so agreement beyond chance is undefined.")
        else:
            alpha = float(krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal"))
    throughput = []
    for reviewer in reviewers:
        mine = [a for a in submitted if a.reviewer_id == reviewer.pk]
        seconds = [(a.review.submitted_at - a.review.started_at).total_seconds() for a in mine]
        throughput.append(
            {
                "reviewer": reviewer.get_username(),
                "assigned": sum(1 for a in assignments if a.reviewer_id == reviewer.pk),
                "submitted": len(mine),
                "median_seconds": float(np.median(seconds)) if seconds else None,
            }
        )
    return RoundStats(
        decisions=dict(decisions),
        per_dimension={k: dict(v) for k, v in sorted(per_dimension.items())},
        per_criterion=per_criterion,
        alpha=alpha,
        alpha_note=note,
        throughput=throughput,
        progress=(len(submitted), len(assignments)),
    )


def eligible_reviewers() -> list[AbstractBaseUser]:
    """Return active users who may review (experts, lead experts, admins)."""
    users = get_user_model().objects.filter(is_active=True).order_by("username")
    return [u for u in users if u.has_perm("screening.review_item")]
