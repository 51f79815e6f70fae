"""A draft release's checklist and card preview, kept for the state of the record they were computed from.

Checking a draft reads every pinned entry (5 s for 10,000 items), so pages and the API do not recompute it per
request: the result is kept in the shared cache under a key of what it depends on (the release's own row and its
number of entries, the newest revision, status decision and screening round item anywhere, the benchmark's
dimension targets, the thresholds and the language), read in one query. A small draft is checked in the request on
a miss; a large one is checked by a worker (``annotation.releases.tasks.draft_checks_compute``) while the page shows
the previous result, marked as such, and polls. Freezing always validates the release as it stands, whatever is kept.
"""

import hashlib
from dataclasses import dataclass, replace
from datetime import datetime

from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.utils import timezone
from django.utils.translation import get_language

from annotation.items.models import Dimension, ItemRevision, StatusDecision
from annotation.releases import selectors
from annotation.releases.models import Release, ReleaseItem
from annotation.screening.models import RoundItem

# How long a kept result stays usable: taxonomy edits in the admin site (an emotion's valence, a scenario's domain)
# change no key, so a result is computed again at least this often.
KEPT_SECONDS = 600
# How long a worker has to compute a queued check before a page queues it again.
QUEUED_SECONDS = 900


@dataclass(frozen=True)
class DraftChecks:
    """A draft's checklist (``Check.as_dict`` rows) and card preview, or the previous ones while a worker checks."""

    checks: list[dict] | None
    card: str | None
    computed_at: str | None
    current: bool  # computed from the record as it stands now
    entries: int | None = None  # the draft's number of entries, read with the key (the page's paginator needs it)

    @property
    def computed(self) -> datetime | None:
        return datetime.fromisoformat(self.computed_at) if self.computed_at else None

    @property
    def failed(self) -> list[str]:
        return [check["code"] for check in self.checks or [] if not check["passed"]]


def draft_inputs_key(release: Release) -> str:
    """Return the cache key of what the draft's checklist and card depend on (one query)."""
    return draft_inputs(release)[0]


def draft_inputs(release: Release) -> tuple[str, int]:
    """Return the cache key of what the draft's checklist and card depend on and its number of entries (one query)."""
    quote = connection.ops.quote_name
    sql = (
        f"SELECT (SELECT MAX(id) FROM {quote(ItemRevision._meta.db_table)}),"
        f" (SELECT MAX(id) FROM {quote(StatusDecision._meta.db_table)}),"
        f" (SELECT MAX(id) FROM {quote(RoundItem._meta.db_table)}),"
        f" (SELECT COUNT(*) FROM {quote(ReleaseItem._meta.db_table)} WHERE release_id = %s),"
        f" (SELECT COUNT(*) FROM {quote(Dimension._meta.db_table)} WHERE benchmark_id = %s),"
        f" (SELECT SUM(target_items) FROM {quote(Dimension._meta.db_table)} WHERE benchmark_id = %s)"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [release.pk, release.benchmark_id, release.benchmark_id])
        state = cursor.fetchone()
    parts = (
        release.pk,
        release.updated_at.isoformat() if release.updated_at else "",
        *state,
        settings.NEAR_DUPLICATE_THRESHOLD,
        settings.RELEASE_MAX_DOMAIN_SHARE,
        settings.RELEASE_MIN_VALENCE_SHARE,
        get_language() or "",
    )
    digest = hashlib.sha256(repr(parts).encode()).hexdigest()[:32]
    return f"release-checks:{release.pk}:{digest}", int(state[3])


def _last_key(release_id: int) -> str:
    return f"release-checks-last:{release_id}:{get_language() or ''}"


def draft_checks_compute(release: Release, key: str | None = None) -> DraftChecks:
    """Check the draft as it stands and keep the result under its key (the worker's task and a small draft's page;
    ``key``: its ``draft_inputs_key``, when the caller read it already)."""
    key = key or draft_inputs_key(release)
    entries = selectors.release_entries(release)
    checks = selectors.release_validate(release=release, entries=entries)
    card = selectors.release_card_text(release=release, checks=checks, entries=entries)
    result = {"checks": [c.as_dict() for c in checks], "card": card, "computed_at": timezone.now().isoformat()}
    cache.set(key, result, KEPT_SECONDS)
    cache.set(_last_key(release.pk), result, None)
    cache.delete(f"{key}:queued")
    return DraftChecks(result["checks"], card, result["computed_at"], current=True)


def draft_checks(release: Release) -> DraftChecks:
    """Return the draft's checklist and card: kept, computed now (a small draft), or the previous ones while a worker
    computes the current ones (a draft of more than ``RELEASE_CHECK_INLINE_ENTRIES`` entries).

    Two queries while a result is kept or a worker is computing it (the key, then the kept result, the queued mark
    and the previous result in one read), whatever the draft's size; queuing the worker costs more, once per change.
    """
    key, entries = draft_inputs(release)
    queued, last_key = f"{key}:queued", _last_key(release.pk)
    found = cache.get_many([key, queued, last_key])
    kept = found.get(key)
    if kept is not None:
        return DraftChecks(kept["checks"], kept["card"], kept["computed_at"], current=True, entries=entries)
    if entries <= settings.RELEASE_CHECK_INLINE_ENTRIES:
        return replace(draft_checks_compute(release, key), entries=entries)
    if queued not in found and cache.add(queued, True, QUEUED_SECONDS):
        from annotation.releases import tasks  # deferred: tasks imports this module for its work

        tasks.draft_checks_compute.enqueue(release.pk, get_language() or settings.LANGUAGE_CODE)
    last = found.get(last_key) or {}
    return DraftChecks(last.get("checks"), last.get("card"), last.get("computed_at"), current=False, entries=entries)
