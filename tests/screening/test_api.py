"""The screening API: rounds, my queue and reviews (submit, change, skip), closing, adjudication, statistics."""

import json

import pytest
from django.test import Client
from rest_framework.authtoken.models import Token

from annotation.items.models import Item
from annotation.screening.models import Review, ReviewAssignment, ReviewChange, RoundItem
from tests.factories import REVIEW_SCORES, make_review, make_screening_round

pytestmark = pytest.mark.django_db


def as_user(user: object) -> Client:
    token, _ = Token.objects.get_or_create(user=user)
    return Client(headers={"Authorization": f"Token {token.key}"})


def send(client: Client, url: str, data: dict, method: str = "post") -> object:
    if method == "get":
        return client.get(url)
    return getattr(client, method)(url, json.dumps(data), content_type="application/json")


REVIEW = {"scores": REVIEW_SCORES, "decision": "accept", "comment": ""}


@pytest.fixture
def round(candidates, lead, reviewers):
    return make_screening_round(user=lead, reviewers=reviewers)


def test_lead_opens_a_round_through_the_api_and_bad_input_names_the_fields(candidates, lead, reviewers):
    client = as_user(lead)
    response = send(
        client,
        "/api/screening/rounds/",
        {"benchmark": "facet", "title": "API round", "reviewers": ["rev0", "rev1"], "reviewers_per_item": 2},
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["items"] == 4 and body["status"] == "open" and body["reviewers"] == ["rev0", "rev1"]
    assert len(body["criteria"]) == 7
    response = send(client, "/api/screening/rounds/", {"benchmark": "nope", "title": "", "reviewers": ["ghost"]})
    assert response.status_code == 400 and {"benchmark", "title", "reviewers"} <= set(response.json())
    response = send(
        client,
        "/api/screening/rounds/",
        {"benchmark": "facet", "title": "x", "reviewers": ["rev0"], "criteria": ["no_such_criterion"]},
    )
    assert response.status_code == 400 and "criteria" in response.json()
    response = send(client, "/api/screening/rounds/", {"benchmark": "facet", "title": "x", "reviewers": ["rev0"]})
    assert response.status_code == 400 and "Already in an open round" in " ".join(response.json()["detail"])


@pytest.mark.parametrize("role", ["expert", "researcher"])
def test_roles_that_do_not_manage_rounds_may_not_open_close_or_adjudicate(role, make_user, round):
    client = as_user(make_user(role))
    assert send(client, "/api/screening/rounds/", {}).status_code == 403
    assert client.post(f"/api/screening/rounds/{round.pk}/close/").status_code == 403
    round_item = round.round_items.first()
    response = send(client, f"/api/screening/round-items/{round_item.pk}/adjudicate/", {"decision": "accept"})
    assert response.status_code == 403 and "detail" in response.json()


def test_researcher_may_not_read_rounds_or_review(researcher, round):
    client = as_user(researcher)
    for url in ("/api/screening/rounds/", f"/api/screening/rounds/{round.pk}/", "/api/screening/assignments/"):
        assert client.get(url).status_code == 403, url


def test_reviewer_takes_the_next_item_submits_goes_back_and_changes_the_review(round, reviewers):
    reviewer = reviewers[0]
    client = as_user(reviewer)
    first = client.get(f"/api/screening/assignments/next/?round={round.pk}").json()
    assert first["content"]["en"] and {c["code"] for c in first["criteria"]} >= {"linguistic_clarity"}
    response = send(client, f"/api/screening/assignments/{first['id']}/review/", REVIEW)
    assert response.status_code == 200, response.content
    assert response.json()["review"]["status"] == "submitted"
    again = send(client, f"/api/screening/assignments/{first['id']}/review/", REVIEW)
    # A second submission conflicts with the stored review, as a second, different label does (409).
    assert again.status_code == 409
    assert again.json() == {"detail": "You already reviewed this item in this round.", "code": "review_conflict"}

    client.get(f"/api/screening/assignments/{first['id']}/")
    changed = {**REVIEW, "decision": "revise", "comment": "The answer key is arguable."}
    response = send(client, f"/api/screening/assignments/{first['id']}/review/", changed, method="put")
    assert response.status_code == 200, response.content
    review = response.json()["review"]
    assert review["decision"] == "revise" and review["changes"] == 1 and review["changed_at"]
    change = ReviewChange.objects.get()
    assert change.old["decision"] == "accept" and change.new["decision"] == "revise"
    assert change.changed_by == reviewer and change.seconds_spent is not None
    stats = as_user(round.opened_by).get(f"/api/screening/rounds/{round.pk}/statistics/").json()
    assert stats["final"] is False and stats["statistics"]["decisions"] == {"revise": 1}


def test_bad_reviews_answer_400_naming_the_fields(round, reviewers):
    client = as_user(reviewers[0])
    assignment = ReviewAssignment.objects.filter(reviewer=reviewers[0]).first()
    url = f"/api/screening/assignments/{assignment.pk}/review/"
    response = send(client, url, {"scores": {"linguistic_clarity": 9}, "decision": "reject"})
    assert response.status_code == 400 and "scores" in response.json()
    response = send(client, url, {"scores": REVIEW_SCORES, "decision": "reject", "comment": ""})
    assert response.status_code == 400 and set(response.json()) == {"comment"}
    response = send(client, url, {"scores": REVIEW_SCORES, "decision": "maybe"})
    assert response.status_code == 400 and set(response.json()) == {"decision"}
    assert client.get("/api/screening/assignments/next/").status_code == 400
    assert client.get("/api/screening/assignments/?round=x").status_code == 400
    response = send(client, url, REVIEW, method="put")
    assert response.status_code == 400 and "nothing to change" in response.json()["detail"][0]


def test_another_reviewers_assignment_is_not_found(round, reviewers):
    theirs = ReviewAssignment.objects.exclude(reviewer=reviewers[0]).first()
    client = as_user(reviewers[0])
    assert client.get(f"/api/screening/assignments/{theirs.pk}/").status_code == 404
    assert send(client, f"/api/screening/assignments/{theirs.pk}/review/", REVIEW).status_code == 404


def test_skipped_item_comes_back_last_stays_mine_and_is_listed(round, reviewers):
    reviewer = reviewers[0]
    client = as_user(reviewer)
    first = client.get(f"/api/screening/assignments/next/?round={round.pk}").json()["id"]
    assert client.post(f"/api/screening/assignments/{first}/skip/").json()["skipped_at"]
    skipped = client.get(f"/api/screening/assignments/?round={round.pk}&state=skipped").json()
    assert [a["id"] for a in skipped["results"]] == [first]
    order = []
    while True:
        response = client.get(f"/api/screening/assignments/next/?round={round.pk}")
        if response.status_code == 204:
            break
        order.append(response.json()["id"])
        send(client, f"/api/screening/assignments/{order[-1]}/review/", REVIEW)
    assert order[-1] == first and len(order) == ReviewAssignment.objects.filter(reviewer=reviewer).count()
    assert ReviewAssignment.objects.get(pk=first).reviewer == reviewer


def test_draft_is_saved_and_stays_a_draft(round, reviewers):
    client = as_user(reviewers[0])
    assignment = ReviewAssignment.objects.filter(reviewer=reviewers[0]).first()
    response = send(client, f"/api/screening/assignments/{assignment.pk}/draft/", {"scores": {"coverage": 3}})
    assert response.status_code == 200 and response.json()["review"]["status"] == "draft"
    assert Review.objects.get(assignment=assignment).scores == {"coverage": 3}


def test_closing_stores_statistics_refuses_changes_and_the_lead_adjudicates_a_conflict(round, lead, reviewers):
    ri = RoundItem.objects.get(round=round, item__uid="cand-0")
    first, second = [a.reviewer for a in ri.assignments.order_by("reviewer__username")]
    make_review(round=round, uid="cand-0", reviewer=first, decision="accept")
    make_review(round=round, uid="cand-0", reviewer=second, decision="reject")
    reviewer_client = as_user(reviewers[0])
    assert reviewer_client.get(f"/api/screening/rounds/{round.pk}/statistics/").json()["statistics"] is None

    lead_client = as_user(lead)
    response = send(lead_client, f"/api/screening/rounds/{round.pk}/close/", {"unreviewed": "bogus"})
    assert response.status_code == 400 and "unreviewed" in response.json()
    response = send(lead_client, f"/api/screening/rounds/{round.pk}/close/", {})
    assert response.status_code == 400 and "lack reviews" in response.json()["detail"][0]
    response = send(lead_client, f"/api/screening/rounds/{round.pk}/close/", {"unreviewed": "return_to_authors"})
    assert response.status_code == 200 and response.json()["status"] == "closed"

    stats = reviewer_client.get(f"/api/screening/rounds/{round.pk}/statistics/").json()
    assert stats["final"] is True and stats["statistics"]["decisions"] == {"accept": 1, "reject": 1}
    mine = ReviewAssignment.objects.get(round_item=ri, reviewer=first)
    response = send(as_user(first), f"/api/screening/assignments/{mine.pk}/review/", REVIEW, method="put")
    assert response.status_code == 400 and "closed" in response.json()["detail"][0]

    conflicts = lead_client.get(f"/api/screening/rounds/{round.pk}/items/?outcome=conflict").json()
    assert [r["item"] for r in conflicts["results"]] == ["cand-0"]
    detail = lead_client.get(f"/api/screening/round-items/{ri.pk}/").json()
    assert [r["review"]["decision"] for r in detail["reviews"]] == ["accept", "reject"]
    url = f"/api/screening/round-items/{ri.pk}/adjudicate/"
    assert send(lead_client, url, {"decision": "maybe"}).status_code == 400
    response = send(lead_client, url, {"decision": "accept", "note": "minor"})
    assert response.status_code == 200 and response.json()["outcome"] == "accept"
    assert Item.objects.get(uid="cand-0").status == Item.Status.ACCEPTED
    assert send(lead_client, url, {"decision": "accept"}).status_code == 400


def test_list_routes_need_a_fixed_number_of_queries(round, lead, reviewers, django_assert_max_num_queries):
    make_review(
        round=round,
        uid="cand-1",
        reviewer=RoundItem.objects.get(round=round, item__uid="cand-1").assignments.first().reviewer,
        decision="accept",
    )
    client, reviewer_client = as_user(lead), as_user(reviewers[0])
    for c, url in (
        (client, "/api/screening/rounds/"),
        (client, f"/api/screening/rounds/{round.pk}/"),
        (client, f"/api/screening/rounds/{round.pk}/items/?page_size=2"),
        (reviewer_client, "/api/screening/assignments/"),
    ):
        with django_assert_max_num_queries(9):
            assert c.get(url).status_code == 200, url


@pytest.mark.parametrize(
    ("role", "method", "path"),
    [
        (role, method, path)
        for role in ("researcher",)
        for method, path in (
            ("get", "rounds/{round}/statistics/"),
            ("get", "rounds/{round}/items/"),
            ("get", "assignments/next/?round={round}"),
            ("get", "assignments/{assignment}/"),
            ("post", "assignments/{assignment}/draft/"),
            ("post", "assignments/{assignment}/review/"),
            ("put", "assignments/{assignment}/review/"),
            ("post", "assignments/{assignment}/skip/"),
            ("get", "round-items/{round_item}/"),
        )
    ]
    + [("expert", "get", "round-items/{round_item}/")],
)
def test_every_route_refuses_a_role_without_its_permission_with_403(role, method, path, make_user, round):
    assignment = ReviewAssignment.objects.filter(round_item__round=round).first()
    url = "/api/screening/" + path.format(round=round.pk, assignment=assignment.pk, round_item=assignment.round_item_id)
    response = send(as_user(make_user(role)), url, {}, method=method)
    assert response.status_code == 403 and response.json()["detail"], url
