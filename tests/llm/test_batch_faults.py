"""Batch mode that degrades and never hangs (in this process, real simulator): a Files or Batches API that fails is
tried a bounded number of times, then the chunk goes live or the run fails visibly, as the run says; cancelling or
failing leaves no batch "creating" and nothing reserved; a worker that has queued work gives a waiting chunk back
instead of sleeping on it.

These tests commit (the runner writes through its own database connection), so they use ``transactional_db``.
"""

import time
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from llm import services
from llm.models import Run, RunBatch, RunChunk, RunItem
from llm.worker import runner
from tests.factories import mcq_prompts

PRICES = {
    "price_input_per_mtok": Decimal("2"),
    "price_output_per_mtok": Decimal("8"),
    "price_batch_input_per_mtok": Decimal("1"),
    "price_batch_output_per_mtok": Decimal("4"),
}


@pytest.fixture
def batch_sim(simulator, settings):
    simulator.configure(batch_delay_ms=100, batch_error_rate=0.0, batch_expire_rate=0.0)
    settings.LLM_BATCH_POLL_SECONDS = 0.05
    settings.LLM_BATCH_API_ATTEMPTS = 3
    yield simulator
    simulator.configure(batch_delay_ms=100, batch_api_status=0)


def plan(endpoint, n: int, **kwargs: object) -> Run:
    return services.run_create(
        endpoint=endpoint, prompts=mcq_prompts(n), parser="mcq_letter", name="b", start=False, batch=True, **kwargs
    )


def work(run: Run, **kwargs: object) -> Run:
    runner.run_work(run_id=run.pk, **kwargs)
    run.refresh_from_db()
    return run


def assert_nothing_left_open(run: Run) -> None:
    run.refresh_from_db()
    assert not RunBatch.objects.filter(run=run, status__in=RunBatch.OPEN).exists()
    assert run.reserved == 0
    assert not RunBatch.objects.filter(run=run).exclude(reserved=0).exists()


@pytest.mark.parametrize("status", [500, 404])
def test_a_failing_files_api_is_tried_a_few_times_then_the_requests_go_live(
    transactional_db, make_endpoint, batch_sim, status
):
    batch_sim.configure(batch_api_status=status)
    run = work(plan(make_endpoint("sim-mcq-acc90", **PRICES), 25, batch_fallback=Run.Mode.LIVE))
    assert run.status == Run.Status.DONE, run.error
    assert (run.done, run.failed) == (25, 0)
    stats = batch_sim.stats()
    tries = 3 if status == 500 else 1
    assert stats["batch_api_calls"] == 3 * tries, "3 chunks, each upload tried a bounded number of times"
    assert (stats["requests"], stats["billable"], stats["duplicate_billed_keys"]) == (25, 25, 0)
    failed = RunBatch.objects.filter(run=run)
    assert failed.count() == 3 and {b.status for b in failed} == {RunBatch.Status.FAILED}
    assert all(f"({status})" in b.error for b in failed)
    assert [w["code"] for w in run.warnings] == ["batch_api"]
    assert_nothing_left_open(run)


def test_a_failing_files_api_fails_the_run_visibly_when_it_keeps_requests_in_batches(
    transactional_db, make_endpoint, batch_sim
):
    batch_sim.configure(batch_api_status=500)
    run = work(plan(make_endpoint("sim-mcq-acc90", **PRICES), 25, batch_fallback=Run.Mode.BATCH))
    assert run.status == Run.Status.FAILED
    assert "Batch API failed" in run.error and "Server error (500)" in run.error and "Resume" in run.error
    assert RunItem.objects.filter(run=run, status=RunItem.Status.PENDING).count() == 25
    assert batch_sim.stats()["requests"] == 0
    assert_nothing_left_open(run)
    batch_sim.configure(batch_api_status=0)
    services.run_resume(run=run)
    run = work(run)
    assert (run.status, run.done) == (Run.Status.DONE, 25)
    assert (batch_sim.stats()["billable"], batch_sim.stats()["duplicate_billed_keys"]) == (25, 0)


def test_a_worker_with_a_queue_gives_a_waiting_chunk_back_and_queues_its_next_poll(
    transactional_db, make_endpoint, batch_sim, settings
):
    batch_sim.configure(batch_delay_ms=60_000)
    settings.LLM_BATCH_POLL_SECONDS = 30
    later: list[tuple[int, object]] = []
    run = plan(make_endpoint("sim-mcq-acc90", **PRICES), 25)
    run = work(run, poll_later=lambda run_id, when: later.append((run_id, when)))
    assert run.status == Run.Status.RUNNING, "the worker returned while the batches wait at the provider"
    assert len(later) == 1 and later[0][0] == run.pk and later[0][1] > timezone.now() - timedelta(seconds=5)
    chunks = RunChunk.objects.filter(run=run)
    assert {c.status for c in chunks} == {RunChunk.Status.PENDING}
    assert all(c.poll_after is not None and c.lease_owner == "" for c in chunks)
    assert RunBatch.objects.filter(run=run, status=RunBatch.Status.SUBMITTED).count() == 3
    assert run.reserved > 0, "the batches' estimated cost stays reserved while they are open"
    # The next poll finds them still under way: nothing new is created, the chunks are given back again.
    chunks.update(poll_after=timezone.now() - timedelta(seconds=1))
    run = work(run, poll_later=lambda run_id, when: later.append((run_id, when)))
    assert run.status == Run.Status.RUNNING and len(later) == 2 and batch_sim.stats()["batches"] == 3


def test_cancelling_a_run_whose_batches_no_worker_follows_cancels_them_at_the_provider(
    transactional_db, make_endpoint, batch_sim, settings
):
    batch_sim.configure(batch_delay_ms=60_000)
    settings.LLM_BATCH_POLL_SECONDS = 30
    run = work(plan(make_endpoint("sim-mcq-acc90", **PRICES), 25), poll_later=lambda run_id, when: None)
    assert run.status == Run.Status.RUNNING and run.reserved > 0
    services.run_cancel(run=run)
    # The task run_cancel queued (or the next poll's) cancels them.
    run = work(run, poll_later=lambda run_id, when: None)
    assert run.status == Run.Status.CANCELLED
    assert batch_sim.stats()["batches_by_status"] == {"cancelled": 3}
    assert {b.status for b in RunBatch.objects.filter(run=run)} == {RunBatch.Status.CANCELLED}
    assert_nothing_left_open(run)


def test_a_run_cancelled_with_a_batch_left_creating_closes_it(transactional_db, make_endpoint, batch_sim):
    run = plan(make_endpoint("sim-mcq-acc90", **PRICES), 8)
    worker = runner.RunWorker(Run.objects.select_related("endpoint").get(pk=run.pk), _config(run.endpoint), "dead:1")
    Run.objects.filter(pk=run.pk).update(status=Run.Status.RUNNING)
    lease, specs = worker.claim()
    assert worker.batch_begin(lease.chunk_id, lease.token, specs, 1)[0] == "ok"
    worker.close()
    run.refresh_from_db()
    assert run.reserved > 0
    services.run_cancel(run=run)
    run = work(run)
    assert RunBatch.objects.get(run=run).status == RunBatch.Status.CANCELLED
    assert_nothing_left_open(run)


def _config(endpoint):
    from llm.recording import endpoint_config

    return endpoint_config(endpoint)


def test_the_poll_after_a_given_back_chunk_stores_its_batch_results_once(
    transactional_db, make_endpoint, batch_sim, settings
):
    settings.LLM_BATCH_POLL_SECONDS = 30
    batch_sim.configure(batch_delay_ms=300)
    run = plan(make_endpoint("sim-mcq-acc90", **PRICES), 25)
    run = work(run, poll_later=lambda run_id, when: None)
    assert run.status == Run.Status.RUNNING, run.error
    time.sleep(0.4)  # the simulator's batches are due
    RunChunk.objects.filter(run=run).update(poll_after=timezone.now() - timedelta(seconds=1))
    run = work(run, poll_later=lambda run_id, when: None)
    assert run.status == Run.Status.DONE, run.error
    assert (run.done, run.failed) == (25, 0)
    stats = batch_sim.stats()
    assert (stats["batches"], stats["requests"], stats["billable"], stats["duplicate_billed_keys"]) == (3, 0, 25, 0)
    assert_nothing_left_open(run)
