"""Writes of releases a user can trigger: build, edit while draft, freeze, and export to a directory.

Reads of a release (its entries, checklist, card, export files, comparison) are in ``annotation.releases.selectors``.
"""

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

import psycopg
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.items import selectors as item_selectors
from annotation.items.models import Benchmark, Item
from annotation.releases.checks import CHECK_LABELS
from annotation.releases.models import Release, ReleaseFile, ReleaseItem
from annotation.releases.selectors import (
    release_entries,
    release_export_files,
    release_files_build,
    release_validate,
)
from core.canonical import canonical_json

DEFAULT_FILTERS = {"status": "accepted"}
EDITABLE_FIELDS = ("title", "description", "licence", "citation")


def _require_draft(release: Release) -> None:
    if Release.objects.filter(pk=release.pk, status=Release.Status.FROZEN).exists():
        raise ValidationError(
            _("Release %(version)s is frozen and cannot change; create a new version instead.")
            % {"version": release.version}
        )


def _pin(release: Release, items: list[tuple[int, int]]) -> int:
    """Pin (item id, revision id) pairs to ``release``."""
    ReleaseItem.objects.bulk_create(
        [ReleaseItem(release=release, item_id=item_id, revision_id=revision_id) for item_id, revision_id in items],
        batch_size=2000,
    )
    return len(items)


def _matching_items(benchmark: Benchmark, filters: dict) -> list[tuple[int, int]]:
    """Return (item id, current revision id) of every item matching ``filters`` that has a revision."""
    query = {**filters, "benchmark": benchmark.slug}
    return list(
        item_selectors.item_list(filters=query)
        .filter(current_revision__isnull=False)
        .values_list("pk", "current_revision_id")
    )


@transaction.atomic
def release_create(
    *,
    benchmark: Benchmark,
    version: str,
    title: str,
    user: AbstractBaseUser | None,
    filters: dict | None = None,
    description: str = "",
    licence: str = "",
    citation: str = "",
) -> Release:
    """Create a draft release pinning the current revision of every item matching ``filters``."""
    filters = {k: v for k, v in (DEFAULT_FILTERS if filters is None else filters).items() if v}
    unknown = set(filters) - set(item_selectors.ITEM_FILTERS)
    if unknown:
        raise ValidationError({"filters": _("Unknown filter(s): %(names)s.") % {"names": ", ".join(sorted(unknown))}})
    if Release.objects.filter(benchmark=benchmark, version=version).exists():
        raise ValidationError(
            {
                "version": _("Release %(version)s of %(benchmark)s already exists.")
                % {"version": version, "benchmark": benchmark.slug}
            }
        )
    release = Release(
        benchmark=benchmark,
        version=version,
        title=title,
        description=description,
        licence=licence,
        citation=citation,
        filters=filters,
        created_by=user,
        updated_by=user,
    )
    release.full_clean()
    release.save()
    _pin(release, _matching_items(benchmark, filters))
    return release


@transaction.atomic
def release_update(*, release: Release, user: AbstractBaseUser | None, **fields: str) -> Release:
    """Change the descriptive fields of a draft release."""
    _require_draft(release)
    for name, value in fields.items():
        if name not in EDITABLE_FIELDS:
            raise ValidationError({name: _("This field cannot be edited.")})
        setattr(release, name, value)
    release.updated_by = user
    release.full_clean()
    release.save()
    return release


@transaction.atomic
def release_rebuild(*, release: Release, user: AbstractBaseUser | None, filters: dict | None = None) -> int:
    """Re-apply the filter (or a new one) to a draft release, pinning current revisions; return the item count."""
    _require_draft(release)
    if filters is not None:
        release.filters = {k: v for k, v in filters.items() if v}
    release.entries.all().delete()
    release.updated_by = user
    release.full_clean()
    release.save()
    return _pin(release, _matching_items(release.benchmark, release.filters))


@transaction.atomic
def release_items_change(
    *, release: Release, user: AbstractBaseUser | None, add: list[str] = (), remove: list[str] = ()
) -> Release:
    """Add items (pinned at their current revision) to or remove items from a draft release."""
    _require_draft(release)
    add, remove = list(add), list(remove)
    items = {i.uid: i for i in Item.objects.filter(uid__in=add + remove)}
    errors = []
    for uid in add + remove:
        if uid not in items:
            errors.append(_("Unknown item %(uid)s.") % {"uid": uid})
        elif items[uid].benchmark_id != release.benchmark_id:
            errors.append(_("Item %(uid)s belongs to another benchmark.") % {"uid": uid})
    present = set(release.entries.values_list("item__uid", flat=True))
    errors += [_("Item %(uid)s is already in the release.") % {"uid": uid} for uid in add if uid in present]
    errors += [_("Item %(uid)s is not in the release.") % {"uid": uid} for uid in remove if uid not in present]
    if errors:
        raise ValidationError(errors)
    release.entries.filter(item__uid__in=remove).delete()
    _pin(release, [(items[uid].pk, items[uid].current_revision_id) for uid in add])
    release.updated_by = user
    release.save()
    return release


def _content_checksum(entries: list[ReleaseItem]) -> str:
    digest = hashlib.sha256()
    for e in entries:
        digest.update(canonical_json([e.item.uid, e.revision.number, e.revision.content_hash]).encode() + b"\n")
    return digest.hexdigest()


@transaction.atomic
def release_freeze(*, release: Release, user: AbstractBaseUser | None, override_reason: str = "") -> Release:
    """Freeze a draft release for good, recording who, when, the validation result and the export files.

    Failed checks block freezing unless ``override_reason`` explains why it is acceptable; an empty release can
    never be frozen. The export files (dataset card included) are written now, from the record as it stands, and
    kept: every later export of the release returns these bytes.
    """
    release = Release.objects.select_for_update().get(pk=release.pk)
    _require_draft(release)
    entries = release_entries(release)
    if not entries:
        raise ValidationError(
            _("Release %(version)s has no items; there is nothing to freeze.") % {"version": release.version}
        )
    checks = release_validate(release=release, entries=entries)
    failed = [c.code for c in checks if not c.passed]
    override_reason = override_reason.strip()
    if failed and not override_reason:
        raise ValidationError(
            _("Validation failed (%(checks)s). Fix the items or give a reason to freeze anyway.")
            % {"checks": "; ".join(str(CHECK_LABELS.get(code, code)) for code in failed)}
        )
    release.status = Release.Status.FROZEN
    release.frozen_at = timezone.now().replace(microsecond=0)
    release.frozen_by = user
    release.override_reason = override_reason if failed else ""
    release.validation = {"failed": failed, "checks": [c.as_dict() for c in checks]}
    release.content_checksum = _content_checksum(entries)
    release.updated_by = user
    release.full_clean()
    files = release_files_build(release=release, entries=entries)
    del entries
    # The files go in while the row still says draft: from the moment it says frozen, the database refuses them.
    # One statement per file, each dropped once written: a statement quotes its bytes, and all of them at once
    # would hold the whole export several times over.
    for name in list(files):
        _file_insert(release=release, name=name, data=files.pop(name))
    release.save()
    return release


def _file_insert(*, release: Release, name: str, data: bytes) -> None:
    """Store one export file of a release being frozen (the caller holds its row locked, still a draft)."""
    row = ReleaseFile(release=release, name=name, content=data, size=len(data), sha256=hashlib.sha256(data).hexdigest())
    if connection.vendor != "postgresql":
        ReleaseFile.objects.bulk_create([row])
        return
    # Django binds parameters on the client, quoting bytes as hex text inside the statement: several copies of a
    # file tens of megabytes long. A server-side-binding cursor on the same connection (and transaction) sends them
    # as one binary parameter instead.
    with psycopg.Cursor(connection.connection) as cursor:
        cursor.execute(
            f"INSERT INTO {ReleaseFile._meta.db_table} (release_id, name, content, size, sha256) "
            "VALUES (%s, %s, %b, %s, %s)",
            [release.pk, row.name, data, row.size, row.sha256],
        )


def release_export_to_directory(*, release: Release, out: Path) -> dict[str, bytes]:
    """Write the export into ``out`` (created; must not hold files) without leaving partial output on failure."""
    files = release_export_files(release=release)
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ValidationError(_("%(path)s already exists and is not an empty directory.") % {"path": out})
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        for name, data in files.items():
            (staging / name).write_bytes(data)
        if out.exists():
            out.rmdir()
        os.replace(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return files
