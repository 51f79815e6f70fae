"""Background tasks of the LLM workers: thin wrappers taking ids (run them with ``manage.py db_worker``)."""

from django.tasks import task

from llm.worker import runner


@task()
def run_work(run_id: int) -> str:
    """Work on an LLM run until it is finished or stopped; return its status.

    A worker asked to stop (SIGTERM) leaves the run running and queues this task again to carry on.
    """
    return runner.run_work(run_id=run_id, continue_later=run_work.enqueue)
