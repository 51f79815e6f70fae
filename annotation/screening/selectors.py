"""Reads of screening shared by pages, the API and commands: queues, progress and round statistics."""

from collections import defaultdict
from dataclasses import dataclass

import numpy as np
from django.contrib.auth.models import AbstractBaseUser
from django.core.cache import cache
from django.db import connection
from django.db.models import (
    Aggregate,
    Case,
    Count,
    F,
    FloatField,
    Min,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
    When,
)
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast, Coalesce, Extract
from django.utils.translation import gettext as _

from annotation.queue.selectors import queue_after, queue_counts, queue_next, queue_of, worker_assignments
from annotation.screening.agreement import nominal_alpha
from annotation.screening.models import Criterion, Review, ReviewAssignment, ReviewerProgress, RoundItem, ScreeningRound
from core.i18n import in_ui_language


def round_overview(
    *, reviewer: AbstractBaseUser, rounds: QuerySet[ScreeningRound] | None = None
) -> list[tuple[ScreeningRound, int, int]]:
    """Return every round (or those of ``rounds``, a filtered query set), open ones first and newest first, with the
    reviewer's (submitted, assigned)."""
    rounds = (ScreeningRound.objects.all() if rounds is None else rounds).select_related("benchmark")
    rounds = rounds.order_by("status", "-opened_at")
    progress = {
        round_id: (done, total)
        for round_id, done, total in ReviewerProgress.objects.filter(reviewer=reviewer).values_list(
            "round_id", "submitted", "assigned"
        )
    }
    return [(r, *progress.get(r.pk, (0, 0))) for r in rounds]


def round_items(*, round: ScreeningRound) -> QuerySet[RoundItem]:
    """Return the items of a round with their dimensions, by uid."""
    return round.round_items.select_related("item", "item__dimension", "adjudicated_by").order_by("item__uid")


def round_outcome_counts(*, round: ScreeningRound) -> dict:
    """Return the number of items in the round, of conflicts, and the id of a conflict to adjudicate first."""
    conflict = Q(outcome=RoundItem.Outcome.CONFLICT)
    return round.round_items.aggregate(
        items=Count("id"), conflicts=Count("id", filter=conflict), first_conflict=Min("id", filter=conflict)
    )


def next_conflict(*, round: ScreeningRound) -> RoundItem | None:
    """Return the first item of the round, by uid, whose reviews are still in conflict."""
    return round.round_items.filter(outcome=RoundItem.Outcome.CONFLICT).order_by("item__uid").first()


def review_assignment(*, round_id: int, pk: int) -> ReviewAssignment | None:
    """Return an assignment of the round with its round, item, dimension, revision and review; None if none."""
    return (
        ReviewAssignment.objects.select_related(
            "round_item__item__dimension", "round_item__revision", "round_item__round__benchmark", "review"
        )
        .filter(pk=pk, round_item__round_id=round_id)
        .first()
    )


def round_item_reviews(*, round_item: RoundItem) -> list[tuple[AbstractBaseUser, Review | None]]:
    """Return (reviewer, their review or None) for every reviewer assigned to the item, by username."""
    return [
        (a.reviewer, getattr(a, "review", None))
        for a in round_item.assignments.select_related("reviewer", "review").order_by("reviewer__username")
    ]


def reviewer_queue(*, round: ScreeningRound, reviewer: AbstractBaseUser) -> QuerySet[ReviewAssignment]:
    """Return the reviewer's assignments in this round, in queue order: their queue for ``annotation.queue``'s
    reads (next, previous, put aside)."""
    return queue_of(model=ReviewAssignment, owner=round, worker=reviewer).select_related(
        "round_item__item", "round_item__revision", "review"
    )


def reviewer_progress(*, round: ScreeningRound, reviewer: AbstractBaseUser) -> tuple[int, int]:
    """Return (submitted, assigned) for this reviewer in this round."""
    counts = reviewer_counts(round=round, reviewer=reviewer)
    return counts["done"], counts["total"]


def reviewer_counts(*, round: ScreeningRound, reviewer: AbstractBaseUser) -> dict[str, int]:
    """Return the reviewer's submitted (``done``), assigned (``total``) and put-aside pending (``skipped``) items,
    as stored (``ReviewerProgress``), not counted."""
    return queue_counts(model=ReviewAssignment, owner=round, worker=reviewer)


def next_assignment(
    *, round: ScreeningRound, reviewer: AbstractBaseUser, after: int | ReviewAssignment | None = None
) -> ReviewAssignment | None:
    """Return the reviewer's next unsubmitted assignment (after the given one, wrapping around: ``queue_next``)."""
    return queue_next(queue=reviewer_queue(round=round, reviewer=reviewer), after=after)


def assignment_after(*, round: ScreeningRound, reviewer: AbstractBaseUser, after: int) -> ReviewAssignment | None:
    """Return where the reviewer goes on after ``after`` (``queue_after``); None when their queue is done."""
    return queue_after(queue=reviewer_queue(round=round, reviewer=reviewer), after=after)


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


DECISION_CODES = ("accept", "revise", "reject")


class _Median(Aggregate):
    function = "PERCENTILE_CONT"
    template = "%(function)s(0.5) WITHIN GROUP (ORDER BY %(expressions)s)"
    output_field = FloatField()


OPEN_ROUND_STATISTICS_TTL_SECONDS = 30


def round_statistics(*, round: ScreeningRound) -> RoundStats:
    """Decisions per criterion and dimension, reviewer agreement (Krippendorff's alpha, nominal), throughput.

    A closed round's reviews cannot change, so its figures are read from ``round.statistics``, stored when it
    closed. An open round's are counted in the database and kept in the cache for half a minute.
    """
    if not round.is_open and round.statistics:
        data = round.statistics
    else:
        data = cache.get_or_set(
            f"screening:round-statistics:{round.pk}",
            lambda: round_statistics_data(round=round),
            OPEN_ROUND_STATISTICS_TTL_SECONDS,
        )
    def name(names: list[str]) -> str:
        return in_ui_language(names[0], names[1])

    notes = {
        "few_reviewers": _("Agreement needs at least two reviewers with submitted reviews."),
        "no_pairs": _("No item has two submitted reviews yet."),
        "no_variation": _("Every review has the same decision, so agreement beyond chance is undefined."),
    }
    per_dimension = [(name(d["name"]), d["decisions"]) for d in data["per_dimension"]]
    return RoundStats(
        decisions=data["decisions"],
        per_dimension=dict(sorted(per_dimension, key=lambda pair: pair[0])),
        per_criterion={name(c["name"]): c["figures"] for c in data["per_criterion"]},
        alpha=data["alpha"],
        alpha_note=notes.get(data["alpha_note"], ""),
        throughput=data["throughput"],
        progress=tuple(data["progress"]),
    )


def round_statistics_data(*, round: ScreeningRound) -> dict:
    """Count a round's statistics in the database and return them as JSON-ready data with names in both languages."""
    assignments = ReviewAssignment.objects.filter(round_item__round=round)
    submitted = assignments.filter(review__status=Review.Status.SUBMITTED)
    criteria = list(round.criteria.all())
    sums = {}
    for i, criterion in enumerate(criteria):
        sums[f"n{i}"] = Count("id", filter=Q(review__scores__has_key=criterion.code))
        if criterion.scale == Criterion.Scale.PASS_FAIL:
            sums[f"v{i}"] = Count("id", filter=Q(**{f"review__scores__{criterion.code}": "pass"}))
        else:
            sums[f"v{i}"] = Sum(Cast(KeyTextTransform(criterion.code, "review__scores"), FloatField()))
    dimension = "round_item__item__dimension"
    groups = (
        submitted.values(f"{dimension}_id", f"{dimension}__name_en", f"{dimension}__name_zh", "review__decision")
        .annotate(n=Count("id"), **sums)
        .order_by()
    )
    decisions: dict = defaultdict(int)
    dimensions: dict = {}
    totals = {key: 0.0 for key in sums}
    for row in groups:
        decision = row["review__decision"]
        decisions[decision] += row["n"]
        entry = dimensions.setdefault(
            row[f"{dimension}_id"],
            {"name": [row[f"{dimension}__name_en"], row[f"{dimension}__name_zh"]], "decisions": {}},
        )
        entry["decisions"][decision] = row["n"]
        for key in sums:
            totals[key] += row[key] or 0
    per_criterion = []
    for i, criterion in enumerate(criteria):
        n, value = int(totals[f"n{i}"]), totals[f"v{i}"]
        key = "pass_rate" if criterion.scale == Criterion.Scale.PASS_FAIL else "mean"
        per_criterion.append(
            {"name": [criterion.name_en, criterion.name_zh], "figures": {"n": n, key: value / n if n else None}}
        )
    throughput = _throughput(assignments)
    alpha, note = _alpha(round=round, reviewers=len(throughput), decisions=decisions)
    return {
        "decisions": dict(decisions),
        "per_dimension": list(dimensions.values()),
        "per_criterion": per_criterion,
        "alpha": alpha,
        "alpha_note": note,
        "throughput": throughput,
        "progress": [sum(decisions.values()), sum(t["assigned"] for t in throughput)],
    }


def _throughput(assignments: QuerySet[ReviewAssignment]) -> list[dict]:
    submitted = Q(review__status=Review.Status.SUBMITTED)
    seconds = Extract(F("review__submitted_at") - F("review__started_at"), "epoch")
    rows = (
        assignments.values("reviewer_id", "reviewer__username")
        .annotate(assigned=Count("id"), submitted=Count("id", filter=submitted))
        .order_by("reviewer__username")
    )
    if connection.vendor == "postgresql":
        rows = rows.annotate(median_seconds=_Median(Case(When(submitted, then=seconds))))
        medians = {r["reviewer_id"]: r["median_seconds"] for r in rows}
    else:
        # SQLite has no percentile aggregate; the small local databases read the durations instead.
        durations: dict = defaultdict(list)
        for reviewer_id, started, done in assignments.filter(submitted).values_list(
            "reviewer_id", "review__started_at", "review__submitted_at"
        ):
            durations[reviewer_id].append((done - started).total_seconds())
        medians = {pk: float(np.median(v)) for pk, v in durations.items()}
    return [
        {
            "reviewer": r["reviewer__username"],
            "assigned": r["assigned"],
            "submitted": r["submitted"],
            "median_seconds": medians.get(r["reviewer_id"]),
        }
        for r in rows
    ]


def _alpha(*, round: ScreeningRound, reviewers: int, decisions: dict) -> tuple[float | None, str]:
    """Return (alpha, note code): the database counts each item's decisions, then how many items share a pattern."""
    if reviewers < 2 or not decisions:
        return None, "few_reviewers"
    review, assignment, round_item = (m._meta.db_table for m in (Review, ReviewAssignment, RoundItem))
    counts = ", ".join(f"SUM(CASE WHEN r.decision = %s THEN 1 ELSE 0 END) AS c{i}" for i in range(3))
    sql = (
        f"SELECT c0, c1, c2, COUNT(*) FROM (SELECT {counts} FROM {review} r "
        f"JOIN {assignment} a ON a.id = r.assignment_id JOIN {round_item} ri ON ri.id = a.round_item_id "
        "WHERE ri.round_id = %s AND r.status = %s GROUP BY a.round_item_id) units GROUP BY c0, c1, c2"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*DECISION_CODES, round.pk, Review.Status.SUBMITTED])
        patterns = {(int(a), int(b), int(c)): n for a, b, c, n in cursor.fetchall()}
    if not any(sum(p) >= 2 for p in patterns):
        return None, "no_pairs"
    if len(decisions) < 2:
        return None, "no_variation"
    return nominal_alpha(patterns), ""


def round_item_list(*, round: ScreeningRound, outcome: str = "", dimension: str = "", kind: str = "") -> QuerySet:
    """Return the round's items by uid, filtered by outcome, dimension code and kind, with submitted review counts."""
    items = round_items(round=round).annotate(
        n_reviews=Count("assignments", filter=Q(assignments__review__status=Review.Status.SUBMITTED)),
        n_assigned=Count("assignments"),
    )
    if outcome:
        items = items.filter(outcome=outcome)
    if dimension:
        items = items.filter(item__dimension__code=dimension)
    if kind:
        items = items.filter(item__kind=kind)
    return items


def round_list(*, user: AbstractBaseUser, status: str = "", benchmark: str = "") -> QuerySet[ScreeningRound]:
    """Return rounds, open ones first and newest first, with their size and the user's own progress, in SQL."""
    mine = ReviewerProgress.objects.filter(round=OuterRef("pk"), reviewer=user.pk)
    rounds = ScreeningRound.objects.select_related("benchmark", "opened_by", "closed_by").annotate(
        n_items=F("size"),
        my_assigned=Coalesce(Subquery(mine.values("assigned")[:1]), 0),
        my_submitted=Coalesce(Subquery(mine.values("submitted")[:1]), 0),
    )
    if status:
        rounds = rounds.filter(status=status)
    if benchmark:
        rounds = rounds.filter(benchmark__slug=benchmark)
    return rounds.order_by("status", "-opened_at", "-id")


def reviewer_assignments(*, reviewer: AbstractBaseUser, round: int | None = None, state: str = "") -> QuerySet:
    """Return the reviewer's assignments in queue order; ``state`` is pending, submitted or skipped."""
    mine = worker_assignments(model=ReviewAssignment, worker=reviewer, owner=round, state=state)
    return mine.select_related("round_item__item", "review")
