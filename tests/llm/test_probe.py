"""Test connection probes what an endpoint supports and stores it; runs that need what it lacks are refused before
anything is sent; requests use the token parameter the model takes; implausible usage is flagged on the run."""

import pytest
from django.core.exceptions import ValidationError

from llm import services
from llm.models import Endpoint, Run
from llm.worker import runner
from tests.factories import mcq_prompts


def test_the_probe_records_what_the_simulator_supports(make_endpoint, simulator):
    endpoint = make_endpoint("sim-echo")
    report = services.endpoint_probe(endpoint=endpoint)
    assert report.ok, report.message
    endpoint.refresh_from_db()
    capabilities = endpoint.capabilities
    assert endpoint.probed_at is not None
    assert capabilities["chat"]["ok"] and capabilities["logprobs"]["ok"] and capabilities["batch"]["ok"]
    assert capabilities["usage"]["ok"], capabilities["usage"]
    assert capabilities["usage"]["long_prompt_tokens"] > capabilities["usage"]["short_prompt_tokens"] > 0
    assert capabilities["token_parameter"] == endpoint.token_parameter == "max_tokens"


def test_the_probe_detects_max_completion_tokens_and_requests_use_it(make_endpoint, simulator):
    simulator.configure(reject_max_tokens=1)
    endpoint = make_endpoint("sim-echo", max_tokens=40)
    first = services.endpoint_test_connection(endpoint=endpoint)
    assert not first.ok and "max_completion_tokens" in first.message
    report = services.endpoint_probe(endpoint=endpoint)
    assert report.ok and "max_completion_tokens" in report.message
    endpoint.refresh_from_db()
    assert endpoint.token_parameter == Endpoint.TokenParameter.MAX_COMPLETION_TOKENS
    assert endpoint.default_params() == {"max_completion_tokens": 40}
    result = services.call_make(endpoint=endpoint, prompt="hello")
    assert result.ok and result.call.request["max_completion_tokens"] == 40 and "max_tokens" not in result.call.request


def test_the_probe_flags_usage_reported_as_zero_and_a_server_without_batches(make_endpoint, simulator):
    simulator.configure(zero_usage=1, batch_api_status=404)
    endpoint = make_endpoint("sim-echo")
    services.endpoint_probe(endpoint=endpoint)
    endpoint.refresh_from_db()
    usage = endpoint.capabilities["usage"]
    assert usage["ok"] is False and "0 prompt tokens" in usage["message"]
    assert endpoint.capabilities["batch"] == {"ok": False, "message": "HTTP 404 from /v1/batches"}
    with pytest.raises(ValidationError, match="no Files and Batches API"):
        services.run_create(endpoint=endpoint, prompts=mcq_prompts(2), parser="text", name="b", batch=True)
    assert services.run_create(endpoint=endpoint, prompts=mcq_prompts(2), parser="text", name="l", start=False)


def test_a_log_probability_run_on_an_endpoint_without_prompt_logprobs_is_refused(make_endpoint, simulator):
    endpoint = make_endpoint("sim-echo", api_style="completions")
    Endpoint.objects.filter(pk=endpoint.pk).update(
        capabilities={"logprobs": {"ok": False, "message": "no prompt log-probabilities came back"}},
        probed_at="2026-01-02T00:00:00Z",
    )
    endpoint.refresh_from_db()
    with pytest.raises(ValidationError, match="letter choice with shuffled options"):
        services.run_create(endpoint=endpoint, prompts=[{"key": "a", "prompt": "x"}], parser="logprobs", name="lp")
    assert not Run.objects.exists(), "refused before anything was planned or sent"


def test_a_run_on_a_server_reporting_zero_usage_carries_a_warning(transactional_db, make_endpoint, simulator):
    simulator.configure(zero_usage=1)
    run = services.run_create(
        endpoint=make_endpoint("sim-echo"), prompts=mcq_prompts(5), parser="text", name="z", start=False
    )
    runner.run_work(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == Run.Status.DONE
    assert [w["code"] for w in run.warnings] == ["usage_zero"]
    assert run.spent == 0


def test_the_probe_command_prints_each_capability(make_endpoint, simulator):
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("llm_endpoint_probe", make_endpoint("sim-echo").name, stdout=out)
    text = out.getvalue()
    assert "Files + Batches API: yes" in text and "token-limit parameter: max_tokens" in text
