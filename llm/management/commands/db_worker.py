"""``manage.py db_worker``: django-tasks-db's worker, made to outlive database outages and dead peers.

It replaces django-tasks-db's command of the same name (``llm`` comes before ``django_tasks_db`` in
INSTALLED_APPS) and takes the same options. Differences (see docs/llm.md, "Workers that survive"):

- every database step of the worker loop is run again after reconnecting, with backoff, each try logged
  (``llm.worker.database.retry_database``); after ``LLM_WORKER_DB_RETRY_SECONDS`` without the database the worker
  exits with status 3, for a service manager to restart it;
- with ``--batch`` it exits only when no task waits, not even one queued for later (the next poll of a batch);
- a heartbeat thread stamps the worker's liveness and sweeps up after dead workers: their task rows are marked
  failed and their unfinished runs are queued again (``llm.worker.recovery.Heartbeat``).
"""

import functools
import os
import random
import time

from django.core.management.base import CommandError
from django.db import close_old_connections
from django.db.utils import OperationalError
from django.utils.autoreload import DJANGO_AUTORELOAD_ENV, run_with_reloader
from django_tasks_db.compat import TaskContext, TaskResultStatus, task_finished, task_started
from django_tasks_db.management.commands import db_worker as upstream
from django_tasks_db.models import DBTaskResult
from django_tasks_db.utils import exclusive_transaction, is_locked_database_exception

from llm.worker import database, recovery

EXIT_DATABASE_UNAVAILABLE = 3


class Worker(upstream.Worker):
    """The upstream worker loop with database retries, a heartbeat and sweeps."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.what = f"Worker {self.worker_id}"
        # A claim whose commit failed unseen leaves a task RUNNING under this worker's id: look for it once.
        self.check_lost_claims = False

    def run(self) -> None:
        upstream.logger.info("Starting worker worker_id=%s queues=%s", self.worker_id, ",".join(self.queue_names))
        if self.startup_delay and self.interval:
            time.sleep(random.random())  # noqa: S311 - spreads workers started together
        heartbeat = recovery.Heartbeat(self.worker_id)
        heartbeat.start()
        try:
            self._loop()
        finally:
            heartbeat.stop()

    def _loop(self) -> None:
        while self.running:
            task_result, retrieved = database.retry_database(self.fetch, what=self.what)
            if task_result is not None:
                self.run_task(task_result)
            # A batch worker also waits for tasks queued for later (a provider batch's next poll).
            if self.batch and retrieved and task_result is None and not self.deferred_waiting():
                upstream.logger.info("No more tasks to run for worker_id=%s - exiting gracefully.", self.worker_id)
                return
            if self.max_tasks is not None and self._run_tasks >= self.max_tasks:
                upstream.logger.info(
                    "Run maximum tasks (%d) on worker=%s - exiting gracefully.", self._run_tasks, self.worker_id
                )
                return
            database.retry_database(close_old_connections, what=self.what)
            if self.running and not task_result:
                time.sleep(self.interval)

    def deferred_waiting(self) -> bool:
        """Return whether a task of this worker's queues waits to run later."""
        tasks = DBTaskResult.objects.filter(status=TaskResultStatus.READY, backend_name=self.backend_name)
        if not self.process_all_queues:
            tasks = tasks.filter(queue_name__in=self.queue_names)
        return database.retry_database(tasks.exists, what=self.what)

    def fetch(self) -> tuple[DBTaskResult | None, bool]:
        """Claim the next ready task; return it (or None) and whether the queue could be read."""
        try:
            return self._fetch()
        except database.DATABASE_ERRORS:
            self.check_lost_claims = True
            raise

    def _fetch(self) -> tuple[DBTaskResult | None, bool]:
        close_old_connections()
        if self.check_lost_claims:
            self.check_lost_claims = False
            for task_result in DBTaskResult.objects.filter(status=TaskResultStatus.RUNNING):
                if task_result.worker_ids and task_result.worker_ids[-1] == self.worker_id:
                    upstream.logger.warning("Task %s: claimed before a lost connection; running it", task_result.id)
                    return task_result, True
        tasks = DBTaskResult.objects.ready().filter(backend_name=self.backend_name)
        if not self.process_all_queues:
            tasks = tasks.filter(queue_name__in=self.queue_names)
        if self.excluded_queue_names:
            tasks = tasks.exclude(queue_name__in=self.excluded_queue_names)
        with exclusive_transaction(tasks.db):
            try:
                task_result = tasks.get_locked()
                if task_result is not None:
                    task_result.claim(self.worker_id)
            except OperationalError as exc:
                if is_locked_database_exception(exc):
                    return None, False
                raise
        return task_result, True

    def run_task(self, db_task_result: DBTaskResult) -> None:
        """Run the task and record its outcome, waiting for the database to record it if need be."""
        try:
            self.running_task = True
            task = db_task_result.task
            task_result = db_task_result.task_result
            backend_type = task.get_backend()
            task_started.send(sender=backend_type, task_result=task_result)
            if task.takes_context:
                context = TaskContext(task_result=task_result)
                return_value = task.call(context, *task_result.args, **task_result.kwargs)
            else:
                return_value = task.call(*task_result.args, **task_result.kwargs)
            database.retry_database(lambda: db_task_result.set_successful(return_value), what=self.what)
            task_finished.send(sender=backend_type, task_result=db_task_result.task_result)
        except BaseException as exc:
            # Without the database the outcome cannot be recorded: the row stays RUNNING until a live worker's
            # sweep marks it failed, and this worker exits for a restart.
            database.retry_database(functools.partial(db_task_result.set_failed, exc), what=self.what)
            try:
                sender = type(db_task_result.task.get_backend())
                task_result = db_task_result.task_result
            except Exception:
                upstream.logger.exception("Task id=%s failed unexpectedly", db_task_result.id)
            else:
                task_finished.send(sender=sender, task_result=task_result)
        finally:
            self.running_task = False
            self._run_tasks += 1


class Command(upstream.Command):
    help = (
        "Run a database background worker (django-tasks-db's) that reconnects after database outages and cleans "
        "up after dead workers."
    )

    def handle(
        self,
        *,
        verbosity: int,
        queue_name: str,
        interval: float,
        batch: bool,
        backend_name: str,
        startup_delay: bool,
        reload: bool,
        max_tasks: int | None,
        worker_id: str,
        exclude_queues: str,
        **options: object,
    ) -> None:
        self.configure_logging(verbosity)
        if reload and batch:
            upstream.logger.warning("Warning: --reload and --batch cannot be specified together. Disabling autoreload.")
            reload = False
        queue_names = queue_name.split(",")
        excluded_queue_names = exclude_queues.split(",") if exclude_queues else []
        if excluded_queue_names and "*" not in queue_names:
            raise CommandError("--exclude-queues can only be used with --queue-name=*")
        worker = Worker(
            queue_names=queue_names,
            interval=interval,
            batch=batch,
            backend_name=backend_name,
            startup_delay=startup_delay,
            max_tasks=max_tasks,
            worker_id=worker_id,
            excluded_queue_names=excluded_queue_names,
        )
        try:
            if reload:
                if os.environ.get(DJANGO_AUTORELOAD_ENV) == "true":
                    worker.configure_signals()
                run_with_reloader(worker.run)
            else:
                worker.configure_signals()
                worker.run()
        except database.DatabaseUnavailable as exc:
            raise CommandError(str(exc), returncode=EXIT_DATABASE_UNAVAILABLE) from exc
