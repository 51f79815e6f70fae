"""Writing checked import records in batches, each item exactly as the per-item services would write it.

``item_create``, ``item_revise`` and ``item_status_decide`` write one item in a dozen queries; an import of
100,000 items cannot afford that. This module writes the same rows (items, revisions numbered from the current one,
content hashes, parity issues, emotions, the *created* decision and the *import* status decision with its line,
authorship) with a handful of bulk queries per batch. The caller has checked every record first and holds the
transaction.

The per-item services also sign each new revision for the near-duplicate index (``annotation.items.signatures``); an
import
signs its items once all are written, in the same transaction (``annotation.items.services.imports``, with
``index_build``).
"""

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import batched
from typing import TYPE_CHECKING

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, connection, transaction
from django.db.models import Model
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.items.content import check_parity, content_hash, normalise_content, searchable_text
from annotation.items.interchange import ItemRecord
from annotation.items.models import Item, ItemRevision, StatusDecision
from annotation.items.services.items import ItemState, unaccepted_reason

if TYPE_CHECKING:
    from annotation.items.services.imports import ImportReport, TaxonomyIndex

BATCH_SIZE = 1000
ITEM_STATE_FIELDS = [
    "current_revision",
    "dimension",
    "scenario",
    "crisis_level",
    "difficulty",
    "metadata",
    "has_en",
    "has_zh",
    "parity_ok",
    "search_text",
    "status",
    "updated_by",
    "updated_at",
]
EmotionLink = Item.emotions.through


@dataclass(frozen=True)
class ExistingItem:
    """What an import needs to know about an item that already exists: identity, status and current revision."""

    pk: int
    uid: str
    kind: str
    benchmark: str
    status: str
    revision_id: int | None
    number: int = 0
    content_hash: str = ""
    parity_issues: list = field(default_factory=list)


class UidsTaken(Exception):
    """Items with these uids were created by someone else while the import ran."""

    def __init__(self, uids: dict[str, int]) -> None:
        self.uids = uids  # uid -> line
        super().__init__(", ".join(sorted(uids)))


def existing_items(*, uids: list[str]) -> dict[str, ExistingItem]:
    """Return the items with these uids, locked until the transaction ends, with their current revisions."""
    found: dict[str, ExistingItem] = {}
    for chunk in batched(uids, BATCH_SIZE):
        rows = list(
            Item.objects.select_for_update(of=("self",))
            .filter(uid__in=chunk)
            .order_by("pk")
            .values_list("pk", "uid", "kind", "benchmark__slug", "status", "current_revision_id")
        )
        # Read after taking the locks (as item_revise does): a revision joined in the locking query could be stale.
        revisions = {
            pk: (number, digest, parity)
            for pk, number, digest, parity in ItemRevision.objects.filter(
                pk__in=[row[5] for row in rows if row[5]]
            ).values_list("pk", "number", "content_hash", "parity_issues")
        }
        for pk, uid, kind, benchmark, status, revision_id in rows:
            number, digest, parity = revisions.get(revision_id, (0, "", []))
            found[uid] = ExistingItem(pk, uid, kind, benchmark, status, revision_id, number, digest, parity)
    return found


@dataclass
class _Planned:
    record: ItemRecord
    state: ItemState
    item: Item
    existing: ExistingItem | None
    revision: ItemRevision | None = None
    status_changed: bool = False
    # An accepted item whose new text came without a status goes back to draft (``item_revise`` does the same).
    unaccepted: bool = False

    @property
    def outcome(self) -> str:
        """Which list of the import's report the item goes in: created, revised or unchanged."""
        if self.existing is None:
            return "created"
        return "revised" if self.revision is not None else "unchanged"

    @property
    def parity_issues(self) -> list[dict]:
        return self.revision.parity_issues if self.revision is not None else self.existing.parity_issues


def write_records(
    *,
    records: Iterable[ItemRecord],
    existing: dict[str, ExistingItem],
    taxonomy: "TaxonomyIndex",
    user: AbstractBaseUser | None,
    report: "ImportReport",
    source_format: str,
    on_batch: Callable[[int], None] | None = None,
) -> None:
    """Write checked records in batches of ``BATCH_SIZE``; the caller holds the transaction.

    ``on_batch``, if given, is called after each batch with the number of records written so far.
    """
    messages = (_("Imported"), _("Re-imported"))  # in the caller's language: the planning thread has its own
    batches = batched(records, BATCH_SIZE)

    def plan_next() -> list[_Planned] | None:
        batch = next(batches, None)
        if batch is None:
            return None
        return [
            _plan(record, existing=existing.get(record.uid), taxonomy=taxonomy, user=user, messages=messages)
            for record in batch
        ]

    # Reading and planning the next batch (Python only, no database) runs while the database writes this one.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="import-plan") as pool:
        pending = pool.submit(plan_next)
        while (plans := pending.result()) is not None:
            pending = pool.submit(plan_next)
            _write_batch(plans=plans, user=user, report=report, source_format=source_format)
            if on_batch is not None:
                on_batch(report.total)


def _plan(
    record: ItemRecord,
    *,
    existing: ExistingItem | None,
    taxonomy: "TaxonomyIndex",
    user: AbstractBaseUser | None,
    messages: tuple[str, str],
) -> _Planned:
    state = taxonomy.resolve(record)
    assert isinstance(state, ItemState), "records are checked before they are written"
    content = normalise_content(record.kind, state.content)
    attributes = state.attributes()
    digest = content_hash(content, attributes)
    current_status = existing.status if existing is not None else Item.Status.DRAFT
    status = record.status if record.status is not None else current_status
    if existing is None:
        item = Item(
            uid=record.uid,
            benchmark=taxonomy.benchmarks[record.benchmark],
            kind=record.kind,
            origin=record.origin,
            status=status,
            created_by=user,
        )
    else:
        item = Item(pk=existing.pk, uid=record.uid, kind=record.kind, status=status)
    planned = _Planned(record=record, state=state, item=item, existing=existing)
    planned.status_changed = status != current_status
    if existing is not None and existing.content_hash == digest:
        return planned
    parity = [issue.as_dict() for issue in check_parity(record.kind, content)]
    default_message = messages[0] if existing is None else messages[1]
    planned.revision = ItemRevision(
        number=existing.number + 1 if existing is not None else 1,
        content=content,
        attributes=attributes,
        content_hash=digest,
        parity_issues=parity,
        message=(record.message or default_message)[:500],
        author=user,
    )
    item.dimension = state.dimension
    item.scenario = state.scenario
    item.crisis_level = state.crisis_level
    item.difficulty = state.difficulty or ""
    item.metadata = state.metadata or {}
    item.has_en = "en" in content
    item.has_zh = "zh" in content
    item.parity_ok = not parity
    item.search_text = searchable_text(content)
    if current_status == Item.Status.ACCEPTED:
        # New text goes back to draft first, as with item_revise; a file that says "accepted" (as every export of an
        # accepted item does) does not accept unscreened text, while another status in the file is then decided.
        item.status = Item.Status.DRAFT if status == Item.Status.ACCEPTED else status
        planned.status_changed = planned.unaccepted = True
    return planned


def _write_batch(
    *, plans: list[_Planned], user: AbstractBaseUser | None, report: "ImportReport", source_format: str
) -> None:
    now = timezone.now()
    for plan in plans:
        plan.item.updated_by = user
        plan.item.updated_at = now
    created = [plan for plan in plans if plan.outcome == "created"]
    revised = [plan for plan in plans if plan.revision is not None]
    reserved = _reserve_ids(ItemRevision, len(revised))
    if reserved is not None:
        # New items are inserted pointing at their first revision (the foreign key is checked at commit), so that
        # each row and its search indexes are written once, not inserted and then updated.
        for plan, pk in zip(revised, reserved, strict=True):
            plan.revision.pk = pk
            plan.item.current_revision_id = pk
    _create_items(created)
    _create_revisions(revised)
    StatusDecision.objects.bulk_create(_decisions(plans, user=user, source_format=source_format))
    if reserved is None:
        Item.objects.bulk_update([plan.item for plan in created], ["current_revision"])
    _update_items(plans)
    _link_emotions(revised)
    _report_outcomes(plans, report)


def _create_revisions(revised: list[_Planned]) -> None:
    """Insert the new revisions and make each its item's current one."""
    for plan in revised:
        plan.revision.item = plan.item
    ItemRevision.objects.bulk_create([plan.revision for plan in revised])
    for plan in revised:
        plan.item.current_revision = plan.revision


def _update_items(plans: list[_Planned]) -> None:
    """Write the new state of revised items, and the new status of unchanged items whose status changed."""
    Item.objects.bulk_update([plan.item for plan in plans if plan.outcome == "revised"], ITEM_STATE_FIELDS)
    Item.objects.bulk_update(
        [plan.item for plan in plans if plan.outcome == "unchanged" and plan.status_changed],
        ["status", "updated_by", "updated_at"],
    )


def _report_outcomes(plans: list[_Planned], report: "ImportReport") -> None:
    for plan in plans:
        getattr(report, plan.outcome).append(plan.record.uid)
        if plan.parity_issues:
            report.flagged[plan.record.uid] = plan.parity_issues


def _reserve_ids(model: type[Model], count: int) -> list[int] | None:
    """Return ``count`` new primary keys of ``model`` from its PostgreSQL sequence, ascending; None elsewhere."""
    if connection.vendor != "postgresql" or not count:
        return None
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)",
            [model._meta.db_table, count],
        )
        return sorted(row[0] for row in cursor.fetchall())


def _create_items(created: list[_Planned]) -> None:
    if not created:
        return
    try:
        # Someone creating one of these uids at the same moment: the database decides, as it does in item_create.
        with transaction.atomic():
            Item.objects.bulk_create([plan.item for plan in created])
    except IntegrityError as exc:
        lines = {plan.record.uid: plan.record.line for plan in created}
        taken = set(Item.objects.filter(uid__in=list(lines)).values_list("uid", flat=True))
        if taken:
            raise UidsTaken({uid: lines[uid] for uid in taken}) from exc
        raise


def _decisions(plans: list[_Planned], *, user: AbstractBaseUser | None, source_format: str) -> list[StatusDecision]:
    """Return the status decisions the per-item services record, in the order they record them."""
    decisions = []
    for plan in plans:
        before = plan.existing.status if plan.existing is not None else Item.Status.DRAFT
        if plan.existing is None:
            decisions.append(
                StatusDecision(
                    item=plan.item,
                    from_status="",
                    to_status=Item.Status.DRAFT,
                    source=StatusDecision.Source.CREATED,
                    decided_by=user,
                )
            )
        if plan.unaccepted:
            decisions.append(
                StatusDecision(
                    item=plan.item,
                    from_status=Item.Status.ACCEPTED,
                    to_status=Item.Status.DRAFT,
                    source=StatusDecision.Source.REVISION,
                    reason=unaccepted_reason(plan.revision.number),
                    reference={"revision": plan.revision.number},
                    decided_by=user,
                )
            )
            before = Item.Status.DRAFT
        if plan.status_changed and plan.item.status != before:
            record = plan.record
            decisions.append(
                StatusDecision(
                    item=plan.item,
                    from_status=before,
                    to_status=record.status,
                    source=StatusDecision.Source.IMPORT,
                    reason=_("Imported with status %(status)s (line %(line)s).")
                    % {"status": record.status, "line": record.line},
                    reference=_import_reference(plan, source_format),
                    decided_by=user,
                )
            )
    return decisions


def _import_reference(plan: _Planned, source_format: str) -> dict:
    """Return where an import decision came from and, for an acceptance, the revision it accepted."""
    reference = {"format": source_format, "line": plan.record.line}
    if plan.record.status == Item.Status.ACCEPTED:
        reference["revision"] = plan.revision.number if plan.revision is not None else plan.existing.number
    return reference


def _link_emotions(plans: list[_Planned]) -> None:
    """Set each written item's emotions as ``item.emotions.set`` would: remove the others, add the missing."""
    wanted = {plan.item.pk: {emotion.pk for emotion in plan.state.emotions} for plan in plans}
    revised = [plan.item.pk for plan in plans if plan.existing is not None]
    stale, present = [], set()
    for link_id, item_id, emotion_id in EmotionLink.objects.filter(item_id__in=revised).values_list(
        "pk", "item_id", "emotioncategory_id"
    ):
        if emotion_id in wanted[item_id]:
            present.add((item_id, emotion_id))
        else:
            stale.append(link_id)
    if stale:
        EmotionLink.objects.filter(pk__in=stale).delete()
    EmotionLink.objects.bulk_create(
        [
            EmotionLink(item_id=item_id, emotioncategory_id=emotion_id)
            for item_id, emotions in wanted.items()
            for emotion_id in sorted(emotions)
            if (item_id, emotion_id) not in present
        ]
    )
