"""Collecting a finished run: hand its results to the collector of the app that started it, once.

``llm.lifecycle`` queues the ``llm.tasks.run_collect`` task when a run finishes, so a worker collects it (never the
request or the worker step that changed the status); *Collect again* and ``manage.py llm_run_control RUN collect``
call ``run_collect`` in their own process, as the user asked for it there and then.
"""

from django.db import transaction
from django.utils import timezone

from llm import collectors
from llm.models import Run


def run_collect(*, run_id: int) -> bool:
    """Hand a finished run's results to its app's collector, once; return whether the collector ran now.

    The collector runs in the same transaction that marks the run collected, so its writes and the mark commit
    together: a failed collector leaves the run uncollected, with the error recorded, to be collected again.
    """
    try:
        with transaction.atomic():
            run = Run.objects.select_for_update().get(pk=run_id)
            if run.status not in Run.FINISHED or run.collected_at is not None:
                return False
            collector = collectors.get(run.purpose)
            if collector is not None:
                collector(run)
            run.collected_at = timezone.now()
            run.collect_error = ""
            run.save(update_fields=["collected_at", "collect_error"])
            return True
    except Exception as exc:
        message = f"{type(exc).__name__}: {exc}"
        Run.objects.filter(pk=run_id).update(collect_error=message[:5000])
        raise
