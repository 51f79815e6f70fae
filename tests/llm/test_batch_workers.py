"""Real ``manage.py db_worker`` processes: a 500-prompt batch run whose worker is killed between creating its
batches and downloading them (the worker that takes over creates no second batch), and one budget shared by two
workers.
"""

import json
import signal
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command
from django.db.models import Count

from llm import services
from llm.calls import request_max_cost
from llm.models import Run, RunBatch, RunItem
from tests.factories import mcq_prompts
from tests.workers import wait_for_workers_ready, wait_until

pytestmark = pytest.mark.worker
POLL = {"LLM_BATCH_POLL_SECONDS": "0.2"}


def refreshed(run: Run) -> Run:
    run.refresh_from_db()
    return run


@pytest.fixture
def batch_simulator(simulator):
    yield simulator
    simulator.configure(batch_delay_ms=100, batch_error_rate=0.0, batch_expire_rate=0.0)


def test_a_killed_batch_worker_is_replaced_without_a_second_batch_and_every_result_stored_once(
    transactional_db, make_endpoint, batch_simulator, workers
):
    simulator = batch_simulator
    simulator.configure(batch_delay_ms=6000, batch_error_rate=0.0, batch_expire_rate=0.0)
    first = workers.start(**POLL)
    wait_for_workers_ready(workers)
    endpoint = make_endpoint(
        "sim-mcq-acc90",
        max_concurrency=8,
        price_batch_input_per_mtok=Decimal("0.25"),
        price_batch_output_per_mtok=Decimal("0.75"),
    )
    run = services.run_create(
        endpoint=endpoint, prompts=mcq_prompts(500), parser="mcq_letter", name="batch", batch=True, chunk_size=50
    )
    submitted = RunBatch.objects.filter(run=run, status=RunBatch.Status.SUBMITTED).exclude(provider_batch_id="")
    wait_until(lambda: submitted.count() == 10, 60, "a batch created and recorded for each chunk")
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=10)
    assert simulator.stats()["batches"] == 10
    assert refreshed(run).done == 0, "killed before any batch was downloaded"

    second = workers.start(batch=True, **POLL)
    assert workers.wait(second, timeout=120) == 0, workers.logs()
    run = refreshed(run)
    assert run.status == Run.Status.DONE, run.error
    assert (run.done, run.failed) == (500, 0)
    stats = simulator.stats()
    assert stats["batches"] == 10, "the worker that took over created no second batch"
    assert stats["requests"] == 0, "nothing went live"
    assert (stats["billable"], stats["duplicate_billed_keys"]) == (500, 0)
    items = RunItem.objects.filter(run=run)
    assert items.filter(status=RunItem.Status.DONE).count() == 500
    assert items.values("call").distinct().count() == 500
    assert not items.values("call").annotate(n=Count("id")).filter(n__gt=1).exists()
    assert RunBatch.objects.filter(run=run).count() == 10
    assert set(RunBatch.objects.filter(run=run).values_list("status", flat=True)) == {RunBatch.Status.COMPLETED}
    assert run.reserved == 0


def test_two_workers_share_one_budget_and_the_run_stops_within_one_requests_cost(
    transactional_db, make_endpoint, simulator, workers
):
    simulator.configure(latency_ms=80, jitter_ms=40)
    workers.start()
    workers.start()
    wait_for_workers_ready(workers)
    endpoint = make_endpoint(
        "sim-mcq-acc90",
        max_concurrency=8,
        max_tokens=40,
        price_input_per_mtok=Decimal("1000"),
        price_output_per_mtok=Decimal("2000"),
    )
    run = services.run_create(
        endpoint=endpoint,
        prompts=mcq_prompts(200),
        parser="mcq_letter",
        name="shared budget",
        budget=Decimal("4"),
        max_parse_retries=0,
    )
    wait_until(lambda: refreshed(run).status not in Run.ACTIVE, 90, "the run to stop")
    assert run.status == Run.Status.PAUSED and run.pause_reason == Run.PauseReason.BUDGET, run.error
    wait_until(lambda: refreshed(run).reserved == 0, 120, "reservations released")
    assert 0 < run.done < 200
    assert run.spent <= run.budget
    pending = RunItem.objects.filter(run=run, status=RunItem.Status.PENDING).first()
    one = request_max_cost(pending.request, price_input=Decimal("1000"), price_output=Decimal("2000"))
    # Each worker may stop with what it reserved for its next request unspent: within one request's cost per worker.
    assert run.budget - run.spent < 2 * one
    stats = simulator.stats()
    assert stats["billable"] == run.done and stats["duplicate_billed_keys"] == 0


def test_the_start_command_sends_a_batch_run_and_follows_it_to_the_end(
    transactional_db, make_endpoint, batch_simulator, workers, tmp_path
):
    batch_simulator.configure(batch_delay_ms=300)
    workers.start(**POLL)
    wait_for_workers_ready(workers)
    endpoint = make_endpoint("sim-mcq-acc90")
    path = tmp_path / "prompts.jsonl"
    path.write_text("\n".join(json.dumps(p) for p in mcq_prompts(25)) + "\n")
    out = StringIO()
    call_command(
        "llm_run_start", str(path), "--endpoint", endpoint.name, "--parser", "mcq_letter", "--batch", "--follow",
        "--budget", "5", stdout=out,
    )
    run = Run.objects.get()
    assert (run.mode, run.budget, run.status, run.done) == (Run.Mode.BATCH, Decimal("5"), Run.Status.DONE, 25)
    assert "provider batches" in out.getvalue() and "25/25 done" in out.getvalue()
    assert batch_simulator.stats()["batches"] == 3
