"""Services and reads for releases: build, edit while draft, validate, freeze, export, compare."""

import hashlib
import json
import os
import shutil
import tempfile
from array import array
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import DatabaseError, connection, transaction
from django.db.models import BinaryField, Case, QuerySet, Value, When
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.items import selectors
from annotation.items.models import Benchmark, Item
from annotation.releases import record
from annotation.releases.card import card_markdown
from annotation.releases.checks import Check, release_checklist
from annotation.releases.export import (
    MANIFEST,
    ZIP_CONTENT_TYPE,
    export_files,
    read_manifest,
    verify_directory,
    zip_bytes,
)
from annotation.releases.models import Release, ReleaseFile, ReleaseItem
from annotation.releases.selectors import release_entry_facts
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
        selectors.item_list(filters=query)
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
    unknown = set(filters) - set(selectors.ITEM_FILTERS)
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


def release_entries(release: Release) -> list[ReleaseItem]:
    """Return the pinned entries with what validation and export need, sorted by uid in Python."""
    # Nothing reads the item's search text, metadata (the pinned revision's attributes hold it), its dimension's
    # definitions, or the revision's stored parity and message: left unread, they cost a large release no memory.
    entries = list(
        release.entries.select_related("item", "revision", "item__dimension").defer(
            "item__search_text",
            "item__metadata",
            "item__dimension__definition_en",
            "item__dimension__definition_zh",
            "revision__parity_issues",
            "revision__message",
        )
    )
    return sorted(entries, key=lambda e: e.item.uid)


def release_page_entries(*, release: Release) -> QuerySet[ReleaseItem]:
    """Return the pinned entries as the release page lists them (uid, dimension, revision numbers), by uid.

    A queryset for a paginator: content, attributes and search text are left unread, and a page reads its rows only.
    """
    return (
        release.entries.select_related("item", "item__dimension", "revision")
        .only(
            "id",
            "release_id",
            "item_id",
            "revision_id",
            "item__uid",
            "item__current_revision_id",
            "item__dimension__id",
            "item__dimension__code",
            "item__dimension__name_en",
            "item__dimension__name_zh",
            "revision__id",
            "revision__number",
        )
        .order_by("item__uid", "pk")
    )


def release_validate(*, release: Release, entries: list[ReleaseItem] | None = None) -> list[Check]:
    """Run the freeze checklist on a release as it stands (``entries``: its ``release_entries``, if read already)."""
    if entries is None:
        entries = release_entries(release)
    return release_checklist(
        release_entry_facts(release=release, entries=entries),
        duplicate_threshold=settings.NEAR_DUPLICATE_THRESHOLD,
        max_domain_share=settings.RELEASE_MAX_DOMAIN_SHARE,
        min_valence_share=settings.RELEASE_MIN_VALENCE_SHARE,
    )


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
            % {"checks": ", ".join(failed)}
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


def release_files_build(*, release: Release, entries: list[ReleaseItem]) -> dict[str, bytes]:
    """Write the export files of ``release`` from the live rows (done once, at freeze)."""
    records = record.export_records(release, entries)
    facts = record.card_facts(release, entries, checks=release.validation.get("checks", []))
    return export_files(record.release_meta(release, items=len(records)), records, facts)


def release_card_text(
    *, release: Release, checks: list[Check] | None = None, entries: list[ReleaseItem] | None = None
) -> str:
    """Return the dataset card: as kept at freeze, or for a draft a preview written from the record now.

    ``checks`` and ``entries``: the draft's checklist and ``release_entries``, when the caller has them already.
    """
    if release.is_frozen:
        return bytes(ReleaseFile.objects.get(release=release, name="README.md").content).decode("utf-8")
    if entries is None:
        entries = release_entries(release)
    if checks is None:
        checks = release_validate(release=release, entries=entries)
    facts = record.card_facts(release, entries, checks=[c.as_dict() for c in checks])
    return card_markdown(record.release_meta(release, items=len(entries)), facts)


def release_export_files(*, release: Release) -> dict[str, bytes]:
    """Return the export files of a frozen release, as written at freeze (refused for drafts)."""
    if not release.is_frozen:
        raise ValidationError(
            _("Release %(version)s is a draft; only frozen releases can be exported.") % {"version": release.version}
        )
    files = {f.name: bytes(f.content) for f in ReleaseFile.objects.filter(release=release)}
    return dict(sorted(files.items()))


def _archive_name(files: dict[str, bytes]) -> str:
    """Return ``<benchmark>-<version>`` as the manifest recorded them at freeze (a benchmark can be renamed)."""
    identity = json.loads(files[MANIFEST])["release"]
    return f"{identity['benchmark']}-{identity['version']}"


def release_export_zip(*, release: Release) -> bytes:
    """Return the export of a frozen release as one zip archive, its folder named as recorded at freeze."""
    files = release_export_files(release=release)
    return zip_bytes(files, _archive_name(files))


def release_export_download(*, release: Release) -> tuple[bytes, str, str]:
    """Return the export of a frozen release as (zip archive, content type, file name) for a download."""
    files = release_export_files(release=release)
    name = _archive_name(files)
    return zip_bytes(files, name), ZIP_CONTENT_TYPE, f"{name}.zip"


def release_export_checksums(*, release: Release) -> list[tuple[str, int, str]]:
    """Return (name, size, SHA-256) of every export file of a frozen release, as recorded at freeze."""
    return list(ReleaseFile.objects.filter(release=release).order_by("name").values_list("name", "size", "sha256"))


ENTRY_ORDER_TTL_SECONDS = 3600


def release_entry_order(*, release: Release) -> array:
    """Return the ids of a frozen release's pinned entries in the order its page lists them (by uid, then id).

    A frozen release's entries never change, so they are sorted once and the ids kept in the cache for an hour
    (8 bytes an entry): a page then reads its own rows only, and the last page costs what the first does. Sorting
    on every view joined every pinned entry with its item, and PostgreSQL chose to walk the whole item table's uid
    index from the end for the last page (13 ms at 20,000 items). A uid renamed since takes its new place within
    the hour.
    """
    key = f"releases:entry-order:{release.pk}:{release.content_checksum}"
    packed = cache.get(key)
    if packed is None:
        packed = array("q", release.entries.order_by("item__uid", "pk").values_list("pk", flat=True)).tobytes()
        cache.set(key, packed, ENTRY_ORDER_TTL_SECONDS)
    ids = array("q")
    ids.frombytes(packed)
    return ids


def release_frozen_files(*, release: Release) -> tuple[list[tuple[str, int, str]], str]:
    """Return a frozen release's (name, size, SHA-256) of every export file and its dataset card, in one read."""
    rows = (
        ReleaseFile.objects.filter(release=release)
        .annotate(card=Case(When(name="README.md", then="content"), default=Value(None), output_field=BinaryField()))
        .order_by("name")
        .values_list("name", "size", "sha256", "card")
    )
    checksums, card = [], ""
    for name, size, sha256, content in rows:
        checksums.append((name, size, sha256))
        if content is not None:
            card = bytes(content).decode("utf-8")
    return checksums, card


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


@dataclass
class ExportCheck:
    """The outcome of checking an unpacked export: against which manifest, and every problem found."""

    against: str  # "database": the manifest recorded at freeze; "directory": the directory's own manifest.json
    release: Release | None = None
    # Why the directory's own manifest was the reference: "offline", "unknown_release", "no_database".
    reason: str = ""
    problems: list[str] = field(default_factory=list)


def release_export_verify(*, directory: Path, offline: bool = False, release: Release | None = None) -> ExportCheck:
    """Check an unpacked export against the manifest recorded when its release was frozen.

    The release is ``release`` or the frozen one the directory's manifest names. When this database does not hold
    it (or cannot be read, or ``offline``), the directory's own manifest is the reference: that shows the files
    agree with it, not that they are the files that were frozen.
    """
    manifest, problems = read_manifest(directory)
    reason = "offline" if offline else "unknown_release"
    if release is None and not offline and manifest is not None:
        try:
            release = Release.objects.filter(
                benchmark__slug=manifest["release"].get("benchmark"),
                version=manifest["release"].get("version"),
                status=Release.Status.FROZEN,
            ).first()
        except DatabaseError:
            reason = "no_database"
    if release is not None and not offline:
        if not release.is_frozen:
            raise ValidationError(
                _("Release %(version)s is a draft; only frozen releases can be exported.")
                % {"version": release.version}
            )
        expected = {
            name: {"bytes": size, "sha256": digest} for name, size, digest in release_export_checksums(release=release)
        }
        return ExportCheck(against="database", release=release, problems=verify_directory(directory, expected))
    if manifest is not None:
        problems = verify_directory(directory)
    return ExportCheck(against="directory", reason=reason, problems=problems)


def release_compare(*, old: Release, new: Release) -> dict:
    """Return what was added, removed, revised and unchanged between two releases of one benchmark."""
    if old.benchmark_id != new.benchmark_id:
        raise ValidationError(_("Only releases of the same benchmark can be compared."))
    a = {e.item.uid: e for e in release_entries(old)}
    b = {e.item.uid: e for e in release_entries(new)}
    revised = [
        {"uid": uid, "old": a[uid].revision.number, "new": b[uid].revision.number}
        for uid in sorted(a.keys() & b.keys())
        if a[uid].revision_id != b[uid].revision_id and a[uid].revision.content_hash != b[uid].revision.content_hash
    ]
    revised_uids = {r["uid"] for r in revised}
    return {
        "added": sorted(b.keys() - a.keys()),
        "removed": sorted(a.keys() - b.keys()),
        "revised": revised,
        "unchanged": len((a.keys() & b.keys()) - revised_uids),
    }
