"""Simultaneous submissions and autosaves of one review: one review is submitted, nothing fails (500).

Real threads with their own database connections, on SQLite and on PostgreSQL (``DATABASE_URL``): the review is
created by ``get_or_create`` under a row lock, and a second creator that loses the race re-reads it.
"""

import pytest
from django.test import Client

from annotation.screening.models import Review, RoundItem
from tests.concurrency import run_together
from tests.factories import REVIEW_SCORES, make_screening_round

pytestmark = pytest.mark.django_db(transaction=True)


def test_simultaneous_review_submissions_and_autosaves_submit_one_review_and_never_fail(candidates, lead, reviewers):
    round = make_screening_round(user=lead, reviewers=reviewers, reviewers_per_item=1)
    assignment = RoundItem.objects.get(round=round, item__uid="cand-0").assignments.select_related("reviewer").get()
    url = f"/screening/{round.pk}/review/{assignment.pk}/"
    form = {f"score-{code}": str(value) for code, value in REVIEW_SCORES.items()} | {"decision": "accept"}
    calls = []
    for n in range(8):
        client = Client()
        client.force_login(assignment.reviewer)
        target = url if n % 2 == 0 else f"{url}autosave/"
        calls.append(lambda client=client, target=target: client.post(target, form))

    results = run_together(calls)

    statuses = [r.status_code if hasattr(r, "status_code") else f"500 {r!r}" for r in results]
    submits, autosaves = statuses[0::2], statuses[1::2]
    assert sorted(submits, key=str) == [302, 409, 409, 409], statuses  # the others: "already reviewed"
    assert set(autosaves) <= {200, 400}, statuses
    review = Review.objects.get(assignment=assignment)
    assert review.status == Review.Status.SUBMITTED and review.decision == "accept"
