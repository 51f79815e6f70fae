"""Batch mode in this process against the simulator's Files and Batches API: storing results as ordinary calls,
batch prices, partial failures and expiry (live or re-batched), and a batch left "creating" by a dead worker.

These tests commit (the runner writes through its own database connection), so they use ``transactional_db``.
"""

import json
from decimal import Decimal

import openai
import pytest
from django.db.models import Sum

from llm import services
from llm.calls import call_cost
from llm.executor import CallSpec
from llm.models import LLMCall, Run, RunBatch, RunChunk, RunItem
from llm.worker import batches, runner
from tests.factories import mcq_prompts

BATCH_DEFAULTS = {"batch_delay_ms": 100, "batch_error_rate": 0.0, "batch_expire_rate": 0.0}


@pytest.fixture
def batch_sim(simulator, settings):
    """The simulator with quick, fault-free batches, and workers that poll them often."""
    simulator.configure(**BATCH_DEFAULTS)
    settings.LLM_BATCH_POLL_SECONDS = 0.05
    yield simulator
    simulator.configure(**BATCH_DEFAULTS)


@pytest.fixture
def batch_endpoint(make_endpoint):
    def make(model: str = "sim-mcq-acc90", **fields: object):
        prices = {
            "price_input_per_mtok": Decimal("2"),
            "price_output_per_mtok": Decimal("8"),
            "price_batch_input_per_mtok": Decimal("1"),
            "price_batch_output_per_mtok": Decimal("4"),
        }
        return make_endpoint(model, **{**prices, **fields})

    return make


def work(run: Run) -> Run:
    runner.run_work(run_id=run.pk)
    run.refresh_from_db()
    return run


def plan(endpoint, prompts: list[dict], **kwargs: object) -> Run:
    kwargs.setdefault("batch", True)
    return services.run_create(
        endpoint=endpoint, prompts=prompts, parser="mcq_letter", name="b", start=False, **kwargs
    )


def test_a_batch_run_stores_every_result_once_as_ordinary_calls_at_batch_prices(
    transactional_db, batch_endpoint, batch_sim
):
    run = plan(batch_endpoint(), mcq_prompts(45))
    assert run.mode == Run.Mode.BATCH
    assert run.estimated_cost_batch * 2 == run.estimated_cost > 0
    run = work(run)
    assert run.status == Run.Status.DONE, run.error
    assert (run.done, run.failed, run.cached) == (45, 0, 0)
    stats = batch_sim.stats()
    assert stats["batches"] == RunChunk.objects.filter(run=run).count() == 5  # one per chunk of 10
    assert stats["requests"] == 0, "nothing was sent live"
    assert (stats["billable"], stats["duplicate_billed_keys"]) == (45, 0)
    items = list(RunItem.objects.filter(run=run).select_related("call"))
    assert all(item.call.status == LLMCall.Status.SUCCEEDED and item.call.parsed for item in items)
    assert sum(item.result["letter"] == "B" for item in items) >= 35, "the answer hints reached the simulator"
    assert RunBatch.objects.filter(run=run, status=RunBatch.Status.COMPLETED).count() == 5
    assert not RunBatch.objects.exclude(provider_batch_id__startswith="batch_sim_").exists()
    # Spend at batch prices, from the simulator's own token counts; the live price is twice that.
    expected = call_cost(
        input_tokens=stats["prompt_tokens"],
        output_tokens=stats["completion_tokens"],
        price_input=Decimal("1"),
        price_output=Decimal("4"),
    )
    assert abs(run.spent - expected) <= Decimal("0.0000001") * 45
    assert run.spent == LLMCall.objects.filter(endpoint=run.endpoint).aggregate(s=Sum("cost"))["s"]
    assert (run.input_tokens, run.output_tokens) == (stats["prompt_tokens"], stats["completion_tokens"])
    assert run.spend_at(batch=False) == 2 * run.spend_at(batch=True)
    assert run.reserved == 0


def test_the_same_prompts_again_are_served_from_the_cache_whatever_the_mode(
    transactional_db, batch_endpoint, batch_sim
):
    endpoint = batch_endpoint()
    work(plan(endpoint, mcq_prompts(12)))
    again = plan(endpoint, mcq_prompts(12), batch=False)
    assert again.status == Run.Status.DONE and again.cached == 12
    assert batch_sim.stats()["batches"] == 2


def test_failed_batch_requests_fall_back_to_live_calls(transactional_db, batch_endpoint, batch_sim):
    batch_sim.configure(batch_error_rate=0.3)
    run = work(plan(batch_endpoint(), mcq_prompts(40), batch_fallback=Run.Mode.LIVE))
    assert run.status == Run.Status.DONE, run.error
    assert (run.done, run.failed) == (40, 0)
    stats = batch_sim.stats()
    assert stats["batches"] == 4, "failures are not batched again"
    assert 0 < stats["requests"] < 40, "the failed requests were sent live"
    assert (stats["billable"], stats["duplicate_billed_keys"]) == (40, 0)
    batch_costs = LLMCall.objects.filter(endpoint=run.endpoint, attempts__0__batch__isnull=False)
    assert batch_costs.count() == 40 - stats["requests"]


def test_expired_batches_are_batched_again_when_the_run_says_so(transactional_db, batch_endpoint, batch_sim):
    batch_sim.configure(batch_expire_rate=1.0)
    run = work(plan(batch_endpoint(), mcq_prompts(20), batch_fallback=Run.Mode.BATCH))
    assert run.status == Run.Status.DONE, run.error
    assert run.done == 20
    stats = batch_sim.stats()
    # Each expired batch answered half its requests (10, then 5, then 3 asked): 2 per chunk are left to go live.
    assert stats["requests"] == 4, "after three expired batches per chunk, the rest goes live"
    assert stats["batches"] == 6
    assert stats["batches_by_status"] == {"expired": 6}
    assert (stats["billable"], stats["duplicate_billed_keys"]) == (20, 0)
    assert set(RunBatch.objects.filter(run=run).values_list("attempt", flat=True)) == {1, 2, 3}


def test_a_batch_left_creating_by_a_dead_worker_is_found_at_the_provider_not_created_again(
    transactional_db, batch_endpoint, batch_sim
):
    endpoint = batch_endpoint()
    run = plan(endpoint, mcq_prompts(8))
    chunk = RunChunk.objects.get(run=run)
    # A worker claimed the chunk, recorded the batch and created it at the provider, then died before saving its id.
    worker = runner.RunWorker(Run.objects.select_related("endpoint").get(pk=run.pk), _config(endpoint), "dead:1")
    Run.objects.filter(pk=run.pk).update(status=Run.Status.RUNNING)
    lease, specs = worker.claim()
    status, row = worker.batch_begin(lease.chunk_id, lease.token, specs, 1)
    assert status == "ok"
    client = openai.OpenAI(base_url=endpoint.base_url, api_key="none")
    upload = client.files.create(
        file=("in.jsonl", batches.input_jsonl(specs, api_style="chat", simulator=True)), purpose="batch"
    )
    client.batches.create(
        input_file_id=upload.id,
        endpoint="/v1/chat/completions",
        completion_window="24h",
        metadata={"eistudio_batch": row["key"]},
    )
    worker.close()
    RunChunk.objects.filter(pk=chunk.pk).update(lease_expires_at="2000-01-01T00:00:00Z")
    Run.objects.filter(pk=run.pk).update(status=Run.Status.QUEUED)
    run = work(run)
    assert run.status == Run.Status.DONE, run.error
    assert run.done == 8
    stats = batch_sim.stats()
    assert stats["batches"] == 1, "the worker that took over found the batch and created none"
    assert (stats["billable"], stats["duplicate_billed_keys"]) == (8, 0)
    batch = RunBatch.objects.get(run=run)
    assert batch.provider_batch_id and batch.status == RunBatch.Status.COMPLETED and batch.reserved == 0


def test_batch_jsonl_lines_carry_the_idempotency_key_as_custom_id():
    spec = CallSpec(ident=(1, 2), request={"model": "m", "messages": []}, call_hash="abc", first_send=2)
    line = json.loads(batches.input_jsonl([spec], api_style="chat", simulator=False))
    assert line == {"custom_id": "abc:2", "method": "POST", "url": "/v1/chat/completions", "body": spec.request}


def _config(endpoint):
    from llm.recording import endpoint_config

    return endpoint_config(endpoint)


def test_cancelling_a_run_cancels_its_open_batches_at_the_provider(transactional_db, batch_endpoint, batch_sim):
    import threading
    import time

    batch_sim.configure(batch_delay_ms=60_000)  # the batches stay in progress until cancelled
    run = plan(batch_endpoint(), mcq_prompts(25))
    worker = threading.Thread(target=runner.run_work, kwargs={"run_id": run.pk})
    worker.start()
    deadline = time.monotonic() + 30
    while RunBatch.objects.filter(run=run).exclude(provider_batch_id="").count() < 3:
        assert time.monotonic() < deadline, "the worker did not create the batches"
        time.sleep(0.05)
    services.run_cancel(run=run)
    worker.join(timeout=30)
    assert not worker.is_alive()
    assert batch_sim.stats()["batches_by_status"] == {"cancelled": 3}
    assert set(RunBatch.objects.filter(run=run).values_list("status", flat=True)) == {RunBatch.Status.CANCELLED}
    run.refresh_from_db()
    assert run.status == Run.Status.CANCELLED and run.reserved == 0
