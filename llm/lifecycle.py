"""Status changes of a run, and the collection of its results when it finishes.

Every status change goes through ``run_transition`` (a conditional UPDATE that only applies a move allowed by
``Run.TRANSITIONS``) or, for a row already locked, ``run_transition_locked``. A move into a finished status
queues ``run_collect`` after the transaction commits, so collectors never see uncommitted results and never run
inside the worker's transaction.
"""

import logging

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from llm import collectors
from llm.models import Run

logger = logging.getLogger("llm.lifecycle")


def run_transition(*, run_id: int, to: str, **fields: object) -> bool:
    """Move run ``run_id`` to status ``to`` if its current status allows it; return whether it moved.

    ``fields`` are written in the same UPDATE (for example ``finished_at`` or ``error``).
    """
    moved = Run.objects.filter(pk=run_id, status__in=Run.sources_of(to)).update(status=to, **fields)
    if moved and to in Run.FINISHED:
        _collect_after_commit(run_id)
    return bool(moved)


def run_transition_locked(*, run: Run, to: str, fields: tuple[str, ...] = ()) -> Run:
    """Move ``run`` (a row locked with ``select_for_update``) to ``to``; raise ValidationError if not allowed.

    ``fields`` names further attributes already set on ``run`` to save with the status.
    """
    if not run.can_become(to):
        raise ValidationError(
            _("A %(from)s run cannot become %(to)s.") % {"from": run.get_status_display(), "to": Run.Status(to).label}
        )
    run.status = to
    if to in Run.FINISHED:
        run.finished_at = run.finished_at or timezone.now()
        fields = (*fields, "finished_at")
    if to == Run.Status.QUEUED:
        # A run that is queued again will finish again, and be collected again.
        run.collected_at = None
        fields = (*fields, "collected_at")
    run.full_clean()
    run.save(update_fields=["status", *dict.fromkeys(fields)])
    if to in Run.FINISHED:
        _collect_after_commit(run.pk)
    return run


def _collect_after_commit(run_id: int) -> None:
    transaction.on_commit(lambda: run_collect_quietly(run_id))


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


def run_collect_quietly(run_id: int) -> None:
    """Collect a run after a commit; an error is recorded on the run and logged, never raised into the caller."""
    try:
        run_collect(run_id=run_id)
    except Exception:
        logger.exception("Run %s: collecting its results failed", run_id)
