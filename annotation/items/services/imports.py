"""Importing items from JSONL (the interchange format or EmoBench's files), all or nothing."""

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils.translation import gettext as _

from annotation.items import emobench
from annotation.items.interchange import ItemRecord, LineError, check_records, iter_jsonl, parse_records, read_jsonl
from annotation.items.models import Benchmark, CrisisLevel, Dimension, EmotionCategory, Item, Scenario
from annotation.items.services import bulk_import as bulk
from annotation.items.services.items import ItemState
from annotation.items.services.statuses import user_may_decide_status
from annotation.items.services.taxonomy import taxonomy_load_fixture
from annotation.items.signatures import index_build
from core.errors import ServiceError

IMPORT_FORMATS = ("eistudio", "emobench")
# Told where an import stands: stage ("checking" lines or "writing" items), how many are done, out of how many.
Progress = Callable[[str, int, int], None]
PROGRESS_EVERY = 1000


class ImportFailed(ServiceError):
    """An import was refused; nothing was written."""

    code = "import_failed"

    def __init__(self, errors: list[LineError]) -> None:
        self.errors = errors
        shown = "; ".join(str(e) for e in errors[:5]) + ("; ..." if len(errors) > 5 else "")
        super().__init__(
            _("%(count)s error(s), nothing was imported: %(errors)s") % {"count": len(errors), "errors": shown}
        )

    def payload(self) -> dict:
        """Return the message and every error with its line and field."""
        return {
            "detail": str(self),
            "errors": [{"line": e.line, "field": e.field, "message": e.message} for e in self.errors],
        }


@dataclass
class ImportReport:
    created: list[str] = field(default_factory=list)
    revised: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    flagged: dict[str, list[dict]] = field(default_factory=dict)
    source_faults: list[str] = field(default_factory=list)
    dry_run: bool = False

    @property
    def total(self) -> int:
        return len(self.created) + len(self.revised) + len(self.unchanged)


class TaxonomyIndex:
    """Taxonomy rows by code, fetched once per import."""

    def __init__(self) -> None:
        self.benchmarks = {b.slug: b for b in Benchmark.objects.all()}
        self.dimensions = {(d.benchmark.slug, d.code): d for d in Dimension.objects.select_related("benchmark")}
        self.scenarios = {s.code: s for s in Scenario.objects.all()}
        self.emotions = {e.code: e for e in EmotionCategory.objects.all()}
        self.crisis_levels = {c.level: c for c in CrisisLevel.objects.all()}

    def resolve(self, record: ItemRecord) -> ItemState | list[LineError]:
        errors = []

        def err(name: str, message: str) -> None:
            errors.append(LineError(record.line, name, message))

        if record.benchmark not in self.benchmarks:
            err("benchmark", _("unknown benchmark %(benchmark)s") % {"benchmark": repr(record.benchmark)})
        dimension = self.dimensions.get((record.benchmark, record.dimension))
        if dimension is None:
            err(
                "dimension",
                _("unknown dimension code %(dimension)s in benchmark %(benchmark)s")
                % {"dimension": repr(record.dimension), "benchmark": repr(record.benchmark)},
            )
        scenario = None
        if record.scenario:
            scenario = self.scenarios.get(record.scenario)
            if scenario is None:
                err("scenario", _("unknown scenario code %(code)s") % {"code": repr(record.scenario)})
        emotions = []
        for code in record.emotions:
            if code not in self.emotions:
                err("emotions", _("unknown emotion code %(code)s") % {"code": repr(code)})
            else:
                emotions.append(self.emotions[code])
        crisis = None
        if record.crisis_level is not None:
            crisis = self.crisis_levels.get(record.crisis_level)
            if crisis is None:
                err(
                    "crisis_level",
                    _("crisis level %(level)s is not defined in the taxonomy") % {"level": record.crisis_level},
                )
        if errors:
            return errors
        return ItemState(
            dimension=dimension,
            content=record.content,
            scenario=scenario,
            emotions=emotions,
            crisis_level=crisis,
            difficulty=record.difficulty,
            metadata=record.metadata,
        )


def items_import(
    *,
    data: bytes,
    user: AbstractBaseUser | None,
    format: str = "eistudio",
    benchmark: str | None = None,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> ImportReport:
    """Import items from JSONL bytes, all or nothing.

    Every line is checked first (``ImportFailed`` lists every error, naming line and field, and nothing is
    written); then the items are written in batches inside one transaction, each item exactly as
    ``item_create``, ``item_revise`` and ``item_status_decide`` would write it. Re-importing identical content
    changes nothing; changed content adds revisions. ``progress``, if given, is told how far the checks and the
    writing have got (every ``PROGRESS_EVERY`` lines or items; the writing stage inside the transaction).
    """
    if format not in IMPORT_FORMATS:
        message = _("unknown format %(format)s; expected %(expected)s") % {
            "format": repr(format),
            "expected": ", ".join(IMPORT_FORMATS),
        }
        raise ImportFailed([LineError(0, "format", message)])
    report = ImportReport(dry_run=dry_run)
    progress = progress or _unwatched
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    progress("checking", 0, lines)
    records, full_records = _checked_records(
        data, format=format, benchmark=benchmark, report=report, progress=progress, lines=lines
    )
    progress("checking", lines, lines)
    progress("writing", 0, len(records))
    with transaction.atomic():
        _write_checked(
            records=records, full_records=full_records, user=user, report=report, format=format, progress=progress
        )
        if dry_run:
            transaction.set_rollback(True)
    return report


def _checked_records(
    data: bytes, *, format: str, benchmark: str | None, report: ImportReport, progress: Progress, lines: int
) -> tuple[list[ItemRecord], Callable[[], Iterator[ItemRecord]]]:
    """Check every line of the file; return what the checks kept of each record, and how to read the records in
    full for writing. ``ImportFailed`` lists every error (an empty file is one)."""
    max_chars = settings.ITEM_MAX_TEXT_CHARS
    if format == "emobench":
        records, errors, empty = _check_emobench(data, max_chars=max_chars, benchmark=benchmark, report=report)

        def full_records() -> Iterator[ItemRecord]:
            return iter(records)

    else:
        # Two passes over the bytes: the first keeps only what the checks need, the second (while writing, batch
        # by batch) parses each line again, so that the whole file is never held as Python objects.
        records, errors, empty = _check_file(
            data, max_chars=max_chars, benchmark=benchmark, progress=progress, lines=lines
        )

        def full_records() -> Iterator[ItemRecord]:
            return _records(data, max_chars=max_chars, benchmark=benchmark)

    if empty and not errors:
        errors.append(LineError(0, "file", _("the file holds no records")))
    if errors:
        raise ImportFailed(errors)
    return records, full_records


def _write_checked(
    *,
    records: list[ItemRecord],
    full_records: Callable[[], Iterator[ItemRecord]],
    user: AbstractBaseUser | None,
    report: ImportReport,
    format: str,
    progress: Progress,
) -> None:
    """Write the checked records (inside the import's transaction) and sign the new revisions; ``ImportFailed``
    when a record names what does not resolve or a uid someone else has just taken."""
    taxonomy = TaxonomyIndex()
    existing = bulk.existing_items(uids=[r.uid for r in records])
    resolve_errors = _resolve_errors(records=records, taxonomy=taxonomy, existing=existing, user=user)
    if resolve_errors:
        raise ImportFailed(resolve_errors)
    try:
        bulk.write_records(
            records=full_records(),
            existing=existing,
            taxonomy=taxonomy,
            user=user,
            report=report,
            source_format=format,
            on_batch=lambda written: progress("writing", written, len(records)),
        )
    except bulk.UidsTaken as exc:
        raise _taken(exc) from exc
    if not report.dry_run and (report.created or report.revised):
        # Sign the new revisions for the near-duplicate index in the same transaction, as the per-item services
        # do: only items whose current revision has no signature yet are read and signed.
        slugs = {r.benchmark for r in records}
        index_build(benchmarks=[b for slug, b in taxonomy.benchmarks.items() if slug in slugs], stale_weights_only=True)


def _unwatched(stage: str, done: int, total: int) -> None:
    """Hear nothing of an import's progress (no one is watching)."""


def _check_emobench(
    data: bytes, *, max_chars: int, benchmark: str | None, report: ImportReport
) -> tuple[list[ItemRecord], list[LineError], bool]:
    """Convert and check an EmoBench file: its records, its errors and whether it holds no rows.

    The source's own faults go in the report; the EmoBench taxonomy is loaded the first time it is needed.
    """
    rows, errors = read_jsonl(data, max_line_bytes=settings.IMPORT_MAX_LINE_BYTES)
    if not errors:
        try:
            rows, faults = emobench.emobench_records(rows, benchmark=benchmark or "emobench")
        except ValueError as exc:
            raise ImportFailed([LineError(0, "file", str(exc))]) from exc
        report.source_faults = [f"line {f.line}: {f.field}: {f.message}" for f in faults]
        if (benchmark or "emobench") not in set(Benchmark.objects.values_list("slug", flat=True)):
            taxonomy_load_fixture("emobench_taxonomy.json")
    records, parse_errors = parse_records(rows, max_chars=max_chars, benchmark=benchmark)
    return records, errors + parse_errors, not rows


def _taken(exc: bulk.UidsTaken) -> ImportFailed:
    """Name each line whose uid someone else created while the file was imported."""
    return ImportFailed(
        [
            LineError(line, "record", _("An item with uid %(uid)s already exists.") % {"uid": uid})
            for uid, line in sorted(exc.uids.items(), key=lambda taken: taken[1])
        ]
    )


def _check_file(
    data: bytes, *, max_chars: int, benchmark: str | None, progress: Progress = _unwatched, lines: int = 0
) -> tuple[list[ItemRecord], list[LineError], bool]:
    """Check every line; return the records without their content, the errors and whether no line held a record."""
    read_errors: list[LineError] = []
    rows_seen = 0

    def rows() -> Iterator[tuple[int, dict]]:
        nonlocal rows_seen
        for row in iter_jsonl(data, max_line_bytes=settings.IMPORT_MAX_LINE_BYTES):
            if isinstance(row, LineError):
                read_errors.append(row)
            else:
                rows_seen += 1
                if rows_seen % PROGRESS_EVERY == 0:
                    progress("checking", row[0], lines)
                yield row

    records: list[ItemRecord] = []
    parse_errors: list[LineError] = []
    for checked in check_records(rows(), max_chars=max_chars, benchmark=benchmark):
        if isinstance(checked, LineError):
            parse_errors.append(checked)
        else:
            records.append(replace(checked, content={}, metadata={}))
    return records, read_errors + parse_errors, rows_seen == 0


def _records(data: bytes, *, max_chars: int, benchmark: str | None) -> Iterator[ItemRecord]:
    """Yield the records of a file already checked by ``_check_file``."""
    rows = (row for row in iter_jsonl(data, max_line_bytes=settings.IMPORT_MAX_LINE_BYTES) if isinstance(row, tuple))
    for checked in check_records(rows, max_chars=max_chars, benchmark=benchmark):
        if isinstance(checked, ItemRecord):
            yield checked


def _resolve_errors(
    *,
    records: list[ItemRecord],
    taxonomy: TaxonomyIndex,
    existing: dict[str, bulk.ExistingItem],
    user: AbstractBaseUser | None,
) -> list[LineError]:
    """Return the errors of records whose taxonomy codes, kind, benchmark or status the import cannot accept."""
    errors: list[LineError] = []
    may_decide = user_may_decide_status(user)
    for record in records:
        state = taxonomy.resolve(record)
        if isinstance(state, list):
            errors.extend(state)
            continue
        item = existing.get(record.uid)
        if item is not None and item.kind != record.kind:
            errors.append(
                LineError(
                    record.line,
                    "kind",
                    _("item %(uid)s is %(kind)s; the kind of an item cannot change")
                    % {"uid": record.uid, "kind": item.kind},
                )
            )
        if item is not None and item.benchmark != record.benchmark:
            errors.append(
                LineError(
                    record.line,
                    "benchmark",
                    _("item %(uid)s belongs to benchmark %(benchmark)s")
                    % {"uid": record.uid, "benchmark": item.benchmark},
                )
            )
        if not may_decide:
            errors.extend(_status_errors(record=record, item=item))
    return errors


def _status_errors(*, record: ItemRecord, item: "bulk.ExistingItem | None") -> list[LineError]:
    """Return the error of a record whose status would change the item's, for an importer who may not decide it."""
    current = item.status if item is not None else Item.Status.DRAFT
    if record.status is None or record.status == current:
        return []
    if item is None:
        message = _(
            "only a lead expert or an admin may import an item as %(status)s; new items start as draft "
            "(leave the field out or give draft)"
        ) % {"status": record.status}
    else:
        message = _(
            "item %(uid)s is %(current)s; only a lead expert or an admin may change its status by import "
            "(leave the field out or give %(current)s)"
        ) % {"uid": record.uid, "current": current}
    return [LineError(record.line, "status", message)]
