"""Bad input is refused with a clear 400 (or 413) and writes nothing, on the import page, the API and the command
line: JSON nested 100,000 deep, a NUL character in any text (escaped or raw), a body over the upload limit.

On PostgreSQL a NUL would otherwise reach the database (text and jsonb cannot hold it: a 500), and on every
database the deep JSON would exhaust the parser's recursion (a 500).
"""

import json

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client, override_settings
from rest_framework.authtoken.models import Token

from annotation.items import services
from annotation.items.forms import ItemCreateForm
from annotation.items.models import Item, ItemDraft, ItemRevision
from tests.factories import make_item, mcq_content

pytestmark = pytest.mark.django_db

DEEP = "[" * 100_000 + "]" * 100_000
NUL_TEXT = "Mia feels\x00 joy"


def record(uid: str, **changes: object) -> dict:
    content = mcq_content()
    return {
        "format": "eistudio-item/1",
        "uid": uid,
        "benchmark": "facet",
        "dimension": "hidden_emotion_recognition",
        "kind": "mcq",
        "content": content,
        **changes,
    }


def with_question(text: str) -> dict:
    content = mcq_content()
    content["en"]["question"] = text
    return content


def jsonl_bytes(*lines: str) -> bytes:
    return "".join(line + "\n" for line in lines).encode("utf-8")


def upload(data: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile("items.jsonl", data, content_type="application/x-ndjson")


GOOD = json.dumps(record("ok-1"))
DEEP_LINE = '{"uid": "deep", "metadata": ' + DEEP + "}"
ESCAPED_NUL_LINE = json.dumps(record("nul-1", content=with_question(NUL_TEXT)))  # the NUL written as \u0000
RAW_NUL_LINE = json.dumps(record("nul-2", content=with_question("RAW")), ensure_ascii=False).replace("RAW", "a\x00b")


@pytest.fixture
def token_client(expert) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=expert).key}")


# --- imports: the page, the service and the command line ---------------------------------------------------


@pytest.mark.parametrize(
    ("bad_line", "expected"),
    [
        (DEEP_LINE, "line 2: line: JSON nested more than 64 levels deep (at character 92)"),
        (ESCAPED_NUL_LINE, "line 2: content.en.question: contains a NUL character (\\u0000), which cannot be stored"),
        (RAW_NUL_LINE, "line 2: content.en.question: contains a NUL character (\\u0000), which cannot be stored"),
    ],
    ids=["deep", "escaped-nul", "raw-nul"],
)
def test_import_of_a_deep_or_nul_line_is_refused_naming_the_line_and_writes_nothing(taxonomy, bad_line, expected):
    with pytest.raises(services.ImportFailed) as exc:
        services.items_import(data=jsonl_bytes(GOOD, bad_line), user=None)

    assert [str(e) for e in exc.value.errors] == [expected]
    assert Item.objects.count() == 0


@pytest.mark.parametrize("bad_line", [DEEP_LINE, ESCAPED_NUL_LINE, RAW_NUL_LINE], ids=["deep", "escaped", "raw"])
def test_import_page_refuses_a_deep_or_nul_line_with_a_400_naming_the_line(taxonomy, expert, login, bad_line):
    response = login(expert).post("/items/import/", {"file": upload(jsonl_bytes(GOOD, bad_line)), "format": "eistudio"})

    assert response.status_code == 400
    html = response.content.decode()
    assert "1 error; nothing was imported" in html
    assert "<code>line 2: " in html
    assert Item.objects.count() == 0


def test_emobench_import_refuses_a_nul_naming_the_line_and_field(taxonomy):
    row = {"qid": "1", "language": "en", "scenario": "S\x00", "subject": "Sam", "choices": ["a", "b"], "label": "a"}

    with pytest.raises(services.ImportFailed) as exc:
        services.items_import(data=jsonl_bytes(json.dumps(row)), user=None, format="emobench")

    assert [str(e) for e in exc.value.errors] == [
        "line 1: scenario: contains a NUL character (\\u0000), which cannot be stored"
    ]
    assert Item.objects.count() == 0


@pytest.mark.parametrize(
    ("bad_line", "expected"),
    [
        (DEEP_LINE, "line 2: line: JSON nested more than 64 levels deep"),
        (RAW_NUL_LINE, "line 2: content.en.question: contains a NUL character"),
    ],
    ids=["deep", "raw-nul"],
)
def test_import_command_refuses_a_deep_or_nul_line_naming_it_and_writes_nothing(
    taxonomy, tmp_path, capsys, bad_line, expected
):
    path = tmp_path / "items.jsonl"
    path.write_bytes(jsonl_bytes(GOOD, bad_line))

    with pytest.raises(CommandError, match="1 error\\(s\\); nothing was imported"):
        call_command("import_items", str(path))

    assert expected in capsys.readouterr().err
    assert Item.objects.count() == 0


def test_load_taxonomy_command_refuses_deep_json_with_a_message(tmp_path):
    path = tmp_path / "taxonomy.json"
    path.write_text('{"benchmarks": ' + DEEP + "}", encoding="utf-8")

    with pytest.raises(CommandError, match="JSON nested more than 64 levels deep"):
        call_command("load_taxonomy", str(path))


# --- the API ------------------------------------------------------------------------------------------------


def api_body(**changes: object) -> dict:
    body = {
        "uid": "api-new",
        "benchmark": "facet",
        "dimension": "hidden_emotion_recognition",
        "kind": "mcq",
        "content": mcq_content(),
    }
    return body | changes


def test_api_refuses_a_body_nested_100000_deep_with_a_400_naming_the_body(taxonomy, token_client):
    response = token_client.post(
        "/api/items/", '{"uid": "x", "metadata": ' + DEEP + "}", content_type="application/json"
    )

    assert response.status_code == 400
    assert response.json() == {
        "detail": "The request body is JSON nested more than 64 levels deep (at character 89).",
        "code": "too_deep",
    }
    assert Item.objects.count() == 0


@pytest.mark.parametrize(
    "body",
    [
        json.dumps(api_body(content=with_question(NUL_TEXT))),
        json.dumps(api_body(content=with_question("RAW")), ensure_ascii=False).replace("RAW", "a\x00b"),
    ],
    ids=["escaped", "raw"],
)
def test_api_refuses_a_nul_character_with_a_400_naming_the_field(taxonomy, token_client, body):
    response = token_client.post("/api/items/", body, content_type="application/json")

    assert response.status_code == 400
    assert response.json() == {
        "detail": "The field content.en.question contains a NUL character (\\u0000), which cannot be stored.",
        "code": "nul_character",
        "field": "content.en.question",
    }
    assert Item.objects.count() == 0


def test_api_refuses_a_nul_in_a_revision_and_in_metadata_keys(taxonomy, token_client):
    make_item(uid="api-item")

    text = token_client.post(
        "/api/items/api-item/revise/",
        {"dimension": "hidden_emotion_recognition", "content": with_question(NUL_TEXT)},
        content_type="application/json",
    )
    key = token_client.post(
        "/api/items/", api_body(metadata={"source": {"no\x00te": "x"}}), content_type="application/json"
    )

    assert (text.status_code, text.json()["field"]) == (400, "content.en.question")
    assert (key.status_code, key.json()["field"]) == (400, "metadata.source.no\\u0000te")
    assert ItemRevision.objects.filter(item__uid="api-item").count() == 1
    assert not Item.objects.filter(uid="api-new").exists()


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=10_000)
@pytest.mark.parametrize("authenticated_by", ["token", "session"])
def test_api_answers_a_body_over_the_upload_limit_with_a_json_413_naming_the_limit(
    taxonomy, expert, token_client, login, authenticated_by
):
    client = token_client if authenticated_by == "token" else login(expert)
    body = json.dumps(api_body(content=with_question("x" * 20_000)))

    response = client.post("/api/items/", body, content_type="application/json")

    assert response.status_code == 413
    assert response["Content-Type"] == "application/json"
    assert response.json() == {
        "detail": "The request body is over the 10000-byte limit; send less at once.",
        "code": "too_large",
    }
    assert Item.objects.count() == 0


def test_api_refuses_a_nul_in_a_query_parameter_with_a_json_400(taxonomy, token_client):
    response = token_client.get("/api/items/", {"dimension": "a\x00b"})

    assert response.status_code == 400
    assert response.json()["field"] == "dimension"


# --- pages --------------------------------------------------------------------------------------------------


def editor_form(item: Item, **changes: str) -> dict:
    data = {"dimension": str(item.dimension_id), "base_revision": "1", "message": "edited"}
    for lang, version in item.current_revision.content.items():
        data |= {f"{lang}-context": version["context"], f"{lang}-question": version["question"]}
        data |= {f"{lang}-option-{i}": option for i, option in enumerate(version["options"])}
        data[f"{lang}-answer"] = str(version["answer"])
    return data | changes


def test_editor_page_refuses_a_nul_in_a_field_with_a_400_naming_it(taxonomy, expert, login):
    item = make_item(uid="page-nul", user=expert)

    response = login(expert).post("/items/page-nul/edit/", editor_form(item, **{"en-question": NUL_TEXT}))

    assert response.status_code == 400
    assert "The field en-question contains a NUL character" in response.content.decode()
    assert item.revisions.count() == 1


def test_autosave_refuses_a_nul_and_keeps_no_draft(taxonomy, expert, login):
    item = make_item(uid="autosave-nul", user=expert)

    response = login(expert).post("/items/autosave-nul/autosave/", editor_form(item, **{"en-context": NUL_TEXT}))

    assert response.status_code == 400
    assert not ItemDraft.objects.exists()


def test_item_list_filter_with_a_nul_is_a_400_page(taxonomy, expert, login):
    response = login(expert).get("/items/", {"dimension": "x\x00"})

    assert response.status_code == 400
    assert "The field dimension contains a NUL character" in response.content.decode()


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=10_000)
def test_a_page_form_over_the_upload_limit_is_a_413_page_naming_the_limit(taxonomy, expert, login):
    item = make_item(uid="page-big", user=expert)

    response = login(expert).post("/items/page-big/edit/", editor_form(item, **{"en-context": "x" * 20_000}))

    assert response.status_code == 413
    html = response.content.decode()
    assert "Request not accepted" in html and "over the 10000-byte limit" in html
    assert item.revisions.count() == 1


def test_services_refuse_a_nul_naming_the_field_whatever_calls_them(taxonomy, expert):
    item = make_item(uid="service-nul", user=expert)
    state = services.ItemState(dimension=item.dimension, content=with_question(NUL_TEXT))

    with pytest.raises(ValidationError) as exc:
        services.item_revise(item=item, state=state, user=expert)
    assert exc.value.messages == ["content.en.question: contains a NUL character (\\u0000), which cannot be stored"]
    meta = services.ItemState(dimension=item.dimension, content=mcq_content(), metadata={"note": NUL_TEXT})
    with pytest.raises(ValidationError, match="The field metadata.note contains a NUL"):
        services.item_revise(item=item, state=meta, user=expert)
    with pytest.raises(ValidationError, match="contains a NUL"):
        services.item_draft_save(item=item, user=expert, data={"en-question": [NUL_TEXT]}, base_revision=1)
    assert item.revisions.count() == 1 and not ItemDraft.objects.exists()


def test_page_forms_refuse_a_nul_through_djangos_validator(taxonomy):
    form = ItemCreateForm({"uid": "a\x00b", "benchmark": "", "kind": "mcq"})

    assert not form.is_valid()
    assert "Null characters are not allowed." in form.errors["uid"]
