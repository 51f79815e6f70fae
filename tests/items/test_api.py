"""Item API: list filters, retrieve, create, revise, revisions, token and session authentication, the items in the
schema; who may call each endpoint and who is recorded for each write."""

import copy

import pytest
from django.test import Client, override_settings
from rest_framework.authtoken.models import Token

from annotation.items.models import Item, ItemRevision
from tests.factories import make_item, mcq_content
from tests.permissions import (
    NO_CREDENTIALS,
    UID,
    assert_api_outcome,
    assert_written_only_if_allowed,
    expand,
    import_record,
    request_as,
)


@pytest.fixture
def api(expert, login):
    return login(expert)


@pytest.fixture
def bank(taxonomy, lead):
    """Four items that differ in every filterable way."""
    en_only = mcq_content()
    del en_only["zh"]
    three_zh_options = mcq_content()
    three_zh_options["zh"]["options"] = ["喜悦", "失望", "恐惧"]
    make_item(uid="fa-mcq-both", user=lead)
    make_item(
        uid="fa-open-zh",
        dimension="emotion_deepening",
        kind="open_prompt",
        content={"en": {"prompt": "I failed my exam again."}, "zh": {"prompt": "我又考砸了。"}},
        status="accepted",
        user=lead,
    )
    make_item(uid="fa-mcq-en-only", dimension="explicit_emotion_recognition", content=en_only, user=lead)
    make_item(
        uid="ei-mcq-mismatch",
        benchmark="eicap",
        dimension="basic_emotion_labels",
        content=three_zh_options,
        status="in_screening",
        user=lead,
    )


def listed_uids(response) -> list[str]:
    assert response.status_code == 200
    return [row["uid"] for row in response.json()["results"]]


def create_body(**overrides: object) -> dict:
    body = {
        "uid": "api-new",
        "benchmark": "facet",
        "dimension": "hidden_emotion_recognition",
        "kind": "mcq",
        "scenario": "exam_failure",
        "emotions": ["joy"],
        "crisis_level": 2,
        "difficulty": "medium",
        "content": mcq_content(),
        "message": "first draft",
    }
    body.update(overrides)
    return body


def post_json(client, path: str, body: dict):
    return client.post(path, body, content_type="application/json")


def counts() -> tuple[int, int]:
    return Item.objects.count(), ItemRevision.objects.count()


# --- list and filters -------------------------------------------------------------------------------------


def test_list_returns_every_item_ordered_by_uid_with_pagination_envelope(bank, api):
    response = api.get("/api/items/")

    data = response.json()
    assert data["count"] == 4
    assert data["next"] is None
    assert [row["uid"] for row in data["results"]] == [
        "ei-mcq-mismatch",
        "fa-mcq-both",
        "fa-mcq-en-only",
        "fa-open-zh",
    ]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("benchmark=eicap", ["ei-mcq-mismatch"]),
        ("benchmark=facet", ["fa-mcq-both", "fa-mcq-en-only", "fa-open-zh"]),
        ("dimension=emotion_deepening", ["fa-open-zh"]),
        ("dimension=emotion_perception", ["fa-mcq-both", "fa-mcq-en-only"]),
        ("kind=open_prompt", ["fa-open-zh"]),
        ("kind=mcq&benchmark=facet", ["fa-mcq-both", "fa-mcq-en-only"]),
        ("status=accepted", ["fa-open-zh"]),
        ("status=in_screening", ["ei-mcq-mismatch"]),
        ("languages=missing", ["fa-mcq-en-only"]),
        ("languages=en_only", ["fa-mcq-en-only"]),
        ("languages=both", ["ei-mcq-mismatch", "fa-mcq-both", "fa-open-zh"]),
        ("parity=problems", ["ei-mcq-mismatch", "fa-mcq-en-only"]),
        ("parity=ok", ["fa-mcq-both", "fa-open-zh"]),
        ("q=exam", ["fa-open-zh"]),
        ("q=考砸", ["fa-open-zh"]),
        ("q=恐惧", ["ei-mcq-mismatch", "fa-mcq-both"]),
        ("q=mismatch", ["ei-mcq-mismatch"]),
        ("q=nothing-like-this", []),
        ("benchmark=no-such-benchmark", []),
    ],
)
def test_list_filters_narrow_the_results(bank, api, query, expected):
    assert listed_uids(api.get(f"/api/items/?{query}")) == expected


def test_list_rows_carry_parity_state_and_issues(bank, api):
    rows = {row["uid"]: row for row in api.get("/api/items/?parity=problems").json()["results"]}

    assert rows["fa-mcq-en-only"]["parity_ok"] is False
    assert [i["code"] for i in rows["fa-mcq-en-only"]["parity_issues"]] == ["missing_language"]
    assert rows["ei-mcq-mismatch"]["parity_issues"][0]["message"] == (
        "The languages have different numbers of options: English 4, Chinese 3."
    )


# --- retrieve ---------------------------------------------------------------------------------------------


def test_retrieve_returns_current_revision_content_and_taxonomy(bank, api):
    response = api.get("/api/items/fa-open-zh/")

    assert response.status_code == 200
    data = response.json()
    assert data["uid"] == "fa-open-zh"
    assert data["benchmark"] == "facet"
    assert data["dimension"] == "emotion_deepening"
    assert data["kind"] == "open_prompt"
    assert data["status"] == "accepted"
    assert data["revision"] == 1
    assert data["content"] == {
        "en": {"context": "", "prompt": "I failed my exam again."},
        "zh": {"context": "", "prompt": "我又考砸了。"},
    }
    assert data["parity_ok"] is True
    assert data["created_by"] == "lead1"


def test_retrieve_unknown_uid_is_404(bank, api):
    assert api.get("/api/items/no-such-item/").status_code == 404


# --- create -----------------------------------------------------------------------------------------------


def test_create_returns_201_with_the_item_and_writes_its_first_revision(taxonomy, expert, api):
    response = post_json(api, "/api/items/", create_body())

    assert response.status_code == 201
    data = response.json()
    assert data["uid"] == "api-new"
    assert data["revision"] == 1
    assert data["scenario"] == "exam_failure"
    assert data["emotions"] == ["joy"]
    assert data["crisis_level"] == 2
    assert data["difficulty"] == "medium"
    assert data["status"] == "draft"
    assert data["content"]["zh"]["options"] == ["喜悦", "失望", "恐惧", "自豪"]
    item = Item.objects.get(uid="api-new")
    assert item.created_by == expert
    assert item.current_revision.message == "first draft"
    assert item.current_revision.attributes["scenario"] == "exam_failure"
    assert item.has_en and item.has_zh and item.parity_ok


def wrong_option_type() -> dict:
    content = mcq_content()
    content["en"]["options"] = ["Joy", 2, "Fear", "Pride"]
    return {"content": content}


def without(name: str) -> dict:
    body = create_body()
    del body[name]
    return body


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param(
            create_body(dimension="no_such_dimension"),
            {
                "line": 0,
                "field": "dimension",
                "message": "unknown dimension code 'no_such_dimension' in benchmark 'facet'",
            },
            id="unknown dimension",
        ),
        pytest.param(
            create_body(dimension="basic_emotion_labels"),
            {
                "line": 0,
                "field": "dimension",
                "message": "unknown dimension code 'basic_emotion_labels' in benchmark 'facet'",
            },
            id="dimension of another benchmark",
        ),
        pytest.param(
            create_body(scenario="moon_landing"),
            {"line": 0, "field": "scenario", "message": "unknown scenario code 'moon_landing'"},
            id="unknown scenario",
        ),
        pytest.param(
            create_body(emotions=["joy", "schadenfreude"]),
            {"line": 0, "field": "emotions", "message": "unknown emotion code 'schadenfreude'"},
            id="unknown emotion",
        ),
        pytest.param(
            create_body(benchmark="no-such-benchmark"),
            {"line": 0, "field": "benchmark", "message": "unknown benchmark 'no-such-benchmark'"},
            id="unknown benchmark",
        ),
    ],
)
def test_create_with_unknown_taxonomy_code_is_400_naming_the_field_and_writes_nothing(taxonomy, api, body, expected):
    before = counts()

    response = post_json(api, "/api/items/", body)

    assert response.status_code == 400
    assert response.json()["errors"] == [expected]
    assert counts() == before


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param(without("content"), {"content": ["This field is required."]}, id="missing content"),
        pytest.param(without("dimension"), {"dimension": ["This field is required."]}, id="missing dimension"),
        pytest.param(without("uid"), {"uid": ["This field is required."]}, id="missing uid"),
        pytest.param(without("kind"), {"kind": ["This field is required."]}, id="missing kind"),
        pytest.param(
            create_body(**wrong_option_type()),
            {"content": ["content.en.options[1]: must be text, got int"]},
            id="option that is not text",
        ),
        pytest.param(
            create_body(kind="essay"),
            {"kind": ['"essay" is not a valid choice.']},
            id="unknown kind",
        ),
    ],
)
def test_create_with_bad_field_is_400_with_message_and_writes_nothing(taxonomy, api, body, expected):
    before = counts()

    response = post_json(api, "/api/items/", body)

    assert response.status_code == 400
    assert response.json() == expected
    assert counts() == before


def test_create_with_oversize_text_is_400_naming_field_and_limit(taxonomy, api):
    context = mcq_content()["en"]["context"]
    before = counts()

    with override_settings(ITEM_MAX_TEXT_CHARS=40):
        response = post_json(api, "/api/items/", create_body())

    assert response.status_code == 400
    assert response.json() == {"content": [f"content.en.context: text too long: {len(context)} characters (limit 40)"]}
    assert counts() == before


def test_create_with_duplicate_uid_is_400_and_leaves_the_existing_item_alone(bank, api):
    existing = Item.objects.get(uid="fa-mcq-both")
    before = counts()

    response = post_json(api, "/api/items/", create_body(uid="fa-mcq-both", dimension="crisis_recognition"))

    assert response.status_code == 400
    assert response.json() == {"uid": ["An item with uid fa-mcq-both already exists."]}
    assert counts() == before
    existing.refresh_from_db()
    assert existing.dimension.code == "hidden_emotion_recognition"
    assert existing.current_revision.number == 1


# --- revise -----------------------------------------------------------------------------------------------


def revise_body(content: dict, **extra: object) -> dict:
    return {"dimension": "hidden_emotion_recognition", "content": content, **extra}


def reworded() -> dict:
    content = mcq_content()
    content["zh"]["question"] = "米娅此刻有什么感受？"
    return content


def test_revise_saves_a_new_revision_numbered_after_the_current_one(bank, api, expert):
    response = post_json(
        api, "/api/items/fa-mcq-both/revise/", revise_body(reworded(), base_revision=1, message="tighter zh")
    )

    assert response.status_code == 200
    data = response.json()
    assert data["revision"] == 2
    assert data["content"]["zh"]["question"] == "米娅此刻有什么感受？"
    assert data["updated_by"] == "expert1"
    revision = ItemRevision.objects.get(item__uid="fa-mcq-both", number=2)
    assert revision.message == "tighter zh"
    assert revision.author == expert
    assert revision.content["zh"]["question"] == "米娅此刻有什么感受？"
    assert ItemRevision.objects.get(item__uid="fa-mcq-both", number=1).content == mcq_content()


def test_revise_from_a_stale_base_revision_is_409_and_keeps_the_newer_content(bank, api, lead):
    assert post_json(api, "/api/items/fa-mcq-both/revise/", revise_body(reworded(), base_revision=1)).status_code == 200
    mine = mcq_content()
    mine["en"]["question"] = "How does Mia feel?"

    response = post_json(api, "/api/items/fa-mcq-both/revise/", revise_body(mine, base_revision=1))

    assert response.status_code == 409
    data = response.json()
    assert data["code"] == "revision_conflict"
    assert "changed by expert1 (revision 2" in data["detail"]
    assert "after you opened revision 1" in data["detail"]
    item = Item.objects.get(uid="fa-mcq-both")
    assert item.current_revision.number == 2
    assert item.current_revision.content["en"]["question"] == "What does Mia most likely feel?"
    assert item.current_revision.content["zh"]["question"] == "米娅此刻有什么感受？"
    assert item.revisions.count() == 2


def test_revise_with_identical_content_saves_no_revision(bank, api):
    response = post_json(api, "/api/items/fa-mcq-both/revise/", revise_body(mcq_content(), base_revision=1))

    assert response.status_code == 200
    assert response.json()["revision"] == 1
    assert ItemRevision.objects.filter(item__uid="fa-mcq-both").count() == 1


def test_revise_with_changed_classification_only_saves_a_revision(bank, api):
    response = post_json(
        api, "/api/items/fa-mcq-both/revise/", revise_body(mcq_content(), scenario="exam_failure", difficulty="hard")
    )

    assert response.status_code == 200
    assert response.json()["revision"] == 2
    assert response.json()["scenario"] == "exam_failure"
    revision = ItemRevision.objects.get(item__uid="fa-mcq-both", number=2)
    assert revision.attributes["scenario"] == "exam_failure"
    assert revision.attributes["difficulty"] == "hard"


def test_revise_with_invalid_content_is_400_and_saves_nothing(bank, api):
    content = copy.deepcopy(mcq_content())
    content["fr"] = {"question": "Que ressent Mia ?"}

    response = post_json(api, "/api/items/fa-mcq-both/revise/", revise_body(content))

    assert response.status_code == 400
    assert response.json() == {"content": ["content.fr: unknown language; expected en or zh"]}
    assert ItemRevision.objects.filter(item__uid="fa-mcq-both").count() == 1


@pytest.mark.parametrize("content", [{}, {"en": None}, {"en": {}, "zh": None}])
def test_an_admin_revise_with_no_text_in_any_language_is_400_and_saves_nothing(bank, admin_user, login, content):
    response = post_json(login(admin_user), "/api/items/fa-mcq-both/revise/", revise_body(content))

    assert response.status_code == 400
    assert response.json() == {
        "content": ["A revision needs the text of at least one language (en or zh); nothing was saved."]
    }
    assert ItemRevision.objects.filter(item__uid="fa-mcq-both").count() == 1


def test_revise_without_metadata_keeps_the_items_metadata(taxonomy, api):
    post_json(api, "/api/items/", create_body(metadata={"source": "workshop-3"}))

    response = post_json(api, "/api/items/api-new/revise/", revise_body(reworded()))

    assert response.status_code == 200
    assert response.json()["metadata"] == {"source": "workshop-3"}
    assert Item.objects.get(uid="api-new").current_revision.attributes["metadata"] == {"source": "workshop-3"}


def test_revise_unknown_item_is_404(taxonomy, api):
    assert post_json(api, "/api/items/no-such-item/revise/", revise_body(mcq_content())).status_code == 404


# --- revisions --------------------------------------------------------------------------------------------


def test_item_revisions_are_listed_newest_first_with_author_and_message(bank, api):
    post_json(api, "/api/items/fa-mcq-both/revise/", revise_body(reworded(), message="tighter zh"))

    response = api.get("/api/items/fa-mcq-both/revisions/")

    assert response.status_code == 200
    rows = response.json()
    assert [(r["number"], r["author"], r["message"]) for r in rows] == [
        (2, "expert1", "tighter zh"),
        (1, "lead1", "created in a test"),
    ]
    assert rows[0]["item"] == "fa-mcq-both"
    assert rows[0]["content"]["zh"]["question"] == "米娅此刻有什么感受？"


def test_revision_list_covers_every_item(bank, api):
    post_json(api, "/api/items/fa-mcq-both/revise/", revise_body(reworded()))

    data = api.get("/api/revisions/").json()

    assert data["count"] == 5
    assert sorted((r["item"], r["number"]) for r in data["results"]) == [
        ("ei-mcq-mismatch", 1),
        ("fa-mcq-both", 1),
        ("fa-mcq-both", 2),
        ("fa-mcq-en-only", 1),
        ("fa-open-zh", 1),
    ]


# --- token authentication ---------------------------------------------------------------------------------


def test_token_header_authenticates_list_requests_without_a_session(bank, expert):
    token = Token.objects.create(user=expert)
    client = Client()

    response = client.get("/api/items/?benchmark=eicap", HTTP_AUTHORIZATION=f"Token {token.key}")

    assert response.status_code == 200
    assert "Location" not in response
    assert listed_uids(response) == ["ei-mcq-mismatch"]


def test_invalid_token_is_refused_without_a_redirect(bank):
    response = Client().get("/api/items/", HTTP_AUTHORIZATION="Token 0000000000000000000000000000000000000000")

    assert response.status_code in (401, 403)
    assert "Location" not in response
    assert response.json() == {"detail": "Invalid token."}


def test_token_client_can_create_items_without_a_csrf_token(taxonomy, expert):
    token = Token.objects.create(user=expert)
    client = Client(enforce_csrf_checks=True)

    response = client.post(
        "/api/items/", create_body(), content_type="application/json", HTTP_AUTHORIZATION=f"Token {token.key}"
    )

    assert response.status_code == 201
    assert Item.objects.get(uid="api-new").created_by == expert


def test_session_client_cannot_write_without_a_csrf_token(taxonomy, expert):
    client = Client(enforce_csrf_checks=True)
    client.force_login(expert)

    response = client.post("/api/items/", create_body(), content_type="application/json")

    assert response.status_code == 403
    assert "CSRF Failed" in response.json()["detail"]
    assert not Item.objects.filter(uid="api-new").exists()


# --- schema -----------------------------------------------------------------------------------------------


def test_openapi_schema_describes_the_item_endpoints(api):
    response = api.get("/api/schema/?format=json")

    assert response.status_code == 200
    schema = response.json()
    assert schema["info"]["title"] == "EI Studio API"
    paths = schema["paths"]
    for path in ("/api/items/", "/api/items/{uid}/", "/api/items/{uid}/revise/", "/api/items/{uid}/revisions/"):
        assert path in paths
    assert set(paths["/api/items/"]) >= {"get", "post"}
    assert "post" in paths["/api/items/{uid}/revise/"]
    filters = {p["name"] for p in paths["/api/items/"]["get"]["parameters"]}
    assert {"benchmark", "dimension", "kind", "status", "languages", "parity", "q"} <= filters


# --- who may call what ------------------------------------------------------------------------------------


# fmt: off
API_MATRIX = [
    # method  path                              payload       anonymous       researcher  expert  lead_expert  admin
    ("GET",  "/api/items/",                     None,         NO_CREDENTIALS, 200,        200,    200,         200),
    ("GET",  f"/api/items/{UID}/",              None,         NO_CREDENTIALS, 200,        200,    200,         200),
    ("POST", "/api/items/",                     "api_create", NO_CREDENTIALS, 403,        201,    201,         201),
    ("POST", f"/api/items/{UID}/revise/",       "api_revise", NO_CREDENTIALS, 403,        200,    200,         200),
    ("GET",  f"/api/items/{UID}/revisions/",    None,         NO_CREDENTIALS, 200,        200,    200,         200),
    ("GET",  "/api/revisions/",                 None,         NO_CREDENTIALS, 200,        200,    200,         200),
    ("GET",  "/api/benchmarks/",                None,         NO_CREDENTIALS, 200,        200,    200,         200),
    ("GET",  "/api/dimensions/",                None,         NO_CREDENTIALS, 200,        200,    200,         200),
    ("GET",  "/api/emotions/",                  None,         NO_CREDENTIALS, 200,        200,    200,         200),
    ("GET",  "/api/scenarios/",                 None,         NO_CREDENTIALS, 200,        200,    200,         200),
    ("GET",  "/api/crisis-levels/",             None,         NO_CREDENTIALS, 200,        200,    200,         200),
]
# fmt: on


@pytest.mark.parametrize(("method", "path", "payload", "role", "expected"), expand(API_MATRIX))
def test_api_permission_matrix(client, make_user, taxonomy, method, path, payload, role, expected):
    response, before = request_as(client, make_user, role, method, path, payload)

    assert_api_outcome(response, expected)
    assert_written_only_if_allowed(method, expected, before)


# --- every write records who made it ----------------------------------------------------------------------


def test_api_revise_records_the_caller_as_revision_author_and_item_updater(taxonomy, expert, lead, login):
    item = make_item(uid="who-api", user=expert)
    content = mcq_content()
    content["zh"]["question"] = "米娅此刻有什么感受？"

    response = login(lead).post(
        "/api/items/who-api/revise/",
        {"dimension": "hidden_emotion_recognition", "content": content},
        content_type="application/json",
    )

    assert response.status_code == 200
    assert response.json()["updated_by"] == "lead1"
    item.refresh_from_db()
    assert item.current_revision.number == 2
    assert item.current_revision.author == lead
    assert item.updated_by == lead
    assert item.created_by == expert


def test_api_create_records_the_creator(taxonomy, lead, login):
    record = import_record("who-api-new")
    del record["format"]

    response = login(lead).post("/api/items/", record, content_type="application/json")

    assert response.status_code == 201
    assert response.json()["created_by"] == "lead1"
    item = Item.objects.get(uid="who-api-new")
    assert item.created_by == lead
    assert item.current_revision.author == lead
