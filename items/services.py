"""Every write a user can trigger on taxonomy and items: called by views, the API and commands alike."""

import json
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from core.errors import ServiceError
from items import emobench
from items.content import check_parity, content_hash, normalise_content, searchable_text, validate_content
from items.interchange import ItemRecord, LineError, parse_records, read_jsonl
from items.models import (
    Benchmark,
    CrisisLevel,
    Dimension,
    EmotionCategory,
    Item,
    ItemDraft,
    ItemRevision,
    Scenario,
    ScenarioDomain,
)

FIXTURES = Path(settings.BASE_DIR) / "fixtures"
IMPORT_FORMATS = ("eistudio", "emobench")


class RevisionConflict(ServiceError):
    """The item changed since the editor loaded it; saving would overwrite someone's work."""

    status_code = 409
    code = "revision_conflict"


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
class ItemState:
    """The editable state of an item, with taxonomy references resolved."""

    dimension: Dimension
    content: dict
    scenario: Scenario | None = None
    emotions: list[EmotionCategory] = field(default_factory=list)
    crisis_level: CrisisLevel | None = None
    difficulty: str = ""
    metadata: dict = field(default_factory=dict)

    def attributes(self) -> dict:
        """Return the classification snapshot stored with a revision."""
        return {
            "dimension": self.dimension.code,
            "scenario": self.scenario.code if self.scenario else None,
            "emotions": sorted(e.code for e in self.emotions),
            "crisis_level": self.crisis_level.level if self.crisis_level else None,
            "difficulty": self.difficulty or "",
            "metadata": self.metadata or {},
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


# --- taxonomy -------------------------------------------------------------------------------------------


@transaction.atomic
def taxonomy_load(*, data: dict) -> dict[str, int]:
    """Create or update taxonomy rows from a taxonomy document; return how many rows of each kind it holds.

    Rows are matched by code, so loading the same document twice changes nothing.
    """
    counts = {"benchmarks": 0, "dimensions": 0, "emotions": 0, "domains": 0, "scenarios": 0, "crisis_levels": 0}
    for bench in data.get("benchmarks", []):
        benchmark, _created = Benchmark.objects.update_or_create(
            slug=bench["slug"],
            defaults={k: bench.get(k, "") for k in ("name_en", "name_zh", "description_en", "description_zh")},
        )
        counts["benchmarks"] += 1
        position = 0

        def load_dimensions(nodes: list[dict], parent: Dimension | None, benchmark: Benchmark = benchmark) -> None:
            nonlocal position
            for node in nodes:
                position += 1
                dimension, _created = Dimension.objects.update_or_create(
                    benchmark=benchmark,
                    code=node["code"],
                    defaults={
                        "parent": parent,
                        "level": node["level"],
                        "name_en": node["name_en"],
                        "name_zh": node["name_zh"],
                        "subjective": bool(node.get("subjective", False)),
                        "provisional": bool(node.get("provisional", False)),
                        "target_items": node.get("target_items"),
                        "definition_en": node.get("definition_en", ""),
                        "definition_zh": node.get("definition_zh", ""),
                        "position": position,
                    },
                )
                dimension.full_clean()
                counts["dimensions"] += 1
                load_dimensions(node.get("children", []), dimension)

        load_dimensions(bench.get("dimensions", []), None)
    for position, emotion in enumerate(data.get("emotion_categories", []), start=1):
        EmotionCategory.objects.update_or_create(
            code=emotion["code"],
            defaults={
                "name_en": emotion["name_en"],
                "name_zh": emotion["name_zh"],
                "valence": emotion["valence"],
                "position": position,
            },
        )
        counts["emotions"] += 1
    for d_position, domain_data in enumerate(data.get("scenario_domains", []), start=1):
        domain, _created = ScenarioDomain.objects.update_or_create(
            code=domain_data["code"],
            defaults={"name_en": domain_data["name_en"], "name_zh": domain_data["name_zh"], "position": d_position},
        )
        counts["domains"] += 1
        for position, scenario in enumerate(domain_data.get("scenarios", []), start=1):
            Scenario.objects.update_or_create(
                code=scenario["code"],
                defaults={
                    "domain": domain,
                    "name_en": scenario["name_en"],
                    "name_zh": scenario["name_zh"],
                    "position": position,
                },
            )
            counts["scenarios"] += 1
    for level in data.get("crisis_levels", []):
        CrisisLevel.objects.update_or_create(
            level=level["level"],
            defaults={k: level[k] for k in ("name_en", "name_zh", "definition_en", "definition_zh")},
        )
        counts["crisis_levels"] += 1
    return counts


def taxonomy_load_fixture(name: str = "taxonomy.json") -> dict[str, int]:
    """Load a taxonomy document from ``fixtures/``."""
    return taxonomy_load(data=json.loads((FIXTURES / name).read_text(encoding="utf-8")))


# --- items ----------------------------------------------------------------------------------------------


def _check_state(*, benchmark: Benchmark, kind: str, state: ItemState) -> None:
    errors = validate_content(kind, state.content, max_chars=settings.ITEM_MAX_TEXT_CHARS)
    if errors:
        raise ValidationError({"content": [str(e) for e in errors]})
    if state.dimension.benchmark_id != benchmark.pk:
        raise ValidationError({"dimension": _("The dimension belongs to another benchmark.")})
    if not isinstance(state.metadata, dict):
        raise ValidationError({"metadata": _("Metadata must be an object.")})


def _write_revision(*, item: Item, state: ItemState, user: AbstractBaseUser | None, message: str) -> ItemRevision:
    content = normalise_content(item.kind, state.content)
    attributes = state.attributes()
    parity = [issue.as_dict() for issue in check_parity(item.kind, content)]
    number = (item.current_revision.number + 1) if item.current_revision_id else 1
    revision = ItemRevision(
        item=item,
        number=number,
        content=content,
        attributes=attributes,
        content_hash=content_hash(content, attributes),
        parity_issues=parity,
        message=message[:500],
        author=user,
    )
    revision.full_clean()
    revision.save()
    item.current_revision = revision
    item.dimension = state.dimension
    item.scenario = state.scenario
    item.crisis_level = state.crisis_level
    item.difficulty = state.difficulty or ""
    item.metadata = state.metadata or {}
    item.has_en = "en" in content
    item.has_zh = "zh" in content
    item.parity_ok = not parity
    item.search_text = searchable_text(content)
    item.updated_by = user
    item.full_clean()
    item.save()
    item.emotions.set(state.emotions)
    return revision


@transaction.atomic
def item_create(
    *,
    benchmark: Benchmark,
    uid: str,
    kind: str,
    state: ItemState,
    user: AbstractBaseUser | None,
    message: str = "",
    origin: str = Item.Origin.EXPERT,
    status: str = Item.Status.DRAFT,
) -> Item:
    """Create an item with its first revision."""
    _check_state(benchmark=benchmark, kind=kind, state=state)
    if Item.objects.filter(uid=uid).exists():
        raise ValidationError({"uid": _("An item with uid %(uid)s already exists.") % {"uid": uid}})
    item = Item(
        uid=uid,
        benchmark=benchmark,
        dimension=state.dimension,
        kind=kind,
        origin=origin,
        status=status,
        created_by=user,
        updated_by=user,
    )
    item.full_clean(exclude=["current_revision"])
    item.save()
    _write_revision(item=item, state=state, user=user, message=message or _("Created"))
    return item


@transaction.atomic
def item_revise(
    *,
    item: Item,
    state: ItemState,
    user: AbstractBaseUser | None,
    message: str = "",
    base_revision: int | None = None,
) -> ItemRevision | None:
    """Save a new revision of ``item``; return None when nothing changed.

    ``base_revision`` is the revision number the editor started from; if someone saved a newer one since,
    ``RevisionConflict`` is raised instead of overwriting their work.
    """
    locked = (
        Item.objects.select_for_update(of=("self",)).select_related("current_revision", "benchmark").get(pk=item.pk)
    )
    current = locked.current_revision
    if base_revision is not None and current is not None and current.number != base_revision:
        author = current.author.get_username() if current.author else _("an import")
        raise RevisionConflict(
            _(
                "This item was changed by %(author)s (revision %(number)s, %(when)s) after you opened revision "
                "%(base)s. Your text was not saved over theirs: reload, compare and apply your edits again."
            )
            % {
                "author": author,
                "number": current.number,
                "when": current.created_at.strftime("%Y-%m-%d %H:%M UTC"),
                "base": base_revision,
            }
        )
    _check_state(benchmark=locked.benchmark, kind=locked.kind, state=state)
    content = normalise_content(locked.kind, state.content)
    if current is not None and current.content_hash == content_hash(content, state.attributes()):
        return None
    revision = _write_revision(item=locked, state=state, user=user, message=message)
    item.refresh_from_db()
    return revision


@transaction.atomic
def item_set_status(*, item: Item, status: str, user: AbstractBaseUser | None) -> Item:
    """Move an item to another workflow status (not a content change, so no new revision)."""
    if status not in Item.Status.values:
        raise ValidationError({"status": _("Unknown status %(status)s.") % {"status": status}})
    item.status = status
    item.updated_by = user
    item.full_clean()
    item.save(update_fields=["status", "updated_by", "updated_at"])
    return item


@transaction.atomic
def item_draft_save(*, item: Item, user: AbstractBaseUser, data: dict, base_revision: int | None) -> ItemDraft:
    """Autosave the editor's unsaved input for this user (replacing their previous draft of the item)."""
    size = len(json.dumps(data, ensure_ascii=False))
    if size > 20 * settings.ITEM_MAX_TEXT_CHARS:
        raise ValidationError(_("The draft is too large to autosave."))
    draft, _created = ItemDraft.objects.update_or_create(
        item=item, user=user, defaults={"data": data, "base_revision": base_revision}
    )
    return draft


def item_draft_discard(*, item: Item, user: AbstractBaseUser) -> None:
    """Forget the user's autosaved draft of the item."""
    ItemDraft.objects.filter(item=item, user=user).delete()


# --- import ---------------------------------------------------------------------------------------------


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
                )
            except ValidationError as exc:
                raise ImportFailed([LineError(record.line, "record", "; ".join(exc.messages))]) from exc
        if dry_run:
            transaction.set_rollback(True)
    return report


def _import_one(
    *,
    record: ItemRecord,
    state: ItemState,
    item: Item | None,
    taxonomy: TaxonomyIndex,
    user: AbstractBaseUser | None,
    report: ImportReport,
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
            status=record.status,
        )
        report.created.append(record.uid)
    else:
        revision = item_revise(item=item, state=state, user=user, message=record.message or _("Re-imported"))
        if item.status != record.status:
            item_set_status(item=item, status=record.status, user=user)
        (report.revised if revision else report.unchanged).append(record.uid)
    item.refresh_from_db(fields=["current_revision"])
    if item.current_revision.parity_issues:
        report.flagged[record.uid] = item.current_revision.parity_issues


# --- users ----------------------------------------------------------------------------------------------
