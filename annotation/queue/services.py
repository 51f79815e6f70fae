"""Writes of a work queue: lock an assignment, finish it, put it aside, time a change, keep and rebuild progress.

One locking rule for both queues: every write to an assignment first locks that assignment's row alone
(``select_for_update(of=("self",))``), then reads its round or set in a new query and refuses if it is closed.
Locking the assignment makes simultaneous submissions, changes and skips of one assignment take turns, each seeing
what the one before it stored; locking it alone keeps the round's row free for everyone else's work. The round is
read after the lock, not joined into the locking query, because PostgreSQL re-checks only the locked row once a
waiting query gets its lock: a joined round would be as it was before the wait, and a round closed meanwhile
would look open.
"""

from collections import Counter
from collections.abc import Callable, Iterable
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Aggregate, Count, Expression, F, Q, QuerySet
from django.utils import timezone

from annotation.queue.models import Assignment, Progress


def assignments_spread[T](
    *,
    units: Iterable[T],
    workers: list[AbstractBaseUser],
    per_unit: int,
    avoid: Callable[[T], object] | None = None,
) -> tuple[list[tuple[T, AbstractBaseUser, int]], Counter]:
    """Give each unit, in order, to the ``per_unit`` least-loaded workers: balanced and deterministic.

    Ties go by user name; a worker whose pk ``avoid(unit)`` returns (an item's author) comes after every other.
    Return (unit, worker, position in the worker's queue) in the order given, and each worker's load by pk.
    """
    load = Counter({worker.pk: 0 for worker in workers})
    given = []
    for unit in units:
        avoided = avoid(unit) if avoid else None
        ranked = sorted(workers, key=lambda u: (u.pk == avoided, load[u.pk], u.get_username()))
        for worker in ranked[:per_unit]:
            load[worker.pk] += 1
            given.append((unit, worker, load[worker.pk]))
    return given, load


def progress_start(*, model: type[Assignment], owner: object, load: Counter) -> list[Progress]:
    """Store each worker's progress in a new round or set of ``model`` assignments: ``load`` assigned, by pk."""
    return model.progress.objects.bulk_create(
        model.progress(**{model.OWNER: owner, f"{model.WORKER}_id": pk, "assigned": n}) for pk, n in load.items() if n
    )


def assignment_lock(*, assignments: QuerySet, not_assigned: str, closed: str) -> Assignment:
    """Lock and return the one assignment ``assignments`` selects, after checking that its round or set is open.

    Raise ``ValidationError(not_assigned)`` when there is none, ``ValidationError(closed)`` when its round or set
    (which must have ``is_open``) is closed. Call it inside the caller's transaction.
    """
    assignment = assignments.select_for_update(of=("self",)).first()
    if assignment is None:
        raise ValidationError(not_assigned)
    owner = assignments.model._meta.get_field(assignment.OWNER).related_model
    if not owner.objects.get(pk=getattr(assignment, f"{assignment.OWNER}_id")).is_open:
        raise ValidationError(closed)
    return assignment


def progress_add(*, assignment: Assignment, **changes: int) -> None:
    """Add ``changes`` to the worker's counts in the assignment's round or set (in the caller's transaction)."""
    mine = assignment.progress.objects.filter(
        **{f"{assignment.OWNER}_id": getattr(assignment, f"{assignment.OWNER}_id")},
        **{f"{assignment.WORKER}_id": getattr(assignment, f"{assignment.WORKER}_id")},
    )
    mine.update(**{field: F(field) + delta for field, delta in changes.items() if delta})


def assignment_finish(*, assignment: Assignment, at: datetime) -> None:
    """Record that the locked ``assignment`` was finished ``at``, and count it (no longer put aside) in progress."""
    type(assignment).objects.filter(pk=assignment.pk).update(**{assignment.DONE_AT: at})
    setattr(assignment, assignment.DONE_AT, at)
    progress_add(assignment=assignment, **{assignment.DONE: 1}, skipped=-1 if assignment.skipped_at else 0)


def assignment_skip(*, assignment: Assignment) -> Assignment:
    """Put the locked, unfinished ``assignment`` aside: it moves to the end of its worker's queue and stays theirs."""
    last = (
        type(assignment)
        .objects.filter(
            **{f"{assignment.OWNER}_id": getattr(assignment, f"{assignment.OWNER}_id")},
            **{f"{assignment.WORKER}_id": getattr(assignment, f"{assignment.WORKER}_id")},
        )
        .order_by("-position", "-id")
        .values_list("position", flat=True)
        .first()
    )
    if assignment.skipped_at is None:
        progress_add(assignment=assignment, skipped=1)
    assignment.position = (last or 0) + 1
    assignment.skipped_at = timezone.now()
    assignment.save(update_fields=["position", "skipped_at"])
    return assignment


def change_seconds(*, assignment: Assignment) -> int | None:
    """Return the seconds since a change of the assignment's finished work began (``CHANGE_FROM``), if known."""
    moment = getattr(assignment, assignment.CHANGE_FROM)
    return max(0, int((timezone.now() - moment).total_seconds())) if moment else None


def change_restart(*, assignment: Assignment, at: datetime) -> None:
    """Time the next change of the assignment's finished work from ``at`` (a view of it, or the last change)."""
    type(assignment).objects.filter(pk=assignment.pk).update(**{assignment.CHANGE_FROM: at})
    setattr(assignment, assignment.CHANGE_FROM, at)


@transaction.atomic
def progress_recount(
    *,
    owner: object,
    assignments: QuerySet,
    done_at: Expression,
    counts: dict[str, Aggregate] | None = None,
) -> list[Progress]:
    """Rebuild the stored counts of a round or set from its assignments; for data written without the services.

    ``assignments`` are every assignment of the work in ``owner`` (found through the work, not the repeated
    foreign key, which this repairs); ``done_at`` is when each was finished, read from the work itself; ``counts``
    adds the concrete progress model's own aggregates over the owner's assignments.
    """
    model = assignments.model
    assignments.update(**{model.OWNER: owner, model.DONE_AT: done_at})
    unfinished = Q(**{f"{model.DONE_AT}__isnull": True})
    rows = (
        model.objects.filter(**{model.OWNER: owner})
        .values(f"{model.WORKER}_id")
        .annotate(
            assigned=Count("id"),
            skipped=Count("id", filter=Q(skipped_at__isnull=False) & unfinished),
            **{model.DONE: Count(model.DONE_AT)},
            **(counts or {}),
        )
        .order_by()
    )
    model.progress.objects.filter(**{model.OWNER: owner}).delete()
    return model.progress.objects.bulk_create(model.progress(**{model.OWNER: owner}, **row) for row in rows)
