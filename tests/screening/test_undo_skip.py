"""Changing a submitted review, going back to the previous one and skipping: services and pages."""

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from annotation.queue.selectors import queue_skipped
from annotation.screening import selectors
from annotation.screening import services as screening
from annotation.screening.models import Review, ReviewAssignment, ReviewChange
from tests.factories import REVIEW_SCORES, make_screening_round

pytestmark = pytest.mark.django_db


@pytest.fixture
def setup(candidates, lead, reviewers):
    round = make_screening_round(user=lead, reviewers=reviewers[:1], reviewers_per_item=1)
    return round, reviewers[0]


def queue(round, reviewer) -> list[ReviewAssignment]:
    return list(
        ReviewAssignment.objects.filter(round_item__round=round, reviewer=reviewer)
        .select_related("round_item__round", "round_item__item")
        .order_by("position", "id")
    )


def submit(assignment, reviewer, decision="accept", comment=""):
    return screening.review_submit(
        round_item=assignment.round_item, reviewer=reviewer, scores=REVIEW_SCORES, decision=decision, comment=comment
    )


def test_change_records_old_and_new_values_and_keeps_the_submission_time(setup):
    round, reviewer = setup
    assignment = queue(round, reviewer)[0]
    submitted_at = submit(assignment, reviewer).submitted_at
    ReviewAssignment.objects.filter(pk=assignment.pk).update(viewed_at=timezone.now() - timedelta(seconds=30))
    review = screening.review_change(
        round_item=assignment.round_item,
        reviewer=reviewer,
        scores={**REVIEW_SCORES, "coverage": 2},
        decision="revise",
        comment="Coverage is thin.",
    )
    assert (review.decision, review.scores["coverage"], review.submitted_at) == ("revise", 2, submitted_at)
    change = ReviewChange.objects.get(review=review)
    assert change.old["decision"] == "accept" and change.old["scores"]["coverage"] == 4
    assert change.new == {
        "scores": {**REVIEW_SCORES, "coverage": 2},
        "decision": "revise",
        "comment": "Coverage is thin.",
    }
    assert 30 <= change.seconds_spent <= 33 and change.changed_by == reviewer
    with pytest.raises(ValidationError, match="Say in a comment"):
        screening.review_change(
            round_item=assignment.round_item, reviewer=reviewer, scores=REVIEW_SCORES, decision="reject", comment=""
        )
    assert Review.objects.get(pk=review.pk).decision == "revise" and ReviewChange.objects.count() == 1


def test_changes_are_refused_for_drafts_and_after_the_round_closes(setup, lead):
    round, reviewer = setup
    first, second = queue(round, reviewer)[:2]
    with pytest.raises(ValidationError, match="nothing to change"):
        screening.review_change(round_item=first.round_item, reviewer=reviewer, scores=REVIEW_SCORES, decision="accept")
    submit(first, reviewer)
    screening.round_close(round=round, user=lead, unreviewed="decide_on_submitted")
    first.round_item.round.refresh_from_db()
    second.round_item.round.refresh_from_db()
    with pytest.raises(ValidationError, match="This round is closed; reviews can no longer change."):
        screening.review_change(
            round_item=first.round_item, reviewer=reviewer, scores=REVIEW_SCORES, decision="reject", comment="late"
        )
    with pytest.raises(ValidationError, match="This round is closed"):
        screening.review_skip(round_item=second.round_item, reviewer=reviewer)


def test_skip_moves_the_item_to_the_end_and_statistics_use_the_current_decision(setup, lead):
    round, reviewer = setup
    first, *rest = queue(round, reviewer)
    screening.review_skip(round_item=first.round_item, reviewer=reviewer)
    assert selectors.next_assignment(round=round, reviewer=reviewer) == rest[0]
    assert list(queue_skipped(queue=selectors.reviewer_queue(round=round, reviewer=reviewer))) == [first]
    for assignment in rest:
        submit(assignment, reviewer)
    assert selectors.next_assignment(round=round, reviewer=reviewer) == first
    submit(first, reviewer)
    screening.review_change(
        round_item=first.round_item,
        reviewer=reviewer,
        scores=REVIEW_SCORES,
        decision="reject",
        comment="On reflection, no.",
    )
    assert selectors.round_statistics_data(round=round)["decisions"] == {"accept": len(rest), "reject": 1}
    with pytest.raises(ValidationError, match="nothing to skip"):
        screening.review_skip(round_item=first.round_item, reviewer=reviewer)


def test_page_goes_back_changes_the_review_and_skips(setup, login):
    round, reviewer = setup
    client = login(reviewer)
    first, second, third = queue(round, reviewer)[:3]
    form = {f"score-{code}": value for code, value in REVIEW_SCORES.items()} | {"decision": "accept"}
    response = client.post(f"/screening/{round.pk}/review/{first.pk}/", form)
    assert response["Location"] == f"/screening/{round.pk}/review/{second.pk}/"

    page = client.get(response["Location"]).content.decode()
    assert f'href="/screening/{round.pk}/review/{first.pk}/"' in page and 'id="review-back"' in page
    page = client.get(f"/screening/{round.pk}/review/{first.pk}/").content.decode()
    assert 'name="change" value="1"' in page and "review-autosave" not in page
    changed = form | {"decision": "revise", "comment": "Option B also fits.", "change": "1"}
    response = client.post(f"/screening/{round.pk}/review/{first.pk}/", changed)
    assert response.status_code == 302 and response["Location"] == f"/screening/{round.pk}/review/{second.pk}/"
    assert Review.objects.get(assignment=first).decision == "revise"
    assert ReviewChange.objects.get().seconds_spent is not None

    response = client.post(f"/screening/{round.pk}/review/{second.pk}/skip/")
    assert response["Location"] == f"/screening/{round.pk}/review/{third.pk}/"
    page = client.get(response["Location"]).content.decode()
    assert 'id="skipped-list"' in page and f'href="/screening/{round.pk}/review/{second.pk}/"' in page


def test_page_refuses_a_change_after_the_round_closed(setup, lead, login):
    round, reviewer = setup
    first = queue(round, reviewer)[0]
    submit(first, reviewer)
    screening.round_close(round=round, user=lead, unreviewed="decide_on_submitted")
    client = login(reviewer)
    page = client.get(f"/screening/{round.pk}/review/{first.pk}/").content.decode()
    assert 'id="review-form"' not in page and "reviews can no longer change" in page
    form = {f"score-{code}": value for code, value in REVIEW_SCORES.items()} | {"decision": "accept", "change": "1"}
    response = client.post(f"/screening/{round.pk}/review/{first.pk}/", form)
    assert response.status_code == 400 and "This round is closed" in response.content.decode()


def test_page_answers_409_to_a_review_submitted_meanwhile_and_400_to_an_incomplete_one(setup, login):
    """app.js posts the review in the background: a 409 (or 400) page brings the expert back with its error."""
    round, reviewer = setup
    first, second = queue(round, reviewer)[:2]
    client = login(reviewer)
    incomplete = client.post(f"/screening/{round.pk}/review/{first.pk}/", {"decision": "accept"})
    assert incomplete.status_code == 400 and "Score every criterion first" in incomplete.content.decode()
    submit(first, reviewer, decision="reject", comment="Another tab.")
    form = {f"score-{code}": value for code, value in REVIEW_SCORES.items()} | {"decision": "accept"}
    response = client.post(f"/screening/{round.pk}/review/{first.pk}/", form)
    page = response.content.decode()
    assert response.status_code == 409 and "You already reviewed this item in this round." in page
    assert f'data-url="/screening/{round.pk}/review/{first.pk}/"' in page and 'id="review-error"' in page
    assert Review.objects.get(assignment=first).decision == "reject"


def test_a_review_page_fetched_ahead_does_not_restart_the_change_timer(setup, login):
    """app.js fetches the next item with ``Purpose: prefetch``: only a page the expert sees times a change."""
    round, reviewer = setup
    first = queue(round, reviewer)[0]
    submit(first, reviewer)
    ReviewAssignment.objects.filter(pk=first.pk).update(viewed_at=None)
    client = login(reviewer)
    response = client.get(f"/screening/{round.pk}/review/{first.pk}/", headers={"Purpose": "prefetch"})
    assert response.status_code == 200 and b'data-queue-page="review"' in response.content
    assert ReviewAssignment.objects.get(pk=first.pk).viewed_at is None
    client.get(f"/screening/{round.pk}/review/{first.pk}/")
    assert ReviewAssignment.objects.get(pk=first.pk).viewed_at is not None
