"""Reviewer feedback reaches authors: after a round closes, its reviews appear on the item page and in its history."""

import pytest

from annotation.screening import services as screening_services
from annotation.screening.criteria import default_criteria_create
from annotation.screening.models import Criterion
from tests.factories import make_item, make_review, make_screening_round
from tests.factories.screening import REVIEW_SCORES


@pytest.fixture(autouse=True)
def criteria(db):
    default_criteria_create(Criterion)


@pytest.fixture
def reviewers(make_user):
    return [make_user("expert", username=f"fb-rev{i}") for i in range(2)]


@pytest.fixture
def reviewed(taxonomy, expert, lead, reviewers):
    item = make_item(uid="feedback-1", user=expert)
    round = make_screening_round(user=lead, reviewers=reviewers, title="Feedback round")
    make_review(
        round=round,
        uid=item.uid,
        reviewer=reviewers[0],
        decision="revise",
        comment="Option C is also defensible.",
        scores={**REVIEW_SCORES, "scenario_plausibility": 2, "answer_key_correctness": "fail"},
    )
    make_review(round=round, uid=item.uid, reviewer=reviewers[1], decision="revise", comment="Context too short.")
    return item, round


def test_reviews_stay_hidden_while_the_round_is_open(reviewed, expert, login):
    item, _round = reviewed
    client = login(expert)
    for url in (f"/items/{item.uid}/", f"/items/{item.uid}/history/"):
        html = client.get(url).content.decode()
        assert 'id="reviews"' not in html
        assert "Option C is also defensible." not in html


def test_after_the_round_closes_the_author_reads_scores_decisions_comments_and_names(reviewed, expert, lead, login):
    item, round = reviewed
    screening_services.round_close(round=round, user=lead)
    html = login(expert).get(f"/items/{item.uid}/").content.decode()
    section = html[html.index('id="reviews"') :]
    assert "Feedback round" in section
    assert "Option C is also defensible." in section and "Context too short." in section
    assert "fb-rev0" in section and "fb-rev1" in section
    assert "Scenario plausibility" in section and "Correctness of the answer key" in section
    assert "<dd>2</dd>" in section and "<dd>fail</dd>" in section
    assert "back to authors" in section


def test_history_links_each_revision_to_the_round_that_reviewed_it(reviewed, expert, lead, login):
    item, round = reviewed
    screening_services.round_close(round=round, user=lead)
    html = login(expert).get(f"/items/{item.uid}/history/").content.decode()
    round_item = round.round_items.get(item=item)
    assert f'href="#reviews-{round_item.pk}"' in html and f'id="reviews-{round_item.pk}"' in html
    assert "Revision 1 · Feedback round" in html
    assert "Option C is also defensible." in html


def test_item_page_query_count_does_not_grow_with_rounds(
    reviewed, expert, lead, reviewers, login, django_assert_max_num_queries
):
    item, round = reviewed
    screening_services.round_close(round=round, user=lead)
    client = login(expert)
    client.get(f"/items/{item.uid}/")
    with django_assert_max_num_queries(30) as first:
        client.get(f"/items/{item.uid}/")
    # A second round on the same item adds reviews but no queries.
    second = make_screening_round(user=lead, reviewers=reviewers, title="Second feedback round")
    for reviewer in reviewers:
        make_review(round=second, uid=item.uid, reviewer=reviewer, decision="accept", comment="Fine now.")
    screening_services.round_close(round=second, user=lead)
    with django_assert_max_num_queries(len(first.captured_queries)):
        html = client.get(f"/items/{item.uid}/").content.decode()
    assert "Fine now." in html and "Second feedback round" in html
