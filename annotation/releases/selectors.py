"""Reads of releases shared by pages, the API, commands and other apps: lists and lookups by benchmark and version,
a release's entries and checklist, its dataset card and export files, the check of an unpacked export, and the
comparison of two releases."""

import hashlib
import json
from array import array
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import DatabaseError
from django.db.models import BinaryField, Case, OuterRef, QuerySet, Subquery, Value, When
from django.utils.translation import gettext as _

from annotation.items.models import EmotionCategory, Item, ItemRevision, Scenario, StatusDecision
from annotation.releases import export, record
from annotation.releases.card import card_markdown
from annotation.releases.checks import Check, EntryFacts, release_checklist
from annotation.releases.export import (
    MANIFEST,
    ZIP_CONTENT_TYPE,
    export_files,
    read_manifest,
    verify_directory,
    zip_bytes,
)
from annotation.releases.models import Release, ReleaseFile, ReleaseItem
from annotation.screening.models import RoundItem


def release_list() -> QuerySet[Release]:
    """Return every release with its benchmark, by benchmark and newest first."""
    return Release.objects.select_related("benchmark").order_by("benchmark__slug", "-created_at")


def release_by_version(*, slug: str, version: str) -> Release | None:
    """Return the release of a benchmark by version, with who created and froze it; None if there is none."""
    return (
        Release.objects.select_related("benchmark", "created_by", "frozen_by")
        .filter(benchmark__slug=slug, version=version)
        .first()
    )


def benchmark_releases(*, slug: str) -> QuerySet[Release]:
    """Return every release of a benchmark, newest first."""
    return Release.objects.filter(benchmark__slug=slug).select_related("benchmark").order_by("-created_at")


def release_others(*, release: Release) -> QuerySet[Release]:
    """Return the other releases of the same benchmark, newest first."""
    return Release.objects.filter(benchmark=release.benchmark).exclude(pk=release.pk).order_by("-created_at")


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


def release_accepted_revisions(*, release: Release) -> dict[int, set[int]]:
    """Return, per item pinned in ``release``, the numbers of the revisions an accepting decision accepted.

    An acceptance names its revision (``reference["revision"]``), or, by a screening round, the round item whose
    revision the reviewers saw. An older decision that names neither accepted the revision current at the time: the
    newest one created by then. Three reads, whatever the size of the release.
    """
    at_the_time = ItemRevision.objects.filter(item=OuterRef("item"), created_at__lte=OuterRef("created_at"))
    decisions = (
        StatusDecision.objects.filter(to_status=Item.Status.ACCEPTED, item__release_entries__release=release)
        .annotate(current=Subquery(at_the_time.order_by("-number").values("number")[:1]))
        .values_list("item_id", "reference", "current")
    )
    reviewed = dict(
        RoundItem.objects.filter(item__release_entries__release=release).values_list("pk", "revision__number")
    )
    accepted: dict[int, set[int]] = {}
    for item_id, reference, current in decisions:
        reference = reference or {}
        number = reference.get("revision") or reviewed.get(reference.get("round_item")) or current
        if number:
            accepted.setdefault(item_id, set()).add(number)
    return accepted


def release_entry_facts(*, release: Release, entries: list[ReleaseItem]) -> list[EntryFacts]:
    """Return what the freeze checklist needs to know about each pinned entry, in the order of ``entries``."""
    dims = {d.code: d for d in release.benchmark.dimensions.select_related("parent")}
    valence = dict(EmotionCategory.objects.values_list("code", "valence"))
    domains = dict(Scenario.objects.values_list("code", "domain__code"))
    accepted = release_accepted_revisions(release=release)
    facts = []
    for e in entries:
        attrs = e.revision.attributes
        dim = dims.get(attrs.get("dimension"))
        facts.append(
            EntryFacts(
                uid=e.item.uid,
                kind=e.item.kind,
                status=e.item.status,
                dimension=attrs.get("dimension", ""),
                dimension_target=dim.target_items if dim else None,
                content=e.revision.content,
                domain=domains.get(attrs.get("scenario")),
                valences=[valence[c] for c in attrs.get("emotions", []) if c in valence],
                revision=e.revision.number,
                accepted_revisions=tuple(sorted(accepted.get(e.item_id, ()))),
            )
        )
    return facts


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


def release_files_build(*, release: Release, entries: list[ReleaseItem]) -> dict[str, bytes]:
    """Write the export files of ``release`` from the live rows (done once, at freeze)."""
    records = record.export_records(release, entries)
    facts = record.card_facts(release, entries, checks=release.validation.get("checks", []))
    return export_files(record.release_meta(release, items=len(records)), records, facts, layout=export.LAYOUT)


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
    return card_markdown(record.release_meta(release, items=len(entries)), facts, layout=export.LAYOUT)


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


OWN_MANIFEST = "own-manifest"
RECORDED_MANIFEST = "recorded-manifest"
GIVEN_DIGEST = "manifest-digest"


@dataclass
class VerifyCheck:
    """One check of an unpacked export: its name (``own-manifest``, ``recorded-manifest``, ``manifest-digest``),
    what it compared, and every problem found (none: passed). ``ran`` is False when it could not run, ``skipped``
    saying why."""

    name: str
    problems: list[str] = field(default_factory=list)
    ran: bool = True
    skipped: str = ""

    @property
    def passed(self) -> bool:
        return self.ran and not self.problems


@dataclass
class ExportCheck:
    """The outcome of checking an unpacked export: every check, run or not, and the release checked against.

    ``own-manifest``: each file against the directory's own ``manifest.json`` (every listed file present with its
    size and SHA-256, no file unlisted). ``recorded-manifest``: each file, ``manifest.json`` included, against the
    listing recorded in the database at freeze. Either alone can be fooled: files and manifest changed together
    pass the first; the stored bytes and their digests rewritten together in the database pass the second.
    ``manifest-digest`` (only when a digest is given): the directory's ``manifest.json`` against the SHA-256 recorded
    out of band when the release was frozen; with ``own-manifest`` it checks every file without trusting any
    database copy.
    """

    checks: list[VerifyCheck]
    release: Release | None = None
    # Why the recorded manifest was not checked: "offline", "unknown_release", "no_database" ("" when it was).
    reason: str = ""

    @property
    def against(self) -> str:
        """Return "database" when the recorded manifest was checked, else "directory" (only its own manifest)."""
        recorded = self.check(RECORDED_MANIFEST)
        return "database" if recorded is not None and recorded.ran else "directory"

    @property
    def problems(self) -> list[str]:
        return [problem for check in self.checks for problem in check.problems]

    @property
    def failed(self) -> list[VerifyCheck]:
        return [check for check in self.checks if check.ran and check.problems]

    def check(self, name: str) -> VerifyCheck | None:
        return next((check for check in self.checks if check.name == name), None)


def release_export_verify(
    *, directory: Path, offline: bool = False, release: Release | None = None, manifest_sha256: str | None = None
) -> ExportCheck:
    """Check an unpacked export against its own manifest, against the manifest recorded at freeze and, when
    ``manifest_sha256`` is given, its ``manifest.json`` against that digest.

    The release is ``release`` or the frozen one the directory's manifest names. When this database does not hold
    it (or cannot be read, or ``offline``), the recorded manifest is not checked, and the result says why: the
    directory's own manifest then shows the files agree with it, and only a digest given from outside the database
    (printed at freeze and export, shown on the release page) shows that manifest is the one that was frozen.
    """
    manifest, problems = read_manifest(directory)
    checks = [VerifyCheck(OWN_MANIFEST, problems=verify_directory(directory) if manifest is not None else problems)]
    if manifest_sha256 is not None:
        checks.append(VerifyCheck(GIVEN_DIGEST, problems=_given_digest_problems(directory, manifest_sha256)))
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
        checks.insert(1, VerifyCheck(RECORDED_MANIFEST, problems=verify_directory(directory, expected)))
        return ExportCheck(checks=checks, release=release)
    checks.insert(1, VerifyCheck(RECORDED_MANIFEST, ran=False, skipped=reason))
    return ExportCheck(checks=checks, reason=reason)


def _given_digest_problems(directory: Path, expected: str) -> list[str]:
    """Return the problem of a directory whose ``manifest.json`` does not have the SHA-256 ``expected``."""
    manifest = directory / MANIFEST
    if not manifest.is_file():
        return [f"{MANIFEST}: missing"]
    digest = hashlib.sha256(manifest.read_bytes()).hexdigest()
    if digest != expected.lower():
        return [f"{MANIFEST}: SHA-256 {digest} is not the {expected.lower()} given"]
    return []


def release_manifest_sha256(*, release: Release) -> str | None:
    """Return the SHA-256 of a frozen release's ``manifest.json`` as recorded at freeze (None for a draft)."""
    return ReleaseFile.objects.filter(release=release, name=MANIFEST).values_list("sha256", flat=True).first()


def _pinned(release: Release) -> dict[str, tuple[int, int, str]]:
    """Return uid -> (revision id, revision number, content hash) of the release's entries (no texts read)."""
    rows = release.entries.values_list("item__uid", "revision_id", "revision__number", "revision__content_hash")
    return {uid: (revision_id, number, digest) for uid, revision_id, number, digest in rows.iterator(chunk_size=5000)}


def release_compare(*, old: Release, new: Release) -> dict:
    """Return what was added, removed, revised and unchanged between two releases of one benchmark."""
    if old.benchmark_id != new.benchmark_id:
        raise ValidationError(_("Only releases of the same benchmark can be compared."))
    a, b = _pinned(old), _pinned(new)
    revised = [
        {"uid": uid, "old": a[uid][1], "new": b[uid][1]}
        for uid in sorted(a.keys() & b.keys())
        if a[uid][0] != b[uid][0] and a[uid][2] != b[uid][2]
    ]
    revised_uids = {r["uid"] for r in revised}
    return {
        "added": sorted(b.keys() - a.keys()),
        "removed": sorted(a.keys() - b.keys()),
        "revised": revised,
        "unchanged": len((a.keys() & b.keys()) - revised_uids),
    }
