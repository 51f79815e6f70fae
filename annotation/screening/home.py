"""Screening's parts of the home page ("My work") and of the item page: review queues, feedback, rounds to close.

Registered with ``core.home`` (``annotation.screening.apps``), so the pages below screening in the layers never import
it.
Every list is capped and every count grouped in SQL: the page costs the same at 100,000 items.
"""

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.contrib.auth.models import AbstractBaseUser
from django.core.cache import cache
from django.db.models import (
    CharField,
    Count,
    DateTimeField,
    Exists,
    F,
    IntegerField,
    Min,
    OuterRef,
    QuerySet,
    Subquery,
    Sum,
    Value,
)

from annotation.items.models import Item
from annotation.queue.selectors import progress_figures
from annotation.screening.models import Criterion, Review, ReviewAssignment, ReviewerProgress, RoundItem, ScreeningRound
from core import home
from core.i18n import in_ui_language

SENT_BACK_LIMIT = 10
CRITERIA_CACHE_KEY = "home:criterion-names"
CRITERIA_TTL_SECONDS = 300


@dataclass
class ReviewFeedback:
    """One submitted review of a closed round, as the item's author reads it."""

    reviewer: str
    decision: str
    decision_label: str
    comment: str
    scores: list[tuple[str, object]]
    submitted_at: object


@dataclass
class SentBack:
    """An item a closed round sent back to its author, with what the reviewers said."""

    round_item: object
    revised_since: bool
    reviews: list[ReviewFeedback] = field(default_factory=list)


def criterion_names() -> dict[str, str]:
    """Return every screening criterion's name in the interface language, by code.

    Criteria change rarely (in the admin), so their names are cached for a few minutes: pages that show reviews
    spend no query on them.
    """
    rows = cache.get_or_set(
        CRITERIA_CACHE_KEY,
        lambda: list(Criterion.objects.values_list("code", "name_en", "name_zh")),
        CRITERIA_TTL_SECONDS,
    )
    return {code: in_ui_language(name_en, name_zh) for code, name_en, name_zh in rows}


def _score_rows(scores: dict, names: dict[str, str]) -> list[tuple[str, object]]:
    return [(names.get(code, code), value) for code, value in scores.items()]


def review_feedback(assignments: object, names: dict[str, str]) -> list[ReviewFeedback]:
    """Turn submitted review assignments (with review and reviewer loaded) into feedback rows."""
    rows = []
    for assignment in assignments:
        review = assignment.review
        rows.append(
            ReviewFeedback(
                reviewer=assignment.reviewer.get_full_name() or assignment.reviewer.get_username(),
                decision=review.decision,
                decision_label=str(review.get_decision_display()),
                comment=review.comment,
                scores=_score_rows(review.scores or {}, names),
                submitted_at=review.submitted_at,
            )
        )
    return rows


def review_queue(*, user: AbstractBaseUser) -> list[dict]:
    """Return the user's open rounds with (submitted, assigned, left); one query on the stored progress."""
    rows = (
        ReviewerProgress.objects.filter(reviewer=user, round__status=ScreeningRound.Status.OPEN, assigned__gt=0)
        .values("round_id", "round__title", "round__number", "round__deadline", "submitted", "assigned")
        .order_by("round__deadline", "round_id")
    )
    return [
        {
            "round_id": row["round_id"],
            "title": row["round__title"],
            "number": row["round__number"],
            "deadline": row["round__deadline"],
            **progress_figures(done=row["submitted"], total=row["assigned"]),
        }
        for row in rows
    ]


def sent_back(*, user: AbstractBaseUser) -> list[SentBack]:
    """Return the latest items of closed rounds sent back for revision whose reviewed revision the user wrote, while
    the round's outcome still stands: an item decided since (accepted or rejected, by a later round or a lead) or
    put in a later round is no longer waiting for its author.

    One query: the submitted reviews of the newest such round items (capped), with their items, rounds and reviewers.
    """
    latest = (
        RoundItem.objects.filter(
            outcome=RoundItem.Outcome.REVISE,
            round__status=ScreeningRound.Status.CLOSED,
            revision__author=user,
        )
        .exclude(item__status__in=(Item.Status.ACCEPTED, Item.Status.REJECTED))
        .exclude(Exists(RoundItem.objects.filter(item=OuterRef("item"), round_id__gt=OuterRef("round_id"))))
        .order_by("-round__closed_at", "-id")
        .values("id")[:SENT_BACK_LIMIT]
    )
    assignments = (
        ReviewAssignment.objects.filter(round_item__in=latest, review__status=Review.Status.SUBMITTED)
        .select_related("round_item__item", "round_item__revision", "round_item__round", "round_item__adjudicated_by")
        .select_related("review", "reviewer")
        .order_by("-round_item__round__closed_at", "-round_item_id", "position", "id")
    )
    entries: dict[int, SentBack] = {}
    grouped = defaultdict(list)
    for assignment in assignments:
        ri = assignment.round_item
        entries.setdefault(ri.pk, SentBack(round_item=ri, revised_since=ri.item.current_revision_id != ri.revision_id))
        grouped[ri.pk].append(assignment)
    if not entries:
        return []
    names = criterion_names()
    for pk, entry in entries.items():
        entry.reviews = review_feedback(grouped[pk], names)
    return list(entries.values())


def lead_overview() -> dict:
    """Return open rounds with each reviewer's progress and agreement, and rounds with conflicts to adjudicate.

    One query of two parts (``UNION ALL``): the stored progress of each reviewer in open rounds (with the round's
    title, benchmark and deadline, and the reviewer's agreement in closed rounds as correlated counts), and the
    conflicts grouped by round (the rows whose ``conflicts`` is set).
    """
    rows = list(_reviewer_rows().union(_conflict_rows(), all=True).order_by("conflicts", *REVIEWER_ORDER))
    conflicts = sorted((row for row in rows if row["conflicts"] is not None), key=lambda row: -row["round_id"])
    return {
        "rounds": _open_rounds(row for row in rows if row["conflicts"] is None),
        "conflicts": [
            {
                "round_id": row["round_id"],
                "title": row["round__title"],
                "number": row["round__number"],
                "count": row["conflicts"],
                "first": row["first"],
            }
            for row in conflicts
        ],
    }


# The columns of both parts of the lead overview's query, in order; the reviewers' part orders by the last three.
OVERVIEW_COLUMNS = (
    "round_id",
    "round__title",
    "round__number",
    "round__deadline",
    "round__benchmark__name_en",
    "round__benchmark__name_zh",
    "reviewer_id",
    "reviewer__username",
    "done",
    "total",
    "closed_n",
    "closed_agreed",
    "conflicts",
    "first",
)
REVIEWER_ORDER = ("round__deadline", "round_id", "reviewer__username")


def _none(field: object) -> Value:
    return Value(None, output_field=field)


def _reviewer_rows() -> QuerySet:
    """Return each reviewer's stored progress in each open round, with the round and their closed rounds' agreement."""
    # The reviewer's submitted reviews in closed rounds whose item got a decision (conflicts left out until
    # adjudicated), and those agreeing with it: stored per round when it closes (``ReviewerProgress``).
    closed = (
        ReviewerProgress.objects.filter(reviewer=OuterRef("reviewer_id"), round__status=ScreeningRound.Status.CLOSED)
        .order_by()
        .values("reviewer")
    )
    return (
        ReviewerProgress.objects.filter(round__status=ScreeningRound.Status.OPEN, assigned__gt=0)
        .annotate(
            done=F("submitted"),
            total=F("assigned"),
            closed_n=Subquery(closed.annotate(n=Sum("decided")).values("n")[:1]),
            closed_agreed=Subquery(closed.annotate(n=Sum("agreed")).values("n")[:1]),
            conflicts=_none(IntegerField()),
            first=_none(IntegerField()),
        )
        .values(*OVERVIEW_COLUMNS)
        .order_by()
    )


def _conflict_rows() -> QuerySet:
    """Return the rounds with conflicts to adjudicate: how many, and the first of them (the reviewer columns empty)."""
    return (
        RoundItem.objects.filter(outcome=RoundItem.Outcome.CONFLICT)
        .values("round_id", "round__title", "round__number")
        .annotate(
            deadline=_none(DateTimeField()),
            name_en=_none(CharField()),
            name_zh=_none(CharField()),
            reviewer=_none(IntegerField()),
            username=_none(CharField()),
            done=_none(IntegerField()),
            total=_none(IntegerField()),
            closed_n=_none(IntegerField()),
            closed_agreed=_none(IntegerField()),
            conflicts=Count("id"),
            first=Min("id"),
        )
        .values_list(
            "round_id",
            "round__title",
            "round__number",
            "deadline",
            "name_en",
            "name_zh",
            "reviewer",
            "username",
            "done",
            "total",
            "closed_n",
            "closed_agreed",
            "conflicts",
            "first",
        )
        .order_by()
    )


def _open_rounds(rows: Iterable[dict]) -> list[dict]:
    """Group the reviewers' rows by round, with each round's and each reviewer's progress and agreement."""
    rounds: dict[int, dict] = {}
    for row in rows:
        entry = rounds.setdefault(
            row["round_id"],
            {
                "round_id": row["round_id"],
                "title": row["round__title"],
                "number": row["round__number"],
                "deadline": row["round__deadline"],
                "benchmark": in_ui_language(row["round__benchmark__name_en"], row["round__benchmark__name_zh"]),
                "reviewers": [],
                "done": 0,
                "total": 0,
            },
        )
        entry["done"] += row["done"]
        entry["total"] += row["total"]
        n = row["closed_n"] or 0
        entry["reviewers"].append(
            {
                "reviewer_id": row["reviewer_id"],
                "username": row["reviewer__username"],
                "done": row["done"],
                "total": row["total"],
                "percent": round(100 * row["done"] / row["total"]) if row["total"] else 0,
                "agreement": {"n": n, "percent": round(100 * (row["closed_agreed"] or 0) / n)} if n else None,
            }
        )
    for entry in rounds.values():
        entry["percent"] = round(100 * entry["done"] / entry["total"]) if entry["total"] else 0
        entry["ready"] = entry["total"] > 0 and entry["done"] == entry["total"]
    return list(rounds.values())


@dataclass
class RoundFeedback:
    """What one closed round said about an item: the outcome, each submitted review, and any adjudication."""

    round_item: object
    reviews: list[ReviewFeedback] = field(default_factory=list)


def item_feedback(*, item: object) -> list[RoundFeedback]:
    """Return the reviews of every closed round the item went through, newest round first.

    Review is blind while a round is open (docs/screening.md), so open rounds are left out. Reviewers are experts,
    not models, so their names are shown. Two queries, however many rounds and reviews.
    """
    round_items = list(
        RoundItem.objects.filter(item=item, round__status=ScreeningRound.Status.CLOSED)
        .select_related("round", "revision", "adjudicated_by")
        .order_by("-round__closed_at", "-id")
    )
    if not round_items:
        return []
    assignments = (
        ReviewAssignment.objects.filter(
            round_item__in=[ri.pk for ri in round_items], review__status=Review.Status.SUBMITTED
        )
        .select_related("review", "reviewer")
        .order_by("round_item_id", "position", "id")
    )
    grouped = defaultdict(list)
    for assignment in assignments:
        grouped[assignment.round_item_id].append(assignment)
    names = criterion_names()
    return [RoundFeedback(round_item=ri, reviews=review_feedback(grouped[ri.pk], names)) for ri in round_items]


@home.panel("screening", template="screening/_home_panel.html", position=10)
def screening_panel(user: AbstractBaseUser) -> dict | None:
    """The user's review queue, items sent back to them, and for a lead the rounds to close and conflicts."""
    context: dict = {}
    if user.has_perm("screening.manage_round"):
        context["lead"] = lead_overview()
    if user.has_perm("screening.review_item"):
        lead = context.get("lead")
        # A lead's own queue is among every reviewer's progress the lead overview has read.
        context["review_queue"] = review_queue_of(lead, user=user) if lead else review_queue(user=user)
    if user.has_perm("items.add_item"):
        context["sent_back"] = sent_back(user=user)
    return context or None


def review_queue_of(overview: dict, *, user: AbstractBaseUser) -> list[dict]:
    """Return ``review_queue(user=user)`` from ``lead_overview()``, which holds every reviewer's open rounds."""
    return [
        {
            "round_id": entry["round_id"],
            "title": entry["title"],
            "number": entry["number"],
            "deadline": entry["deadline"],
            "done": mine["done"],
            "total": mine["total"],
            "left": mine["total"] - mine["done"],
            "percent": mine["percent"],
        }
        for entry in overview["rounds"]
        for mine in entry["reviewers"]
        if mine["reviewer_id"] == user.pk
    ]


@home.item_section("screening-feedback")
def feedback_section(item: Item) -> dict:
    """The reviews of the closed rounds the item went through."""
    return {"feedback": item_feedback(item=item)}


@home.item_list_action("screening-round", template="screening/_bulk_round.html", position=20)
def _round_from_items(user: AbstractBaseUser) -> dict | None:
    """The item list's bulk action: open a round on the checked items (the round form, filled with them)."""
    return {} if user.has_perm("screening.manage_round") else None
