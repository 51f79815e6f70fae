"""Importing items from JSONL (the interchange format or EmoBench's files), all or nothing."""

from dataclasses import dataclass, field

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from core.errors import ServiceError
from items import emobench
from items.interchange import ItemRecord, LineError, parse_records, read_jsonl
from items.models import Benchmark, CrisisLevel, Dimension, EmotionCategory, Item, Scenario, StatusDecision
from items.services.items import ItemState, item_create, item_revise
from items.services.statuses import item_status_decide, user_may_decide_status
from items.services.taxonomy import taxonomy_load_fixture

IMPORT_FORMATS = ("eistudio", "emobench")


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
) -> ImportReport:
    """Import items from JSONL bytes, all or nothing.

    Raises ``ImportFailed`` listing every error (line and field) when any record is bad; nothing is written
    then. Re-importing identical content changes nothing; changed content adds revisions.
    """
    if format not in IMPORT_FORMATS:
        message = _("unknown format %(format)s; expected %(expected)s") % {
            "format": repr(format),
            "expected": ", ".join(IMPORT_FORMATS),
        }
        raise ImportFailed([LineError(0, "format", message)])
    rows, errors = read_jsonl(data, max_line_bytes=settings.IMPORT_MAX_LINE_BYTES)
    report = ImportReport(dry_run=dry_run)
    if format == "emobench" and not errors:
        try:
            rows, faults = emobench.emobench_records(rows, benchmark=benchmark or "emobench")
        except ValueError as exc:
            raise ImportFailed([LineError(0, "file", str(exc))]) from exc
        report.source_faults = [f"line {f.line}: {f.field}: {f.message}" for f in faults]
        if (benchmark or "emobench") not in set(Benchmark.objects.values_list("slug", flat=True)):
            taxonomy_load_fixture("emobench_taxonomy.json")
    records, parse_errors = parse_records(rows, max_chars=settings.ITEM_MAX_TEXT_CHARS, benchmark=benchmark)
    errors.extend(parse_errors)
    if not rows and not errors:
        errors.append(LineError(0, "file", _("the file holds no records")))
    if errors:
        raise ImportFailed(errors)
    taxonomy = TaxonomyIndex()
    may_decide = user_may_decide_status(user)
    existing = {
        item.uid: item
        for item in Item.objects.filter(uid__in=[r.uid for r in records]).select_related(
            "benchmark", "current_revision"
        )
    }
    resolved: list[tuple[ItemRecord, ItemState]] = []
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
        if item is not None and item.benchmark.slug != record.benchmark:
            errors.append(
                LineError(
                    record.line,
                    "benchmark",
                    _("item %(uid)s belongs to benchmark %(benchmark)s")
                    % {"uid": record.uid, "benchmark": item.benchmark.slug},
                )
            )
        if not may_decide:
            errors.extend(_status_errors(record=record, item=item))
        resolved.append((record, state))
    if errors:
        raise ImportFailed(errors)
    with transaction.atomic():
        for record, state in resolved:
            try:
                _import_one(
                    record=record,
                    state=state,
                    item=existing.get(record.uid),
                    taxonomy=taxonomy,
                    user=user,
                    report=report,
                    source_format=format,
                )
            except ValidationError as exc:
                raise ImportFailed([LineError(record.line, "record", "; ".join(exc.messages))]) from exc
        if dry_run:
            transaction.set_rollback(True)
    return report


def _status_errors(*, record: ItemRecord, item: Item | None) -> list[LineError]:
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


def _import_one(
    *,
    record: ItemRecord,
    state: ItemState,
    item: Item | None,
    taxonomy: TaxonomyIndex,
    user: AbstractBaseUser | None,
    report: ImportReport,
    source_format: str,
) -> None:
    if item is None:
        item = item_create(
            benchmark=taxonomy.benchmarks[record.benchmark],
            uid=record.uid,
            kind=record.kind,
            state=state,
            user=user,
            message=record.message or _("Imported"),
            origin=record.origin,
        )
        report.created.append(record.uid)
    else:
        revision = item_revise(item=item, state=state, user=user, message=record.message or _("Re-imported"))
        (report.revised if revision else report.unchanged).append(record.uid)
    if record.status is not None and record.status != item.status:
        item_status_decide(
            item=item,
            status=record.status,
            user=user,
            reason=_("Imported with status %(status)s (line %(line)s).")
            % {"status": record.status, "line": record.line},
            source=StatusDecision.Source.IMPORT,
            reference={"format": source_format, "line": record.line},
        )
    item.refresh_from_db(fields=["current_revision"])
    if item.current_revision.parity_issues:
        report.flagged[record.uid] = item.current_revision.parity_issues
