"""The role x page/API permission matrices: roles, expected outcomes, and how one request is made and checked.

Each app's ``test_views.py`` and ``test_api.py`` hold the rows of its own pages and endpoints; every request is
made with the item ``UID`` in place, and a refused write must leave the items and revisions untouched.
"""

import json
from urllib.parse import quote

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.items.models import Benchmark, Item, ItemRevision
from tests.factories import PASSWORD, make_item, mcq_content

ANONYMOUS = "anonymous"
ROLES = (ANONYMOUS, "researcher", "expert", "lead_expert", "admin")

# Expected outcomes besides a plain status code.
LOGIN = "redirect to /login/?next=<path>"
ADMIN_LOGIN = "redirect to /admin/login/?next=<path>"
NO_CREDENTIALS = "401/403: authentication credentials were not provided"

UID = "perm-item"
SUCCESS = (200, 201, 302)


def expand(matrix: list[tuple]) -> list:
    params = []
    for method, path, payload, *outcomes in matrix:
        for role, expected in zip(ROLES, outcomes, strict=True):
            params.append(pytest.param(method, path, payload, role, expected, id=f"{role}-{method} {path}"))
    return params


def edited_question_form(item: Item) -> dict:
    """Return the editor's POST data for ``item`` with the English question reworded."""
    revision = item.current_revision
    data = {"dimension": str(item.dimension_id), "base_revision": str(revision.number), "message": "reword"}
    for lang, version in revision.content.items():
        data[f"{lang}-context"] = version["context"]
        data[f"{lang}-question"] = version["question"]
        for index, option in enumerate(version["options"]):
            data[f"{lang}-option-{index}"] = option
        data[f"{lang}-answer"] = str(version["answer"])
    data["en-question"] = "What does Mia feel right now?"
    return data


def jsonl_file(*records: dict) -> SimpleUploadedFile:
    body = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    return SimpleUploadedFile("items.jsonl", body.encode("utf-8"), content_type="application/x-ndjson")


def import_record(uid: str) -> dict:
    return {
        "format": "eistudio-item/1",
        "uid": uid,
        "benchmark": "facet",
        "dimension": "hidden_emotion_recognition",
        "kind": "mcq",
        "content": mcq_content(),
    }


def build_payload(name: str | None, item: Item) -> dict:
    if name is None:
        return {}
    if name == "edit":
        return {"data": edited_question_form(item)}
    if name == "create":
        facet = Benchmark.objects.get(slug="facet")
        return {"data": {"uid": "page-created", "benchmark": str(facet.pk), "kind": "mcq"}}
    if name == "import":
        return {"data": {"file": jsonl_file(import_record("page-imported")), "format": "eistudio"}}
    if name == "api_create":
        record = import_record("api-created")
        del record["format"]
        return {"data": json.dumps(record), "content_type": "application/json"}
    if name == "api_revise":
        content = mcq_content()
        content["en"]["question"] = "How does Mia feel?"
        body = {"dimension": "hidden_emotion_recognition", "content": content, "base_revision": 1}
        return {"data": json.dumps(body), "content_type": "application/json"}
    raise AssertionError(f"unknown payload {name}")


def write_snapshot() -> tuple[int, int]:
    return Item.objects.count(), ItemRevision.objects.count()


def request_as(client, make_user, role: str, method: str, path: str, payload: str | None):
    item = make_item(uid=UID, user=make_user("lead_expert", username="item-author"))
    if role != ANONYMOUS:
        user = make_user(role, username=f"matrix-{role}")
        assert client.login(username=user.username, password=PASSWORD)
    before = write_snapshot()
    kwargs = build_payload(payload, item)
    response = client.post(path, **kwargs) if method == "POST" else client.get(path)
    return response, before


def assert_page_outcome(response, path: str, expected: object) -> None:
    if expected == LOGIN:
        assert response.status_code == 302
        assert response["Location"] == f"/login/?next={quote(path)}"
    elif expected == ADMIN_LOGIN:
        assert response.status_code == 302
        assert response["Location"] == f"/admin/login/?next={quote(path)}"
    else:
        assert response.status_code == expected


def assert_api_outcome(response, expected: object) -> None:
    if expected == NO_CREDENTIALS:
        assert response.status_code in (401, 403)
        assert "Location" not in response
        body = response.content.decode()
        # The docs page renders only HTML, so its refusal carries no JSON detail.
        assert "Authentication credentials were not provided." in body or body == "403 Forbidden"
    else:
        assert response.status_code == expected


def assert_written_only_if_allowed(method: str, expected: object, before: tuple[int, int]) -> None:
    allowed_write = method == "POST" and expected in SUCCESS
    assert (write_snapshot() != before) == allowed_write
