"""Writes of item templates and LLM drafting jobs: candidates arrive as drafts, malformed ones are reported."""

import json
import math
from collections.abc import Iterator

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from annotation.items.blinding import drafting_refusal
from annotation.items.content import LANGUAGES, check_parity, normalise_content, searchable_text, validate_content
from annotation.items.models import Dimension, DraftingJob, EmotionCategory, Item, ItemTemplate, Scenario
from annotation.items.services import replysets
from annotation.items.services.items import ItemState, item_create
from llm import collectors
from llm import services as llm_services
from llm.models import Endpoint, Run, RunItem

BATCH = 5
DRAFTING_PURPOSE = "drafting"
# The kind of a job's failure entry for a candidate skipped as an exact copy of an existing item.
DUPLICATE = "duplicate"
SHAPES = {
    "mcq": '{"context": "...", "question": "...", "options": ["...", "...", "...", "..."], "answer": 0}',
    "multi_turn_choice": '{"context": "...", "turns": [{"user": "...", "options": ["...", "..."], "answer": 0}]}',
    "open_prompt": '{"context": "", "prompt": "..."}',
}


@transaction.atomic
def item_template_save(
    *,
    dimension: Dimension,
    kind: str,
    instructions: str,
    user: AbstractBaseUser | None,
    constraints: str = "",
    scenarios: list[Scenario] = (),
    emotions: list[EmotionCategory] = (),
    seed_items: list[Item] = (),
) -> ItemTemplate:
    """Save the next version of a dimension's item template."""
    if kind not in SHAPES and kind != replysets.REPLY_SET:
        raise ValidationError(_("Unknown item kind %(kind)s.") % {"kind": kind})
    if not instructions.strip():
        raise ValidationError(_("Write the instructions for drafting."))
    latest = ItemTemplate.objects.filter(dimension=dimension).order_by("-version").first()
    template = ItemTemplate(
        dimension=dimension,
        version=(latest.version + 1) if latest else 1,
        kind=kind,
        instructions=instructions.strip(),
        constraints=constraints.strip(),
        created_by=user,
    )
    template.full_clean()
    template.save()
    template.scenarios.set(scenarios)
    template.emotions.set(emotions)
    template.seed_items.set(seed_items)
    return template


def drafting_messages(*, template: ItemTemplate, n: int, languages: list[str], scenario: str, emotion: str) -> list:
    """Return the prompt asking for ``n`` candidate items, with seed items as few-shot examples."""
    shape = SHAPES[template.kind]
    if len(languages) == 2:
        form = '{"items": [{"en": ' + shape + ', "zh": ' + shape + "}]}"
        language_note = "Write every item in English and in natural Simplified Chinese (not a literal translation)."
    else:
        form = '{"items": [' + shape + "]}"
        language_note = "Write in English." if languages == ["en"] else "Write in natural Simplified Chinese."
    examples = []
    for item in template.seed_items.select_related("current_revision")[:3]:
        if item.current_revision:
            examples.append(json.dumps(item.current_revision.content, ensure_ascii=False))
    parts = [
        f"You draft {n} candidate items of the kind {template.kind} for the emotional-intelligence dimension "
        f"'{template.dimension.name_en}': {template.dimension.definition_en}",
        f"Instructions: {template.instructions}",
        f"Constraints: {template.constraints}" if template.constraints else "",
        f"Scenario: {scenario}." if scenario else "",
        f"Target emotion: {emotion}." if emotion else "",
        language_note,
        "Expert-revised examples:\n" + "\n".join(examples) if examples else "",
        f"Reply with JSON only, in this form: {form}. The answer is the 0-based index of the correct option.",
    ]
    return [{"role": "user", "content": "\n\n".join(p for p in parts if p)}]


@transaction.atomic
def drafting_job_start(
    *,
    template: ItemTemplate,
    endpoint: Endpoint,
    count: int,
    languages: list[str],
    user: AbstractBaseUser | None,
    translate: bool = False,
    scenarios: list[Scenario] = (),
    emotions: list[EmotionCategory] = (),
    start: bool = True,
    turns: int = 1,
    given_turns: object = None,
) -> DraftingJob:
    """Queue an LLM run asking for ``count`` candidates in batches, rotating through scenarios and emotions.

    For a reply-set template, ``turns`` (1 or 2) is the number of user turns per drafted dialogue, and
    ``given_turns`` the researcher's own dialogues (``replysets.given_turns_clean``), one reply set each, instead
    of ``count`` drafted ones.
    """
    reply_sets = template.kind == replysets.REPLY_SET
    languages, given, count = _drafting_refusals(
        template=template, endpoint=endpoint, count=count, languages=languages, turns=turns, given_turns=given_turns
    )
    wanted = list(LANGUAGES) if translate else languages
    scenarios = list(scenarios) or list(template.scenarios.all())
    emotions = list(emotions) or list(template.emotions.all())
    job = DraftingJob(
        template=template,
        endpoint=endpoint,
        count=count,
        languages=languages,
        translate=translate,
        created_by=user,
        turns=turns if reply_sets else 1,
        given_turns=given,
    )
    job.full_clean()
    job.save()
    job.scenarios.set(scenarios)
    job.emotions.set(emotions)
    job.llm_run = llm_services.run_create(
        endpoint=endpoint,
        prompts=_drafting_prompts(job, languages=wanted, scenarios=scenarios, emotions=emotions),
        parser="json",
        name=f"Drafting · {template}",
        user=user,
        purpose=DRAFTING_PURPOSE,
        fresh=True,
        start=start,
    )
    job.save(update_fields=["llm_run"])
    return job


def _drafting_refusals(
    *, template: ItemTemplate, endpoint: Endpoint, count: int, languages: list[str], turns: int, given_turns: object
) -> tuple[list[str], list, int]:
    """Check a drafting request; return its languages (in order), the given dialogues and the count to draft."""
    refusal = drafting_refusal(endpoint)
    if refusal:
        raise ValidationError({"endpoint": refusal})
    languages = [lang for lang in LANGUAGES if lang in languages]
    if not languages:
        raise ValidationError(_("Choose at least one language."))
    reply_sets = template.kind == replysets.REPLY_SET
    given = replysets.given_turns_clean(given_turns, languages=languages) if reply_sets else []
    if given_turns and not reply_sets:
        raise ValidationError({"given_turns": _("Only reply-set templates take given user turns.")})
    if given:
        count = len(given)
    if not 1 <= count <= 1000:
        raise ValidationError(_("Ask for 1 to 1000 candidates."))
    if reply_sets and turns not in (1, 2):
        raise ValidationError({"turns": _("A dialogue has one or two user turns.")})
    return languages, given, count


def _drafting_prompts(
    job: DraftingJob, *, languages: list[str], scenarios: list[Scenario], emotions: list[EmotionCategory]
) -> list[dict]:
    """The drafting job's prompts: batches of candidates (one given dialogue each), rotating the targets."""
    template, count, turns, given = job.template, job.count, job.turns, job.given_turns
    reply_sets = template.kind == replysets.REPLY_SET
    prompts = []
    size = (1 if given else replysets.BATCH) if reply_sets else BATCH
    for batch in range(math.ceil(count / size)):
        n = min(size, count - batch * size)
        scenario = scenarios[batch % len(scenarios)] if scenarios else None
        emotion = emotions[batch % len(emotions)] if emotions else None
        targets = {"scenario": scenario.name_en if scenario else "", "emotion": emotion.name_en if emotion else ""}
        if reply_sets:
            dialogue = given[batch] if given else []
            messages = replysets.reply_set_messages(
                template=template, n=n, turns=len(dialogue) or turns, languages=languages, given=dialogue, **targets
            )
        else:
            messages = drafting_messages(template=template, n=n, languages=languages, **targets)
        prompts.append(
            {
                "key": f"batch-{batch + 1}",
                # The batch's targets, so that its candidates are labelled with them (and count in coverage).
                "ref": {
                    "batch": batch + 1,
                    "scenario": scenario.pk if scenario else None,
                    "emotion": emotion.pk if emotion else None,
                    **({"given": batch} if given else {}),
                },
                "messages": messages,
            }
        )
    return prompts


def _versions(candidate: object, languages: list[str]) -> dict | None:
    if not isinstance(candidate, dict):
        return None
    if any(lang in candidate for lang in LANGUAGES):
        return {lang: candidate[lang] for lang in LANGUAGES if lang in candidate}
    return {languages[0]: candidate} if len(languages) == 1 else None


@collectors.register(DRAFTING_PURPOSE)
def _collect(run: Run) -> None:
    job = DraftingJob.objects.get(llm_run=run)
    drafting_job_collect(job=job, user=job.created_by)


@transaction.atomic
def drafting_job_collect(*, job: DraftingJob, user: AbstractBaseUser | None = None) -> DraftingJob:
    """Turn the replies of a finished job into draft items; report every malformed candidate instead.

    Called by the drafting collector when the job's LLM run finishes; a second call changes nothing.
    """
    job = DraftingJob.objects.select_for_update(of=("self",)).select_related("template__dimension").get(pk=job.pk)
    if job.collected:
        return job
    # Read after taking the lock: a joined row is not re-read by PostgreSQL after a lock wait.
    job.llm_run = Run.objects.get(pk=job.llm_run_id)
    if job.llm_run.status not in (Run.Status.DONE, Run.Status.FAILED, Run.Status.CANCELLED):
        raise ValidationError(_("The drafting run is still working."))
    wanted = list(LANGUAGES) if job.translate else job.languages
    machine = [lang for lang in LANGUAGES if lang not in job.languages] if job.translate else []
    failures = []
    if job.llm_run.status != Run.Status.DONE:
        failures.append({"where": "run", "reason": job.llm_run.error or job.llm_run.status})
    collect = _collect_reply_sets if job.template.kind == replysets.REPLY_SET else _collect_items
    job.created_uids = collect(job, wanted=wanted, machine=machine, failures=failures, user=user)
    job.failures, job.collected = failures, True
    job.save(update_fields=["created_uids", "failures", "collected"])
    return job


def _answered_batches(job: DraftingJob, failures: list) -> Iterator[tuple[RunItem, str]]:
    """Yield each batch of the job's run that answered in JSON, with its name; report the others in ``failures``."""
    for ri in RunItem.objects.filter(run=job.llm_run).select_related("call").order_by("position"):
        where_batch = _("batch %(n)s") % {"n": ri.ref.get("batch", ri.position)}
        if ri.status == RunItem.Status.DONE and isinstance(ri.result, dict):
            yield ri, where_batch
            continue
        failures.append(
            {
                "where": where_batch,
                "reason": ri.error or _("no JSON in the reply"),
                "raw": (ri.call.response_text if ri.call else "")[:2000],
            }
        )


def _candidate_failure(where: str, problems: list[str], candidate: object) -> dict:
    return {"where": where, "reason": "; ".join(problems), "raw": json.dumps(candidate, ensure_ascii=False)[:2000]}


def _item_problems(kind: str, content: dict | None, wanted: list[str]) -> list[str]:
    """Return what is wrong with a drafted item's content: its form, its texts, or a language parity issue."""
    if not content:
        return [_("not an item object in the requested form")]
    problems = [str(e) for e in validate_content(kind, content, max_chars=settings.ITEM_MAX_TEXT_CHARS)]
    return problems + [
        i.message for i in check_parity(kind, content) if i.code != "missing_language" or i.language in wanted
    ]


def _collect_items(
    job: DraftingJob, *, wanted: list[str], machine: list[str], failures: list, user: AbstractBaseUser | None
) -> list[str]:
    """Store every well-formed drafted item of a finished job that is not a copy; report the others in ``failures``."""
    template, dimension = job.template, job.template.dimension
    candidates = _item_candidates(job, wanted=wanted, failures=failures)
    texts = {id(c): searchable_text(normalise_content(template.kind, c[2])) for c in candidates}
    existing = dict(
        Item.objects.filter(search_text__in=set(texts.values())).order_by("uid").values_list("search_text", "uid")
    )
    n = Item.objects.filter(uid__startswith=f"{dimension.code}-draft-{job.pk}-").count()
    scenarios = {s.pk: s for s in job.scenarios.all()}
    emotions = {e.pk: e for e in job.emotions.all()}
    created = []
    for entry in candidates:
        ri, where, content, candidate = entry
        text = texts[id(entry)]
        if text in existing:
            # An exact copy of an item already in the bank (or drafted earlier in this job) is not imported.
            failures.append(
                {
                    "kind": DUPLICATE,
                    "where": where,
                    "uid": existing[text],
                    "reason": _("exact duplicate of item %(uid)s; skipped") % {"uid": existing[text]},
                }
            )
            continue
        n += 1
        emotion = emotions.get(ri.ref.get("emotion"))
        state = ItemState(
            dimension=dimension,
            content=content,
            scenario=scenarios.get(ri.ref.get("scenario")),
            emotions=[emotion] if emotion else [],
            metadata=_draft_metadata(job, ri=ri, candidate=candidate, machine=machine),
        )
        item = item_create(
            benchmark=dimension.benchmark,
            uid=f"{dimension.code}-draft-{job.pk}-{n}",
            kind=template.kind,
            user=user,
            state=state,
            message=_("LLM draft from %(template)s") % {"template": template},
            origin=Item.Origin.LLM_DRAFT,
        )
        existing[text] = item.uid
        created.append(item.uid)
    return created


def _item_candidates(job: DraftingJob, *, wanted: list[str], failures: list) -> list[tuple]:
    """Return (run item, where, content, raw candidate) for every well-formed item the job's replies drafted; the
    others go to ``failures`` with their problems."""
    candidates = []
    for ri, where_batch in _answered_batches(job, failures):
        for index, candidate in enumerate(ri.result.get("items") or []):
            where = f"{where_batch} #{index + 1}"
            content = _versions(candidate, wanted)
            if problems := _item_problems(job.template.kind, content, wanted):
                failures.append(_candidate_failure(where, problems, candidate))
                continue
            candidates.append((ri, where, content, candidate))
    return candidates


def _draft_metadata(job: DraftingJob, *, ri: RunItem, candidate: object, machine: list[str]) -> dict:
    """Return what a drafted item records of its drafting: the job, template, call, prompt and raw reply."""
    draft = {
        "job": job.pk,
        "template": str(job.template),
        "call": ri.call_id,
        "prompt": ri.request.get("messages"),
        "raw": candidate,
    }
    return {"draft": draft, **({"machine_drafted_languages": machine} if machine else {})}


def _collect_reply_sets(
    job: DraftingJob, *, wanted: list[str], machine: list[str], failures: list, user: AbstractBaseUser | None
) -> list[str]:
    """Store every well-formed drafted reply set of a finished job; report the others in ``failures``."""
    template, dimension = job.template, job.template.dimension
    scenarios = {s.pk: s for s in job.scenarios.all()}
    n = job.reply_sets.count()
    created = []
    for ri, where_batch in _answered_batches(job, failures):
        given = job.given_turns[ri.ref["given"]] if ri.ref.get("given") is not None else None
        turns = len(given) if given else job.turns
        for index, candidate in enumerate(ri.result.get("reply_sets") or []):
            where = f"{where_batch} #{index + 1}"
            versions = replysets.candidate_versions(candidate, wanted)
            problems = (
                replysets.candidate_problems(versions, turns=turns, wanted=wanted)
                if versions
                else [_("not a reply set object in the requested form")]
            )
            if problems:
                failures.append(_candidate_failure(where, problems, candidate))
                continue
            n += 1
            reply_set = replysets.reply_set_create(
                uid=f"{dimension.code}-rs-{job.pk}-{n}",
                template=template,
                versions={lang: versions[lang] for lang in wanted},
                user=user,
                job=job,
                given=given,
                scenario=scenarios.get(ri.ref.get("scenario")),
                metadata={
                    "draft": {"job": job.pk, "template": str(template), "call": ri.call_id},
                    **({"machine_drafted_languages": machine} if machine else {}),
                },
            )
            created.append(reply_set.uid)
    return created
