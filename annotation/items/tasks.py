"""Background tasks of the item bank: thin wrappers taking ids (run them with ``manage.py db_worker``)."""

from django.tasks import task

from annotation.items.services import import_jobs


@task()
def item_import_run(job_id: int) -> bool:
    """Import a queued item import job's file (``annotation.items.services.import_jobs.item_import_job_work``)."""
    return import_jobs.item_import_job_work(job_id=job_id)
