"""Abstract assignment and progress models of a work queue, and the indexes and constraints every queue has."""

from typing import ClassVar

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


def progress_unique(*, owner: str, worker: str, name: str) -> models.UniqueConstraint:
    """Return the constraint of one progress row per worker and round."""
    return models.UniqueConstraint(fields=[owner, worker], name=name)


def progress_index(*, owner: str, worker: str, name: str) -> models.Index:
    """Return the index of a worker's progress rows across rounds (their overview page)."""
    return models.Index(fields=[worker, owner], name=name)
