"""Services and reads for screening rounds: open, review blind, close, adjudicate, statistics."""

from collections import Counter
from collections.abc import Iterable
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, F, OuterRef, Q, Subquery
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.items import selectors
from annotation.items.models import Benchmark, Item, StatusDecision
from annotation.items.services import item_status_decide
from annotation.queue import services as queue
from annotation.screening.models import (
    Criterion,
    Review,
    ReviewAssignment,
    ReviewChange,
    ReviewerProgress,
    RoundItem,
    ScreeningRound,
)
from annotation.screening.selectors import round_statistics_data
from core.errors import ServiceError

UNREVIEWED_CHOICES = ("return_to_authors", "decide_on_submitted")
OBJECTIVE_KINDS = {"mcq", "multi_turn_choice"}


def criteria_for(round: ScreeningRound, item: Item) -> list[Criterion]:
    """Return the round's criteria that apply to this item (its dimension, its kind)."""
    result = []
    for criterion in round.criteria.all():
        if criterion.dimension_id and criterion.dimension_id != item.dimension_id:
            continue
        if criterion.objective_only and item.kind not in OBJECTIVE_KINDS:
            continue
        result.append(criterion)
    return result


@transaction.atomic
def round_open(
    *,
    benchmark: Benchmark,
    title: str,
    user: AbstractBaseUser,
    reviewers: list[AbstractBaseUser],
    reviewers_per_item: int,
    filters: dict | None = None,
    criteria: list[Criterion] | None = None,
    deadline: datetime | None = None,
    uids: list[str] | None = None,
) -> ScreeningRound:
    """Open a round on the items matching ``filters`` (and, with ``uids``, only those items: each must be a draft or
    in-screening item of the benchmark) and assign each to ``reviewers_per_item`` reviewers.

    Assignment is balanced and deterministic: each item goes to the least-loaded reviewers who did not write
    its current revision (authors review others' work when anyone else is available).
    """
    filters = {k: v for k, v in (filters or {}).items() if v}
    reviewers = sorted(set(reviewers), key=lambda u: u.get_username())
    if criteria is None:
        criteria = list(Criterion.objects.filter(Q(dimension=None) | Q(dimension__benchmark=benchmark)))
    candidates = selectors.item_list(filters={**filters, "benchmark": benchmark.slug})
    if uids:
        candidates = candidates.filter(uid__in=uids)
    items = [
        i for i in candidates if i.current_revision_id and i.status in (Item.Status.DRAFT, Item.Status.IN_SCREENING)
    ]
    errors = _round_refusals(reviewers=reviewers, reviewers_per_item=reviewers_per_item, criteria=criteria, items=items)
    errors += _uids_left_out(uids or [], items=items, benchmark=benchmark)
    if errors:
        raise ValidationError(errors)
    round = ScreeningRound(
        benchmark=benchmark,
        number=_next_number(benchmark),
        title=title,
        filters=filters,
        reviewers_per_item=reviewers_per_item,
        deadline=deadline,
        opened_by=user,
    )
    round.full_clean()
    round.save()
    round.criteria.set(criteria)
    round.reviewers.set(reviewers)
    _round_assign(round, items=items, reviewers=reviewers)
    round.size = len(items)
    round.save(update_fields=["size"])
    for item in items:
        item_status_decide(
            item=item,
            status=Item.Status.IN_SCREENING,
            user=user,
            source=StatusDecision.Source.SCREENING,
            reference={"round": round.pk, "number": round.number},
        )
    return round


def _next_number(benchmark: Benchmark) -> int:
    """Return the number the benchmark's next round takes."""
    last = ScreeningRound.objects.filter(benchmark=benchmark).order_by("-number").values_list("number", flat=True)
    return (last.first() or 0) + 1


def _uids_left_out(uids: list[str], *, items: list[Item], benchmark: Benchmark) -> list[str]:
    """Name the uids asked for that the round cannot take (the first ten)."""
    left_out = sorted(set(uids) - {i.uid for i in items})
    if not left_out:
        return []
    return [
        _("Not draft or in-screening items of %(benchmark)s matching the filter: %(uids)s.")
        % {"benchmark": benchmark.name, "uids": ", ".join(left_out[:10]) + ("…" if len(left_out) > 10 else "")}
    ]


def _round_assign(round: ScreeningRound, *, items: list[Item], reviewers: list[AbstractBaseUser]) -> None:
    """Put the items in the round and give each to ``round.reviewers_per_item`` reviewers, balanced; authors review
    others' work when anyone else is available."""
    round_items = [
        RoundItem.objects.create(round=round, item=item, revision_id=item.current_revision_id) for item in items
    ]
    given, load = queue.assignments_spread(
        units=round_items,
        workers=reviewers,
        per_unit=round.reviewers_per_item,
        avoid=lambda round_item: round_item.item.current_revision.author_id,
    )
    for round_item, reviewer, position in given:
        ReviewAssignment.objects.create(round_item=round_item, round=round, reviewer=reviewer, position=position)
    queue.progress_start(model=ReviewAssignment, owner=round, load=load)


def _round_refusals(
    *, reviewers: list[AbstractBaseUser], reviewers_per_item: int, criteria: list[Criterion], items: list[Item]
) -> list[str]:
    """Return why a round cannot open as asked (empty when it can)."""
    errors = []
    not_reviewers = [u.get_username() for u in reviewers if not u.has_perm("screening.review_item")]
    if not_reviewers:
        errors.append(_("Not allowed to review: %(names)s.") % {"names": ", ".join(not_reviewers)})
    if not reviewers:
        errors.append(_("Choose at least one reviewer."))
    if reviewers and not 1 <= reviewers_per_item <= len(reviewers):
        errors.append(
            _("Reviewers per item must be between 1 and the number of reviewers (%(n)s).") % {"n": len(reviewers)}
        )
    if not criteria:
        errors.append(_("Choose at least one criterion."))
    if not items:
        errors.append(_("No draft or in-screening items match this filter."))
    busy = set(
        RoundItem.objects.filter(round__status=ScreeningRound.Status.OPEN, item__in=items).values_list(
            "item__uid", flat=True
        )
    )
    if busy:
        errors.append(
            _("Already in an open round: %(uids)s.")
            % {"uids": ", ".join(sorted(busy)[:10]) + ("…" if len(busy) > 10 else "")}
        )
    return errors


def _assignment_for(*, round_item: RoundItem, reviewer: AbstractBaseUser) -> ReviewAssignment:
    """Lock the reviewer's assignment of the item, in an open round (the queue's locking rule)."""
    return queue.assignment_lock(
        assignments=ReviewAssignment.objects.filter(round_item=round_item, reviewer=reviewer),
        not_assigned=_("You are not assigned to review this item in this round."),
        closed=_("This round is closed; reviews can no longer change."),
    )


def _clean_scores(round_item: RoundItem, scores: dict) -> dict:
    allowed = {c.code: c for c in criteria_for(round_item.round, round_item.item)}
    cleaned, errors = {}, []
    for code, value in scores.items():
        criterion = allowed.get(code)
        if criterion is None:
            errors.append(_("Unknown criterion %(code)s for this item.") % {"code": code})
            continue
        if value in (None, ""):
            continue
        if criterion.scale == Criterion.Scale.PASS_FAIL:
            if value not in ("pass", "fail"):
                errors.append(_("%(name)s takes pass or fail.") % {"name": criterion.name})
                continue
            cleaned[code] = value
        else:
            try:
                number = int(value)
            except (TypeError, ValueError):
                number = 0
            if not 1 <= number <= 5:
                errors.append(_("%(name)s takes a score from 1 to 5.") % {"name": criterion.name})
                continue
            cleaned[code] = number
    if errors:
        raise ValidationError(errors)
    return cleaned


class ReviewConflict(ServiceError, ValidationError):
    """The reviewer already submitted a review of the item in this round; a review is not replaced.

    The API answers 409 (``review_conflict``), as it does a second, different label (``LabelConflict``); pages,
    which catch ``ValidationError``, show the message.
    """

    status_code = 409
    code = "review_conflict"

    def __init__(self, message: str) -> None:
        super().__init__(message, code=self.code)

    def __str__(self) -> str:
        return " ".join(self.messages)


def _open_review(*, round_item: RoundItem, reviewer: AbstractBaseUser) -> tuple[ReviewAssignment, Review]:
    """Lock the reviewer's assignment and review of this item (created as a draft if new); refuse once submitted."""
    assignment = _assignment_for(round_item=round_item, reviewer=reviewer)
    review, _created = Review.objects.select_for_update().get_or_create(assignment=assignment)
    if review.status == Review.Status.SUBMITTED:
        raise ReviewConflict(_("You already reviewed this item in this round."))
    return assignment, review


@transaction.atomic
def review_save_draft(
    *, round_item: RoundItem, reviewer: AbstractBaseUser, scores: dict, decision: str = "", comment: str = ""
) -> Review:
    """Autosave a reviewer's unfinished review (never visible to other reviewers)."""
    _assignment, review = _open_review(round_item=round_item, reviewer=reviewer)
    review.scores = _clean_scores(round_item, scores)
    review.decision = decision if decision in ("accept", "revise", "reject") else ""
    review.comment = comment
    review.full_clean()
    review.save()
    return review


def _validated(round_item: RoundItem, *, scores: dict, decision: str, comment: str) -> tuple[dict, str, str]:
    """Return (scores, decision, comment) of a complete review; raise ValidationError by field otherwise."""
    try:
        cleaned = _clean_scores(round_item, scores)
    except ValidationError as exc:
        raise ValidationError({"scores": exc.messages}) from exc
    errors: dict[str, list[str]] = {}
    missing = [c.name for c in criteria_for(round_item.round, round_item.item) if c.code not in cleaned]
    if missing:
        errors["scores"] = [_("Score every criterion first: %(names)s.") % {"names": ", ".join(missing)}]
    if decision not in ("accept", "revise", "reject"):
        errors["decision"] = [_("Choose a decision: accept, revise or reject.")]
    if decision in ("revise", "reject") and not comment.strip():
        errors["comment"] = [_("Say in a comment why the item needs revision or rejection.")]
    if errors:
        raise ValidationError(errors)
    return cleaned, decision, comment.strip()


@transaction.atomic
def review_submit(
    *, round_item: RoundItem, reviewer: AbstractBaseUser, scores: dict, decision: str, comment: str = ""
) -> Review:
    """Submit a final review: every applicable criterion scored and a decision taken."""
    assignment, review = _open_review(round_item=round_item, reviewer=reviewer)
    review.scores, review.decision, review.comment = _validated(
        round_item, scores=scores, decision=decision, comment=comment
    )
    review.status = Review.Status.SUBMITTED
    review.submitted_at = timezone.now()
    review.full_clean()
    review.save()
    queue.assignment_finish(assignment=assignment, at=review.submitted_at)
    return review


@transaction.atomic
def round_recount(*, round: ScreeningRound) -> list[ReviewerProgress]:
    """Rebuild a round's stored counts (its size, each assignment's submission time, each reviewer's progress) from
    its items, assignments and reviews; for data written without the services (bulk loads, repairs)."""
    round.size = RoundItem.objects.filter(round=round).count()
    round.save(update_fields=["size"])
    submitted = Review.objects.filter(assignment=OuterRef("pk"), status=Review.Status.SUBMITTED)
    decided = Q(submitted_at__isnull=False, round_item__outcome__in=DECIDED)
    return queue.progress_recount(
        owner=round,
        assignments=ReviewAssignment.objects.filter(round_item__round=round),
        done_at=Subquery(submitted.values("submitted_at")[:1]),
        counts={
            "decided": Count("id", filter=decided),
            "agreed": Count("id", filter=decided & Q(review__decision=F("round_item__outcome"))),
        },
    )


def _review_values(review: Review) -> dict:
    return {"scores": review.scores, "decision": review.decision, "comment": review.comment}


@transaction.atomic
def review_change(
    *, round_item: RoundItem, reviewer: AbstractBaseUser, scores: dict, decision: str, comment: str = ""
) -> Review:
    """Change the reviewer's own submitted review while the round is open, recording old and new values.

    The change is timed from the reviewer's last view of the item; submitting the same values changes nothing.
    """
    assignment = _assignment_for(round_item=round_item, reviewer=reviewer)
    review = Review.objects.select_for_update().filter(assignment=assignment).first()
    if review is None or review.status != Review.Status.SUBMITTED:
        raise ValidationError(_("You have not submitted a review of this item yet; there is nothing to change."))
    cleaned, decision, comment = _validated(round_item, scores=scores, decision=decision, comment=comment)
    new = {"scores": cleaned, "decision": decision, "comment": comment}
    old = _review_values(review)
    if new == old:
        return review
    seconds = queue.change_seconds(assignment=assignment)
    change = ReviewChange(review=review, old=old, new=new, changed_by=reviewer, seconds_spent=seconds)
    change.full_clean()
    change.save()
    review.scores, review.decision, review.comment = new["scores"], new["decision"], new["comment"]
    review.changed_at = timezone.now()
    review.full_clean()
    review.save()
    # A further change is timed from this one.
    queue.change_restart(assignment=assignment, at=review.changed_at)
    return review


@transaction.atomic
def review_skip(*, round_item: RoundItem, reviewer: AbstractBaseUser) -> ReviewAssignment:
    """Put an item aside: it moves to the end of the reviewer's queue in the round and stays assigned to them."""
    assignment = _assignment_for(round_item=round_item, reviewer=reviewer)
    if Review.objects.filter(assignment=assignment, status=Review.Status.SUBMITTED).exists():
        raise ValidationError(_("You already reviewed this item; there is nothing to skip."))
    return queue.assignment_skip(assignment=assignment)


def review_mark_viewed(*, assignment: ReviewAssignment) -> None:
    """Note when the reviewer last opened the item, to time a change of their review."""
    queue.change_restart(assignment=assignment, at=timezone.now())


_OUTCOME_STATUS = {
    "accept": Item.Status.ACCEPTED,
    "reject": Item.Status.REJECTED,
    "revise": Item.Status.DRAFT,
    "unreviewed": Item.Status.DRAFT,
}


@transaction.atomic
def round_close(
    *, round: ScreeningRound, user: AbstractBaseUser, unreviewed: str | None = None, note: str = ""
) -> dict:
    """Close a round: agreed items get their decision, conflicts wait for adjudication.

    Items still lacking submitted reviews need an explicit choice: ``return_to_authors`` (they count as not
    reviewed and go back to draft) or ``decide_on_submitted`` (decide from the reviews that exist).
    """
    round = ScreeningRound.objects.select_for_update().get(pk=round.pk)
    if not round.is_open:
        raise ValidationError(_("This round is already closed."))
    round_items = list(round.round_items.select_related("item").prefetch_related("assignments__review"))
    decisions = {ri.pk: _submitted_decisions(ri) for ri in round_items}
    incomplete = {ri.pk for ri in round_items if len(decisions[ri.pk]) < len(ri.assignments.all())}
    if incomplete and unreviewed not in UNREVIEWED_CHOICES:
        raise ValidationError(
            _(
                "%(n)s items still lack reviews. Choose what happens to them: return them to their authors, "
                "or decide from the reviews submitted so far."
            )
            % {"n": len(incomplete)}
        )
    counts: Counter = Counter()
    agreement: dict[int, Counter] = {}
    for ri in round_items:
        returned = ri.pk in incomplete and unreviewed == "return_to_authors"
        ri.outcome = outcome = _outcome(decisions[ri.pk], returned=returned)
        ri.save(update_fields=["outcome"])
        counts[outcome] += 1
        if outcome in DECIDED:
            _count_agreement(agreement, ri.assignments.all(), outcome)
        if outcome in _OUTCOME_STATUS:
            _apply_outcome(ri, user=user, reason=note)
    _store_agreement(round.pk, agreement)
    round.status = ScreeningRound.Status.CLOSED
    round.closed_by, round.closed_at = user, timezone.now()
    round.close_note = note or (f"unreviewed: {unreviewed}" if incomplete else "")
    round.statistics = round_statistics_data(round=round)
    round.full_clean()
    round.save()
    return dict(counts)


def _submitted_decisions(round_item: RoundItem) -> list[str]:
    """Return the decisions of the item's submitted reviews in the round (its assignments prefetched)."""
    return [
        a.review.decision
        for a in round_item.assignments.all()
        if getattr(a, "review", None) is not None and a.review.status == Review.Status.SUBMITTED
    ]


def _outcome(decisions: list[str], *, returned: bool) -> str:
    """Return a closing round item's outcome: unreviewed (returned, or no review), agreed, or a conflict."""
    if returned or not decisions:
        return RoundItem.Outcome.UNREVIEWED
    return decisions[0] if len(set(decisions)) == 1 else RoundItem.Outcome.CONFLICT


def _apply_outcome(round_item: RoundItem, *, user: AbstractBaseUser, reason: str, adjudicated: bool = False) -> None:
    """Give the item the status of its outcome in the round, recorded as a screening decision."""
    item_status_decide(
        item=round_item.item,
        status=_OUTCOME_STATUS[round_item.outcome],
        user=user,
        reason=reason,
        source=StatusDecision.Source.SCREENING,
        reference={
            "round": round_item.round_id,
            "number": round_item.round.number,
            "round_item": round_item.pk,
            "outcome": round_item.outcome,
            "adjudicated": adjudicated,
        },
    )


@transaction.atomic
def round_item_adjudicate(*, round_item: RoundItem, user: AbstractBaseUser, decision: str, note: str = "") -> RoundItem:
    """Decide a conflict after a round closed, seeing every review side by side."""
    round_item = RoundItem.objects.select_for_update(of=("self",)).select_related("round", "item").get(pk=round_item.pk)
    if round_item.round.is_open:
        raise ValidationError(_("Conflicts are adjudicated after the round closes."))
    if round_item.outcome != RoundItem.Outcome.CONFLICT:
        raise ValidationError(_("This item has no conflict to adjudicate."))
    if decision not in ("accept", "revise", "reject"):
        raise ValidationError(_("Choose a decision: accept, revise or reject."))
    round_item.outcome = decision
    round_item.adjudicated_by, round_item.adjudicated_at = user, timezone.now()
    round_item.adjudication_note = note.strip()
    round_item.full_clean()
    round_item.save()
    agreement: dict[int, Counter] = {}
    _count_agreement(agreement, round_item.assignments.select_related("review"), decision)
    _store_agreement(round_item.round_id, agreement)
    _apply_outcome(round_item, user=user, reason=round_item.adjudication_note, adjudicated=True)
    return round_item


# Outcomes that are a decision: a reviewer's submitted review of such an item agrees with it or not.
DECIDED = ("accept", "revise", "reject")


def _count_agreement(agreement: dict[int, Counter], assignments: Iterable[ReviewAssignment], outcome: str) -> None:
    """Count each reviewer's submitted reviews of an item decided ``outcome``, and those that agree with it."""
    for a in assignments:
        review = getattr(a, "review", None)
        if review is not None and review.status == Review.Status.SUBMITTED:
            counter = agreement.setdefault(a.reviewer_id, Counter())
            counter["decided"] += 1
            counter["agreed"] += review.decision == outcome


def _store_agreement(round_id: int, agreement: dict[int, Counter]) -> None:
    """Add the counted agreement to each reviewer's stored progress in the round (one update a reviewer)."""
    for reviewer_id, counter in agreement.items():
        ReviewerProgress.objects.filter(round_id=round_id, reviewer_id=reviewer_id).update(
            decided=F("decided") + counter["decided"], agreed=F("agreed") + counter["agreed"]
        )
