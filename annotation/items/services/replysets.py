"""EiCAP reply sets: drafting them with an LLM (a template kind of its own), collecting the drafts, and the expert
audit of every reply (accept, reject, or edit as a new revision).

A drafting job of a ``reply_set`` template asks, for each dialogue of the template's taxonomy leaf (drafted by the
model, or the researcher's own user turns), for three preferred replies that follow the leaf's principle and three
style-matched distractors that subtly violate it, each with the principle it follows or violates.
"""

import json

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.items.content import LANGUAGES
from annotation.items.models import (
    DraftingJob,
    ItemTemplate,
    KeyJudgement,
    Reply,
    ReplyAudit,
    ReplyRevision,
    ReplySet,
    ReplyTurn,
)
from annotation.items.models.replysets import REPLIES_PER_ROLE
from core.inputs import NUL

REPLY_SET = "reply_set"
# Reply sets per prompt when the model drafts the dialogues too (each set is six replies per turn: keep it small).
BATCH = 2
MAX_GIVEN_DIALOGUES = 500
REPLY_SHAPE = '{"text": "...", "principle": "..."}'
TURN_SHAPE = (
    '{"user": "...", "preferred": ['
    + ", ".join([REPLY_SHAPE] * 3)
    + '], "distractors": ['
    + ", ".join([REPLY_SHAPE] * 3)
    + "]}"
)
# The line of a prompt that carries the researcher's own user turns, as JSON (the simulator reads it back).
GIVEN_TURNS_CUE = "User turns (JSON, use them verbatim):"


def reply_set_shape(turns: int) -> str:
    return '{"context": "...", "turns": [' + ", ".join([TURN_SHAPE] * turns) + "]}"


def given_turns_clean(value: object, *, languages: list[str]) -> list[list[dict]]:
    """Check the researcher's dialogues: a list of dialogues of one or two turns, each turn a text in every
    language of the job (a bare string when the job has one language). Return them as ``{"en": ..., "zh": ...}``."""
    if value in (None, "", []):
        return []
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise _given_refused(_("The given turns are not JSON: %(error)s") % {"error": exc}) from exc
    if not isinstance(value, list) or not value:
        raise _given_refused(_("Give a JSON list of dialogues, each a list of one or two turns."))
    if len(value) > MAX_GIVEN_DIALOGUES:
        raise _given_refused(_("At most %(max)s dialogues per job.") % {"max": MAX_GIVEN_DIALOGUES})
    return [_given_dialogue(dialogue, d, languages) for d, dialogue in enumerate(value, start=1)]


def _given_refused(message: str) -> ValidationError:
    return ValidationError({"given_turns": message})


def _given_dialogue(dialogue: object, d: int, languages: list[str]) -> list[dict]:
    """Return dialogue number ``d``'s turns, each as its text per language."""
    if not isinstance(dialogue, list) or not 1 <= len(dialogue) <= 2:
        raise _given_refused(_("Dialogue %(n)s: give a list of one or two user turns.") % {"n": d})
    turns = []
    for t, turn in enumerate(dialogue, start=1):
        if isinstance(turn, str) and len(languages) == 1:
            turn = {languages[0]: turn}
        if not isinstance(turn, dict):
            raise _given_refused(_("Dialogue %(n)s, turn %(t)s: give a text per language.") % {"n": d, "t": t})
        turns.append({lang: _given_text(turn.get(lang), d, t, lang) for lang in languages})
    return turns


def _given_text(text: object, d: int, t: int, lang: str) -> str:
    """Return turn ``t`` of dialogue ``d`` in ``lang``, stripped: a text with content, no NUL, not too long."""
    if not isinstance(text, str) or not text.strip() or NUL in text:
        raise _given_refused(_("Dialogue %(n)s, turn %(t)s has no %(lang)s text.") % {"n": d, "t": t, "lang": lang})
    if len(text) > settings.ITEM_MAX_TEXT_CHARS:
        raise _given_refused(_("Dialogue %(n)s, turn %(t)s is too long.") % {"n": d, "t": t})
    return text.strip()


def reply_set_messages(
    *, template: ItemTemplate, n: int, turns: int, languages: list[str], scenario: str, emotion: str, given: list
) -> list[dict]:
    """Return the prompt asking for ``n`` reply sets of ``turns`` user turns (or for the given dialogue's)."""
    dimension = template.dimension
    shape = reply_set_shape(turns)
    if len(languages) == 2:
        form = '{"reply_sets": [{"en": ' + shape + ', "zh": ' + shape + "}]}"
        language_note = (
            "Write every reply set in English and in natural Simplified Chinese (not a literal translation)."
        )
    else:
        form = '{"reply_sets": [' + shape + "]}"
        language_note = "Write in English." if languages == ["en"] else "Write in natural Simplified Chinese."
    parts = [
        f"You draft {n} reply sets of the kind reply_set for the emotional-intelligence principle "
        f"'{dimension.name_en}': {dimension.definition_en}",
        f"Each reply set is a dialogue of {turns} user turn(s). For each user turn write three preferred replies that "
        "follow the principle and three distractors that match the preferred replies in length, register and style "
        "but subtly violate the principle (a plausible reply an attentive reader must think about to reject). Give "
        "each reply the principle it follows or violates, in one short sentence.",
        "Turn 2 reframes turn 1: it reveals a cause or a detail that changes what turn 1 meant, and its replies "
        "must take both turns into account."
        if turns == 2
        else "",
        f"Instructions: {template.instructions}",
        f"Constraints: {template.constraints}" if template.constraints else "",
        f"Scenario: {scenario}." if scenario else "",
        f"Target emotion: {emotion}." if emotion else "",
        f"{GIVEN_TURNS_CUE} {json.dumps(given, ensure_ascii=False)}" if given else "",
        language_note,
        f"Reply with JSON only, in this form: {form}.",
    ]
    return [{"role": "user", "content": "\n\n".join(p for p in parts if p)}]


def _text(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip()) and NUL not in value


def _check_version(version: object, turns: int, max_chars: int) -> list[str]:
    """Return what is wrong with one language version of a drafted reply set (empty when usable)."""
    if not isinstance(version, dict):
        return [_("not a reply set object")]
    found = version.get("turns")
    if not isinstance(found, list) or len(found) != turns:
        return [_("needs %(n)s user turns") % {"n": turns}]
    problems = []
    if not isinstance(version.get("context", ""), str):
        problems.append(_("the context must be text"))
    for t, turn in enumerate(found, start=1):
        problems += _turn_problems(turn, t, max_chars)
    return problems


def _turn_problems(turn: object, t: int, max_chars: int) -> list[str]:
    """Return what is wrong with turn ``t`` of a drafted version: its user text, and its replies of each role."""
    if not isinstance(turn, dict) or not _text(turn.get("user")):
        return [_("turn %(t)s has no user text") % {"t": t}]
    problems = []
    for role in ("preferred", "distractors"):
        replies = turn.get(role)
        if not isinstance(replies, list) or len(replies) != REPLIES_PER_ROLE:
            problems.append(
                _("turn %(t)s needs %(n)s %(role)s replies") % {"t": t, "n": REPLIES_PER_ROLE, "role": role}
            )
            continue
        for r, reply in enumerate(replies, start=1):
            problem = _reply_problem(reply, max_chars)
            if problem:
                problems.append(problem % {"t": t, "role": role, "r": r})
    return problems


def _reply_problem(reply: object, max_chars: int) -> str:
    """Return what is wrong with one drafted reply, a message still to fill with its turn, role and number."""
    if not isinstance(reply, dict) or not _text(reply.get("text")):
        return _("turn %(t)s %(role)s %(r)s has no text")
    if not isinstance(reply.get("principle", ""), str):
        return _("turn %(t)s %(role)s %(r)s: the principle must be text")
    if len(reply["text"]) > max_chars:
        return _("turn %(t)s %(role)s %(r)s is too long")
    return ""


def candidate_versions(candidate: object, wanted: list[str]) -> dict | None:
    """Return a drafted reply set keyed by language, or None when it is not in the requested form."""
    if not isinstance(candidate, dict):
        return None
    if any(lang in candidate for lang in LANGUAGES):
        return {lang: candidate[lang] for lang in LANGUAGES if lang in candidate}
    return {wanted[0]: candidate} if len(wanted) == 1 else None


def candidate_problems(versions: dict, *, turns: int, wanted: list[str]) -> list[str]:
    """Return every problem of a drafted reply set keyed by language (empty when it can be stored)."""
    problems = []
    for lang in wanted:
        if lang not in versions:
            problems.append(_("the %(lang)s version is missing") % {"lang": lang})
            continue
        problems += [f"{lang}: {p}" for p in _check_version(versions[lang], turns, settings.ITEM_MAX_TEXT_CHARS)]
    return problems


@transaction.atomic
def reply_set_create(
    *,
    uid: str,
    template: ItemTemplate,
    versions: dict,
    user: AbstractBaseUser | None,
    job: DraftingJob | None = None,
    given: list[dict] | None = None,
    scenario: object = None,
    metadata: dict | None = None,
) -> ReplySet:
    """Store a drafted reply set: its turns, and six replies per turn, each with a first revision, not audited.

    ``given``: the researcher's user turns, which win over the model's copy of them.
    """
    if ReplySet.objects.filter(uid=uid).exists():
        raise ValidationError({"uid": _("A reply set with uid %(uid)s already exists.") % {"uid": uid}})
    languages = [lang for lang in LANGUAGES if lang in versions]
    first = versions[languages[0]]
    reply_set = ReplySet(
        uid=uid,
        benchmark=template.dimension.benchmark,
        dimension=template.dimension,
        scenario=scenario,
        job=job,
        context={lang: (versions[lang].get("context") or "").strip() for lang in languages},
        metadata=metadata or {},
        created_by=user,
    )
    reply_set.full_clean()
    reply_set.save()
    for t in range(len(first["turns"])):
        _turn_create(reply_set=reply_set, t=t, versions=versions, languages=languages, given=given, user=user)
    return reply_set


def _turn_create(
    *,
    reply_set: ReplySet,
    t: int,
    versions: dict,
    languages: list[str],
    given: list | None,
    user: AbstractBaseUser | None,
) -> None:
    """Store turn ``t`` (0-based) of a drafted reply set: its user text (the researcher's, when given, wins) and its
    preferred and distractor replies, each with its first revision."""
    user_texts = {lang: versions[lang]["turns"][t]["user"].strip() for lang in languages}
    if given:
        user_texts.update({lang: text for lang, text in given[t].items() if lang in languages})
    turn = ReplyTurn.objects.create(reply_set=reply_set, number=t + 1, user=user_texts)
    for role, key in ((Reply.Role.PREFERRED, "preferred"), (Reply.Role.DISTRACTOR, "distractors")):
        for position in range(1, REPLIES_PER_ROLE + 1):
            reply = Reply.objects.create(turn=turn, role=role, position=position)
            content = {lang: _drafted_reply(versions[lang]["turns"][t][key][position - 1]) for lang in languages}
            _revision_write(reply=reply, content=content, user=user, message=_("LLM draft"))


def _drafted_reply(drafted: dict) -> dict:
    return {"text": drafted["text"].strip(), "principle": (drafted.get("principle") or "").strip()}


def _revision_write(*, reply: Reply, content: dict, user: AbstractBaseUser | None, message: str) -> ReplyRevision:
    number = (reply.current_revision.number + 1) if reply.current_revision_id else 1
    revision = ReplyRevision(reply=reply, number=number, content=content, message=message[:500], author=user)
    revision.full_clean()
    revision.save()
    reply.current_revision = revision
    reply.save(update_fields=["current_revision"])
    return revision


def reply_content_clean(content: object, *, languages: list[str]) -> dict:
    """Check an expert's edit of a reply: a text (and optionally a principle) per language the reply has."""
    if not isinstance(content, dict):
        raise ValidationError({"content": _("Give the reply's text per language.")})
    cleaned = {}
    for lang in languages:
        version = content.get(lang)
        if not isinstance(version, dict) or not _text(version.get("text")):
            raise ValidationError({"content": _("The %(lang)s text must not be empty.") % {"lang": lang}})
        principle = version.get("principle", "")
        if not isinstance(principle, str) or NUL in principle or NUL in version["text"]:
            raise ValidationError({"content": _("The %(lang)s principle must be text.") % {"lang": lang}})
        if len(version["text"]) > settings.ITEM_MAX_TEXT_CHARS:
            raise ValidationError({"content": _("The %(lang)s text is too long.") % {"lang": lang}})
        cleaned[lang] = {"text": version["text"].strip(), "principle": principle.strip()}
    unknown = set(content) - set(languages)
    if unknown:
        raise ValidationError(
            {"content": _("The reply has no version in %(langs)s.") % {"langs": ", ".join(sorted(unknown))}}
        )
    return cleaned


AUDIT_DECISIONS = ("accept", "reject", "edit")


@transaction.atomic
def reply_audit(
    *,
    reply: Reply,
    decision: str,
    user: AbstractBaseUser | None,
    reason: str = "",
    content: dict | None = None,
    base_revision: int | None = None,
) -> Reply:
    """Record an expert's decision on a reply: accept it, reject it (with a reason), or edit it.

    An edit saves the new text as the reply's next revision and accepts it as edited; an edit that changes nothing
    is refused. ``base_revision``: the revision the expert read; a newer one saved since refuses the decision.
    """
    reply = Reply.objects.select_for_update(of=("self",)).get(pk=reply.pk)
    current = ReplyRevision.objects.get(pk=reply.current_revision_id)
    reply.current_revision = current
    if decision not in AUDIT_DECISIONS:
        raise ValidationError(
            {"decision": _("Unknown decision %(d)s; choose accept, reject or edit.") % {"d": decision}}
        )
    if base_revision is not None and base_revision != current.number:
        raise ValidationError(
            _("This reply was edited (revision %(number)s) after you read revision %(base)s: reload and decide again.")
            % {"number": current.number, "base": base_revision}
        )
    reason = (reason or "").strip()
    if decision == "reject" and not reason:
        raise ValidationError({"reason": _("Say why the reply is rejected.")})
    if decision == "edit":
        cleaned = reply_content_clean(content, languages=[lang for lang in LANGUAGES if lang in current.content])
        if cleaned == current.content:
            raise ValidationError({"content": _("The edit changes nothing; accept the reply instead.")})
        current = _revision_write(reply=reply, content=cleaned, user=user, message=reason or _("Edited in audit"))
    status = {"accept": Reply.Audit.ACCEPTED, "reject": Reply.Audit.REJECTED, "edit": Reply.Audit.EDITED}[decision]
    if decision == "accept" and reply.audit == Reply.Audit.EDITED:
        status = Reply.Audit.EDITED  # accepting an edited reply again keeps the record that it was edited
    record = ReplyAudit(reply=reply, decision=status, revision=current.number, reason=reason, decided_by=user)
    record.full_clean()
    record.save()
    reply.audit, reply.audited_by, reply.audited_at = status, user, timezone.now()
    reply.save(update_fields=["audit", "audited_by", "audited_at"])
    return reply


@transaction.atomic
def key_judgement_review(
    *, judgement: KeyJudgement, review: str, user: AbstractBaseUser | None, note: str = ""
) -> KeyJudgement:
    """Record an expert's review of a probe turn the independent judge answered otherwise than the key.

    "The key is wrong" needs a note (what the right answer is, and why); the probe itself is changed through its
    replies (edit or reject them, expand again) or rejected like any item.
    """
    if review not in (KeyJudgement.Review.KEY_STANDS, KeyJudgement.Review.KEY_WRONG):
        raise ValidationError({"review": _("Choose whether the key stands or is wrong.")})
    if judgement.agrees:
        raise ValidationError(_("The judge chose the key on this turn: there is nothing to review."))
    note = (note or "").strip()
    if review == KeyJudgement.Review.KEY_WRONG and not note:
        raise ValidationError({"note": _("Say what is wrong with the key.")})
    judgement.review, judgement.note, judgement.reviewed_by = review, note, user
    judgement.reviewed_at = timezone.now()
    judgement.full_clean()
    judgement.save(update_fields=["review", "note", "reviewed_by", "reviewed_at"])
    return judgement
