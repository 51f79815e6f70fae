"""The demo EiCAP study for ``make run``: reply sets drafted by the simulator for three taxonomy leaves, audited by
the demo expert (one reply edited, one rejected), expanded into one-vs-three probes, their keys validated by a
simulated judge of another "family", and a frozen EiCAP release whose dataset card states the figure.
Needs the LLM simulator running; idempotent. Small on purpose: it builds in a few seconds."""

from django.contrib.auth import get_user_model

from annotation.items.models import Benchmark, Dimension, ItemTemplate, KeyValidation, Reply, ReplySet
from annotation.items.services import drafting, expansion, replysets
from annotation.releases import services as releases
from annotation.releases.models import Release
from calibration import keys
from llm.models import Endpoint
from llm.worker.inline import run_work_inline

# (leaf, user turns per dialogue, dialogues)
LEAVES = (("two_turn_context_tracking", 2, 2), ("basic_emotion_labels", 1, 2), ("intervention_escalation", 1, 1))
DRAFTER = "Simulator · item drafter"
JUDGE = "Simulator · MCQ 90%"
RELEASE = "0.1.0"


def _draft(expert: object) -> None:
    drafter = Endpoint.objects.get(name=DRAFTER)
    for code, turns, count in LEAVES:
        leaf = Dimension.objects.get(benchmark__slug="eicap", code=code)
        template = ItemTemplate.objects.filter(dimension=leaf, kind=replysets.REPLY_SET).first()
        template = template or drafting.item_template_save(
            dimension=leaf,
            kind=replysets.REPLY_SET,
            instructions="Everyday situations a person might bring to a supportive assistant, in their own words.",
            user=expert,
        )
        job = drafting.drafting_job_start(
            template=template,
            endpoint=drafter,
            count=count,
            languages=["en", "zh"],
            user=expert,
            turns=turns,
            start=False,
        )
        run_work_inline(run_id=job.llm_run_id)


def _audit(expert: object) -> None:
    """Accept every reply, except an edit of the first set's first preferred reply and a rejected preferred reply."""
    sets = list(ReplySet.objects.filter(benchmark__slug="eicap").order_by("pk"))
    for index, reply_set in enumerate(sets):
        for reply in Reply.objects.filter(turn__reply_set=reply_set).select_related("turn", "current_revision"):
            spot = (index, reply.turn.number, reply.role, reply.position)
            if spot == (0, 1, Reply.Role.PREFERRED, 1):
                content = {
                    lang: {**version, "text": version["text"] + (" 我在这里听你说。" if lang == "zh" else " I'm here.")}
                    for lang, version in reply.current_revision.content.items()
                }
                replysets.reply_audit(
                    reply=reply, decision="edit", user=expert, content=content, reason="A warmer close."
                )
            elif spot == (1, 1, Reply.Role.PREFERRED, 3):
                replysets.reply_audit(
                    reply=reply, decision="reject", user=expert, reason="Too close to a distractor in tone."
                )
            else:
                replysets.reply_audit(reply=reply, decision="accept", user=expert)


def demo_eicap() -> str:
    """Create the demo EiCAP study if it does not exist yet; return what was done."""
    benchmark = Benchmark.objects.get(slug="eicap")
    if Release.objects.filter(benchmark=benchmark, version=RELEASE).exists():
        return "demo EiCAP study already present"
    User = get_user_model()
    expert, lead, admin = (User.objects.get(username=name) for name in ("expert", "lead", "admin"))
    researcher = User.objects.get(username="researcher")
    if not ReplySet.objects.filter(benchmark=benchmark).exists():
        _draft(expert)
        _audit(expert)
    report = expansion.reply_sets_expand(
        reply_sets=list(ReplySet.objects.filter(benchmark=benchmark).order_by("pk")), user=lead, accept=True
    )
    validation = KeyValidation.objects.filter(benchmark=benchmark, collected=True).first()
    if validation is None:
        validation = keys.key_validation_start(
            benchmark=benchmark, endpoint=Endpoint.objects.get(name=JUDGE), user=researcher, start=False
        )
        run_work_inline(run_id=validation.llm_run_id)
        validation.refresh_from_db()
    release = releases.release_create(
        benchmark=benchmark,
        version=RELEASE,
        title="EiCAP demo probes",
        description="One-vs-three probes expanded from simulator-drafted, expert-audited reply sets.",
        licence="CC BY 4.0",
        citation="EI Studio demo data (not the published EiCAP-Bench).",
        user=admin,
    )
    releases.release_freeze(
        release=release, user=admin, override_reason="Demo sample: a handful of probes, far from EiCAP's 3,174."
    )
    kappa = f"{validation.kappa:.3f}" if validation.kappa is not None else "undefined"
    return (
        f"demo EiCAP study: {ReplySet.objects.filter(benchmark=benchmark).count()} reply sets, "
        f"{len(report.created) + len(report.unchanged) + len(report.revised)} probes, key kappa {kappa}"
    )
