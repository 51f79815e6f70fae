"""Background tasks of the llm app: thin wrappers taking ids (run them with ``manage.py db_worker``).

The task that works on a run is the worker's own, ``llm.worker.tasks.run_work``.
"""

from django.tasks import task

from llm import collection


@task()
def run_collect(run_id: int) -> bool:
    """Collect a finished run's results (``llm.collection.run_collect``); return whether its collector ran now.

    A collector that raises fails the task; the error is also recorded on the run, whose page offers to collect
    it again.
    """
    return collection.run_collect(run_id=run_id)
