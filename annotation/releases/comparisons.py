"""The comparison of two releases, stored for the state of the releases it was computed from.

Comparing two releases reads every pinned entry of both (7 s for two of 100,000 items), so the compare page and
the API read a stored comparison (``ReleaseComparison`` with its ``ReleaseChange`` rows) and one page of its lists,
in a fixed number of queries. Its ``inputs_key`` is made of the two releases' ids, statuses and ``updated_at``
(every change of a draft's entries saves the draft), so no query is needed to tell that it is current: two frozen
releases are compared once for all time. Releases of up to ``RELEASE_CHECK_INLINE_ENTRIES`` entries each are
compared in the request when no current comparison is stored; larger ones by a worker
(``annotation.releases.tasks.release_comparison_compute``) while the page shows the previous comparison, if any,
and polls.
"""

import hashlib
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.releases import selectors
from annotation.releases.models import Release, ReleaseChange, ReleaseComparison

CHANGES_PER_PAGE = 100
# How long a worker has to compute a queued comparison before a page queues it again.
QUEUED_SECONDS = 900


def comparison_key(*, old: Release, new: Release) -> str:
    """Return the key of the state of the two releases a comparison depends on (no query)."""
    parts = [(r.pk, r.status, r.updated_at.isoformat() if r.updated_at else "") for r in (old, new)]
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def comparison_compute(*, old: Release, new: Release) -> ReleaseComparison:
    """Compare the two releases as they stand and store the result (the worker's task, and small releases' pages).

    The entries are read outside any transaction; the comparison and its changes are replaced in one short one.
    """
    key = comparison_key(old=old, new=new)
    found = selectors.release_compare(old=old, new=new)
    rows = [
        *[(ReleaseChange.Kind.ADDED, uid, None, None) for uid in found["added"]],
        *[(ReleaseChange.Kind.REMOVED, uid, None, None) for uid in found["removed"]],
        *[(ReleaseChange.Kind.REVISED, r["uid"], r["old"], r["new"]) for r in found["revised"]],
    ]
    with transaction.atomic():
        comparison, _created = ReleaseComparison.objects.update_or_create(
            old=old,
            new=new,
            defaults={
                "inputs_key": key,
                "computed_at": timezone.now(),
                "added": len(found["added"]),
                "removed": len(found["removed"]),
                "revised": len(found["revised"]),
                "unchanged": found["unchanged"],
            },
        )
        comparison.changes.all().delete()
        positions: dict[str, int] = {}
        changes = []
        for kind, uid, old_number, new_number in rows:
            position = positions.get(kind, 0)
            positions[kind] = position + 1
            changes.append(
                ReleaseChange(
                    comparison=comparison,
                    kind=kind,
                    position=position,
                    uid=uid,
                    old_number=old_number,
                    new_number=new_number,
                )
            )
        ReleaseChange.objects.bulk_create(changes, batch_size=2000)
    cache.delete(_queued_key(key))
    return comparison


def _queued_key(key: str) -> str:
    return f"release-comparison-queued:{key}"


@dataclass
class Comparison:
    """A stored comparison (None: none yet), whether it is current, and one page of its three lists."""

    stored: ReleaseComparison | None
    current: bool
    page: int = 1
    added: list[str] | None = None
    removed: list[str] | None = None
    revised: list[dict] | None = None

    @property
    def pages(self) -> int:
        longest = max((self.stored.added, self.stored.removed, self.stored.revised)) if self.stored else 0
        return max(1, -(-longest // CHANGES_PER_PAGE))

    def as_dict(self) -> dict:
        """Return the API's body: the counts, one page of each list, and whether the comparison is current."""
        stored = self.stored
        return {
            "current": self.current,
            "computed_at": stored.computed_at.isoformat() if stored else None,
            "counts": {k: getattr(stored, k) for k in ("added", "removed", "revised", "unchanged")} if stored else None,
            "page": self.page,
            "pages": self.pages,
            "added": self.added,
            "removed": self.removed,
            "revised": self.revised,
            "unchanged": stored.unchanged if stored else None,
        }


def _small(release: Release) -> bool:
    """Tell whether the release has at most ``RELEASE_CHECK_INLINE_ENTRIES`` entries (reads at most one more)."""
    limit = settings.RELEASE_CHECK_INLINE_ENTRIES
    return release.entries.values("pk")[: limit + 1].count() <= limit


def comparison_page(*, old: Release, new: Release, page: int = 1) -> Comparison:
    """Return the stored comparison of ``old`` and ``new`` with one page of its lists.

    Computed now when none is current and both releases are small; queued for a worker otherwise (once per state),
    the previous comparison shown meanwhile.
    """
    if old.benchmark_id != new.benchmark_id:
        raise ValidationError(_("Only releases of the same benchmark can be compared."))
    key = comparison_key(old=old, new=new)
    stored = ReleaseComparison.objects.filter(old=old, new=new).first()
    current = stored is not None and stored.inputs_key == key
    if not current:
        if _small(old) and _small(new):
            stored, current = comparison_compute(old=old, new=new), True
        elif cache.add(_queued_key(key), True, QUEUED_SECONDS):
            from annotation.releases import tasks  # deferred: tasks imports this module for its work

            tasks.release_comparison_compute.enqueue(old.pk, new.pk)
    result = Comparison(stored, current)
    if stored is None:
        return result
    result.page = min(max(page, 1), result.pages)
    start = (result.page - 1) * CHANGES_PER_PAGE
    rows = ReleaseChange.objects.filter(
        comparison=stored, position__gte=start, position__lt=start + CHANGES_PER_PAGE
    ).order_by("kind", "position")
    result.added, result.removed, result.revised = [], [], []
    for kind, uid, old_number, new_number in rows.values_list("kind", "uid", "old_number", "new_number"):
        if kind == ReleaseChange.Kind.ADDED:
            result.added.append(uid)
        elif kind == ReleaseChange.Kind.REMOVED:
            result.removed.append(uid)
        else:
            result.revised.append({"uid": uid, "old": old_number, "new": new_number})
    return result
