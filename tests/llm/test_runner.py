"""The runner in this process: chunks, cache, retries, fault injection, bad endpoints, fencing. Real simulator.

These tests commit (the runner writes through its own database connection), so they use ``transactional_db``.
"""

from decimal import Decimal

import pytest
from django.db.models import Sum
from django.utils import timezone

from llm import services
from llm.executor import CallOutcome, CallSpec
from llm.models import LLMCall, Run, RunChunk, RunItem
from llm.worker import runner
from tests.factories import mcq_prompts


def work(run: Run) -> Run:
    runner.run_work(run_id=run.pk)
    run.refresh_from_db()
    return run


def plan(endpoint, prompts: list[dict], parser: str = "mcq_letter", **kwargs: object) -> Run:
    return services.run_create(endpoint=endpoint, prompts=prompts, parser=parser, name="t", start=False, **kwargs)


def assert_stored_exactly_once(run: Run, simulator) -> None:
    assert run.status == Run.Status.DONE, run.error
    items = RunItem.objects.filter(run=run)
    assert items.filter(status=RunItem.Status.DONE).count() == run.planned == run.done
    assert not items.filter(call__isnull=True).exists()
    stats = simulator.stats()
    assert stats["billable"] == LLMCall.objects.filter(endpoint=run.endpoint).aggregate(n=Sum("sends"))["n"]
    assert stats["duplicate_billed_keys"] == 0


def test_a_run_is_worked_to_completion_with_parsed_results_linked_to_calls(transactional_db, make_endpoint, simulator):
    prompts = mcq_prompts(30)
    prompts.append({**prompts[0], "key": "twin"})
    run = work(plan(make_endpoint("sim-mcq-acc90"), prompts))
    assert_stored_exactly_once(run, simulator)
    assert simulator.stats()["billable"] == 30  # the twin shares its call
    items = list(RunItem.objects.filter(run=run).select_related("call"))
    assert sum(item.result["letter"] == "B" for item in items) >= 22
    assert all(item.call.status == LLMCall.Status.SUCCEEDED and item.call.parsed for item in items)
    assert run.spent == sum(item.cost for item in items) > 0
    assert run.spent == LLMCall.objects.aggregate(total=Sum("cost"))["total"]
    assert run.cached == 0 and run.failed == 0 and run.started_at and run.finished_at


def test_fault_injection_completes_with_every_result_stored_exactly_once(transactional_db, make_endpoint, simulator):
    simulator.configure(error_rate_429=0.10, error_rate_500=0.05, timeout_rate=0.02, hang_seconds=10)
    endpoint = make_endpoint("sim-mcq-acc70", max_concurrency=16, timeout_seconds=0.5, max_retries=10)
    run = work(plan(endpoint, mcq_prompts(150)))
    assert_stored_exactly_once(run, simulator)
    stats = simulator.stats()
    assert stats["billable"] == 150
    assert stats["by_status"].get("429", 0) > 0 and stats["by_status"].get("500", 0) > 0 and stats["timeouts"] > 0
    kinds = {a.get("error_kind") for call in LLMCall.objects.all() for a in call.attempts}
    assert {"rate_limited", "server_error", "timeout"} <= kinds
    assert LLMCall.objects.filter(retries__gt=0).exists()


def test_unparseable_replies_are_retried_then_recorded_raw_and_unparsed(transactional_db, make_endpoint, simulator):
    prompts = [{"key": f"k{i}", "prompt": f"plain words {i}, not JSON"} for i in range(3)]
    run = work(plan(make_endpoint("sim-echo"), prompts, parser="json", max_parse_retries=2))
    assert (run.status, run.done, run.failed) == (Run.Status.DONE, 0, 3)
    for item in RunItem.objects.filter(run=run).select_related("call"):
        assert item.status == RunItem.Status.FAILED and item.error.startswith("Unparseable reply")
        assert item.call.parsed is False and item.call.response_text.startswith("plain words")
        assert item.call.sends == 3 and item.call.status == LLMCall.Status.SUCCEEDED
    assert simulator.stats()["billable"] == 9
    assert run.spent > 0  # unparseable replies were still paid for


def test_a_cached_reply_the_parser_rejects_is_sent_again_under_a_new_key(transactional_db, make_endpoint, simulator):
    endpoint = make_endpoint("sim-echo")
    services.call_make(endpoint=endpoint, prompt="not json", parser="text")
    run = work(plan(endpoint, [{"key": "a", "prompt": "not json"}], parser="json", max_parse_retries=1))
    call = LLMCall.objects.get()
    assert (run.failed, call.sends, simulator.stats()["billed_keys"]) == (1, 2, 2)


@pytest.mark.parametrize(
    ("model", "path", "message"),
    [
        ("no-such-model", "/v1", "does not exist"),
        ("sim-echo", "/html/v1", "HTML page"),
        ("sim-echo", "/badjson/v1", "invalid JSON"),
        ("sim-echo", "/unauthorized/v1", "Incorrect API key"),
    ],
)
def test_a_broken_endpoint_fails_the_run_clearly_and_keeps_items_pending(
    transactional_db, make_endpoint, simulator, model, path, message
):
    run = work(plan(make_endpoint(model, base_url=simulator.root + path), mcq_prompts(12), parser="text"))
    assert run.status == Run.Status.FAILED and message in run.error
    assert run.done == 0 and RunItem.objects.filter(run=run, status=RunItem.Status.PENDING).count() == 12
    assert not RunChunk.objects.filter(run=run, status=RunChunk.Status.LEASED).exists()


def test_an_unreachable_endpoint_fails_the_run_and_resuming_after_the_fix_finishes_it(
    transactional_db, make_endpoint, simulator
):
    endpoint = make_endpoint("sim-mcq-acc90", base_url="http://127.0.0.1:9/v1", max_retries=1)
    run = work(plan(endpoint, mcq_prompts(12)))
    assert run.status == Run.Status.FAILED and "Could not connect to http://127.0.0.1:9/v1" in run.error
    services.endpoint_update(endpoint=endpoint, data={"base_url": simulator.base_url})
    services.run_resume(run=run)
    run = work(run)
    assert_stored_exactly_once(run, simulator)
    assert run.error == ""


def test_a_missing_key_fails_the_run_naming_the_variable(transactional_db, make_endpoint, monkeypatch):
    monkeypatch.delenv("EISTUDIO_TEST_ABSENT_API_KEY", raising=False)
    run = work(plan(make_endpoint(api_key_env="EISTUDIO_TEST_ABSENT_API_KEY"), mcq_prompts(3)))
    assert run.status == Run.Status.FAILED and "EISTUDIO_TEST_ABSENT_API_KEY" in run.error


def test_a_bad_request_fails_only_its_item(transactional_db, make_endpoint, simulator):
    prompts = mcq_prompts(5) + [
        {"key": "too-long", "messages": mcq_prompts(1)[0]["messages"], "params": {"max_tokens": -1}}
    ]
    run = work(plan(make_endpoint(), prompts))
    assert (run.status, run.done, run.failed) == (Run.Status.DONE, 5, 1)
    assert "max_tokens" in RunItem.objects.get(key="too-long").error


def test_a_paused_or_cancelled_run_is_left_alone(transactional_db, make_endpoint, simulator):
    run = plan(make_endpoint(), mcq_prompts(5))
    services.run_pause(run=run)
    assert work(run).status == Run.Status.PAUSED
    assert simulator.stats()["requests"] == 0


def test_an_expired_lease_of_a_dead_worker_is_taken_over(transactional_db, make_endpoint, simulator):
    run = plan(make_endpoint(), mcq_prompts(20))
    RunChunk.objects.filter(run=run, number=1).update(
        status=RunChunk.Status.LEASED, lease_owner="dead-worker", lease_expires_at=timezone.now(), claims=1
    )
    run = work(run)
    assert_stored_exactly_once(run, simulator)
    assert RunChunk.objects.get(run=run, number=1).claims == 2


def test_a_worker_whose_lease_was_taken_over_writes_nothing(transactional_db, make_endpoint):
    run = plan(make_endpoint(), mcq_prompts(10))
    Run.objects.filter(pk=run.pk).update(status=Run.Status.RUNNING)
    run.refresh_from_db()
    worker = runner.RunWorker(run, runner.endpoint_config(run.endpoint), "worker-a")
    lease, specs = worker.claim()
    RunChunk.objects.filter(pk=lease.chunk_id).update(lease_owner="worker-b", claims=lease.token + 1)
    outcomes = [
        CallOutcome(spec=s, received=True, parsed=True, result={"letter": "B"}, sends=1, input_tokens=5) for s in specs
    ]
    result = worker.flush(outcomes)
    assert result.lost == {lease.chunk_id}
    assert not RunItem.objects.filter(run=run, status=RunItem.Status.DONE).exists()
    assert not LLMCall.objects.filter(status=LLMCall.Status.SUCCEEDED).exists()
    run.refresh_from_db()
    assert (run.done, run.spent) == (0, Decimal("0"))
    worker.close()
    assert isinstance(specs[0], CallSpec)
