"""Creating and revising items (every change a new immutable revision) and the editor's autosaved drafts."""

import json
from dataclasses import dataclass, field

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from annotation.items.content import check_parity, content_hash, normalise_content, searchable_text, validate_content
from annotation.items.models import (
    Benchmark,
    CrisisLevel,
    Dimension,
    EmotionCategory,
    Item,
    ItemDraft,
    ItemRevision,
    Scenario,
    StatusDecision,
)
from annotation.items.services.statuses import item_status_decide, user_may_decide_status
from annotation.items.signatures import signatures_update
from core.errors import ServiceError
from core.inputs import InputRefused, refuse_nul


class RevisionConflict(ServiceError):
    """The item changed since the editor loaded it; saving would overwrite someone's work."""

    status_code = 409
    code = "revision_conflict"


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


def _check_state(*, benchmark: Benchmark, kind: str, state: ItemState) -> None:
    errors = validate_content(kind, state.content, max_chars=settings.ITEM_MAX_TEXT_CHARS)
    if errors:
        raise ValidationError({"content": [str(e) for e in errors]})
    if state.dimension.benchmark_id != benchmark.pk:
        raise ValidationError({"dimension": _("The dimension belongs to another benchmark.")})
    if not isinstance(state.metadata, dict):
        raise ValidationError({"metadata": _("Metadata must be an object.")})
    try:
        refuse_nul(state.metadata, prefix="metadata")
    except InputRefused as exc:
        raise ValidationError({"metadata": str(exc)}) from exc


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
    signatures_update(item=item, revision=revision)
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
) -> Item:
    """Create a draft item with its first revision, recording its first status.

    Any other status is decided afterwards with ``item_status_decide``.
    """
    _check_state(benchmark=benchmark, kind=kind, state=state)
    taken = ValidationError({"uid": _("An item with uid %(uid)s already exists.") % {"uid": uid}})
    if Item.objects.filter(uid=uid).exists():
        raise taken
    item = Item(
        uid=uid,
        benchmark=benchmark,
        dimension=state.dimension,
        kind=kind,
        origin=origin,
        created_by=user,
        updated_by=user,
    )
    item.full_clean(exclude=["current_revision"])
    try:
        # Someone creating the same uid at the same moment passed the check above too; the database decides.
        with transaction.atomic():
            item.save()
    except IntegrityError as exc:
        if Item.objects.filter(uid=uid).exists():
            raise taken from exc
        raise
    decision = StatusDecision(
        item=item, from_status="", to_status=item.status, source=StatusDecision.Source.CREATED, decided_by=user
    )
    decision.full_clean()
    decision.save()
    _write_revision(item=item, state=state, user=user, message=message or _("Created"))
    return item


@transaction.atomic
def item_create_with_status(
    *,
    benchmark: Benchmark,
    uid: str,
    kind: str,
    state: ItemState,
    user: AbstractBaseUser | None,
    status: str = Item.Status.DRAFT,
    status_reason: str = "",
    message: str = "",
) -> Item:
    """Create an item and, for a status other than draft, decide it at once with its reason (as a lead decision).

    Only those who may decide statuses (lead experts, admins) give a new item another status, and they say why;
    otherwise nothing is created.
    """
    reason = status_reason.strip()
    if status != Item.Status.DRAFT and not user_may_decide_status(user):
        raise ValidationError(
            {
                "status": _(
                    "Only a lead expert or an admin may give a new item the status %(status)s; leave the "
                    "field out: new items start as draft and are accepted or rejected through screening."
                )
                % {"status": status}
            }
        )
    if status != Item.Status.DRAFT and not reason:
        raise ValidationError({"status_reason": _("Give the reason for the status %(status)s.") % {"status": status}})
    item = item_create(benchmark=benchmark, uid=uid, kind=kind, state=state, user=user, message=message)
    if status != Item.Status.DRAFT:
        item_status_decide(
            item=item, status=status, user=user, reason=reason, source=StatusDecision.Source.LEAD_DECISION
        )
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
    locked = Item.objects.select_for_update(of=("self",)).select_related("benchmark").get(pk=item.pk)
    # Read after taking the lock: PostgreSQL re-reads only the locked row after a lock wait, so a revision joined
    # in the same query would be the one current before the other save committed (or none).
    current = (
        ItemRevision.objects.select_related("author").get(pk=locked.current_revision_id)
        if locked.current_revision_id
        else None
    )
    locked.current_revision = current
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
    if isinstance(state.content, dict) and not any(state.content.get(lang) for lang in ("en", "zh")):
        # A new item starts empty (item_create); a revision takes text in at least one language.
        raise ValidationError(
            {"content": _("A revision needs the text of at least one language (en or zh); nothing was saved.")}
        )
    _check_state(benchmark=locked.benchmark, kind=locked.kind, state=state)
    content = normalise_content(locked.kind, state.content)
    if current is not None and current.content_hash == content_hash(content, state.attributes()):
        return None
    revision = _write_revision(item=locked, state=state, user=user, message=message)
    if locked.status == Item.Status.ACCEPTED:
        _unaccept_revised(item=locked, revision=revision, user=user)
    item.refresh_from_db()
    return revision


def unaccepted_reason(number: int) -> str:
    """Return the recorded reason an accepted item went back to draft when revision ``number`` was saved."""
    return _(
        "Revision %(number)s changed an accepted item: its new text has not been screened, so the item is a draft "
        "again until a screening round (or a lead decision) accepts it."
    ) % {"number": number}


def _unaccept_revised(*, item: Item, revision: ItemRevision, user: AbstractBaseUser | None) -> None:
    """Record that ``revision`` sends accepted ``item`` back to draft, so no release pins unscreened text."""
    item_status_decide(
        item=item,
        status=Item.Status.DRAFT,
        user=user,
        reason=unaccepted_reason(revision.number),
        source=StatusDecision.Source.REVISION,
        reference={"revision": revision.number},
    )
    item.status = Item.Status.DRAFT


@transaction.atomic
def item_draft_save(*, item: Item, user: AbstractBaseUser, data: dict, base_revision: int | None) -> ItemDraft:
    """Autosave the editor's unsaved input for this user (replacing their previous draft of the item)."""
    try:
        refuse_nul(data)
    except InputRefused as exc:
        raise ValidationError(str(exc)) from exc
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
