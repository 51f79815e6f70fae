"""Screening rounds: assignment, blind review, drafts, closing and adjudication."""

import pytest
from django.core.exceptions import ValidationError

from annotation.items.models import Item
from annotation.screening import services as screening
from annotation.screening.models import Criterion, Review, ReviewAssignment, RoundItem
from tests.factories import REVIEW_SCORES, make_item, make_review, make_screening_round

pytestmark = pytest.mark.django_db


def test_opening_assigns_each_item_to_distinct_reviewers_with_balanced_load(candidates, lead, reviewers):
    round = make_screening_round(user=lead, reviewers=reviewers)
    assert round.number == 1 and round.round_items.count() == 4
    for ri in round.round_items.all():
        assert ri.assignments.count() == 2
    loads = sorted(
        ReviewAssignment.objects.filter(round_item__round=round).values_list("reviewer__username", flat=True)
    )
    assert sorted({n: loads.count(n) for n in loads}.values()) == [2, 3, 3]
    assert set(Item.objects.filter(uid__startswith="cand-").values_list("status", flat=True)) == {"in_screening"}
    assert Criterion.objects.filter(dimension=None).count() == 7 and round.criteria.count() == 7


def test_opening_refuses_bad_settings_and_writes_nothing(candidates, lead, reviewers, researcher):
    with pytest.raises(ValidationError) as exc:
        make_screening_round(user=lead, reviewers=[researcher], reviewers_per_item=2)
    assert "Not allowed to review: researcher1." in exc.value.messages
    assert "Reviewers per item must be between 1 and the number of reviewers (1)." in exc.value.messages
    with pytest.raises(ValidationError, match="No draft or in-screening items"):
        make_screening_round(user=lead, reviewers=reviewers, filters={"dimension": "crisis_recognition"})
    assert not Item.objects.filter(status="in_screening").exists()
    make_screening_round(user=lead, reviewers=reviewers)
    with pytest.raises(ValidationError, match="Already in an open round: cand-0"):
        make_screening_round(user=lead, reviewers=reviewers)


def test_reviewing_an_unassigned_item_or_twice_is_refused(candidates, lead, reviewers):
    round = make_screening_round(user=lead, reviewers=reviewers)
    ri = RoundItem.objects.get(round=round, item__uid="cand-0")
    assigned = {a.reviewer for a in ri.assignments.all()}
    outsider = next(r for r in reviewers if r not in assigned)
    with pytest.raises(ValidationError, match="You are not assigned to review this item in this round."):
        screening.review_submit(round_item=ri, reviewer=outsider, scores=REVIEW_SCORES, decision="accept")
    reviewer = next(iter(assigned))
    screening.review_submit(round_item=ri, reviewer=reviewer, scores=REVIEW_SCORES, decision="accept")
    with pytest.raises(ValidationError, match="You already reviewed this item in this round."):
        screening.review_submit(round_item=ri, reviewer=reviewer, scores=REVIEW_SCORES, decision="reject", comment="x")
    assert Review.objects.get(assignment__round_item=ri, assignment__reviewer=reviewer).decision == "accept"


def test_submission_needs_every_criterion_valid_scores_and_a_reason_to_reject(candidates, lead, reviewers):
    round = make_screening_round(user=lead, reviewers=reviewers, reviewers_per_item=1)
    ri = RoundItem.objects.get(round=round, item__uid="cand-0")
    reviewer = ri.assignments.get().reviewer
    with pytest.raises(ValidationError) as exc:
        screening.review_submit(
            round_item=ri,
            reviewer=reviewer,
            scores={"linguistic_clarity": 9, "answer_key_correctness": "maybe"},
            decision="reject",
        )
    messages = exc.value.messages
    assert "Linguistic clarity takes a score from 1 to 5." in messages
    assert "Correctness of the answer key takes pass or fail." in messages
    with pytest.raises(ValidationError) as exc:
        screening.review_submit(round_item=ri, reviewer=reviewer, scores={}, decision="reject")
    assert any(m.startswith("Score every criterion first: Scenario plausibility") for m in exc.value.messages)
    assert "Say in a comment why the item needs revision or rejection." in exc.value.messages
    assert not Review.objects.filter(status="submitted").exists()


def test_open_prompts_are_not_scored_on_options_or_answer_keys(taxonomy, lead, reviewers):
    make_item(uid="open-1", kind="open_prompt", dimension="emotion_matching", user=lead)
    round = make_screening_round(user=lead, reviewers=reviewers, reviewers_per_item=1)
    ri = RoundItem.objects.get(round=round, item__uid="open-1")
    codes = [c.code for c in screening.criteria_for(round, ri.item)]
    assert "option_quality" not in codes and "answer_key_correctness" not in codes and len(codes) == 5


def test_drafts_are_autosaved_and_stay_private(candidates, lead, reviewers):
    round = make_screening_round(user=lead, reviewers=reviewers)
    ri = RoundItem.objects.get(round=round, item__uid="cand-0")
    reviewer = ri.assignments.first().reviewer
    screening.review_save_draft(round_item=ri, reviewer=reviewer, scores={"coverage": "2"}, comment="half done")
    review = Review.objects.get(assignment__reviewer=reviewer, assignment__round_item=ri)
    assert (review.status, review.scores, review.comment) == ("draft", {"coverage": 2}, "half done")


def test_closing_applies_agreed_decisions_and_sends_conflicts_to_adjudication(candidates, lead, reviewers):
    round = make_screening_round(user=lead, reviewers=reviewers)
    outcomes = {
        "cand-0": ["accept", "accept"],
        "cand-1": ["reject", "reject"],
        "cand-2": ["accept", "reject"],
        "cand-3": ["revise", "revise"],
    }
    for uid, decisions in outcomes.items():
        ri = RoundItem.objects.get(round=round, item__uid=uid)
        for assignment, decision in zip(ri.assignments.order_by("reviewer__username"), decisions, strict=True):
            make_review(round=round, uid=uid, reviewer=assignment.reviewer, decision=decision)
    counts = screening.round_close(round=round, user=lead)
    assert counts == {"accept": 1, "reject": 1, "conflict": 1, "revise": 1}
    status = dict(Item.objects.filter(uid__startswith="cand-").values_list("uid", "status"))
    assert status == {"cand-0": "accepted", "cand-1": "rejected", "cand-2": "in_screening", "cand-3": "draft"}
    conflict = RoundItem.objects.get(round=round, item__uid="cand-2")
    with pytest.raises(ValidationError, match="no conflict"):
        screening.round_item_adjudicate(
            round_item=RoundItem.objects.get(round=round, item__uid="cand-0"), user=lead, decision="reject"
        )
    screening.round_item_adjudicate(round_item=conflict, user=lead, decision="accept", note="key is right")
    conflict.refresh_from_db()
    assert (conflict.outcome, conflict.adjudicated_by, conflict.adjudication_note) == ("accept", lead, "key is right")
    assert Item.objects.get(uid="cand-2").status == "accepted"
    # Items sent back for revision go into the next round.
    second = make_screening_round(user=lead, reviewers=reviewers)
    assert list(second.round_items.values_list("item__uid", flat=True)) == ["cand-3"]


def test_closing_with_unreviewed_items_needs_an_explicit_choice(candidates, lead, reviewers):
    round = make_screening_round(user=lead, reviewers=reviewers, reviewers_per_item=1)
    first = RoundItem.objects.get(round=round, item__uid="cand-0")
    make_review(round=round, uid="cand-0", reviewer=first.assignments.get().reviewer, decision="accept")
    with pytest.raises(ValidationError, match="3 items still lack reviews"):
        screening.round_close(round=round, user=lead)
    assert round.__class__.objects.get(pk=round.pk).is_open
    counts = screening.round_close(round=round, user=lead, unreviewed="return_to_authors")
    assert counts == {"accept": 1, "unreviewed": 3}
    assert Item.objects.get(uid="cand-1").status == "draft" and Item.objects.get(uid="cand-0").status == "accepted"
    with pytest.raises(ValidationError, match="already closed"):
        screening.round_close(round=round, user=lead, unreviewed="return_to_authors")
    with pytest.raises(ValidationError, match="round is closed"):
        screening.review_save_draft(round_item=first, reviewer=first.assignments.get().reviewer, scores={})
