"""LLM endpoints made through ``llm.services.endpoint_create``, prompts for LLM runs, and working a run here.

The ``make_endpoint`` fixture (tests/simulator.py) binds endpoints to the test session's simulator.
"""

import asyncio
import threading

from django.db import connection
from django_tasks_db.models import DBTaskResult

from llm import services, tasks
from llm.management.commands.db_worker import Worker
from llm.models import Endpoint
from llm.worker import runner


def make_llm_endpoint(*, base_url: str, model: str = "sim-mcq-acc70", **fields: object) -> Endpoint:
    """Create an endpoint on ``base_url`` with small limits and prices; ``fields`` override any setting."""
    data = {
        "name": f"{model}-{Endpoint.objects.count() + 1}",
        "base_url": base_url,
        "model": model,
        "is_simulator": True,
        "max_concurrency": 8,
        "timeout_seconds": 5,
        "max_retries": 6,
        "price_input_per_mtok": "1",
        "price_output_per_mtok": "2",
        **fields,
    }
    return services.endpoint_create(data=data)


def mcq_prompts(n: int, *, answer: str = "B", prefix: str = "q") -> list[dict]:
    """Return ``n`` distinct multiple-choice prompts with the simulator told the answer key."""
    return [
        {
            "key": f"{prefix}{i}",
            "messages": [{"role": "user", "content": f"Item {prefix}{i}: how does Mia feel?\nA. Joy\nB. Sad\nC. Calm"}],
            "hints": {"answer": answer},
        }
        for i in range(n)
    ]


def run_queued_tasks(task_path: str) -> int:
    """Run the queued tasks of ``task_path`` in this process, as a ``db_worker`` would; return how many ran.

    Tasks those tasks queue in turn (of the same path) run too, until none is left; other tasks are left alone.
    """
    worker = Worker(
        queue_names=["*"],
        interval=0,
        batch=True,
        backend_name="default",
        startup_delay=False,
        max_tasks=None,
        worker_id="tests",
        excluded_queue_names=[],
    )
    ran = 0
    queued = DBTaskResult.objects.ready().filter(task_path=task_path).order_by("enqueued_at")
    while (task_result := queued.first()) is not None:
        task_result.claim(worker.worker_id)
        worker.run_task(task_result)
        ran += 1
    return ran


def lose_queued_task(task_path: str) -> int:
    """Make the queued task of ``task_path`` one a dead worker started and left running, then sweep as a live
    worker does (``llm.worker.recovery.tasks_fail_orphaned``); return how many tasks the sweep marked failed."""
    from datetime import timedelta

    from django.utils import timezone
    from django_tasks_db.compat import TaskResultStatus

    from llm.models import WorkerHeartbeat
    from llm.worker import recovery

    long_ago = timezone.now() - timedelta(hours=1)
    WorkerHeartbeat.objects.create(worker_id="lost-worker", started_at=long_ago, seen_at=long_ago)
    DBTaskResult.objects.ready().filter(task_path=task_path).update(
        status=TaskResultStatus.RUNNING, worker_ids=["lost-worker"], started_at=long_ago
    )
    return len(recovery.tasks_fail_orphaned())


def run_queued_collections() -> int:
    """Run the queued ``run_collect`` tasks in this process, as a ``db_worker`` would; return how many ran.

    A collector may start runs that finish as they are created (every answer cached), whose collection is queued
    in turn: those run too, until none is left. Queued ``run_work`` tasks are left alone.
    """
    return run_queued_tasks(tasks.run_collect.module_path)


def work_llm_run(run_id: int) -> None:
    """Work an LLM run to its end in this process, then run the collections its finish queued, as a worker would.

    The runner runs an event loop of its own, so when this thread already runs one (Playwright's sync API does, in
    browser tests) the run is worked in a thread of its own, which closes its database connection afterwards.
    """

    def work() -> None:
        runner.run_work(run_id=run_id)
        run_queued_collections()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        work()
        return

    def work_in_thread() -> None:
        try:
            work()
        finally:
            connection.close()

    thread = threading.Thread(target=work_in_thread)
    thread.start()
    thread.join()
