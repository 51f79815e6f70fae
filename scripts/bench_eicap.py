"""The benchmark's EiCAP study and contamination check, for scripts/bench_pages.py (built once, kept afterwards).

Everything is written through the product's services, as a drafting job, an expert, the key validation's worker
and a researcher would: ``eicap_sets(items)`` reply sets of three EiCAP leaves (one and two user turns, English and
Chinese, drafted by the LLM simulator's reply-set drafter and stored by ``reply_set_create``), every fifth left to
audit, every fifth audited but not expanded, the rest audited (one reply edited, one rejected in some) and expanded
into probes accepted by the lead; a key validation of those probes whose judge answers are written into its LLM run
(about 15% of probe turns answered with another option, 3% with none) and collected by ``key_validation_collect``,
some disagreements reviewed; and a contamination check of the frozen bench release against a corpus of
``CORPUS_TEXTS`` texts, a fifth of them copied from the release (``contamination_check_create``, computed at once).
"""

import json
import random

MARKER = "eicap-bench-"
LEAVES = (("two_turn_context_tracking", 2), ("basic_emotion_labels", 1), ("intervention_escalation", 1))
CORPUS_TEXTS = 1000


def eicap_sets(items: int) -> int:
    """How many reply sets the benchmark builds for ``items`` items: one per 100, at least 6 and at most 200."""
    return max(6, min(200, items // 100))


def eicap_built() -> bool:
    from evaluation.models import ContaminationCheck

    return ContaminationCheck.objects.filter(name="bench corpus").exists()


def build_eicap(*, items: int, rng: random.Random) -> None:
    """Build the EiCAP study and the contamination check unless they are there (see the module docstring)."""
    from django.contrib.auth import get_user_model

    from annotation.items.models import KeyValidation, ReplySet

    if eicap_built():
        return
    users = get_user_model().objects
    lead, expert, researcher = (users.get(username=name) for name in ("bench_lead", "bench_2", "bench_1"))
    if not ReplySet.objects.filter(uid__startswith=MARKER).exists():
        _reply_sets(eicap_sets(items), lead=lead, expert=expert)
    if not KeyValidation.objects.filter(benchmark__slug="eicap", collected=True).exists():
        _key_validation(researcher=researcher, expert=expert, rng=rng)
    _contamination(researcher=researcher, rng=rng)


def _reply_sets(count: int, *, lead: object, expert: object) -> None:
    from annotation.items.models import Dimension, Reply, ReplySet
    from annotation.items.services import drafting, expansion, replysets
    from llm.simulator.replysets import reply_set_reply
    from llm.simulator.simulation import rng_for

    templates = {}
    for code, turns in LEAVES:
        leaf = Dimension.objects.get(benchmark__slug="eicap", code=code)
        template = leaf.item_templates.filter(kind=replysets.REPLY_SET).first() or drafting.item_template_save(
            dimension=leaf, kind=replysets.REPLY_SET, instructions="Everyday situations.", user=lead
        )
        prompt = replysets.reply_set_messages(
            template=template, n=1, turns=turns, languages=["en", "zh"], scenario="", emotion="", given=[]
        )[0]["content"]
        templates[code] = (template, prompt)
    expand = []
    for k in range(count):
        code = LEAVES[k % len(LEAVES)][0]
        template, prompt = templates[code]
        uid = f"{MARKER}{k:04d}"
        drafted = json.loads(reply_set_reply(prompt, rng_for("bench", uid), False))["reply_sets"][0]
        reply_set = replysets.reply_set_create(uid=uid, template=template, versions=drafted, user=lead)
        if k % 5 == 0:
            continue  # drafted, to audit
        for reply in Reply.objects.filter(turn__reply_set=reply_set).select_related("turn", "current_revision"):
            spot = (reply.turn.number, reply.role, reply.position)
            if k % 7 == 1 and spot == (1, Reply.Role.PREFERRED, 1):
                content = {
                    lang: {**version, "text": version["text"] + (" 我在这里。" if lang == "zh" else " I'm here.")}
                    for lang, version in reply.current_revision.content.items()
                }
                replysets.reply_audit(reply=reply, decision="edit", user=expert, content=content, reason="Warmer.")
            elif k % 7 == 2 and spot == (1, Reply.Role.PREFERRED, 3):
                replysets.reply_audit(reply=reply, decision="reject", user=expert, reason="Close to a distractor.")
            else:
                replysets.reply_audit(reply=reply, decision="accept", user=expert)
        if k % 5 != 1:
            expand.append(reply_set)
    expansion.reply_sets_expand(
        reply_sets=list(ReplySet.objects.filter(pk__in=[s.pk for s in expand]).order_by("pk")), user=lead, accept=True
    )


def _key_validation(*, researcher: object, expert: object, rng: random.Random) -> None:
    """Start a key validation, answer its run as a judge of another family would, and collect it."""
    from django.utils import timezone

    from annotation.items.models import Benchmark, KeyJudgement
    from annotation.items.services import replysets
    from annotation.releases.protocol import LETTERS
    from calibration import keys
    from llm.models import Endpoint, Run, RunItem

    endpoint = Endpoint.objects.get_or_create(
        name="bench key judge", defaults={"base_url": "http://127.0.0.1:9/v1", "model": "key-judge", "api_key_env": ""}
    )[0]
    benchmark = Benchmark.objects.get(slug="eicap")
    validation = keys.key_validation_start(benchmark=benchmark, endpoint=endpoint, user=researcher, start=False)
    now = timezone.now()
    run_items = list(RunItem.objects.filter(run_id=validation.llm_run_id))
    for run_item in run_items:
        key = LETTERS.index(run_item.hints["answer"])
        draw = rng.random()
        letter = LETTERS[key] if draw < 0.82 else None if draw < 0.85 else LETTERS[(key + rng.randint(1, 3)) % 4]
        run_item.status, run_item.finished_at = RunItem.Status.DONE, now
        run_item.result = {"letter": letter} if letter else None
    RunItem.objects.bulk_update(run_items, ["status", "result", "finished_at"], batch_size=2000)
    Run.objects.filter(pk=validation.llm_run_id).update(status=Run.Status.DONE, done=len(run_items), collected_at=now)
    validation = keys.key_validation_collect(validation=validation)
    disagreements = KeyJudgement.objects.filter(validation=validation).exclude(chosen=None).order_by("pk")
    for n, judgement in enumerate(j for j in disagreements if not j.agrees):
        if n % 3 == 0:
            replysets.key_judgement_review(judgement=judgement, review="key_stands", user=expert)
        elif n % 9 == 1:
            replysets.key_judgement_review(
                judgement=judgement, review="key_wrong", user=expert, note="The second option fits turn 2 better."
            )


def _contamination(*, researcher: object, rng: random.Random) -> None:
    """A check of the frozen bench release against a corpus: a fifth copied from the release, the rest other texts."""
    from annotation.items.synthetic import scenarios
    from annotation.releases.models import Release
    from evaluation.services.contamination import contamination_check_create, release_texts

    release = Release.objects.get(title="bench release")
    texts = release_texts(release)
    copied = [text for lang in sorted(texts) for text in list(texts[lang].values())[: CORPUS_TEXTS // 10]]
    others = [s[lang] for s in scenarios(CORPUS_TEXTS - len(copied), seed=rng.randrange(2**31)) for lang in ("en",)]
    lines = [json.dumps({"id": f"c{n}", "text": t}, ensure_ascii=False) for n, t in enumerate(copied + others)]
    contamination_check_create(
        release=release, name="bench corpus", data="\n".join(lines).encode("utf-8"), user=researcher, inline=True
    )
