"""Configuration errors stop a run after a few calls, whatever status the server uses for them (Real simulator).

OpenAI answers an unknown model with 404; LiteLLM's proxy answers 400 without a reason code; reasoning models refuse
``max_tokens`` with 400 ``unsupported_parameter``. In each case the run fails with the provider's message after a few
calls and its items stay pending for Resume; a 400 for one prompt's content still fails only that item.
"""

from llm import services
from llm.models import LLMCall, Run, RunItem
from llm.worker import runner
from tests.factories import mcq_prompts


def work(run: Run) -> Run:
    runner.run_work(run_id=run.pk)
    run.refresh_from_db()
    return run


def plan(endpoint, prompts: list[dict], **kwargs: object) -> Run:
    return services.run_create(endpoint=endpoint, prompts=prompts, parser="text", name="f", start=False, **kwargs)


def test_an_unknown_model_answered_with_400_fails_the_run_after_a_few_calls_with_items_pending(
    transactional_db, make_endpoint, simulator
):
    simulator.configure(unknown_model_status=400)
    run = work(plan(make_endpoint("gpt-no-such-model", max_concurrency=2), mcq_prompts(60)))
    assert run.status == Run.Status.FAILED
    assert "Invalid model name passed in model=gpt-no-such-model" in run.error
    assert "settings" in run.error
    assert RunItem.objects.filter(run=run, status=RunItem.Status.PENDING).count() == 60, list(
        RunItem.objects.filter(run=run).exclude(status="pending").values_list("status", "error")
    )[:3]
    assert run.failed == 0
    assert simulator.stats()["requests"] < 30, "the run stopped after a few calls, not after all 60"
    assert set(
        LLMCall.objects.filter(endpoint=run.endpoint).exclude(error_kind="").values_list("error_kind", flat=True)
    ) == {LLMCall.ErrorKind.CONFIG}


def test_resuming_once_the_server_takes_the_settings_finishes_the_run_billing_each_once(
    transactional_db, make_endpoint, simulator
):
    simulator.configure(reject_max_tokens=1)
    run = work(plan(make_endpoint("sim-echo", max_tokens=50), mcq_prompts(12)))
    assert run.status == Run.Status.FAILED and run.failed == 0
    simulator.configure(reject_max_tokens=0)
    services.run_resume(run=run)
    run = work(run)
    assert (run.status, run.done, run.failed) == (Run.Status.DONE, 12, 0)
    stats = simulator.stats()
    assert (stats["billable"], stats["duplicate_billed_keys"]) == (12, 0)


def test_a_refused_parameter_name_fails_the_run_at_the_first_reply(transactional_db, make_endpoint, simulator):
    simulator.configure(reject_max_tokens=1)
    run = work(plan(make_endpoint("sim-echo", max_tokens=50, max_concurrency=1), mcq_prompts(30)))
    assert run.status == Run.Status.FAILED
    assert "unsupported_parameter" in run.error and "max_completion_tokens" in run.error
    assert run.failed == 0 and simulator.stats()["requests"] <= 5


def test_different_refusals_of_a_few_prompts_fail_only_those_items(transactional_db, make_endpoint, simulator):
    bad = [
        {"key": "neg", "messages": [{"role": "user", "content": "a"}], "params": {"max_tokens": -1}},
        {"key": "role", "messages": [{"role": "robot", "content": "b"}]},
    ]
    run = work(plan(make_endpoint("sim-echo"), bad))
    assert (run.status, run.done, run.failed) == (Run.Status.DONE, 0, 2)
    assert "max_tokens" in RunItem.objects.get(run=run, key="neg").error


def test_the_same_refusal_after_the_run_has_answers_fails_only_the_items(transactional_db, make_endpoint, simulator):
    good = mcq_prompts(4)
    bad = [
        {"key": f"b{i}", "messages": [{"role": "user", "content": f"x{i}"}], "params": {"max_tokens": -1}}
        for i in range(5)
    ]
    endpoint = make_endpoint("sim-echo", max_concurrency=1)
    work(plan(endpoint, good))  # the endpoint has answered before: its settings work
    run = work(plan(endpoint, good + bad))
    assert run.status == Run.Status.DONE
    assert (run.done, run.failed) == (4, 5)


def test_an_unknown_model_answered_with_400_fails_the_run_even_when_every_request_fits_in_one_wave(
    transactional_db, make_endpoint, simulator
):
    simulator.configure(unknown_model_status=400)
    run = work(plan(make_endpoint("gpt-no-such-model", max_concurrency=16), mcq_prompts(5)))
    assert run.status == Run.Status.FAILED and run.failed == 0
    assert RunItem.objects.filter(run=run, status=RunItem.Status.PENDING).count() == 5
