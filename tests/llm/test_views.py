"""The LLM pages: runs with live progress and actions, calls, endpoints with test connection; htmx partials; who
may open each page (researchers run and inspect runs and see endpoints; admins manage endpoints)."""

import io
import json

import pytest
from django.urls import reverse

from llm import services
from llm.models import Endpoint, LLMCall, Run
from tests.factories import mcq_prompts


@pytest.fixture
def endpoint(make_endpoint) -> Endpoint:
    return make_endpoint("sim-mcq-acc90")


@pytest.fixture
def run(endpoint) -> Run:
    return services.run_create(
        endpoint=endpoint, prompts=mcq_prompts(12), parser="mcq_letter", name="view run", start=False
    )


def test_the_run_list_shows_progress_spend_and_the_simulator_label(login, researcher, run):
    page = login(researcher).get(reverse("llm:run-list"))
    html = page.content.decode()
    assert page.status_code == 200
    assert "view run" in html and "Simulator" in html and 'class="run-progress"' in html
    assert 'hx-trigger="every 2s"' in html  # a queued run keeps the list refreshing


def test_the_run_page_polls_its_progress_while_the_run_is_active(login, researcher, run):
    client = login(researcher)
    html = client.get(reverse("llm:run-detail", args=[run.pk])).content.decode()
    assert f'hx-get="{reverse("llm:run-progress", args=[run.pk])}"' in html and 'hx-trigger="every 1s"' in html
    partial = client.get(reverse("llm:run-progress", args=[run.pk]), HTTP_HX_REQUEST="true").content.decode()
    assert partial.lstrip().startswith('<section class="card" id="progress"') and "<html" not in partial
    assert "Pause" in partial


def test_a_finished_run_stops_polling(login, researcher, run):
    Run.objects.filter(pk=run.pk).update(status=Run.Status.DONE)
    html = login(researcher).get(reverse("llm:run-detail", args=[run.pk])).content.decode()
    assert "every 1s" not in html and "Pause" not in html


def test_pause_resume_and_cancel_buttons_work_with_and_without_htmx(login, researcher, run):
    client = login(researcher)
    response = client.post(reverse("llm:run-action", args=[run.pk, "pause"]), HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and "Resume" in response.content.decode()
    assert Run.objects.get(pk=run.pk).status == Run.Status.PAUSED
    response = client.post(reverse("llm:run-action", args=[run.pk, "pause"]))
    assert response.status_code == 302
    page = client.get(response["Location"]).content.decode()
    assert "Only a queued or running run can be paused" in page
    client.post(reverse("llm:run-action", args=[run.pk, "resume"]))
    assert Run.objects.get(pk=run.pk).status == Run.Status.QUEUED
    client.post(reverse("llm:run-action", args=[run.pk, "cancel"]))
    assert Run.objects.get(pk=run.pk).status == Run.Status.CANCELLED


def test_items_can_be_filtered_as_an_htmx_partial(login, researcher, run):
    response = login(researcher).get(
        reverse("llm:run-detail", args=[run.pk]) + "?items=pending", HTTP_HX_REQUEST="true", HTTP_HX_TARGET="items"
    )
    html = response.content.decode()
    assert html.lstrip().startswith('<section class="card" id="items"') and "q11" in html


def test_a_run_can_be_started_from_an_uploaded_jsonl_file(login, researcher, endpoint):
    data = "\n".join(
        json.dumps({"key": f"k{i}", "messages": [{"role": "user", "content": f"Hello {i}"}]}) for i in range(3)
    ).encode()
    upload = io.BytesIO(data)
    upload.name = "prompts.jsonl"
    response = login(researcher).post(
        reverse("llm:run-create"),
        {"name": "uploaded", "endpoint": endpoint.pk, "parser": "text", "prompts": upload, "max_parse_retries": 1},
    )
    run = Run.objects.get(name="uploaded")
    assert response.status_code == 302 and run.planned == 3 and run.max_parse_retries == 1


def test_a_bad_jsonl_file_names_the_line(login, researcher, endpoint):
    upload = io.BytesIO(b'{"key": "a", "prompt": "x"}\nnot json\n')
    upload.name = "prompts.jsonl"
    response = login(researcher).post(
        reverse("llm:run-create"), {"name": "bad", "endpoint": endpoint.pk, "parser": "text", "prompts": upload}
    )
    assert response.status_code == 400 and "Line 2 is not valid JSON" in response.content.decode()


def test_the_call_page_shows_request_reply_and_attempts(login, researcher, endpoint, simulator):
    result = services.call_make(endpoint=endpoint, prompt="Item\nA. x\nB. y", parser="mcq_letter")
    html = login(researcher).get(reverse("llm:call-detail", args=[result.call.pk])).content.decode()
    assert "Answer:" in html and "eistudio-simulator" in html and "Attempts" in html and "Simulator" in html


def test_the_run_export_holds_requests_replies_and_results(login, researcher, run):
    response = login(researcher).get(reverse("llm:run-export", args=[run.pk]))
    body = b"".join(response.streaming_content).decode()
    assert response["Content-Type"].startswith("application/x-ndjson")
    assert body.count("\n") == 12 and '"simulator": true' in body


def test_admins_create_edit_and_test_endpoints(login, admin_user, simulator):
    client = login(admin_user)
    form = {
        "name": "local",
        "base_url": simulator.base_url,
        "model": "sim-echo",
        "api_style": "chat",
        "price_input_per_mtok": "0",
        "price_output_per_mtok": "0",
        "max_concurrency": 4,
        "rpm_limit": 0,
        "timeout_seconds": 5,
        "max_retries": 1,
        "is_simulator": "on",
        "is_active": "on",
    }
    assert client.post(reverse("llm:endpoint-create"), form).status_code == 302
    endpoint = Endpoint.objects.get(name="local")
    response = client.post(reverse("llm:endpoint-edit", args=[endpoint.pk]), {**form, "base_url": "not a url"})
    assert response.status_code == 400 and "Enter an http" in response.content.decode()
    response = client.post(reverse("llm:endpoint-test", args=[endpoint.pk]), HTTP_HX_REQUEST="true")
    assert "Connected" in response.content.decode() and "<html" not in response.content.decode()
    services.endpoint_update(endpoint=endpoint, data={"model": "gpt-missing"})
    response = client.post(reverse("llm:endpoint-test", args=[endpoint.pk]), HTTP_HX_REQUEST="true")
    assert "does not exist" in response.content.decode()
    assert LLMCall.objects.filter(endpoint=endpoint, fresh=True).count() == 2


def test_the_endpoint_list_says_whether_the_key_variable_is_set(login, researcher, make_endpoint, monkeypatch):
    monkeypatch.setenv("EISTUDIO_VIEW_API_KEY", "sk-xyz")
    make_endpoint(api_key_env="EISTUDIO_VIEW_API_KEY")
    make_endpoint(api_key_env="EISTUDIO_VIEW_ABSENT_API_KEY")
    html = login(researcher).get(reverse("llm:endpoint-list")).content.decode()
    assert "EISTUDIO_VIEW_API_KEY" in html and "not set" in html and "sk-xyz" not in html
    assert "Test connection" not in html  # researchers see endpoints but do not manage them


# --- who may do what --------------------------------------------------------------------------------------

ROLES = ("anonymous", "expert", "lead_expert", "researcher", "admin")

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


def test_the_nav_link_appears_only_for_those_who_may_see_runs(client, make_user):
    client.force_login(make_user("expert", username="nav-expert"))
    assert reverse("llm:run-list") not in client.get("/").content.decode()
    client.force_login(make_user("researcher", username="nav-researcher"))
    assert reverse("llm:run-list") in client.get("/").content.decode()
