"""Real ``manage.py db_worker`` processes on the test database (SQLite file or PostgreSQL) and the simulator.

Covers: two workers sharing one run, SIGKILL mid-run then another worker finishing with every planned call
billed exactly once (as counted by the simulator), a killed worker's run queued again by a live worker without
anyone pressing Resume, bad endpoints that fail runs without crashing the worker, and pausing a run that a worker
is working on.
"""

import signal
import time

import pytest
from django_tasks_db.compat import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from llm import services
from llm.models import Run, RunChunk, RunItem
from tests.factories import mcq_prompts
from tests.workers import wait_for_workers_ready, wait_until

pytestmark = pytest.mark.worker
SECRET = "sk-test-worker-secret-0987654321"


def refreshed(run: Run) -> Run:
    run.refresh_from_db()
    return run


def test_two_workers_share_one_run_without_sending_anything_twice(transactional_db, make_endpoint, simulator, workers):
    simulator.configure(latency_ms=60, jitter_ms=20)
    workers.start()
    workers.start()
    wait_for_workers_ready(workers)
    endpoint = make_endpoint("sim-mcq-acc90", max_concurrency=4)
    run = services.run_create(endpoint=endpoint, prompts=mcq_prompts(120), parser="mcq_letter", name="shared")
    wait_until(lambda: refreshed(run).status not in Run.ACTIVE, 60, "the run to finish")
    assert run.status == Run.Status.DONE, run.error
    assert RunItem.objects.filter(run=run, status=RunItem.Status.DONE).count() == 120
    owners = {
        owner.rsplit(":", 1)[0] for owner in RunChunk.objects.filter(run=run).values_list("lease_owner", flat=True)
    }
    assert len(owners) == 2, "both worker processes took chunks"
    stats = simulator.stats()
    assert (stats["billable"], stats["duplicate_billed_keys"]) == (120, 0)


def test_a_run_survives_a_killed_worker_with_every_call_billed_exactly_once(
    transactional_db, make_endpoint, simulator, workers
):
    simulator.configure(latency_ms=150, jitter_ms=50)
    first = workers.start(EISTUDIO_LEAKY_API_KEY=SECRET)
    wait_for_workers_ready(workers)
    endpoint = make_endpoint("sim-mcq-acc90", max_concurrency=8, api_key_env="EISTUDIO_LEAKY_API_KEY")
    run = services.run_create(endpoint=endpoint, prompts=mcq_prompts(160), parser="mcq_letter", name="killed")
    wait_until(lambda: refreshed(run).done >= 40, 60, "some progress before the kill")
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=10)
    assert 0 < refreshed(run).done < 160
    assert RunChunk.objects.filter(run=run, status=RunChunk.Status.LEASED).exists(), "the dead worker held chunks"
    second = workers.start(batch=True, EISTUDIO_LEAKY_API_KEY=SECRET)
    assert workers.wait(second, timeout=90) == 0
    run = refreshed(run)
    assert run.status == Run.Status.DONE, run.error
    assert (run.done, run.failed) == (160, 0)
    stats = simulator.stats()
    assert stats["billable"] == 160, "every planned call billed once"
    assert stats["duplicate_billed_keys"] == 0, "none billed twice"
    assert stats["replayed"] > 0, "requests in flight at the kill were answered from the provider's idempotency store"
    assert SECRET not in workers.logs()


def test_bad_endpoints_fail_their_runs_clearly_and_the_worker_goes_on(
    transactional_db, make_endpoint, simulator, workers
):
    bad = {
        "unreachable": (make_endpoint(base_url="http://127.0.0.1:9/v1", max_retries=1), "Could not connect"),
        "missing key": (make_endpoint(api_key_env="EISTUDIO_NEVER_SET_API_KEY"), "EISTUDIO_NEVER_SET_API_KEY"),
        "wrong model": (make_endpoint("gpt-none"), "does not exist"),
        "html": (make_endpoint(base_url=simulator.root + "/html/v1"), "HTML page"),
        "invalid json": (make_endpoint(base_url=simulator.root + "/badjson/v1"), "invalid JSON"),
    }
    runs = {
        name: services.run_create(endpoint=endpoint, prompts=mcq_prompts(5), parser="mcq_letter", name=name)
        for name, (endpoint, _message) in bad.items()
    }
    good = services.run_create(endpoint=make_endpoint(), prompts=mcq_prompts(5), parser="mcq_letter", name="good")
    worker = workers.start(batch=True)
    assert workers.wait(worker, timeout=90) == 0, workers.logs()
    for name, run in runs.items():
        run = refreshed(run)
        assert run.status == Run.Status.FAILED, name
        assert bad[name][1] in run.error, (name, run.error)
    assert refreshed(good).status == Run.Status.DONE


def test_pausing_stops_the_worker_after_requests_in_flight_and_resuming_finishes(
    transactional_db, make_endpoint, simulator, workers
):
    simulator.configure(latency_ms=100, jitter_ms=0)
    workers.start()
    wait_for_workers_ready(workers)
    run = services.run_create(
        endpoint=make_endpoint(max_concurrency=4), prompts=mcq_prompts(80), parser="mcq_letter", name="paused"
    )
    wait_until(lambda: refreshed(run).done >= 8, 120, "progress before the pause")
    services.run_pause(run=run)
    wait_until(
        lambda: not RunChunk.objects.filter(run=run, status=RunChunk.Status.LEASED).exists(), 30, "chunks released"
    )
    done_when_paused = refreshed(run).done
    time.sleep(0.5)
    assert refreshed(run).done == done_when_paused < 80
    assert run.status == Run.Status.PAUSED
    services.run_resume(run=run)
    wait_until(lambda: refreshed(run).status == Run.Status.DONE, 60, "the resumed run to finish")
    assert simulator.stats()["duplicate_billed_keys"] == 0


def test_a_killed_workers_run_is_queued_again_by_a_live_worker_without_resume(
    transactional_db, make_endpoint, simulator, workers, settings
):
    settings.LLM_TASKS_PER_RUN = 1
    simulator.configure(latency_ms=100, jitter_ms=20)
    first = workers.start(LLM_STALL_SECONDS="4")
    wait_for_workers_ready(workers)
    endpoint = make_endpoint("sim-mcq-acc90", max_concurrency=4)
    run = services.run_create(endpoint=endpoint, prompts=mcq_prompts(80), parser="mcq_letter", name="orphaned")
    wait_until(lambda: refreshed(run).done >= 12, 60, "some progress before the kill")
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=10)
    task = DBTaskResult.objects.get(task_path="llm.worker.tasks.run_work")
    assert task.status == TaskResultStatus.RUNNING, "the dead worker's task row is left running"
    second = workers.start(LLM_STALL_SECONDS="4")
    wait_until(lambda: refreshed(run).status not in Run.ACTIVE, 60, "the run to finish on its own")
    assert run.status == Run.Status.DONE, run.error
    assert (run.done, run.failed) == (80, 0)
    task.refresh_from_db()
    assert task.status == TaskResultStatus.FAILED and task.exception_class_path == "llm.worker.recovery.WorkerLost"
    stats = simulator.stats()
    assert (stats["billable"], stats["duplicate_billed_keys"]) == (80, 0)
    assert second.poll() is None, "the live worker is still running"
