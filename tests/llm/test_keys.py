"""Which environment variables an endpoint may name for its API key: the pattern (LLM_API_KEY_ENV_PATTERN) and the
names never allowed (Django settings, variables the app reads), enforced on every way in (form, page, API, admin,
service) and again at send time for rows stored before the rule, with nothing sent."""

import pytest
from django.urls import reverse

from llm import keys, services
from llm.forms import EndpointForm
from llm.models import Endpoint, LLMCall, Run
from llm.recording import KeyNotAllowed, endpoint_config
from llm.worker import runner
from tests.factories import mcq_prompts

SECRET = "sk-test-never-sent-4242424242"


def form_data(**fields: object) -> dict:
    data = {
        "name": "form-ep",
        "base_url": "https://attacker.example/v1",
        "model": "m",
        "api_style": "chat",
        "price_input_per_mtok": "0",
        "price_output_per_mtok": "0",
        "max_concurrency": 8,
        "rpm_limit": 0,
        "timeout_seconds": 30,
        "max_retries": 1,
        "is_active": True,
    }
    return {**data, **fields}


@pytest.mark.parametrize(
    ("name", "allowed"),
    [
        ("OPENAI_API_KEY", True),
        ("DEEPSEEK_API_KEY", True),
        ("EISTUDIO_ANY_API_KEY", True),
        ("", True),
        ("SECRET_KEY", False),
        ("DATABASE_URL", False),
        ("DJANGO_SETTINGS_MODULE", False),
        ("DJANGO_API_KEY", False),  # matches the pattern, but DJANGO_* belongs to Django
        ("PGPASSWORD", False),
        ("MY_TOKEN", False),
        ("openai_api_key", False),
        ("OPENAI_API_KEY_2", False),
    ],
)
def test_the_default_rule_allows_provider_key_names_only(settings, name, allowed):
    assert (keys.api_key_env_problem(name) == "") is allowed


def test_the_refusal_names_the_variable_and_the_rule(settings):
    problem = keys.api_key_env_problem("MY_TOKEN")
    assert "MY_TOKEN" in problem and settings.LLM_API_KEY_ENV_PATTERN in problem
    assert "LLM_API_KEY_ENV_PATTERN" in problem
    problem = keys.api_key_env_problem("SECRET_KEY")
    assert "SECRET_KEY" in problem and "setting" in problem


def test_a_loosened_pattern_still_refuses_settings_and_variables_the_app_reads(settings):
    settings.LLM_API_KEY_ENV_PATTERN = r"[A-Z_]+"
    assert keys.api_key_env_problem("MY_TOKEN") == ""
    for name in (
        "SECRET_KEY",
        "DATABASE_URL",
        "ALLOWED_HOSTS",
        "CONN_MAX_AGE",
        "LOG_LEVEL",
        "DEBUG",
        "SECURE_SSL_REDIRECT",
    ):
        assert name in keys.api_key_env_problem(name), name
    settings.SOME_VENDOR_API_KEY = "set as a Django setting"
    settings.LLM_API_KEY_ENV_PATTERN = r"^[A-Z][A-Z0-9_]*_API_KEY$"
    assert "SOME_VENDOR_API_KEY" in keys.api_key_env_problem("SOME_VENDOR_API_KEY")


def test_the_form_refuses_a_reserved_or_unmatched_variable(db):
    for name in ("SECRET_KEY", "DATABASE_URL", "MY_TOKEN"):
        form = EndpointForm(data=form_data(api_key_env=name))
        assert not form.is_valid()
        assert name in str(form.errors["api_key_env"])
    assert EndpointForm(data=form_data(api_key_env="OPENAI_API_KEY")).is_valid()


def test_the_endpoint_page_refuses_it_and_saves_nothing(login, admin_user):
    client = login(admin_user)
    response = client.post(reverse("llm:endpoint-create"), form_data(api_key_env="SECRET_KEY"))
    assert response.status_code == 400 and "SECRET_KEY" in response.content.decode()
    assert not Endpoint.objects.filter(name="form-ep").exists()


def test_the_api_refuses_it_on_create_and_update(client, admin_user, make_endpoint):
    client.force_login(admin_user)
    response = client.post(
        "/api/llm/endpoints/",
        {"name": "api-ep", "base_url": "https://attacker.example/v1", "model": "m", "api_key_env": "DATABASE_URL"},
        content_type="application/json",
    )
    assert response.status_code == 400 and "DATABASE_URL" in str(response.json()["api_key_env"])
    endpoint = make_endpoint()
    response = client.patch(
        f"/api/llm/endpoints/{endpoint.pk}/", {"api_key_env": "SECRET_KEY"}, content_type="application/json"
    )
    assert response.status_code == 400 and "SECRET_KEY" in str(response.json()["api_key_env"])
    endpoint.refresh_from_db()
    assert endpoint.api_key_env == ""


def test_the_admin_refuses_it(client, admin_user):
    client.force_login(admin_user)
    response = client.post("/admin/llm/endpoint/add/", form_data(name="admin-ep", api_key_env="SECRET_KEY"))
    assert response.status_code == 200 and "SECRET_KEY" in response.content.decode()
    assert not Endpoint.objects.filter(name="admin-ep").exists()


@pytest.fixture
def stored_before_the_rule(make_endpoint, simulator, monkeypatch):
    """An endpoint row naming SECRET_KEY, as an older version could store it: the check must happen at send time."""
    monkeypatch.setenv("SECRET_KEY", SECRET)
    endpoint = make_endpoint("sim-echo")
    Endpoint.objects.filter(pk=endpoint.pk).update(api_key_env="SECRET_KEY")
    endpoint.refresh_from_db()
    return endpoint


def test_send_time_refuses_a_stored_reserved_variable_without_sending(stored_before_the_rule, simulator):
    endpoint = stored_before_the_rule
    with pytest.raises(KeyNotAllowed, match="SECRET_KEY"):
        endpoint_config(endpoint)
    report = services.endpoint_test_connection(endpoint=endpoint)
    assert not report.ok and report.error_kind == "key_not_allowed" and "SECRET_KEY" in report.message
    result = services.call_make(endpoint=endpoint, prompt="hello")
    assert result.call.status == LLMCall.Status.FAILED and result.call.error_kind == "key_not_allowed"
    assert "SECRET_KEY" in result.call.error
    assert simulator.stats()["requests"] == 0, "nothing was sent"


def test_a_run_on_a_stored_reserved_variable_fails_before_sending(transactional_db, stored_before_the_rule, simulator):
    run = services.run_create(
        endpoint=stored_before_the_rule, prompts=mcq_prompts(3), parser="text", name="refused", start=False
    )
    runner.run_work(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == Run.Status.FAILED and "SECRET_KEY" in run.error
    assert simulator.stats()["requests"] == 0


def test_the_endpoint_list_shows_a_refused_variable_without_probing_it(login, researcher, stored_before_the_rule):
    html = login(researcher).get(reverse("llm:endpoint-list")).content.decode()
    assert "SECRET_KEY" in html and "not allowed" in html and SECRET not in html
    data = login(researcher).get(f"/api/llm/endpoints/{stored_before_the_rule.pk}/").json()
    assert data["api_key_set"] is False


def test_the_simulator_endpoints_and_the_demo_need_no_key(db):
    for endpoint in services.simulator_endpoints_register(base_url="http://127.0.0.1:8765/v1"):
        endpoint.full_clean()
        assert endpoint.api_key_env == ""
