"""The /api/llm/ endpoints: endpoints (admins write), runs (start, progress, results, actions), calls (read); who
may call each."""

import pytest

from llm import services
from llm.models import Endpoint, Run
from tests.factories import mcq_prompts


@pytest.fixture
def api(client):
    def as_user(user: object) -> object:
        client.force_login(user)
        return client

    return as_user


def test_admins_create_and_update_endpoints_through_the_api(api, admin_user, simulator, fast_retries):
    client = api(admin_user)
    response = client.post(
        "/api/llm/endpoints/",
        {"name": "api-ep", "base_url": simulator.base_url, "model": "sim-echo", "is_simulator": True},
        content_type="application/json",
    )
    assert response.status_code == 201, response.json()
    pk = response.json()["id"]
    response = client.patch(f"/api/llm/endpoints/{pk}/", {"base_url": "ftp://x"}, content_type="application/json")
    assert response.status_code == 400 and "base_url" in response.json()
    response = client.post(f"/api/llm/endpoints/{pk}/test/")
    assert response.status_code == 200 and response.json()["ok"] is True


def test_researchers_read_endpoints_but_cannot_write_them(api, researcher, make_endpoint):
    endpoint = make_endpoint()
    client = api(researcher)
    assert client.get("/api/llm/endpoints/").status_code == 200
    assert client.post("/api/llm/endpoints/", {"name": "x"}, content_type="application/json").status_code == 403
    assert client.post(f"/api/llm/endpoints/{endpoint.pk}/test/").status_code == 403


def test_a_run_is_started_followed_and_paused_through_the_api(api, researcher, make_endpoint):
    endpoint = make_endpoint()
    client = api(researcher)
    response = client.post(
        "/api/llm/runs/",
        {"name": "api run", "endpoint": endpoint.pk, "parser": "mcq_letter", "prompts": mcq_prompts(5)},
        content_type="application/json",
    )
    assert response.status_code == 201, response.json()
    run = response.json()
    assert run["planned"] == 5 and run["status"] == "queued" and run["is_simulator"] is True
    progress = client.get(f"/api/llm/runs/{run['id']}/progress/").json()
    assert progress["remaining"] == 5 and progress["percent"] == 0
    results = client.get(f"/api/llm/runs/{run['id']}/results/").json()
    assert [r["key"] for r in results["results"]] == [f"q{i}" for i in range(5)]
    assert client.post(f"/api/llm/runs/{run['id']}/pause/").json()["status"] == "paused"
    response = client.post(f"/api/llm/runs/{run['id']}/pause/")
    assert response.status_code == 400 and "Only a queued or running run" in str(response.json())
    assert client.post(f"/api/llm/runs/{run['id']}/cancel/").json()["status"] == "cancelled"


def test_a_run_with_a_bad_prompt_or_parser_is_refused_with_reasons(api, researcher, make_endpoint):
    client = api(researcher)
    endpoint = make_endpoint()
    response = client.post(
        "/api/llm/runs/",
        {"name": "x", "endpoint": endpoint.pk, "parser": "nope", "prompts": mcq_prompts(1)},
        content_type="application/json",
    )
    assert response.status_code == 400 and "unknown parser" in str(response.json())
    response = client.post(
        "/api/llm/runs/",
        {"name": "x", "endpoint": endpoint.pk, "parser": "text", "prompts": [{"key": "a", "messages": []}]},
        content_type="application/json",
    )
    assert response.status_code == 400 and "Prompt 1 (a)" in str(response.json())
    assert not Run.objects.exists()


def test_calls_are_listed_and_shown_with_their_attempts(api, researcher, make_endpoint, simulator):
    endpoint = make_endpoint("sim-echo")
    call = services.call_make(endpoint=endpoint, prompt="hello").call
    client = api(researcher)
    listing = client.get("/api/llm/calls/", {"endpoint": endpoint.pk}).json()
    assert [c["id"] for c in listing["results"]] == [call.pk]
    detail = client.get(f"/api/llm/calls/{call.pk}/").json()
    assert detail["response_text"] == "hello" and detail["attempts"][0]["http_status"] == 200


def test_the_openapi_schema_documents_the_llm_api(api, researcher):
    schema = api(researcher).get("/api/schema/").content.decode()
    assert "/api/llm/runs/{id}/progress/" in schema and "/api/llm/endpoints/{id}/test/" in schema
    assert Endpoint.objects.count() == 0


# --- who may do what --------------------------------------------------------------------------------------

ROLES = ("anonymous", "expert", "lead_expert", "researcher", "admin")
API = [
    ("get", "/api/llm/endpoints/", (403, 403, 403, 200, 200)),
    ("post", "/api/llm/endpoints/", (403, 403, 403, 403, 400)),
    ("get", "/api/llm/runs/", (403, 403, 403, 200, 200)),
    ("get", "/api/llm/runs/{run}/progress/", (403, 403, 403, 200, 200)),
    ("post", "/api/llm/runs/{run}/cancel/", (403, 403, 403, 200, 200)),
    ("get", "/api/llm/calls/", (403, 403, 403, 200, 200)),
]


@pytest.mark.parametrize("role_index", range(len(ROLES)), ids=ROLES)
def test_llm_api_follows_the_role_matrix(client, make_user, objects, role_index):
    role = ROLES[role_index]
    if role != "anonymous":
        client.force_login(make_user(role, username=f"api-{role}"))
    for method, path, expected in API:
        response = getattr(client, method)(path.format(**objects), content_type="application/json")
        assert response.status_code == expected[role_index], (role, method, path, response.content[:200])
