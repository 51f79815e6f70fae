"""Services on endpoints, single calls and runs (no worker here: runs are planned, not worked)."""

import pytest
from django.core.exceptions import ValidationError
from django_tasks_db.models import DBTaskResult

from llm import selectors, services
from llm.models import Endpoint, LLMCall, Run, RunChunk, RunItem
from tests.factories import mcq_prompts

SECRET = "sk-test-DO-NOT-LEAK-1234567890"


def test_endpoint_validation_refuses_bad_urls_and_keys_pasted_as_variable_names(make_endpoint):
    with pytest.raises(ValidationError) as excinfo:
        services.endpoint_create(data={"name": "x", "base_url": "api.openai.com/v1", "model": "m"})
    assert "base_url" in excinfo.value.message_dict
    with pytest.raises(ValidationError) as excinfo:
        services.endpoint_create(data={"name": "x", "base_url": "https://a.b/v1", "model": "m", "api_key_env": SECRET})
    assert "api_key_env" in excinfo.value.message_dict
    with pytest.raises(ValidationError):
        services.endpoint_create(data={"name": "x", "base_url": "https://user:pw@a.b/v1", "model": "m"})


def test_the_simulated_endpoints_are_registered_once(db):
    first = services.simulator_endpoints_register(base_url="http://127.0.0.1:8765/v1")
    again = services.simulator_endpoints_register(base_url="http://127.0.0.1:8765/v1")
    assert [e.pk for e in first] == [e.pk for e in again]
    assert Endpoint.objects.filter(is_simulator=True).count() == len(services.SIMULATED_MODELS)


def test_an_identical_request_is_served_from_the_cache_at_no_cost(make_endpoint, simulator):
    endpoint = make_endpoint("sim-style-concise")
    messages = [{"role": "user", "content": "I lost my job today."}]
    first = services.call_make(endpoint=endpoint, messages=messages)
    second = services.call_make(endpoint=endpoint, messages=messages)
    assert first.ok and not first.cached and first.call.cost > 0
    assert second.cached and second.call.pk == first.call.pk and second.result == first.result
    assert simulator.stats()["billable"] == 1
    assert LLMCall.objects.count() == 1


def test_fresh_calls_bypass_the_cache_with_a_distinct_key(make_endpoint, simulator):
    endpoint = make_endpoint("sim-style-concise")
    messages = [{"role": "user", "content": "I lost my job today."}]
    services.call_make(endpoint=endpoint, messages=messages)
    fresh = services.call_make(endpoint=endpoint, messages=messages, fresh=True)
    assert not fresh.cached and fresh.call.fresh
    assert LLMCall.objects.count() == 2
    assert simulator.stats()["billable"] == 2


def test_a_different_seed_or_parameter_is_a_different_request(make_endpoint, simulator):
    endpoint = make_endpoint("sim-style-concise")
    messages = [{"role": "user", "content": "Hello"}]
    services.call_make(endpoint=endpoint, messages=messages, params={"seed": 1})
    services.call_make(endpoint=endpoint, messages=messages, params={"seed": 2})
    assert LLMCall.objects.count() == 2


def test_a_missing_key_variable_is_recorded_on_the_call_by_name(make_endpoint, monkeypatch):
    monkeypatch.delenv("EISTUDIO_TEST_MISSING_API_KEY", raising=False)
    endpoint = make_endpoint(api_key_env="EISTUDIO_TEST_MISSING_API_KEY")
    result = services.call_make(endpoint=endpoint, prompt="hi")
    assert result.call.status == LLMCall.Status.FAILED and result.call.error_kind == "missing_key"
    assert "EISTUDIO_TEST_MISSING_API_KEY" in result.call.error


@pytest.mark.parametrize(
    ("path", "model", "kind", "message"),
    [
        ("/v1", "sim-echo", "", "Connected"),
        ("/v1", "no-such-model", "not_found", "does not exist"),
        ("/html/v1", "sim-echo", "invalid_response", "HTML page"),
        ("/badjson/v1", "sim-echo", "invalid_response", "invalid JSON"),
        ("/unauthorized/v1", "sim-echo", "auth", "Incorrect API key"),
    ],
)
def test_test_connection_reports_latency_or_a_clear_error(make_endpoint, simulator, path, model, kind, message):
    endpoint = make_endpoint(model, base_url=simulator.root + path)
    report = services.endpoint_test_connection(endpoint=endpoint)
    assert report.ok == (kind == "")
    assert report.error_kind == kind and message in report.message
    assert report.latency_ms is not None
    assert LLMCall.objects.get(pk=report.call_id).fresh


def test_test_connection_reports_an_unreachable_server_and_a_missing_key(make_endpoint, monkeypatch):
    report = services.endpoint_test_connection(endpoint=make_endpoint(base_url="http://127.0.0.1:9/v1"))
    assert not report.ok and "Could not connect" in report.message
    monkeypatch.delenv("EISTUDIO_NOT_SET_API_KEY", raising=False)
    report = services.endpoint_test_connection(endpoint=make_endpoint(api_key_env="EISTUDIO_NOT_SET_API_KEY"))
    assert not report.ok and report.error_kind == "missing_key" and "EISTUDIO_NOT_SET_API_KEY" in report.message


def test_test_connection_checks_that_a_completions_endpoint_returns_log_probabilities(make_endpoint):
    report = services.endpoint_test_connection(endpoint=make_endpoint("sim-echo", api_style="completions"))
    assert report.ok, report.message


def test_a_run_is_planned_in_chunks_with_identical_requests_sharing_a_chunk(make_endpoint):
    prompts = mcq_prompts(25)
    prompts.append({**prompts[3], "key": "duplicate-of-q3"})
    run = services.run_create(endpoint=make_endpoint(), prompts=prompts, parser="mcq_letter", name="plan", start=False)
    assert (run.planned, run.status, run.chunk_size) == (26, Run.Status.QUEUED, 10)
    assert run.chunks.count() == 3
    twins = RunItem.objects.filter(run=run, key__in=["q3", "duplicate-of-q3"])
    assert len({i.request_hash for i in twins}) == 1 and len({i.chunk_id for i in twins}) == 1
    assert run.estimated_cost > 0


def test_starting_a_run_queues_tasks_after_commit(make_endpoint, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        run = services.run_create(endpoint=make_endpoint(), prompts=mcq_prompts(25), parser="mcq_letter", name="go")
    assert DBTaskResult.objects.filter(task_path="llm.worker.tasks.run_work").count() == 3  # one per chunk, at most 4
    assert all(t.args_kwargs["args"] == [run.pk] for t in DBTaskResult.objects.all())


def test_a_bad_prompt_refuses_the_whole_run_and_names_the_prompt(make_endpoint):
    prompts = mcq_prompts(3) + [{"key": "broken", "messages": []}, {"key": "q0", "prompt": "dup"}]
    with pytest.raises(ValidationError) as excinfo:
        services.run_create(endpoint=make_endpoint(), prompts=prompts, parser="text", name="bad", start=False)
    text = " ".join(excinfo.value.messages)
    assert "Prompt 4 (broken)" in text and "q0 is used twice" in text
    assert not Run.objects.exists() and not RunItem.objects.exists()


def test_an_unknown_parser_is_refused(make_endpoint):
    with pytest.raises(ValidationError) as excinfo:
        services.run_create(endpoint=make_endpoint(), prompts=mcq_prompts(1), parser="nope", name="x", start=False)
    assert "parser" in excinfo.value.message_dict


def test_a_run_whose_requests_are_all_cached_is_done_at_once_and_costs_nothing(make_endpoint, simulator):
    endpoint = make_endpoint()
    for prompt in mcq_prompts(4):
        services.call_make(endpoint=endpoint, messages=prompt["messages"], parser="mcq_letter")
    run = services.run_create(endpoint=endpoint, prompts=mcq_prompts(4), parser="mcq_letter", name="again")
    assert (run.status, run.done, run.cached, run.spent) == (Run.Status.DONE, 4, 4, 0)
    assert all(item["cached"] and item["result"]["letter"] for item in selectors.run_results(run=run))
    assert not run.chunks.exclude(status=RunChunk.Status.DONE).exists()
    assert simulator.stats()["billable"] == 4


def test_a_fresh_run_never_uses_the_cache(make_endpoint):
    endpoint = make_endpoint()
    for prompt in mcq_prompts(2):
        services.call_make(endpoint=endpoint, messages=prompt["messages"], parser="mcq_letter")
    run = services.run_create(endpoint=endpoint, prompts=mcq_prompts(2), parser="mcq_letter", name="f", fresh=True)
    assert (run.status, run.cached) == (Run.Status.QUEUED, 0)


def test_pause_resume_and_cancel_follow_the_allowed_transitions(make_endpoint, django_capture_on_commit_callbacks):
    run = services.run_create(endpoint=make_endpoint(), prompts=mcq_prompts(3), parser="text", name="x", start=False)
    assert services.run_pause(run=run).status == Run.Status.PAUSED
    with pytest.raises(ValidationError, match="Only a queued or running run"):
        services.run_pause(run=run)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        assert services.run_resume(run=run).status == Run.Status.QUEUED
    assert len(callbacks) == 1
    with pytest.raises(ValidationError, match="Only a paused, failed or stalled"):
        services.run_resume(run=run)
    assert services.run_cancel(run=run).status == Run.Status.CANCELLED
    with pytest.raises(ValidationError, match="already"):
        services.run_cancel(run=run)


def test_a_running_run_without_a_live_worker_is_stalled_and_can_be_resumed(make_endpoint, settings):
    run = services.run_create(endpoint=make_endpoint(), prompts=mcq_prompts(3), parser="text", name="x", start=False)
    Run.objects.filter(pk=run.pk).update(status=Run.Status.RUNNING, heartbeat_at="2020-01-01T00:00:00Z")
    run.refresh_from_db()
    assert selectors.run_progress(run=run)["stalled"]
    assert services.run_resume(run=run).status == Run.Status.QUEUED
