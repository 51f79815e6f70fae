"""Who may do what: the role x page/API permission matrix, sign-in throttling, password hashing, authorship."""

import json
from urllib.parse import quote

import pytest
from django.conf import settings
from django.contrib.auth.hashers import make_password
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile

from items.models import Benchmark, Item, ItemRevision
from tests.factories import PASSWORD, make_item, mcq_content

ANONYMOUS = "anonymous"
ROLES = (ANONYMOUS, "researcher", "expert", "lead_expert", "admin")

# Expected outcomes besides a plain status code.
LOGIN = "redirect to /login/?next=<path>"
ADMIN_LOGIN = "redirect to /admin/login/?next=<path>"
NO_CREDENTIALS = "401/403: authentication credentials were not provided"

UID = "perm-item"

# fmt: off
PAGE_MATRIX = [
    # method  path                        payload    anonymous  researcher   expert       lead_expert  admin
    ("GET",  "/",                         None,      LOGIN,     200,         200,         200,         200),
    ("GET",  "/items/",                   None,      LOGIN,     200,         200,         200,         200),
    ("GET",  f"/items/{UID}/",            None,      LOGIN,     200,         200,         200,         200),
    ("GET",  f"/items/{UID}/edit/",       None,      LOGIN,     403,         200,         200,         200),
    ("POST", f"/items/{UID}/edit/",       "edit",    LOGIN,     403,         302,         302,         302),
    ("GET",  f"/items/{UID}/history/",    None,      LOGIN,     200,         200,         200,         200),
    ("GET",  "/items/new/",               None,      LOGIN,     403,         200,         200,         200),
    ("POST", "/items/new/",               "create",  LOGIN,     403,         302,         302,         302),
    ("GET",  "/items/import/",            None,      LOGIN,     403,         200,         200,         200),
    ("POST", "/items/import/",            "import",  LOGIN,     403,         200,         200,         200),
    ("GET",  "/items/export.jsonl",       None,      LOGIN,     200,         200,         200,         200),
    ("GET",  "/taxonomy/",                None,      LOGIN,     200,         200,         200,         200),
    ("GET",  "/schema/item.json",         None,      LOGIN,     200,         200,         200,         200),
    ("GET",  "/admin/",                   None,      ADMIN_LOGIN, ADMIN_LOGIN, ADMIN_LOGIN, ADMIN_LOGIN, 200),
]

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
    ("GET",  "/api/schema/",                    None,         NO_CREDENTIALS, 200,        200,    200,         200),
    ("GET",  "/api/docs/",                      None,         NO_CREDENTIALS, 200,        200,    200,         200),
]
# fmt: on


SUCCESS = (200, 201, 302)


def expand(matrix: list[tuple]) -> list:
    params = []
    for method, path, payload, *outcomes in matrix:
        for role, expected in zip(ROLES, outcomes, strict=True):
            params.append(pytest.param(method, path, payload, role, expected, id=f"{role}-{method} {path}"))
    return params


@pytest.fixture(autouse=True)
def _clear_cache():
    cache.clear()
    yield
    cache.clear()


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


@pytest.mark.parametrize(("method", "path", "payload", "role", "expected"), expand(PAGE_MATRIX))
def test_page_permission_matrix(client, make_user, taxonomy, method, path, payload, role, expected):
    response, before = request_as(client, make_user, role, method, path, payload)

    if expected == LOGIN:
        assert response.status_code == 302
        assert response["Location"] == f"/login/?next={quote(path)}"
    elif expected == ADMIN_LOGIN:
        assert response.status_code == 302
        assert response["Location"] == f"/admin/login/?next={quote(path)}"
    else:
        assert response.status_code == expected
    allowed_write = method == "POST" and expected in SUCCESS
    assert (write_snapshot() != before) == allowed_write


@pytest.mark.parametrize(("method", "path", "payload", "role", "expected"), expand(API_MATRIX))
def test_api_permission_matrix(client, make_user, taxonomy, method, path, payload, role, expected):
    response, before = request_as(client, make_user, role, method, path, payload)

    if expected == NO_CREDENTIALS:
        assert response.status_code in (401, 403)
        assert "Location" not in response
        body = response.content.decode()
        # The docs page renders only HTML, so its refusal carries no JSON detail.
        assert "Authentication credentials were not provided." in body or body == "403 Forbidden"
    else:
        assert response.status_code == expected
    allowed_write = method == "POST" and expected in SUCCESS
    assert (write_snapshot() != before) == allowed_write


# --- what each role is offered ---------------------------------------------------------------------------


def test_researcher_is_not_offered_edit_or_import_links(taxonomy, researcher, login):
    make_item(uid="links-1")
    body = login(researcher).get("/items/links-1/").content.decode()

    assert 'href="/items/links-1/history/"' in body
    assert 'href="/items/links-1/edit/"' not in body
    assert 'href="/items/import/"' not in body
    assert 'href="/admin/"' not in body


def test_expert_is_offered_edit_and_import_links_but_not_admin(taxonomy, expert, login):
    make_item(uid="links-2")
    body = login(expert).get("/items/links-2/").content.decode()

    assert 'href="/items/links-2/edit/"' in body
    assert 'href="/items/import/"' in body
    assert 'href="/admin/"' not in body


def test_admin_is_staff_and_offered_the_admin_link(taxonomy, admin_user, login):
    body = login(admin_user).get("/").content.decode()

    assert admin_user.is_staff
    assert 'href="/admin/"' in body


# --- sign-in throttling -----------------------------------------------------------------------------------


def sign_in(client, username: str, password: str, address: str = "10.0.0.1"):
    return client.post("/login/", {"username": username, "password": password}, REMOTE_ADDR=address)


def fail_sign_ins(client, username: str, times: int, address: str = "10.0.0.1") -> None:
    for _attempt in range(times):
        response = sign_in(client, username, "wrong-password", address)
        assert response.status_code == 200
        assert "Please enter a correct username and password" in response.content.decode()


def test_right_password_is_refused_after_max_failed_sign_ins(client, expert):
    fail_sign_ins(client, expert.username, settings.LOGIN_MAX_FAILURES)

    response = sign_in(client, expert.username, PASSWORD)

    assert response.status_code == 200
    assert "Too many failed sign-in attempts" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_right_password_signs_in_after_fewer_failures_than_the_limit(client, expert):
    fail_sign_ins(client, expert.username, settings.LOGIN_MAX_FAILURES - 1)

    response = sign_in(client, expert.username, PASSWORD)

    assert response.status_code == 302
    assert response["Location"] == "/"
    assert client.session["_auth_user_id"] == str(expert.pk)


def test_successful_sign_in_resets_the_failure_count(client, expert):
    fail_sign_ins(client, expert.username, settings.LOGIN_MAX_FAILURES - 1)
    assert sign_in(client, expert.username, PASSWORD).status_code == 302
    client.logout()
    fail_sign_ins(client, expert.username, settings.LOGIN_MAX_FAILURES - 1)

    response = sign_in(client, expert.username, PASSWORD)

    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(expert.pk)


def test_lockout_of_a_username_holds_from_another_address(client, expert):
    fail_sign_ins(client, expert.username, settings.LOGIN_MAX_FAILURES, address="10.0.0.1")

    response = sign_in(client, expert.username, PASSWORD, address="10.0.0.2")

    assert "Too many failed sign-in attempts" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_lockout_of_an_address_holds_for_other_usernames(client, expert, researcher):
    fail_sign_ins(client, expert.username, settings.LOGIN_MAX_FAILURES, address="10.0.0.1")

    response = sign_in(client, researcher.username, PASSWORD, address="10.0.0.1")

    assert "Too many failed sign-in attempts" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_admin_sign_in_page_refuses_a_locked_out_account(client, admin_user):
    fail_sign_ins(client, admin_user.username, settings.LOGIN_MAX_FAILURES)

    client.post(
        "/admin/login/?next=/admin/",
        {"username": admin_user.username, "password": PASSWORD, "next": "/admin/"},
        REMOTE_ADDR="10.0.0.1",
    )

    assert "_auth_user_id" not in client.session


def test_token_endpoint_refuses_a_locked_out_account(client, expert):
    fail_sign_ins(client, expert.username, settings.LOGIN_MAX_FAILURES)

    response = client.post("/api/token/", {"username": expert.username, "password": PASSWORD}, REMOTE_ADDR="10.0.0.1")

    assert "token" not in response.json()


# --- password hashing -------------------------------------------------------------------------------------


def test_production_settings_hash_new_passwords_with_argon2():
    from config import settings as production

    assert production.PASSWORD_HASHERS[0] == "django.contrib.auth.hashers.Argon2PasswordHasher"


def test_passwords_are_stored_hashed_with_argon2(expert):
    expert.refresh_from_db()

    assert expert.password.startswith("argon2$")
    assert PASSWORD not in expert.password
    assert expert.check_password(PASSWORD)


def test_older_pbkdf2_hash_is_upgraded_to_argon2_on_sign_in(client, expert, settings):
    from config import settings as production

    settings.PASSWORD_HASHERS = production.PASSWORD_HASHERS
    expert.password = make_password(PASSWORD, hasher="pbkdf2_sha256")
    expert.save(update_fields=["password"])

    assert sign_in(client, expert.username, PASSWORD).status_code == 302

    expert.refresh_from_db()
    assert expert.password.startswith("argon2$")


# --- every write records who made it ----------------------------------------------------------------------


def test_page_edit_records_the_editor_as_revision_author_and_item_updater(taxonomy, lead, expert, login):
    item = make_item(uid="who-edit", user=lead)

    response = login(expert).post("/items/who-edit/edit/", edited_question_form(item))

    assert response.status_code == 302
    item.refresh_from_db()
    assert item.current_revision.number == 2
    assert item.current_revision.author == expert
    assert item.updated_by == expert
    assert item.created_by == lead
    assert ItemRevision.objects.get(item=item, number=1).author == lead


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


def test_page_create_records_the_creator(taxonomy, expert, login):
    facet = Benchmark.objects.get(slug="facet")

    response = login(expert).post("/items/new/", {"uid": "who-new", "benchmark": facet.pk, "kind": "mcq"})

    assert response.status_code == 302
    item = Item.objects.get(uid="who-new")
    assert item.created_by == expert
    assert item.updated_by == expert
    assert item.current_revision.author == expert


def test_api_create_records_the_creator(taxonomy, lead, login):
    record = import_record("who-api-new")
    del record["format"]

    response = login(lead).post("/api/items/", record, content_type="application/json")

    assert response.status_code == 201
    assert response.json()["created_by"] == "lead1"
    item = Item.objects.get(uid="who-api-new")
    assert item.created_by == lead
    assert item.current_revision.author == lead


def test_page_import_records_the_importer(taxonomy, expert, login):
    response = login(expert).post(
        "/items/import/", {"file": jsonl_file(import_record("who-imported")), "format": "eistudio"}
    )

    assert response.status_code == 200
    item = Item.objects.get(uid="who-imported")
    assert item.created_by == expert
    assert item.current_revision.author == expert
    assert item.origin == Item.Origin.IMPORTED
