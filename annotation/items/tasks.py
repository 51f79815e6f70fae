"""Background tasks of the item bank: thin wrappers taking ids (run them with ``manage.py db_worker``)."""

from decimal import Decimal

from django.tasks import task

from annotation.items import near_duplicates
from annotation.items.content import LANGUAGES
from annotation.items.models import Benchmark
from annotation.items.services import import_jobs


@task()
def item_import_run(job_id: int) -> bool:
    """Import a queued item import job's file (``annotation.items.services.import_jobs.item_import_job_work``)."""
    return import_jobs.item_import_job_work(job_id=job_id)


@task()
def near_duplicates_compute(benchmark_id: int, language: str, threshold: str) -> bool:
    """Cluster a benchmark's items in one language and store the clusters (``annotation.items.near_duplicates``)."""
    benchmark = Benchmark.objects.filter(pk=benchmark_id).first()
    if benchmark is None or language not in LANGUAGES:
        return False
    near_duplicates.report_compute(
        benchmark=benchmark, language=language, threshold=near_duplicates.threshold_rounded(float(Decimal(threshold)))
    )
    return True
