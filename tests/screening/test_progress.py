"""Stored progress (``ReviewerProgress``, each assignment's round and submission time) follows the screening services.

Pages and the API read a reviewer's counts from these rows instead of counting assignments; after any sequence of
drafts, submissions, changes and skips they must equal a recount, and the queue must serve the same order.
"""

import random

import pytest

from annotation.queue.selectors import queue_previous
from annotation.screening import selectors
from annotation.screening import services as screening
from annotation.screening.models import ReviewAssignment, ReviewerProgress, RoundItem, ScreeningRound
from annotation.screening.services import DECIDED
from tests.factories import REVIEW_SCORES, make_screening_round

pytestmark = pytest.mark.django_db


def stored(round: ScreeningRound) -> dict:
    return {p.reviewer_id: (p.assigned, p.submitted, p.skipped) for p in ReviewerProgress.objects.filter(round=round)}


def agreement(round: ScreeningRound) -> dict:
    return {p.reviewer_id: (p.decided, p.agreed) for p in ReviewerProgress.objects.filter(round=round)}


def agreement_counted(round: ScreeningRound) -> dict:
    out = {p.reviewer_id: (0, 0) for p in ReviewerProgress.objects.filter(round=round)}
    for a in ReviewAssignment.objects.filter(round_item__round=round).select_related("review", "round_item"):
        review = getattr(a, "review", None)
        if review is None or review.status != "submitted" or a.round_item.outcome not in DECIDED:
            continue
        decided, agreed = out[a.reviewer_id]
        out[a.reviewer_id] = (decided + 1, agreed + (review.decision == a.round_item.outcome))
    return out


def counted(round: ScreeningRound) -> dict:
    out = {}
    for a in ReviewAssignment.objects.filter(round_item__round=round).select_related("review"):
        review = getattr(a, "review", None)
        done = review is not None and review.status == "submitted"
        assigned, submitted, skipped = out.get(a.reviewer_id, (0, 0, 0))
        out[a.reviewer_id] = (assigned + 1, submitted + done, skipped + (not done and a.skipped_at is not None))
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_progress_equals_a_recount_after_any_sequence_of_reviews_and_skips(seed, candidates, lead, reviewers):
    rng = random.Random(seed)
    round = make_screening_round(user=lead, reviewers=reviewers, reviewers_per_item=2)
    assert round.size == round.round_items.count() > 0
    assert stored(round) == counted(round)
    for _ in range(30):
        reviewer = rng.choice(reviewers)
        nxt = selectors.next_assignment(round=round, reviewer=reviewer)
        action = rng.choice(["submit", "submit", "disagree", "draft", "skip", "change"])
        done = ReviewAssignment.objects.filter(round=round, reviewer=reviewer, submitted_at__isnull=False)
        values = {"reviewer": reviewer, "scores": REVIEW_SCORES, "decision": "accept"}
        if action == "change" and done.exists():
            a = rng.choice(list(done.select_related("round_item__round", "round_item__item")))
            screening.review_change(round_item=a.round_item, **{**values, "decision": "revise", "comment": "thin"})
        elif nxt is not None and action == "skip":
            screening.review_skip(round_item=nxt.round_item, reviewer=reviewer)
        elif nxt is not None and action == "disagree":
            screening.review_submit(round_item=nxt.round_item, **{**values, "decision": "reject", "comment": "no"})
        elif nxt is not None and action == "draft":
            screening.review_save_draft(round_item=nxt.round_item, reviewer=reviewer, scores={}, decision="accept")
        elif nxt is not None:
            screening.review_submit(round_item=nxt.round_item, **values)
        assert stored(round) == counted(round)
    for a in ReviewAssignment.objects.filter(round=round).select_related("review"):
        review = getattr(a, "review", None)
        assert a.submitted_at == (review.submitted_at if review and review.status == "submitted" else None)
    before = stored(round)
    screening.round_recount(round=round)
    assert stored(round) == before
    # Closing stores each reviewer's agreement with the decisions; adjudicating a conflict adds to it.
    assert set(agreement(round).values()) == {(0, 0)}
    screening.round_close(round=round, user=lead, unreviewed="decide_on_submitted")
    assert agreement(round) == agreement_counted(round)
    conflicts = list(RoundItem.objects.filter(round=round, outcome="conflict"))
    assert conflicts, "the seeds give a conflict to adjudicate"
    for conflict in conflicts:
        screening.round_item_adjudicate(round_item=conflict, user=lead, decision="accept")
        assert agreement(round) == agreement_counted(round)
    recounted = agreement(round)
    screening.round_recount(round=round)
    assert agreement(round) == recounted


def test_the_queue_goes_on_after_the_current_item_wraps_around_and_previous_follows_submission_order(
    candidates, lead, reviewers
):
    reviewer = reviewers[0]
    round = make_screening_round(user=lead, reviewers=[reviewer], reviewers_per_item=1)
    queue = list(
        ReviewAssignment.objects.filter(round=round, reviewer=reviewer)
        .select_related("round_item__round", "round_item__item")
        .order_by("position", "id")
    )
    assert len(queue) >= 3
    first, second, last = queue[0], queue[1], queue[-1]
    assert selectors.next_assignment(round=round, reviewer=reviewer, after=first) == second
    assert selectors.next_assignment(round=round, reviewer=reviewer, after=last.pk) == first  # wraps around
    screening.review_submit(round_item=second.round_item, reviewer=reviewer, scores=REVIEW_SCORES, decision="accept")
    # Just submitted: the queue starts again from the top.
    assert selectors.next_assignment(round=round, reviewer=reviewer, after=second.pk) == first
    screening.review_submit(round_item=first.round_item, reviewer=reviewer, scores=REVIEW_SCORES, decision="accept")
    first.refresh_from_db()
    second.refresh_from_db()
    assert queue_previous(queue=selectors.reviewer_queue(round=round, reviewer=reviewer)) == first
    assert queue_previous(queue=selectors.reviewer_queue(round=round, reviewer=reviewer), before=first) == second
    assert selectors.reviewer_counts(round=round, reviewer=reviewer) == {"done": 2, "total": len(queue), "skipped": 0}


def test_a_leads_queue_read_from_the_lead_overview_equals_the_queue_read_alone(candidates, lead, reviewers):
    from annotation.screening.home import lead_overview, review_queue, review_queue_of

    round = make_screening_round(user=lead, reviewers=[lead, *reviewers], reviewers_per_item=len(reviewers) + 1)
    first = selectors.next_assignment(round=round, reviewer=lead)
    screening.review_submit(round_item=first.round_item, reviewer=lead, scores=REVIEW_SCORES, decision="accept")
    mine = review_queue(user=lead)
    assert mine and mine[0]["done"] == 1
    assert review_queue_of(lead_overview(), user=lead) == mine
    assert review_queue_of(lead_overview(), user=reviewers[0]) == review_queue(user=reviewers[0])
