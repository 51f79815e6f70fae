"""Who may do what in the llm app: researchers run and inspect runs and see endpoints; admins manage endpoints."""

import pytest
from django.urls import reverse

from llm import services
from tests.llm.conftest import mcq_prompts

ROLES = ("anonymous", "expert", "lead_expert", "researcher", "admin")


@pytest.fixture
def objects(make_endpoint, simulator):
    endpoint = make_endpoint("sim-echo")
    run = services.run_create(endpoint=endpoint, prompts=mcq_prompts(2), parser="text", name="p", start=False)
    call = services.call_make(endpoint=endpoint, prompt="hi").call
    return {"endpoint": endpoint.pk, "run": run.pk, "call": call.pk}


# (method, url name, args key, expected status for: anonymous, expert, lead_expert, researcher, admin)
PAGES = [
    ("get", "llm:run-list", None, (302, 403, 403, 200, 200)),
    ("get", "llm:run-detail", "run", (302, 403, 403, 200, 200)),
    ("get", "llm:run-progress", "run", (302, 403, 403, 200, 200)),
    ("get", "llm:run-export", "run", (302, 403, 403, 200, 200)),
    ("get", "llm:run-create", None, (302, 403, 403, 200, 200)),
    ("post", "llm:run-action-pause", "run", (302, 403, 403, 302, 302)),
    ("get", "llm:call-detail", "call", (302, 403, 403, 200, 200)),
    ("get", "llm:endpoint-list", None, (302, 403, 403, 200, 200)),
    ("get", "llm:endpoint-create", None, (302, 403, 403, 403, 200)),
    ("get", "llm:endpoint-edit", "endpoint", (302, 403, 403, 403, 200)),
    ("post", "llm:endpoint-test", "endpoint", (302, 403, 403, 403, 302)),
]
API = [
    ("get", "/api/llm/endpoints/", (403, 403, 403, 200, 200)),
    ("post", "/api/llm/endpoints/", (403, 403, 403, 403, 400)),
    ("get", "/api/llm/runs/", (403, 403, 403, 200, 200)),
    ("get", "/api/llm/runs/{run}/progress/", (403, 403, 403, 200, 200)),
    ("post", "/api/llm/runs/{run}/cancel/", (403, 403, 403, 200, 200)),
    ("get", "/api/llm/calls/", (403, 403, 403, 200, 200)),
]


def url_for(name: str, key: str | None, objects: dict) -> str:
    if name == "llm:run-action-pause":
        return reverse("llm:run-action", args=[objects["run"], "pause"])
    return reverse(name, args=[objects[key]] if key else [])


@pytest.mark.parametrize("role_index", range(len(ROLES)), ids=ROLES)
def test_llm_pages_follow_the_role_matrix(client, make_user, objects, role_index):
    role = ROLES[role_index]
    if role != "anonymous":
        client.force_login(make_user(role, username=f"perm-{role}"))
    for method, name, key, expected in PAGES:
        response = getattr(client, method)(url_for(name, key, objects))
        assert response.status_code == expected[role_index], (role, name)


@pytest.mark.parametrize("role_index", range(len(ROLES)), ids=ROLES)
def test_llm_api_follows_the_role_matrix(client, make_user, objects, role_index):
    role = ROLES[role_index]
    if role != "anonymous":
        client.force_login(make_user(role, username=f"api-{role}"))
    for method, path, expected in API:
        response = getattr(client, method)(path.format(**objects), content_type="application/json")
        assert response.status_code == expected[role_index], (role, method, path, response.content[:200])


def test_the_nav_link_appears_only_for_those_who_may_see_runs(client, make_user):
    client.force_login(make_user("expert", username="nav-expert"))
    assert reverse("llm:run-list") not in client.get("/").content.decode()
    client.force_login(make_user("researcher", username="nav-researcher"))
    assert reverse("llm:run-list") in client.get("/").content.decode()
