"""Background tasks of the LLM workers: thin wrappers taking ids (run them with ``manage.py db_worker``)."""

from datetime import datetime

from django.tasks import task
from django_tasks_db.compat import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from llm.worker import runner


@task()
def run_work(run_id: int) -> str:
    """Work on an LLM run until it is finished or stopped; return its status.

    A worker asked to stop (SIGTERM) leaves the run running and queues this task again to carry on; a batch run
    whose batches are all under way at the provider queues it for their next poll (``run_work_later``).
    """
    return runner.run_work(run_id=run_id, continue_later=run_work.enqueue, poll_later=run_work_later)


def runs_with_waiting_tasks() -> set[int]:
    """Return the runs with a ``run_work`` task waiting in the queue (now or for later)."""
    waiting = set()
    ready = DBTaskResult.objects.filter(status=TaskResultStatus.READY, task_path=run_work.module_path)
    for args_kwargs in ready.values_list("args_kwargs", flat=True):
        args, kwargs = args_kwargs.get("args") or [], args_kwargs.get("kwargs") or {}
        run_id = args[0] if args else kwargs.get("run_id")
        if run_id is not None:
            waiting.add(int(run_id))
    return waiting


def run_work_later(run_id: int, when: datetime) -> None:
    """Queue ``run_work`` for ``run_id`` to start at ``when``, unless a task for the run is waiting already."""
    if run_id not in runs_with_waiting_tasks():
        run_work.using(run_after=when).enqueue(run_id)
