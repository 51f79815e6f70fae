"""Surviving a lost database connection and dead workers (``llm.worker.recovery``): retries with backoff and a budget,
the runner storing every result exactly once across failed and unseen commits, task rows of dead workers marked
failed and stalled runs queued again by exactly one sweeper; and ``manage.py db_worker`` being llm's own."""

import subprocess
import sys
import time
from datetime import timedelta

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import get_commands
from django.db import OperationalError
from django.utils import timezone
from django_tasks_db.compat import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from annotation.items import tasks as item_tasks
from calibration import tasks as calibration_tasks
from evaluation import tasks as evaluation_tasks
from llm import services
from llm.models import Run, RunChunk, RunItem, WorkerHeartbeat
from llm.worker import database, recovery, runner
from llm.worker.tasks import run_work
from tests.factories import mcq_prompts
from tests.simulator import ROOT, subprocess_env


@pytest.fixture(autouse=True)
def _no_outage_left_over():
    database._outage_over()
    yield
    database._outage_over()


def test_a_database_step_is_retried_with_growing_backoff_until_it_succeeds(caplog):
    failures = iter([OperationalError("the connection is closed"), OperationalError("server closed the connection")])
    waits: list[float] = []

    def step() -> str:
        failure = next(failures, None)
        if failure:
            raise failure
        return "stored"

    assert database.retry_database(step, what="Test", budget=60, sleep=waits.append) == "stored"
    assert waits == [pytest.approx(0.1), pytest.approx(0.2)]
    assert caplog.text.count("reconnecting in") == 2 and "the database is back" in caplog.text


def test_a_database_gone_for_longer_than_the_budget_is_given_up_on(caplog):
    def step() -> None:
        raise OperationalError("the connection is closed")

    started = time.monotonic()
    with pytest.raises(database.DatabaseUnavailable, match="out of reach"):
        database.retry_database(step, what="Test", budget=0.4)
    assert time.monotonic() - started > 0.35  # it kept trying for the budget (an upper bound would time the machine)
    assert "giving up" in caplog.text


def test_db_worker_is_llms_resilient_command(settings):
    assert get_commands()["db_worker"] == "llm"


# --- dead workers and stalled runs ------------------------------------------------------------------------------


@pytest.fixture
def run(make_endpoint) -> Run:
    return services.run_create(
        endpoint=make_endpoint(), prompts=mcq_prompts(3), parser="mcq_letter", name="sweep", start=False
    )


def running_task(run: Run, worker: str, started_ago: float) -> DBTaskResult:
    result = run_work.enqueue(run.pk)
    DBTaskResult.objects.filter(pk=result.id).update(
        status=TaskResultStatus.RUNNING,
        worker_ids=[worker],
        started_at=timezone.now() - timedelta(seconds=started_ago),
    )
    return DBTaskResult.objects.get(pk=result.id)


def test_tasks_left_running_by_dead_workers_are_marked_failed(run, settings):
    settings.LLM_STALL_SECONDS = 10
    now = timezone.now()
    WorkerHeartbeat.objects.create(worker_id="dead", started_at=now, seen_at=now - timedelta(seconds=60))
    WorkerHeartbeat.objects.create(worker_id="live", started_at=now, seen_at=now)
    dead = running_task(run, "dead", started_ago=60)
    live = running_task(run, "live", started_ago=60)
    unregistered_but_new = running_task(run, "starting", started_ago=1)
    assert recovery.tasks_fail_orphaned() == [str(dead.pk)]
    dead.refresh_from_db()
    assert dead.status == TaskResultStatus.FAILED and dead.finished_at
    assert dead.exception_class_path == "llm.worker.recovery.WorkerLost" and "dead" in dead.traceback
    assert dead.task_result.errors[0].exception_class is recovery.WorkerLost
    for task in (live, unregistered_but_new):
        task.refresh_from_db()
        assert task.status == TaskResultStatus.RUNNING
    assert list(WorkerHeartbeat.objects.values_list("worker_id", flat=True)) == ["live"]


def test_a_stalled_run_is_queued_again_once_however_many_workers_sweep(run, settings):
    settings.LLM_STALL_SECONDS = 10
    Run.objects.filter(pk=run.pk).update(status=Run.Status.RUNNING, heartbeat_at=timezone.now() - timedelta(minutes=5))
    assert recovery.runs_requeue_stalled() == [run.pk]
    assert recovery.runs_requeue_stalled() == []
    tasks = DBTaskResult.objects.filter(status=TaskResultStatus.READY, task_path="llm.worker.tasks.run_work")
    assert [t.args_kwargs["args"] for t in tasks] == [[run.pk]]
    run.refresh_from_db()
    assert timezone.now() - run.heartbeat_at < timedelta(seconds=5)


def test_the_sweep_leaves_live_waiting_and_stopped_runs_alone(make_endpoint, settings):
    settings.LLM_STALL_SECONDS = 10
    old = timezone.now() - timedelta(minutes=5)
    endpoint = make_endpoint()

    def make(status: str, heartbeat: object, queued: bool = False) -> Run:
        run = services.run_create(endpoint=endpoint, prompts=mcq_prompts(2), parser="text", name=status, start=False)
        Run.objects.filter(pk=run.pk).update(status=status, heartbeat_at=heartbeat, created_at=old)
        if queued:
            run_work.enqueue(run.pk)
        return run

    make(Run.Status.RUNNING, timezone.now())
    make(Run.Status.RUNNING, old, queued=True)
    make(Run.Status.PAUSED, old)
    make(Run.Status.CANCELLED, old)
    orphan = make(Run.Status.QUEUED, None)
    assert recovery.runs_requeue_stalled() == [orphan.pk]


# --- the runner across lost connections ---------------------------------------------------------------------


def work(run: Run) -> Run:
    runner.run_work(run_id=run.pk)
    run.refresh_from_db()
    return run


def plan(endpoint, n: int) -> Run:
    return services.run_create(endpoint=endpoint, prompts=mcq_prompts(n), parser="mcq_letter", name="t", start=False)


def assert_complete_once(run: Run, n: int, simulator) -> None:
    assert run.status == Run.Status.DONE, run.error
    assert (run.done, run.failed, run.planned) == (n, 0, n)
    assert RunItem.objects.filter(run=run, status=RunItem.Status.DONE).count() == n
    stats = simulator.stats()
    assert stats["billable"] == n and stats["duplicate_billed_keys"] == 0


def test_a_flush_that_fails_is_run_again_after_reconnecting(transactional_db, make_endpoint, simulator, monkeypatch):
    original = runner.RunWorker._flush
    failures = {"left": 3}

    def flaky(self, outcomes, *batches):
        if outcomes and failures["left"]:
            failures["left"] -= 1
            raise OperationalError("the connection is closed")
        return original(self, outcomes)

    monkeypatch.setattr(runner.RunWorker, "_flush", flaky)
    run = work(plan(make_endpoint(max_concurrency=4), 40))
    assert failures["left"] == 0
    assert_complete_once(run, 40, simulator)


def test_a_commit_whose_acknowledgement_was_lost_is_not_counted_twice(
    transactional_db, make_endpoint, simulator, monkeypatch
):
    original = runner.RunWorker._flush
    failures = {"left": 3}

    def committed_but_unseen(self, outcomes, *batches):
        result = original(self, outcomes, *batches)
        if outcomes and failures["left"]:
            failures["left"] -= 1
            raise OperationalError("server closed the connection unexpectedly")
        return result

    monkeypatch.setattr(runner.RunWorker, "_flush", committed_but_unseen)
    run = work(plan(make_endpoint(max_concurrency=4), 40))
    assert failures["left"] == 0
    assert_complete_once(run, 40, simulator)


def test_a_claim_that_fails_is_run_again(transactional_db, make_endpoint, simulator, monkeypatch):
    original = runner.RunWorker._claim
    failures = {"left": 2}

    def flaky(self):
        result = original(self)
        if failures["left"]:
            failures["left"] -= 1
            raise OperationalError("the connection is closed")
        return result

    monkeypatch.setattr(runner.RunWorker, "_claim", flaky)
    # The chunks claimed by the commits it never saw stay leased until their lease (2 s here) expires.
    run = work(plan(make_endpoint(max_concurrency=4), 30))
    assert_complete_once(run, 30, simulator)


def test_a_database_gone_too_long_leaves_the_run_running_for_others(
    transactional_db, make_endpoint, simulator, monkeypatch, settings
):
    settings.LLM_WORKER_DB_RETRY_SECONDS = 0.5

    def down(self, outcomes, *batches):
        raise OperationalError("the connection is closed")

    monkeypatch.setattr(runner.RunWorker, "_flush", down)
    run = plan(make_endpoint(max_concurrency=4), 20)
    with pytest.raises(database.DatabaseUnavailable):
        runner.run_work(run_id=run.pk)
    database._outage_over()
    run.refresh_from_db()
    assert run.status == Run.Status.RUNNING and run.error == ""
    assert RunChunk.objects.filter(run=run, status=RunChunk.Status.LEASED).exists(), "nothing released"


# --- the worker process -------------------------------------------------------------------------------------


@pytest.mark.worker
def test_a_worker_whose_database_never_answers_retries_then_exits_non_zero(tmp_path):
    log = tmp_path / "worker.log"
    with log.open("w") as out:
        process = subprocess.run(
            [sys.executable, "manage.py", "db_worker", "--no-reload", "--no-startup-delay", "--skip-checks"],
            cwd=ROOT,
            env=subprocess_env(DATABASE_URL="postgres://postgres@127.0.0.1:1/none", LLM_WORKER_DB_RETRY_SECONDS="2"),
            stdout=out,
            stderr=subprocess.STDOUT,
            timeout=60,
        )
    text = log.read_text()
    assert process.returncode != 0, text
    assert text.count("reconnecting in") >= 3 and "giving up" in text, text


def test_each_task_has_one_lost_task_handler_and_a_failing_handler_does_not_stop_the_sweep(run, settings):
    registered = recovery._LOST_TASK_HANDLERS
    for task in (
        item_tasks.item_import_run,
        calibration_tasks.report_compute,
        evaluation_tasks.contamination_check_run,
    ):
        assert task.module_path in registered
    handler = registered[item_tasks.item_import_run.module_path]
    recovery.on_task_lost(item_tasks.item_import_run, handler)  # the same handler again (ready() twice): accepted
    with pytest.raises(ImproperlyConfigured, match="already has a lost-task handler"):
        recovery.on_task_lost(item_tasks.item_import_run, lambda job_id: None)

    def broken(run_id: int) -> None:
        raise RuntimeError("handler on fire")

    settings.LLM_STALL_SECONDS = 10
    registered[run_work.module_path] = broken
    try:
        now = timezone.now()
        WorkerHeartbeat.objects.create(worker_id="dead", started_at=now, seen_at=now - timedelta(seconds=60))
        first, second = running_task(run, "dead", started_ago=60), running_task(run, "dead", started_ago=60)
        assert sorted(recovery.tasks_fail_orphaned()) == sorted([str(first.pk), str(second.pk)])
    finally:
        del registered[run_work.module_path]
