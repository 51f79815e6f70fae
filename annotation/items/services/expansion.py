"""Expanding audited reply sets into EiCAP probes: one-vs-three ``multi_turn_choice`` items.

Each accepted preferred reply (position k, the same k in every turn of the dialogue) is paired with the three
accepted distractors of its turn; a two-turn dialogue gives two-turn probes, scored together (the minimum across
turns). The key's position is drawn per probe, language and turn from a seeded generator and recorded in the
item's content (the answer index) and metadata (which reply each option is).
"""

import hashlib
import random
from dataclasses import dataclass, field

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.items.content import LANGUAGES
from annotation.items.models import Item, Reply, ReplySet, StatusDecision
from annotation.items.models.replysets import REPLIES_PER_ROLE
from annotation.items.services.items import ItemState, item_create, item_revise
from annotation.items.services.statuses import item_status_decide, user_may_decide_status

OPTIONS = REPLIES_PER_ROLE + 1


@dataclass
class ExpansionReport:
    """What an expansion did: probes created, revised, unchanged, and why some could not be built."""

    created: list[str] = field(default_factory=list)
    revised: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    # Probes expanded earlier whose preferred reply is no longer accepted: reject them (or re-audit the reply).
    withdrawn: list[str] = field(default_factory=list)
    problems: list[dict] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "created": self.created,
            "revised": self.revised,
            "unchanged": self.unchanged,
            "withdrawn": self.withdrawn,
            "problems": self.problems,
        }

    def merge(self, other: "ExpansionReport") -> None:
        for name in ("created", "revised", "unchanged", "withdrawn", "problems"):
            getattr(self, name).extend(getattr(other, name))


def key_order(*, seed: int, uid: str, language: str, turn: int) -> list[int]:
    """Return the order of the four options (0 is the preferred reply, 1-3 the distractors) for one probe turn."""
    digest = hashlib.sha256(f"eicap|{seed}|{uid}|{language}|{turn}".encode()).hexdigest()
    order = list(range(OPTIONS))
    random.Random(int(digest[:16], 16)).shuffle(order)
    return order


def probe_uid(reply_set: ReplySet, position: int) -> str:
    return f"{reply_set.uid}-p{position}"


def _languages(reply_set: ReplySet, turns: list, replies: dict) -> list[str]:
    """The languages in which every turn and every reply of the set has text."""
    found = []
    for lang in LANGUAGES:
        if all(turn.user.get(lang) for turn in turns) and all(
            (r.current_revision.content.get(lang) or {}).get("text") for rs in replies.values() for r in rs
        ):
            found.append(lang)
    return found


def reply_set_probes(reply_set: ReplySet, *, seed: int) -> tuple[dict[int, dict], list[dict]]:
    """Return the probes an audited reply set gives, by preferred position: ``{k: {"content", "metadata"}}``,
    and the problems that kept a probe (or the whole set) from being built."""
    turns = list(reply_set.turns.order_by("number"))
    replies = {
        turn.number: list(turn.replies.select_related("current_revision").order_by("role", "position"))
        for turn in turns
    }
    pending = sum(1 for rs in replies.values() for r in rs if r.audit == Reply.Audit.PENDING)
    if pending:
        return {}, [
            {
                "reply_set": reply_set.uid,
                "reason": _("%(n)s replies are not audited yet; audit every reply first.") % {"n": pending},
            }
        ]
    distractors, problems = _distractors(reply_set, turns, replies)
    if problems:
        return {}, problems
    used = {n: [r for r in rs if r.usable] for n, rs in replies.items()}
    languages = _languages(reply_set, turns, used)
    if not languages:
        return {}, [{"reply_set": reply_set.uid, "reason": _("No language has the text of every turn and reply.")}]
    probes = {}
    for k in range(1, REPLIES_PER_ROLE + 1):
        preferred = _preferred(turns, replies, k)
        if len(preferred) != len(turns):
            problems.append(
                {
                    "reply_set": reply_set.uid,
                    "probe": probe_uid(reply_set, k),
                    "reason": _("Preferred reply %(k)s is rejected in a turn: no probe.") % {"k": k},
                }
            )
            continue
        probes[k] = _probe(reply_set, turns, preferred, distractors, k=k, seed=seed, languages=languages)
    return probes, problems


def _distractors(reply_set: ReplySet, turns: list, replies: dict) -> tuple[dict[int, list[Reply]], list[dict]]:
    """Each turn's accepted distractors, and a problem for each turn that has not exactly three."""
    problems: list[dict] = []
    distractors = {}
    for turn in turns:
        usable = [r for r in replies[turn.number] if r.role == Reply.Role.DISTRACTOR and r.usable]
        if len(usable) != REPLIES_PER_ROLE:
            problems.append(
                {
                    "reply_set": reply_set.uid,
                    "reason": _(
                        "Turn %(turn)s has %(n)s accepted distractors; a one-vs-three probe needs %(need)s (edit a "
                        "rejected one: an edit accepts it)."
                    )
                    % {"turn": turn.number, "n": len(usable), "need": REPLIES_PER_ROLE},
                }
            )
        distractors[turn.number] = usable
    return distractors, problems


def _preferred(turns: list, replies: dict, k: int) -> dict[int, Reply]:
    """The accepted preferred reply at position ``k`` of each turn (a turn where it was rejected is left out)."""
    preferred = {}
    for turn in turns:
        match = [r for r in replies[turn.number] if r.role == Reply.Role.PREFERRED and r.position == k]
        if match and match[0].usable:
            preferred[turn.number] = match[0]
    return preferred


def _probe(
    reply_set: ReplySet,
    turns: list,
    preferred: dict[int, Reply],
    distractors: dict[int, list[Reply]],
    *,
    k: int,
    seed: int,
    languages: list[str],
) -> dict:
    """Probe ``k``: in each language and turn, the preferred reply among the three distractors at a seeded place."""
    uid = probe_uid(reply_set, k)
    content, options_of = {}, {}
    for lang in languages:
        version_turns, ids = [], []
        for t, turn in enumerate(turns):
            candidates = [preferred[turn.number], *distractors[turn.number]]
            order = key_order(seed=seed, uid=uid, language=lang, turn=t)
            chosen = [candidates[i] for i in order]
            version_turns.append(
                {
                    "user": turn.user[lang],
                    "options": [r.current_revision.content[lang]["text"] for r in chosen],
                    "answer": order.index(0),
                }
            )
            ids.append([r.pk for r in chosen])
        content[lang] = {"context": reply_set.context.get(lang, ""), "turns": version_turns}
        options_of[lang] = ids
    metadata = {
        "eicap": {
            "reply_set": reply_set.uid,
            "preferred": k,
            "seed": seed,
            "options": options_of,
            "revisions": {
                str(r.pk): r.current_revision.number
                for r in [*preferred.values(), *(d for ds in distractors.values() for d in ds)]
            },
        }
    }
    return {"uid": uid, "content": content, "metadata": metadata}


@transaction.atomic
def reply_set_expand(
    *, reply_set: ReplySet, user: AbstractBaseUser | None, seed: int | None = None, accept: bool = False
) -> ExpansionReport:
    """Create (or revise) the probes of one audited reply set; a second call with nothing changed changes nothing.

    ``seed`` draws the key positions; None keeps the seed the set's probes were built with (0 for a first
    expansion), so expanding again after an edit moves no key.

    ``accept``: accept the new or revised probes at once as a lead decision (the audit of every reply stands for
    their screening); only a lead expert or an admin may. Otherwise they are drafts, screened like other items.
    """
    if accept and not user_may_decide_status(user):
        raise ValidationError({"accept": _("Only a lead expert or an admin may accept probes as they are expanded.")})
    # Lock the set's row alone (PostgreSQL locks no nullable side of a join), then read it with its taxonomy.
    ReplySet.objects.select_for_update().filter(pk=reply_set.pk).exists()
    reply_set = ReplySet.objects.select_related("benchmark", "dimension", "scenario").get(pk=reply_set.pk)
    report = ExpansionReport()
    existing = {i.uid: i for i in Item.objects.filter(uid__startswith=f"{reply_set.uid}-p")}
    if seed is None:
        recorded = [(i.metadata.get("eicap") or {}).get("seed") for i in existing.values()]
        seed = next((s for s in recorded if isinstance(s, int)), 0)
    probes, report.problems = reply_set_probes(reply_set, seed=seed)
    for probe in probes.values():
        item = _probe_store(reply_set=reply_set, probe=probe, item=existing.get(probe["uid"]), user=user, report=report)
        if item is not None and accept and item.status != Item.Status.ACCEPTED:
            _probe_accept(item=item, reply_set=reply_set, user=user)
    built = {probe["uid"] for probe in probes.values()}
    report.withdrawn = sorted(
        uid for uid, item in existing.items() if uid not in built and item.status != Item.Status.REJECTED
    )
    if probes:
        reply_set.expanded_at = timezone.now()
        reply_set.save(update_fields=["expanded_at"])
    return report


def _probe_store(
    *, reply_set: ReplySet, probe: dict, item: Item | None, user: AbstractBaseUser | None, report: ExpansionReport
) -> Item | None:
    """Create the probe's item, or revise ``item`` with the probe; note which on ``report``. Return the item as
    stored, None when it was already the same."""
    state = ItemState(
        dimension=reply_set.dimension,
        content=probe["content"],
        scenario=reply_set.scenario,
        metadata=probe["metadata"],
    )
    message = _("Expanded from reply set %(uid)s") % {"uid": reply_set.uid}
    if item is None:
        item = item_create(
            benchmark=reply_set.benchmark,
            uid=probe["uid"],
            kind=Item.Kind.MULTI_TURN_CHOICE,
            state=state,
            user=user,
            message=message,
            origin=Item.Origin.LLM_DRAFT,
        )
        report.created.append(item.uid)
    elif item_revise(item=item, state=state, user=user, message=message) is None:
        report.unchanged.append(item.uid)
        return None
    else:
        report.revised.append(item.uid)
    item.refresh_from_db()
    return item


def _probe_accept(*, item: Item, reply_set: ReplySet, user: AbstractBaseUser | None) -> None:
    """Accept a new or revised probe as a lead decision: the audit of each of its replies stands for screening."""
    item_status_decide(
        item=item,
        status=Item.Status.ACCEPTED,
        user=user,
        reason=_("Built from the replies of reply set %(uid)s, each audited by an expert.") % {"uid": reply_set.uid},
        source=StatusDecision.Source.LEAD_DECISION,
        reference={"reply_set": reply_set.uid},
    )


def reply_sets_expand(
    *, reply_sets: list[ReplySet], user: AbstractBaseUser | None, seed: int | None = None, accept: bool = False
) -> ExpansionReport:
    """Expand several reply sets, each in its own transaction (one set's problems do not stop the others)."""
    report = ExpansionReport()
    for reply_set in reply_sets:
        report.merge(reply_set_expand(reply_set=reply_set, user=user, seed=seed, accept=accept))
    return report
