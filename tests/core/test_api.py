"""The API every app shares: the token endpoint, the OpenAPI schema and the offline docs, and who may read them."""

import re
from datetime import timedelta

import pytest
from django.conf import settings
from rest_framework.authtoken.models import Token

from tests.factories import PASSWORD
from tests.permissions import NO_CREDENTIALS, assert_api_outcome, assert_written_only_if_allowed, expand, request_as

# --- who may read the schema and docs ---------------------------------------------------------------------

# fmt: off
API_MATRIX = [
    # method  path            payload  anonymous       researcher  expert  lead_expert  admin
    ("GET",  "/api/schema/",  None,    NO_CREDENTIALS, 200,        200,    200,         200),
    ("GET",  "/api/docs/",    None,    NO_CREDENTIALS, 200,        200,    200,         200),
]
# fmt: on


@pytest.fixture
def api(expert, login):
    return login(expert)


@pytest.mark.parametrize(("method", "path", "payload", "role", "expected"), expand(API_MATRIX))
def test_api_permission_matrix(client, make_user, taxonomy, method, path, payload, role, expected):
    response, before = request_as(client, make_user, role, method, path, payload)

    assert_api_outcome(response, expected)
    assert_written_only_if_allowed(method, expected, before)


# --- token authentication ---------------------------------------------------------------------------------


def test_token_endpoint_issues_the_users_token_for_the_right_password(client, expert):
    response = client.post("/api/token/", {"username": "expert1", "password": PASSWORD})

    assert response.status_code == 200
    token = Token.objects.get(user=expert)
    expires = token.created + timedelta(days=settings.API_TOKEN_TTL_DAYS)
    assert response.json() == {"token": token.key, "expires": expires.isoformat().replace("+00:00", "Z")}


def test_token_endpoint_refuses_a_wrong_password_and_issues_no_token(client, expert):
    response = client.post("/api/token/", {"username": "expert1", "password": "not-the-password"})

    assert response.status_code == 400
    assert response.json() == {"non_field_errors": ["Unable to log in with provided credentials."]}
    assert not Token.objects.filter(user=expert).exists()


def test_token_endpoint_is_rate_limited_per_client(client, expert):
    limit = settings.LOGIN_MAX_FAILURES * 2
    for _attempt in range(limit):
        assert client.post("/api/token/", {"username": "expert1", "password": PASSWORD}).status_code == 200

    response = client.post("/api/token/", {"username": "expert1", "password": PASSWORD})

    assert response.status_code == 429
    assert "Request was throttled" in response.json()["detail"]


# --- schema and docs --------------------------------------------------------------------------------------


def test_openapi_schema_is_served_as_yaml_by_default(api):
    response = api.get("/api/schema/")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/vnd.oai.openapi")
    assert "  /api/items/{uid}/revise/:" in response.content.decode()


def test_api_docs_render_with_local_static_files_only(api):
    response = api.get("/api/docs/")

    assert response.status_code == 200
    html = response.content.decode()
    assert '<div id="swagger-ui"></div>' in html
    tags = re.findall(r"<(?:script|link)\b[^>]*>", html)
    urls = [m.group(1) for tag in tags if (m := re.search(r'\b(?:src|href)="([^"]*)"', tag))]
    assert any(url.endswith("swagger-ui-bundle.js") for url in urls)
    assert any(url.endswith("swagger-ui.css") for url in urls)
    # The page's own set-up script is served by the same view (no inline script: the CSP forbids it).
    assert "/api/docs/?script=" in urls
    for url in urls:
        assert not re.match(r"(?:https?:)?//", url), url
        assert url.startswith("/static/") or url == "/api/docs/?script=", url
    assert "<script>" not in html and "<style>" not in html
    assert "/api/schema/" in api.get("/api/docs/?script=").content.decode()


def test_api_docs_static_files_are_served(api):
    html = api.get("/api/docs/").content.decode()
    urls = re.findall(r'<script\b[^>]*\bsrc="(/static/[^"]+)"', html)

    assert urls
    for url in urls:
        assert api.get(url).status_code == 200, url
