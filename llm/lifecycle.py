"""Status changes of a run; a run that finishes is queued to be collected.

Every status change goes through ``run_transition`` (a conditional UPDATE that only applies a move allowed by
``Run.TRANSITIONS``) or, for a row already locked, ``run_transition_locked``. A move into a finished status
queues the ``llm.tasks.run_collect`` task after the transaction commits, so collectors never see uncommitted
results and run in a worker: never inside the transaction, or the request, that finished the run.
"""

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from llm import tasks
from llm.models import Run


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
    # Robust: the status change has committed already, so a failed enqueue is logged rather than raised into the
    # worker or request that made it; the run then stays uncollected, and *Collect again* is offered.
    transaction.on_commit(lambda: tasks.run_collect.enqueue(run_id), robust=True)
