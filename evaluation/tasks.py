"""Background tasks of the evaluation app: thin wrappers taking ids (run them with ``manage.py db_worker``)."""

from django.tasks import task

from evaluation.services import contamination


@task()
def contamination_check_run(check_id: int) -> str:
    """Run a queued contamination check (``evaluation.services.contamination.contamination_check_work``)."""
    return contamination.contamination_check_work(check_id=check_id)
