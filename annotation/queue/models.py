"""Abstract assignment and progress models of a work queue, and the indexes and constraints every queue has."""

from typing import ClassVar

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _


class Progress(models.Model):
    """A worker's counts in one round or set, kept by the queue's services so that pages need not count.

    A concrete progress model adds the foreign keys to its round (``Assignment.OWNER``) and worker
    (``Assignment.WORKER``) and the count of finished assignments (``Assignment.DONE``).
    """

    assigned = models.PositiveIntegerField(_("assigned"), default=0)
    # Put aside and not finished yet.
    skipped = models.PositiveIntegerField(_("skipped"), default=0)

    class Meta:
        abstract = True


class Assignment(models.Model):
    """One piece of work given to one worker, at a position in their queue in one round or set.

    A concrete assignment model adds its foreign keys and names them here, so that the queue's selectors and
    services can serve either kind.
    """

    # The foreign key to the round or set the queue is in (repeated from the work, so a queue is one index range).
    OWNER: ClassVar[str]
    # The foreign key to the worker whose queue it is.
    WORKER: ClassVar[str]
    # When the work was finished, empty while open: the queue's partial indexes key on it.
    DONE_AT: ClassVar[str]
    # The word for finished work: the state the API filters on and the progress count of finished assignments.
    DONE: ClassVar[str]
    # When a change of finished work is timed from: the last view, or the last change.
    CHANGE_FROM: ClassVar[str]
    progress: ClassVar[type[Progress]]

    position = models.PositiveIntegerField(default=0)
    # Set when the worker puts the work aside; it moves to the end of their queue and stays theirs.
    skipped_at = models.DateTimeField(_("skipped at"), null=True, blank=True)

    class Meta:
        abstract = True


def queue_indexes(*, prefix: str, owner: str, worker: str, done_at: str) -> list[models.Index]:
    """Return the four indexes of a queue, named ``<prefix>_queue_open``, ``_done``, ``_skipped`` and ``_order``."""
    return [
        # The worker's open queue in a round, in order: the next assignment is one index seek.
        models.Index(
            fields=[owner, worker, "position", "id"],
            name=f"{prefix}_queue_open",
            condition=Q(**{f"{done_at}__isnull": True}),
        ),
        # The worker's finished assignments in the order done, for "previous" without sorting them.
        models.Index(
            fields=[owner, worker, done_at, "id"],
            name=f"{prefix}_queue_done",
            condition=Q(**{f"{done_at}__isnull": False}),
        ),
        # Put aside and not finished yet: few, listed on the work page.
        models.Index(
            fields=[owner, worker, "position", "id"],
            name=f"{prefix}_queue_skipped",
            condition=Q(**{f"{done_at}__isnull": True, "skipped_at__isnull": False}),
        ),
        # Every assignment of a worker, by round and position (the API's list, the end of a queue).
        models.Index(fields=[worker, owner, "position", "id"], name=f"{prefix}_queue_order"),
    ]


def progress_meta(*, owner: str, worker: str, unique: str, index: str, verbose_name: str) -> type:
    """Return the ``Meta`` of a progress model: one row per worker and round or set (the constraint ``unique``) and
    an index of a worker's rows across rounds (``index``, their overview page)."""
    return type(
        "Meta",
        (),
        {
            "constraints": [models.UniqueConstraint(fields=[owner, worker], name=unique)],
            "indexes": [models.Index(fields=[worker, owner], name=index)],
            "verbose_name": verbose_name,
            "verbose_name_plural": verbose_name,
        },
    )


def assignment_meta(
    *, prefix: str, owner: str, worker: str, done_at: str, constraints: list, names: tuple[str, str]
) -> type:
    """Return the ``Meta`` of an assignment model: a worker's assignments in queue order, its ``constraints`` (one
    assignment per worker and piece of work), the queue's four indexes (``queue_indexes``) and the model's verbose
    ``names`` (singular, plural)."""
    return type(
        "Meta",
        (),
        {
            "ordering": [worker, "position"],
            "constraints": constraints,
            "indexes": queue_indexes(prefix=prefix, owner=owner, worker=worker, done_at=done_at),
            "verbose_name": names[0],
            "verbose_name_plural": names[1],
        },
    )


def worker_key(*, related_name: str) -> models.ForeignKey:
    """Return the foreign key of an assignment or progress row to its worker, who cannot be deleted while they have
    work (deactivate them instead)."""
    return models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name=related_name)
