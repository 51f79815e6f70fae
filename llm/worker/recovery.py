"""Keeping background work going when a worker goes away.

``Heartbeat`` is a thread of every ``db_worker``: it stamps the worker's ``WorkerHeartbeat`` row every few seconds
and sweeps up after dead workers (``sweep``): task rows they left RUNNING are marked failed (``WorkerLost``), and
active runs with no heartbeat for ``LLM_STALL_SECONDS`` and no task waiting are queued again, each by one sweeping
worker only (a conditional UPDATE of the run's heartbeat decides which). Lost database connections are retried by
``llm.worker.database.retry_database``.

Work that is not an LLM run records its own state (an import job "running", a report "computing"): an app
registers what to write on its rows when a worker dies while running one of its tasks (``on_task_lost``), and the
sweep that marks the task failed calls it, so no page shows such work as under way for ever.
"""

import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import connections, transaction
from django.db.models import Q
from django.utils import timezone
from django_tasks_db.compat import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from llm.models import Run, WorkerHeartbeat
from llm.worker.database import DATABASE_ERRORS, close_connection, retry_database
from llm.worker.tasks import run_work, runs_with_waiting_tasks

logger = logging.getLogger("llm.worker.recovery")

RUN_WORK_TASK = run_work.module_path


class WorkerLost(Exception):
    """The worker running a task stopped heart-beating (killed, or its machine went away)."""


# task path -> what to record when a worker dies while running it: called with the task's args and kwargs.
LostTaskHandler = Callable[..., None]
_LOST_TASK_HANDLERS: dict[str, LostTaskHandler] = {}


def on_task_lost(task: object, handler: LostTaskHandler) -> None:
    """Call ``handler(*args, **kwargs)`` (the lost task's own arguments) when a worker dies while running ``task``
    (a ``django.tasks`` task), after the sweep has marked its row failed. Registering another handler for the same
    task raises, as registering a model twice with the admin does."""
    path = task.module_path
    known = _LOST_TASK_HANDLERS.get(path)
    if known is not None and known is not handler:
        raise ImproperlyConfigured(f"{path} already has a lost-task handler: {known.__module__}.{known.__qualname__}")
    _LOST_TASK_HANDLERS[path] = handler


def _task_lost(pk: object, task_path: str, args_kwargs: object) -> None:
    handler = _LOST_TASK_HANDLERS.get(task_path)
    if handler is None:
        return
    arguments = args_kwargs if isinstance(args_kwargs, dict) else {}
    try:
        handler(*arguments.get("args", []), **arguments.get("kwargs", {}))
    except Exception:  # the task row is marked already: a handler's failure is logged, the sweep goes on
        logger.exception("Task %s (%s): recording the lost work failed", pk, task_path)


def heartbeat_seconds() -> float:
    """Return how often a worker stamps its heartbeat: a quarter lease, between 0.5 and 15 seconds."""
    return min(max(settings.LLM_LEASE_SECONDS / 4, 0.5), 15.0)


def tasks_fail_orphaned(*, now: object = None) -> list[str]:
    """Mark as failed the task rows left RUNNING by workers that stopped heart-beating; return their ids.

    A worker that was only slow and is still running its task overwrites the mark when the task ends.
    """
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.LLM_STALL_SECONDS)
    live = set(WorkerHeartbeat.objects.filter(seen_at__gte=cutoff).values_list("worker_id", flat=True))
    running = DBTaskResult.objects.filter(status=TaskResultStatus.RUNNING).values_list(
        "pk", "worker_ids", "started_at", "task_path", "args_kwargs"
    )
    failed = []
    for pk, worker_ids, started_at, task_path, args_kwargs in running:
        worker = worker_ids[-1] if worker_ids else ""
        if worker in live or (started_at is not None and started_at >= cutoff):
            continue
        traceback = (
            f"llm.worker.recovery.WorkerLost: worker {worker or '(unknown)'} stopped heart-beating (nothing for "
            f"{settings.LLM_STALL_SECONDS:g} s) while running this task; a live worker marked it failed at "
            f"{now.isoformat()} and queues its run again if the run is unfinished.\n"
        )
        marked = DBTaskResult.objects.filter(pk=pk, status=TaskResultStatus.RUNNING).update(
            status=TaskResultStatus.FAILED,
            finished_at=now,
            return_value=None,
            exception_class_path=f"{WorkerLost.__module__}.{WorkerLost.__qualname__}",
            traceback=traceback,
        )
        if marked:
            logger.warning("Task %s: its worker %s stopped heart-beating; marked failed", pk, worker or "(unknown)")
            failed.append(str(pk))
            _task_lost(pk, task_path, args_kwargs)
    dead = WorkerHeartbeat.objects.filter(seen_at__lt=cutoff)
    if dead.exists():
        dead.delete()
    return failed


def runs_requeue_stalled(*, now: object = None) -> list[int]:
    """Queue ``run_work`` again for active runs that no live worker has touched for ``LLM_STALL_SECONDS``.

    Runs with a task already waiting in the queue are left alone. Each stalled run is queued once: the sweeper
    that moves its heartbeat forward (a conditional UPDATE) queues it, in the same transaction.
    """
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.LLM_STALL_SECONDS)
    stale = Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True, created_at__lt=cutoff)
    candidates = list(Run.objects.filter(status__in=Run.ACTIVE).filter(stale).values_list("pk", "heartbeat_at"))
    if not candidates:
        return []
    waiting = runs_with_waiting_tasks()
    requeued = []
    for run_id, heartbeat in candidates:
        if run_id in waiting:
            continue
        same = Q(heartbeat_at=heartbeat) if heartbeat is not None else Q(heartbeat_at__isnull=True)
        with transaction.atomic():
            if Run.objects.filter(pk=run_id, status__in=Run.ACTIVE).filter(same).update(heartbeat_at=now):
                run_work.enqueue(run_id)
                requeued.append(run_id)
                logger.warning("Run %s: no live worker since %s; queued again", run_id, heartbeat)
    return requeued


def sweep() -> tuple[list[str], list[int]]:
    """Clean up after dead workers: fail their tasks, queue their runs again; return (task ids, run ids)."""
    return tasks_fail_orphaned(), runs_requeue_stalled()


class Heartbeat:
    """Stamp a worker's liveness every few seconds and sweep up after dead workers, in a thread of its own.

    It sweeps only once its own stamps have succeeded for two periods in a row, so that right after a database
    outage the other live workers have stamped theirs again before anyone judges them dead.
    """

    def __init__(self, worker_id: str) -> None:
        self.worker_id = worker_id
        self.interval = heartbeat_seconds()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="llm-heartbeat", daemon=True)
        self.healthy_since: float | None = None

    def beat(self) -> None:
        now = timezone.now()
        if not WorkerHeartbeat.objects.filter(worker_id=self.worker_id).update(seen_at=now):
            WorkerHeartbeat.objects.update_or_create(
                worker_id=self.worker_id,
                defaults={
                    "hostname": socket.gethostname()[:255],
                    "pid": os.getpid(),
                    "started_at": now,
                    "seen_at": now,
                },
            )

    def start(self) -> None:
        """Register the worker (waiting for the database if need be), then beat and sweep in the background."""
        retry_database(self.beat, what=f"Worker {self.worker_id}")
        self.healthy_since = time.monotonic()
        self.thread.start()

    def _loop(self) -> None:
        try:
            while not self.stopping.wait(self.interval):
                try:
                    self.beat()
                    now = time.monotonic()
                    if self.healthy_since is None:
                        logger.warning("Worker %s: heartbeat restored", self.worker_id)
                        self.healthy_since = now
                    elif now - self.healthy_since >= 2 * self.interval:
                        sweep()
                except DATABASE_ERRORS as exc:
                    if self.healthy_since is not None:
                        logger.warning("Worker %s: heartbeat failed (%s); retrying", self.worker_id, exc)
                    self.healthy_since = None
                    close_connection()
                except Exception:
                    logger.exception("Worker %s: sweeping up after dead workers failed", self.worker_id)
        finally:
            connections.close_all()

    def stop(self) -> None:
        """Stop beating and remove the worker's row (if the database can be reached)."""
        self.stopping.set()
        if self.thread.is_alive():
            self.thread.join(timeout=10)
        with suppress(*DATABASE_ERRORS):
            WorkerHeartbeat.objects.filter(worker_id=self.worker_id).delete()
