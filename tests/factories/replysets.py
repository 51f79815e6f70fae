"""EiCAP reply sets for tests, built through the services from the simulator's drafted JSON (no LLM run)."""

import json

from annotation.items.models import Dimension, Reply, ReplySet
from annotation.items.services import drafting, replysets
from llm.simulator.replysets import reply_set_reply
from llm.simulator.simulation import rng_for


def make_reply_set(
    *,
    uid: str,
    user: object = None,
    dimension: str = "two_turn_context_tracking",
    turns: int = 2,
    languages: tuple[str, ...] = ("en", "zh"),
    seed: int = 0,
) -> ReplySet:
    """Store one drafted reply set (not audited) of an EiCAP leaf, as a drafting job's collector would."""
    leaf = Dimension.objects.get(benchmark__slug="eicap", code=dimension)
    template = leaf.item_templates.filter(kind=replysets.REPLY_SET).first() or drafting.item_template_save(
        dimension=leaf, kind=replysets.REPLY_SET, instructions="Everyday situations.", user=user
    )
    prompt = replysets.reply_set_messages(
        template=template, n=1, turns=turns, languages=list(languages), scenario="", emotion="", given=[]
    )[0]["content"]
    drafted = json.loads(reply_set_reply(prompt, rng_for(seed, uid), languages == ("zh",)))["reply_sets"][0]
    versions = drafted if len(languages) == 2 else {languages[0]: drafted}
    return replysets.reply_set_create(uid=uid, template=template, versions=versions, user=user)


def audit_reply_set(reply_set: ReplySet, user: object, *, reject: set[tuple[int, str, int]] = frozenset()) -> None:
    """Accept every reply of a set, rejecting those named as (turn, role, position)."""
    for reply in Reply.objects.filter(turn__reply_set=reply_set).select_related("turn"):
        if (reply.turn.number, reply.role, reply.position) in reject:
            replysets.reply_audit(reply=reply, decision="reject", user=user, reason="breaks the principle")
        else:
            replysets.reply_audit(reply=reply, decision="accept", user=user)
