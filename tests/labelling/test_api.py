"""The labelling API: builders import and build, experts label blind, change, skip; each refused role gets 403."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.authtoken.models import Token

from annotation.items.models import Benchmark
from annotation.labelling import services as comparisons
from annotation.labelling.models import ExpertLabel, LabelAssignment, LabelChange
from annotation.labelling.pairwise import canonical_score

pytestmark = pytest.mark.django_db


def as_user(user: object) -> Client:
    """Return a client that sends the user's API token, as scripts do."""
    token, _ = Token.objects.get_or_create(user=user)
    return Client(headers={"Authorization": f"Token {token.key}"})


def post_json(client: Client, url: str, data: dict, method: str = "post") -> object:
    if method == "get":
        return client.get(url)
    return getattr(client, method)(url, json.dumps(data), content_type="application/json")


@pytest.fixture
def labellers(make_user):
    return [make_user("expert", username="lab-e1"), make_user("expert", username="lab-e2")]


@pytest.fixture
def built(prompts, labellers, researcher):
    return comparisons.comparison_set_build(
        name="api set", benchmark=Benchmark.objects.get(slug="facet"), experts=labellers, user=researcher
    )


def test_researcher_imports_responses_as_rows_and_as_a_file_and_bad_rows_name_line_and_field(prompts, researcher):
    client = as_user(researcher)
    rows = [{"item": "op-0", "language": "en", "model": "m-delta", "text": "A fourth answer."}]
    response = post_json(client, "/api/labelling/responses/import/", {"rows": rows})
    assert response.status_code == 201, response.content
    assert response.json() == {"created": 1, "unchanged": 0}

    upload = SimpleUploadedFile("r.jsonl", (json.dumps(rows[0]) + "\n").encode())
    response = client.post("/api/labelling/responses/import/", {"file": upload})
    assert response.status_code == 201 and response.json() == {"created": 0, "unchanged": 1}

    bad = [{"item": "op-0", "language": "fr", "model": "m-delta", "text": "x"}]
    response = post_json(client, "/api/labelling/responses/import/", {"rows": bad})
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "language"
    response = post_json(client, "/api/labelling/responses/import/", {})
    assert response.status_code == 400 and "file" in response.json()


@pytest.mark.parametrize("role", ["expert", "lead_expert"])
def test_labellers_may_not_import_responses_or_build_or_close_sets(role, make_user, built):
    client = as_user(make_user(role))
    assert post_json(client, "/api/labelling/responses/import/", {"rows": []}).status_code == 403
    assert post_json(client, "/api/labelling/sets/", {"name": "x"}).status_code == 403
    response = client.post(f"/api/labelling/sets/{built.pk}/close/")
    assert response.status_code == 403 and "detail" in response.json()


def test_researcher_builds_a_set_and_sees_each_experts_progress(prompts, labellers, researcher):
    client = as_user(researcher)
    response = post_json(
        client,
        "/api/labelling/sets/",
        {"name": "api built", "benchmark": "facet", "experts": ["lab-e1", "lab-e2"], "languages": ["en"], "seed": 3},
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["comparisons"] == 6 and body["is_open"] is True
    detail = client.get(f"/api/labelling/sets/{body['id']}/").json()
    assert [p["expert"] for p in detail["progress"]] == ["lab-e1", "lab-e2"]
    assert all(p["assigned"] == 6 and p["labelled"] == 0 for p in detail["progress"])


def test_building_a_set_with_bad_input_answers_400_naming_the_fields(prompts, researcher):
    client = as_user(researcher)
    response = post_json(
        client, "/api/labelling/sets/", {"name": "", "benchmark": "nope", "experts": ["ghost"], "per_stratum": 0}
    )
    assert response.status_code == 400
    assert {"name", "benchmark", "experts", "per_stratum"} <= set(response.json())
    response = post_json(
        client,
        "/api/labelling/sets/",
        {"name": "with a builder", "benchmark": "facet", "experts": [researcher.username]},
    )
    assert response.status_code == 400 and "detail" in response.json()


def test_researcher_may_not_take_the_expert_queue(built, researcher):
    client = as_user(researcher)
    for url in (f"/api/labelling/sets/{built.pk}/next/", "/api/labelling/assignments/", "/api/labelling/labels/"):
        assert client.get(url).status_code == 403, url


def test_expert_labels_blind_changes_the_label_and_the_change_is_recorded(built, labellers):
    expert = labellers[0]
    client = as_user(expert)
    body = client.get(f"/api/labelling/sets/{built.pk}/next/").json()
    shown = body["comparison"]
    assert body["done"] is False and body["progress"] == {"labelled": 0, "assigned": 12, "skipped": 0}
    assert "m-alpha" not in json.dumps(body) and "model" not in shown
    assert shown["left"].endswith(".") and shown["label"] is None
    url = f"/api/labelling/assignments/{shown['assignment']}/label/"

    response = post_json(client, url, {"winner": "left", "margin": 2, "rationale": "warmer"})
    assert response.status_code == 201, response.content
    assignment = LabelAssignment.objects.get(pk=shown["assignment"])
    assert response.json()["score"] == canonical_score(shown_order=assignment.shown_order, winner="left", margin=2)
    assert response.json()["winner"] == "left" and response.json()["margin"] == 2
    assert post_json(client, url, {"winner": "left", "margin": 2, "rationale": "warmer"}).status_code == 200
    assert post_json(client, url, {"winner": "right", "margin": 1}).status_code == 409

    client.get(f"/api/labelling/assignments/{shown['assignment']}/")
    response = post_json(client, url, {"winner": "right", "margin": 1, "rationale": "on reflection"}, method="put")
    assert response.status_code == 200, response.content
    assert response.json()["winner"] == "right" and response.json()["changes"] == 1
    change = LabelChange.objects.get()
    assert change.old_rationale == "warmer" and change.new_rationale == "on reflection"
    assert change.new_score == -change.old_score // 2 and change.changed_by == expert
    assert change.seconds_spent is not None
    assert ExpertLabel.objects.get(assignment=assignment).score == change.new_score

    labels = client.get(f"/api/labelling/labels/?set={built.pk}").json()
    assert labels["count"] == 1 and labels["results"][0]["changes"] == 1


def test_bad_verdicts_answer_400_naming_the_field(built, labellers):
    client = as_user(labellers[0])
    assignment = LabelAssignment.objects.filter(expert=labellers[0]).first()
    url = f"/api/labelling/assignments/{assignment.pk}/label/"
    assert set(post_json(client, url, {"winner": "up"}).json()) == {"winner"}
    assert set(post_json(client, url, {"winner": "left"}).json()) == {"margin"}
    assert set(post_json(client, url, {"winner": "tie", "margin": 3}).json()) == {"margin"}
    assert set(post_json(client, url, {"winner": "left", "margin": 9}).json()) == {"margin"}
    response = post_json(client, url, {"winner": "left", "margin": 1}, method="put")
    assert response.status_code == 400 and "nothing to change" in response.json()["detail"][0]


def test_another_experts_assignment_is_not_found(built, labellers):
    theirs = LabelAssignment.objects.filter(expert=labellers[1]).first()
    client = as_user(labellers[0])
    assert client.get(f"/api/labelling/assignments/{theirs.pk}/").status_code == 404
    assert post_json(client, f"/api/labelling/assignments/{theirs.pk}/label/", {"winner": "tie"}).status_code == 404


def test_skipped_comparison_comes_back_last_and_is_listed(built, labellers):
    client = as_user(labellers[0])
    first = client.get(f"/api/labelling/sets/{built.pk}/next/").json()["comparison"]["assignment"]
    response = client.post(f"/api/labelling/assignments/{first}/skip/")
    assert response.status_code == 200 and response.json()["skipped_at"]
    assert LabelAssignment.objects.get(pk=first).expert == labellers[0]
    listed = client.get(f"/api/labelling/assignments/?set={built.pk}&state=skipped").json()
    assert [a["id"] for a in listed["results"]] == [first]
    seen = []
    while True:
        body = client.get(f"/api/labelling/sets/{built.pk}/next/").json()
        if body["done"]:
            break
        seen.append(body["comparison"]["assignment"])
        post_json(client, f"/api/labelling/assignments/{seen[-1]}/label/", {"winner": "tie"})
    assert seen[-1] == first and len(seen) == 12
    assert client.get(f"/api/labelling/sets/{built.pk}/progress/").json() == {
        "labelled": 12,
        "assigned": 12,
        "skipped": 0,
    }
    assert client.post(f"/api/labelling/assignments/{first}/skip/").status_code == 400


def test_closed_set_refuses_changes_with_a_clear_message(built, labellers, researcher):
    expert_client = as_user(labellers[0])
    assignment = LabelAssignment.objects.filter(expert=labellers[0]).first()
    url = f"/api/labelling/assignments/{assignment.pk}/label/"
    assert post_json(expert_client, url, {"winner": "tie"}).status_code == 201
    assert as_user(researcher).post(f"/api/labelling/sets/{built.pk}/close/").json()["is_open"] is False
    response = post_json(expert_client, url, {"winner": "left", "margin": 1}, method="put")
    assert response.status_code == 400 and "closed" in response.json()["detail"][0]
    assert as_user(researcher).post(f"/api/labelling/sets/{built.pk}/close/").status_code == 400


def test_list_routes_need_a_fixed_number_of_queries(built, labellers, researcher, django_assert_max_num_queries):
    expert = labellers[0]
    for assignment in LabelAssignment.objects.filter(expert=expert).select_related("comparison")[:6]:
        comparisons.label_submit(comparison=assignment.comparison, expert=expert, winner="tie", margin=None)
    client = as_user(expert)
    for url in (
        "/api/labelling/sets/",
        f"/api/labelling/assignments/?set={built.pk}",
        "/api/labelling/labels/",
        f"/api/labelling/sets/{built.pk}/",
    ):
        with django_assert_max_num_queries(8):
            assert client.get(url).status_code == 200, url
    builder = as_user(researcher)
    with django_assert_max_num_queries(8):
        assert builder.get("/api/labelling/sets/?page_size=1").json()["count"] == 1


def test_the_schema_documents_the_labelling_routes(researcher):
    client = as_user(researcher)
    schema = client.get("/api/schema/", headers={"Accept": "application/json"}).content.decode()
    for path in ("/api/labelling/sets/{id}/next/", "/api/labelling/assignments/{id}/label/"):
        assert path in schema


@pytest.mark.parametrize(
    ("role", "method", "path"),
    [
        (role, method, path)
        for role in ("researcher", "admin")
        for method, path in (
            ("get", "sets/{set}/next/"),
            ("get", "sets/{set}/progress/"),
            ("get", "assignments/"),
            ("get", "assignments/{assignment}/"),
            ("post", "assignments/{assignment}/label/"),
            ("put", "assignments/{assignment}/label/"),
            ("post", "assignments/{assignment}/skip/"),
            ("get", "labels/"),
            ("get", "labels/{label}/"),
        )
    ],
)
def test_every_labelling_route_refuses_builders_with_403(role, method, path, make_user, built, labellers):
    assignment = LabelAssignment.objects.filter(comparison__comparison_set=built).select_related("comparison").first()
    label = comparisons.label_submit(
        comparison=assignment.comparison, expert=assignment.expert, winner="tie", margin=None
    )
    url = "/api/labelling/" + path.format(set=built.pk, assignment=assignment.pk, label=label.pk)
    response = post_json(as_user(make_user(role)), url, {"winner": "tie"}, method=method)
    assert response.status_code == 403 and response.json()["detail"], url


def test_only_builders_read_a_sets_description_which_may_name_models(prompts, labellers, researcher):
    comparisons.comparison_set_build(
        name="described",
        benchmark=Benchmark.objects.get(slug="facet"),
        experts=labellers,
        user=researcher,
        description="m-alpha against m-beta",
    )
    for_builder = as_user(researcher).get("/api/labelling/sets/").json()["results"][0]
    assert for_builder["description"] == "m-alpha against m-beta"
    answer = as_user(labellers[0]).get("/api/labelling/sets/")
    assert "m-alpha" not in answer.content.decode() and answer.json()["results"][0]["description"] is None


def test_my_labels_page_by_page_in_order_with_their_changes_in_the_same_queries_at_two_sizes(built, labellers):
    from annotation.labelling.services import label_change, label_submit
    from tests.items.test_queries import assert_same_queries_at_two_sizes, queries_for

    expert = labellers[0]
    assignments = list(LabelAssignment.objects.filter(expert=expert).select_related("comparison").order_by("pk"))
    client = as_user(expert)

    def label(upto: int) -> None:
        for assignment in assignments[len(ExpertLabel.objects.filter(assignment__expert=expert)) : upto]:
            label_submit(comparison=assignment.comparison, expert=expert, winner="left", margin=1)
            label_change(comparison=assignment.comparison, expert=expert, winner="right", margin=2)

    label(3)
    page = "/api/labelling/labels/?page_size=2"
    assert_same_queries_at_two_sizes(lambda: queries_for(client, page), lambda: label(8))
    seen, url = [], "/api/labelling/labels/?page_size=3"
    while url:
        body = client.get(url).json()
        assert body["count"] == 8
        seen += body["results"]
        url = body["next"]
    assert [row["assignment"] for row in seen] == [a.pk for a in assignments[:8]]
    assert all(row["changes"] == 1 for row in seen)
