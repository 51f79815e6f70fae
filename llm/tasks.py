"""Background tasks of the llm app: thin wrappers taking ids (run them with ``manage.py db_worker``)."""

from django.tasks import task

from llm import runner


@task()
def run_work(run_id: int) -> str:
    """Work on an LLM run until it is finished or stopped; return its status."""
    return runner.run_work(run_id=run_id)
