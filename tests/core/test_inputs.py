"""The shared input limits: JSON depth measured without recursion, NUL characters found with their place, and the
middleware that refuses them (or a body over the upload limit) before any view."""

import io
import json
import time

import pytest
from django.test import override_settings
from rest_framework.exceptions import ParseError

from core.inputs import InputRefused, json_too_deep_at, nul_path, parse_json
from core.parsers import FormParser, JSONParser

DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("[[[]]]", 3, None),
        ("[[[[]]]]", 3, 3),
        ('{"a": {"b": [1, {"c": []}]}}', 5, None),
        ('{"a": {"b": [1, {"c": []}]}}', 4, 22),
        ('{"a": {"b": [1, {"c": []}]}}', 3, 16),
        # Brackets inside strings do not count, whatever the escapes around them.
        ('["[[[[", "\\"[[[[", "\\\\", "{{{{"]', 1, None),
        ('["\\\\"[[', 1, 5),
        ('"\\u005b[[["', 1, None),
        (DEEP, 64, 64),
        ("[]" * 100_000, 1, None),
    ],
)
def test_depth_is_measured_by_brackets_outside_strings(text, limit, expected):
    assert json_too_deep_at(text, limit) == expected


def test_a_large_flat_document_is_scanned_quickly():
    text = "[" + ",".join(["[]"] * 1_000_000) + "]"
    started = time.perf_counter()
    assert json_too_deep_at(text, 64) is None
    assert time.perf_counter() - started < 5


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"content": {"en": {"options": ["a", "b\x00"]}}}, "content.en.options[1]"),
        ({"a": "x", "b": [{"c": "\x00"}]}, "b[0].c"),
        ({"meta": {"k\x00": 1}}, "meta.k\\u0000"),
        ("\x00", "$"),
        (["ok", "\x00"], "$[1]"),
        ({"a": 1, "b": None, "c": [True, 2.5]}, None),
    ],
)
def test_the_first_text_holding_a_nul_is_named_by_its_path(value, expected):
    assert nul_path(value) == expected


def test_parse_json_refuses_depth_before_parsing_and_names_the_position():
    with pytest.raises(InputRefused) as exc:
        parse_json(DEEP)
    assert exc.value.code == "too_deep" and exc.value.field == ""
    assert exc.value.reason == "JSON nested more than 64 levels deep (at character 65)"


@pytest.mark.parametrize("text", ['{"a": ["\\u0000"]}', '{"a": ["\x00"]}'], ids=["escaped", "raw"])
def test_parse_json_refuses_a_nul_escaped_or_raw_naming_the_field(text):
    with pytest.raises(InputRefused) as exc:
        parse_json(text)
    assert (exc.value.code, exc.value.field) == ("nul_character", "a[0]")
    assert str(exc.value) == "The field a[0] contains a NUL character (\\u0000), which cannot be stored."


def test_parse_json_leaves_other_json_alone_and_reports_malformed_json_as_such():
    assert parse_json('{"a": [1, "两"]}') == {"a": [1, "两"]}
    with pytest.raises(json.JSONDecodeError):
        parse_json('{"a": ')
    with pytest.raises(json.JSONDecodeError):
        parse_json('{"a": \x00}')


def test_the_depth_limit_is_a_setting(settings):
    settings.JSON_MAX_DEPTH = 2
    assert parse_json("[[1]]") == [[1]]
    with pytest.raises(InputRefused):
        parse_json("[[[1]]]")


@pytest.mark.django_db
def test_a_nul_in_the_address_or_query_is_refused_before_sign_in_or_any_database_read(client):
    page = client.get("/items/a\x00b/")
    api = client.get("/api/items/", {"q\x00": "x"})

    assert page.status_code == 400
    assert "The address contains a NUL character (\\u0000), which is not accepted." in page.content.decode()
    assert api.status_code == 400
    assert api.json() == {
        "detail": "The field q\\u0000 contains a NUL character (\\u0000), which cannot be stored.",
        "code": "nul_character",
        "field": "q\\u0000",
    }


@pytest.mark.django_db
@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=1000)
def test_a_form_over_the_upload_limit_is_refused_with_413_as_a_page_or_as_json_on_the_api(client):
    page = client.post("/login/", {"username": "u", "password": "x" * 2000})
    api = client.post("/api/items/", {"uid": "x" * 2000})

    assert page.status_code == 413
    assert "over the 1000-byte limit" in page.content.decode()
    assert api.status_code == 413
    assert api.json()["code"] == "too_large"


def test_the_api_form_parser_refuses_a_nul_in_a_field_sent_by_any_method():
    with pytest.raises(ParseError) as exc:
        FormParser().parse(io.BytesIO(b"name=ok&note=a%00b"), parser_context={})

    assert exc.value.detail["field"] == "note"
    assert exc.value.detail["code"] == "nul_character"


def test_the_api_json_parser_keeps_refusing_nan_as_drf_does():
    with pytest.raises(ParseError, match="JSON parse error"):
        JSONParser().parse(io.BytesIO(b'{"a": NaN}'), parser_context={})
    assert JSONParser().parse(io.BytesIO('{"a": "两"}'.encode()), parser_context={}) == {"a": "两"}


@pytest.mark.django_db
def test_a_session_cookie_holding_a_nul_is_dropped_before_the_session_is_read(client):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        page = client.get("/", HTTP_COOKIE="sessionid=abcdefgh\x00ijklmnop; theme=x")
    assert page.status_code == 302 and "/login/" in page["Location"]
    assert not [q for q in queries if "\x00" in q["sql"]]
    # A cookie without one is read as before.
    with CaptureQueriesContext(connection) as queries:
        client.get("/", HTTP_COOKIE="sessionid=abcdefghijklmnop")
    assert [q for q in queries if "abcdefghijklmnop" in q["sql"]]


def test_every_admin_json_field_refuses_a_nul_escaped_in_json_with_a_form_error(rf):
    from django.contrib import admin
    from django.core.exceptions import ValidationError
    from django.db import models

    from core.sites import StoredJSONFormField

    request = rf.get("/admin/")
    checked = 0
    for model, model_admin in admin.site._registry.items():
        for field in model._meta.fields:
            if isinstance(field, models.JSONField):
                form_field = model_admin.formfield_for_dbfield(field, request=request)
                assert isinstance(form_field, StoredJSONFormField), f"{model.__name__}.{field.name}"
                checked += 1
    assert checked
    field = StoredJSONFormField()
    assert field.clean('{"a": ["b"]}') == {"a": ["b"]}
    with pytest.raises(ValidationError) as refused:
        field.clean('{"note": ["ok", "bad \\u0000 here"]}')
    assert "note[1]" in str(refused.value) and "NUL" in str(refused.value)
