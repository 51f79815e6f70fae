"""Reads of a work queue: the next assignment, the previous one finished, the ones put aside, a worker's lists,
their stored counts and who may work a queue.

``queue_next``, ``queue_after``, ``queue_previous`` and ``queue_skipped`` take ``queue``, one worker's assignments
in one round or set (``queue_of``, with whatever ``select_related`` the caller's page needs), and read it in queue
order (position, id) or in the order the work was finished: each read is one seek on one of the queue's partial
indexes (``annotation.queue.models.queue_indexes``).
"""

from collections.abc import Callable

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q, QuerySet
from django.utils.module_loading import import_string

from annotation.queue.models import Assignment

# How many assignments put aside a work page lists.
SKIPPED_SHOWN = 20


def queue_of(*, model: type[Assignment], owner: object, worker: object) -> QuerySet:
    """Return the worker's assignments of ``model`` in the round or set ``owner`` (an instance or id), in order."""
    return model.objects.filter(**{model.OWNER: owner, model.WORKER: worker}).order_by("position", "id")


def queue_next(*, queue: QuerySet, after: int | Assignment | None = None) -> Assignment | None:
    """Return the next unfinished assignment of ``queue`` after ``after`` in queue order, wrapping around.

    When ``after`` is not itself unfinished (it was just finished), the queue starts again from the top. ``after``
    may be the assignment as read (no query for it) or its id (read again, for a caller that just changed it).
    Each read is one seek on the open queue's partial index: the first unfinished assignment after ``after``, and
    only at the end of the queue the first one from the top.
    """
    model = queue.model
    pending = queue.filter(**{f"{model.DONE_AT}__isnull": True}).order_by("position", "id")
    if after is None:
        return pending.first()
    if isinstance(after, Assignment):
        current = after
    else:
        current = model.objects.filter(pk=after).only("position", model.DONE_AT).first()
    if current is not None and getattr(current, model.DONE_AT) is None:
        later = Q(position__gt=current.position) | Q(position=current.position, id__gt=current.pk)
        nxt = pending.filter(later).first()
        if nxt is not None:
            return nxt
    return pending.exclude(pk=getattr(after, "pk", after)).first()


def queue_after(*, queue: QuerySet, after: int | Assignment) -> Assignment | None:
    """Return where the worker goes on after ``after``: the next unfinished assignment, or ``after`` itself when it
    is the only one left (just put aside, it comes back now); None when the queue is done."""
    return queue_next(queue=queue, after=after) or queue_next(queue=queue)


def queue_previous(*, queue: QuerySet, before: Assignment | None = None) -> Assignment | None:
    """Return the assignment of ``queue`` finished last before ``before`` (in the order the work was finished).

    Without ``before``, or when ``before`` is not finished yet, return the latest finished assignment.
    """
    done_at = queue.model.DONE_AT
    finished = queue.filter(**{f"{done_at}__isnull": False}).order_by(f"-{done_at}", "-id")
    moment = getattr(before, done_at) if before is not None else None
    if moment is not None:
        finished = finished.filter(Q(**{f"{done_at}__lt": moment}) | Q(**{done_at: moment, "id__lt": before.pk}))
    return finished.first()


def queue_skipped(*, queue: QuerySet) -> QuerySet:
    """Return the assignments of ``queue`` put aside and not finished yet, in queue order."""
    return queue.filter(skipped_at__isnull=False, **{f"{queue.model.DONE_AT}__isnull": True}).order_by("position", "id")


def worker_assignments(
    *, model: type[Assignment], worker: object, owner: int | None = None, state: str = ""
) -> QuerySet:
    """Return the worker's assignments of ``model`` in every round or set (or only in ``owner``, an id), by round or
    set and then in queue order, in ``state``: ``pending``, finished (``Assignment.DONE``), ``skipped`` or any."""
    assignments = model.objects.filter(**{model.WORKER: worker}).order_by(f"{model.OWNER}_id", "position", "id")
    if owner is not None:
        assignments = assignments.filter(**{f"{model.OWNER}_id": owner})
    unfinished = {f"{model.DONE_AT}__isnull": True}
    if state == "pending":
        return assignments.filter(**unfinished)
    if state == model.DONE:
        return assignments.filter(**{f"{model.DONE_AT}__isnull": False})
    if state == "skipped":
        return assignments.filter(skipped_at__isnull=False, **unfinished)
    return assignments


def queue_counts(*, model: type[Assignment], owner: object, worker: object) -> dict[str, int]:
    """Return the worker's finished (``done``), assigned (``total``) and put-aside unfinished (``skipped``)
    assignments in the round or set, as stored in its progress row, not counted."""
    row = (
        model.progress.objects.filter(**{model.OWNER: owner, model.WORKER: worker})
        .values(model.DONE, "assigned", "skipped")
        .first()
    ) or {model.DONE: 0, "assigned": 0, "skipped": 0}
    return {"done": row[model.DONE], "total": row["assigned"], "skipped": row["skipped"]}


def queue_place(
    *,
    assignment: Assignment,
    link: Callable[[Assignment], str],
    next_of: Callable[[Assignment], Assignment | None] | None = None,
    skipped_related: tuple[str, ...] = (),
) -> dict:
    """Return the worker's place in the queue of ``assignment`` (its round or set, its worker) as a work page shows
    it: ``done``, ``total``, ``percent`` done (stored counts), ``next_url``, ``previous_url`` and up to
    ``SKIPPED_SHOWN`` assignments put aside other than this one (read with ``skipped_related``; no query when the
    worker put none aside).

    ``link`` names the page of an assignment; ``next_of`` finds where the worker goes on from ``assignment`` (the
    queue's own order, ``queue_next``, unless a set serves another).
    """
    model = type(assignment)
    owner, worker = getattr(assignment, f"{model.OWNER}_id"), getattr(assignment, f"{model.WORKER}_id")
    queue = queue_of(model=model, owner=owner, worker=worker)
    counts = queue_counts(model=model, owner=owner, worker=worker)
    following = next_of(assignment) if next_of is not None else queue_next(queue=queue, after=assignment)
    previous = queue_previous(queue=queue, before=assignment)
    skipped = []
    if counts["skipped"]:
        put_aside = queue_skipped(queue=queue).exclude(pk=assignment.pk)
        if skipped_related:
            put_aside = put_aside.select_related(*skipped_related)
        skipped = list(put_aside[:SKIPPED_SHOWN])
    done, total = counts["done"], counts["total"]
    return {
        "done": done,
        "total": total,
        "percent": int(100 * done / total) if total else 0,
        "next_url": link(following) if following else "",
        "previous_url": link(previous) if previous else "",
        "skipped": skipped,
    }


def progress_figures(*, done: int, total: int) -> dict[str, int]:
    """Return what a list of queues shows of one: finished (``done``), ``total``, ``left`` and ``percent`` done."""
    return {"done": done, "total": total, "left": total - done, "percent": round(100 * done / total) if total else 0}


def queue_workers(*, permission: str) -> list[AbstractBaseUser]:
    """Return the active users who may be given assignments (they hold ``permission``), by username."""
    # One query however many users (a permission check per user would cost two queries each): the permission
    # backend's own query, superusers included as ``has_perm`` includes them.
    backend = next(path for path in settings.AUTHENTICATION_BACKENDS if issubclass(import_string(path), ModelBackend))
    users = get_user_model().objects.with_perm(permission, is_active=True, include_superusers=True, backend=backend)
    return list(users.order_by("username"))
