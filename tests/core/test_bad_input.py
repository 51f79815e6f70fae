"""Bad parameters answer a clear 4xx, never a 500 (issue 28, item 2): non-integer ids, huge page numbers, a release
compared with a non-id, lone surrogates in imports, rows of the wrong types, a NUL in the API token."""

import json
import re

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.authtoken.models import Token

from annotation.items.models import Item
from annotation.labelling.models import ModelResponse
from evaluation import services as evaluation
from tests.core.crawl import Route, routes
from tests.factories import make_frozen_release, make_item
from tests.factories.llm import make_llm_endpoint

ID_GROUP = re.compile(r"\(\?P<(?P<name>\w+)>(?P<body>[^)]*)\)")
HUGE = "99999999999999999999"
# A JSON line whose question is the escape of a lone surrogate, which no UTF-8 text (nor the database) holds.
SURROGATE_LINE = (
    '{"format": "eistudio-item/1", "uid": "sur-1", "benchmark": "facet", "dimension": "hidden_emotion_recognition", '
    '"kind": "mcq", "content": {"en": {"question": "Why \\ud800?", "options": ["a", "b"], "answer": 0}}}'
)


@pytest.fixture
def release(taxonomy, lead):
    make_item(uid="bad-1", user=lead, status="accepted")
    return make_frozen_release(version="1.0.0", user=lead, override_reason="test")


@pytest.fixture
def evaluation_run(release, researcher):
    endpoint = make_llm_endpoint(base_url="http://127.0.0.1:9/v1", model="sim-mcq-acc70")
    return evaluation.evaluation_run_create(
        name="bad input", release=release, endpoints=[endpoint], languages=["en"], user=researcher,
        judge_override_reason="objective items only",
    )  # fmt: skip


# --- non-integer ids --------------------------------------------------------------------------------------


def _api_routes_with_an_id() -> list[Route]:
    return [
        route
        for route in routes()
        if route.route.startswith("api/")
        and any(name in ("pk", "id") or name.endswith("_id") or route.is_numeric(name) for name in route.params)
    ]


def _with_a_non_integer(route: Route) -> str:
    """The route's address with ``abc`` for every parameter (an id, a uid, a file name alike)."""
    path = ID_GROUP.sub("abc", route.regex)
    return "/" + path.lstrip("^").rstrip("$").replace("\\Z", "").replace("\\", "")


@pytest.mark.parametrize("method", ["get", "post"])
def test_every_api_route_answers_a_non_integer_id_without_a_server_error(client, admin_user, login, method):
    login(admin_user)
    client.raise_request_exception = False
    checked, errors = [], []
    for route in _api_routes_with_an_id():
        url = _with_a_non_integer(route)
        response = client.post(url, content_type="application/json") if method == "post" else client.get(url)
        checked.append(url)
        if response.status_code >= 500:
            errors.append(f"{route.key} {url} {response.status_code}")
    assert "/api/llm/runs/abc/progress/" in checked and len(checked) > 50
    assert errors == []


@pytest.mark.parametrize(
    "url",
    [
        "/api/llm/runs/abc/progress/",
        "/api/llm/runs/abc/budget/",
        "/api/evaluation/runs/abc/progress/",
        "/api/calibration/runs/abc/progress/",
    ],
)
def test_a_custom_action_with_a_non_integer_id_is_not_found(client, admin_user, login, url):
    assert login(admin_user).get(url).status_code == 404


# --- release compare --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("against", "message"),
    [
        ("abc", "A release id is a whole number; got “abc”."),
        (HUGE, f"A release id is a whole number; got “{HUGE}”."),
        ("²", "A release id is a whole number; got “²”."),
        ("", "Give the id of the release to compare with."),
        ("987654", "No release has id 987654."),
    ],
)
def test_release_compare_refuses_an_against_that_is_not_a_release_id(release, researcher, login, against, message):
    response = login(researcher).get(f"/api/releases/{release.pk}/compare/", {"against": against})

    assert response.status_code == 400
    assert response.json() == {"against": [message]}


def test_release_compare_with_a_release_id_still_compares(release, researcher, login):
    response = login(researcher).get(f"/api/releases/{release.pk}/compare/", {"against": release.pk})

    assert response.status_code == 200
    assert response.json()["unchanged"]


# --- drill-down page numbers ------------------------------------------------------------------------------


def test_drill_down_page_and_api_take_a_page_number_beyond_any_row_as_the_last_page(evaluation_run, researcher, login):
    client = login(researcher)

    api = client.get(f"/api/evaluation/runs/{evaluation_run.pk}/drill/", {"page": HUGE})
    page = client.get(f"/evaluation/{evaluation_run.pk}/drill/", {"page": HUGE})

    assert api.status_code == 200
    assert (api.json()["page"], api.json()["answers"], api.json()["has_next"]) == (1_000_000, [], False)
    assert page.status_code == 200


@pytest.mark.parametrize("page", ["abc", "0", "-1", "²", "9" * 5000])
def test_drill_down_api_refuses_a_page_that_is_not_a_whole_number_from_1(evaluation_run, researcher, login, page):
    response = login(researcher).get(f"/api/evaluation/runs/{evaluation_run.pk}/drill/", {"page": page})

    if page == "9" * 5000:
        # Digits, only too many: the last page.
        assert response.status_code == 200 and response.json()["page"] == 1_000_000
    else:
        assert response.status_code == 400
        assert response.json()["page"] == ["A page number is a whole number from 1."]


# --- imports ----------------------------------------------------------------------------------------------


def test_page_import_refuses_a_lone_surrogate_naming_the_line_and_field(taxonomy, expert, login):
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("items.jsonl", (SURROGATE_LINE + "\n").encode())
    response = login(expert).post("/items/import/", {"file": upload, "format": "eistudio"})

    assert response.status_code == 400
    html = response.content.decode()
    assert "line 1: content.en.question: contains a lone surrogate" in html
    assert Item.objects.count() == 0


def test_import_items_command_refuses_a_lone_surrogate_without_a_traceback(taxonomy, tmp_path, capsys):
    path = tmp_path / "items.jsonl"
    path.write_text(SURROGATE_LINE + "\n", encoding="utf-8")

    with pytest.raises(CommandError, match=r"1 error\(s\); nothing was imported"):
        call_command("import_items", str(path))

    assert "items.jsonl:line 1: content.en.question: contains a lone surrogate" in capsys.readouterr().err
    assert Item.objects.count() == 0


def test_api_refuses_a_json_body_holding_a_lone_surrogate(taxonomy, researcher, login):
    body = '{"rows": [{"item": "x", "language": "en", "model": "m", "text": "\\udc00"}]}'
    response = login(researcher).post("/api/labelling/responses/import/", body, content_type="application/json")

    assert response.status_code == 400
    assert response.json()["code"] == "lone_surrogate"
    assert response.json()["field"] == "rows[0].text"


@pytest.mark.parametrize(
    ("row", "field", "message"),
    [
        ({"item": ["op"], "language": "en", "model": "m", "text": "t"}, "item", "must be text, got list"),
        ({"item": "op", "language": {"en": 1}, "model": "m", "text": "t"}, "language", "must be text, got dict"),
        ({"item": "op", "language": "en", "model": ["m"], "text": "t"}, "model", "must be text, got list"),
        ({"item": "op", "language": "en", "model": "m", "text": 3}, "text", "must be text, got int"),
    ],
)
def test_responses_import_names_a_field_of_the_wrong_type(taxonomy, lead, researcher, login, row, field, message):
    make_item(uid="op", kind="open_prompt", dimension="emotion_matching", user=lead, status="accepted")
    client = login(researcher)

    response = client.post("/api/labelling/responses/import/", {"rows": [row]}, content_type="application/json")
    page = client.post("/labelling/responses/import/", {"file": _upload(row)})

    assert response.status_code == 400
    assert response.json()["errors"] == [{"line": 1, "field": field, "message": message}]
    assert f"line 1: {field}: {message}" in page.content.decode()
    assert ModelResponse.objects.count() == 0


def _upload(row: dict) -> object:
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile("responses.jsonl", (json.dumps(row) + "\n").encode())


# --- the token header -------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["ab\x00cd", "\x01" * 10, "k" * 41])
def test_a_token_holding_a_nul_or_control_character_or_too_long_is_refused_with_401(client, researcher, key):
    Token.objects.create(user=researcher)

    response = client.get("/api/llm/runs/", headers={"Authorization": f"Token {key}"})

    assert response.status_code == 401
    assert response.json()["detail"] == "Invalid token."
