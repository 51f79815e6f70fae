"""The evaluation collector: store what a finished LLM run brought back, then move the evaluation forward."""

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils.translation import gettext as _

from annotation.releases.models import ReleaseItem
from annotation.releases.selectors import release_entries
from calibration import prompts as judge_prompts
from evaluation import prompts
from evaluation.models import Answer, EvaluationLLMRun, EvaluationRun, OpenResponse, PairVerdict
from evaluation.services.common import EVALUATION_PURPOSE
from evaluation.services.judging import jury_verdicts_collect
from evaluation.services.runs import advance_locked, scored_entries
from llm import collectors
from llm.models import Run, RunItem
from llm.parsers import ParseError, parse_mcq_letter


@collectors.register(EVALUATION_PURPOSE)
def _collect(llm_run: Run) -> None:
    evaluation_llm_run_collect(llm_run=llm_run)


@transaction.atomic
def evaluation_llm_run_collect(*, llm_run: Run, user: AbstractBaseUser | None = None) -> str:
    """Store what a finished LLM run of an evaluation brought back, then move the evaluation forward.

    Called by the evaluation collector when one of the run's LLM runs finishes; a run already collected is not
    collected twice. Return the evaluation's phase afterwards.
    """
    link = EvaluationLLMRun.objects.get(llm_run=llm_run)
    run = EvaluationRun.objects.select_for_update().get(pk=link.run_id)
    link = EvaluationLLMRun.objects.select_related("llm_run", "model").get(pk=link.pk)
    if link.collected:
        return run.phase
    if link.llm_run.status != Run.Status.DONE:
        run.notes = [
            *run.notes,
            _("%(run)s ended %(status)s: %(error)s")
            % {"run": link.llm_run.name, "status": link.llm_run.status, "error": link.llm_run.error or "—"},
        ]
        run.save(update_fields=["notes"])
    if link.kind == EvaluationLLMRun.Kind.RESPONSES:
        _collect_responses(run, link)
    else:
        _collect_verdicts(run, link)
    return advance_locked(run, user=user, start=True)


def _letter_of(text: str) -> str | None:
    try:
        return parse_mcq_letter(text, {})["letter"]
    except ParseError:
        return None


def _letter_answer(run: EvaluationRun, link: EvaluationLLMRun, entry: ReleaseItem, ri: RunItem, text: str) -> Answer:
    """Return the answer a reply naming an option's letter gives, in the order the options were shown."""
    turn, lang, model = ri.ref["turn"], ri.ref["language"], link.model
    spec = prompts.objective_turns(entry.item.kind, entry.revision.content[lang])[turn]
    order = prompts.option_order(
        uid=entry.item.uid, model_code=model.code, language=lang, turn=turn, seed=run.seed, n=len(spec["options"])
    )
    letter = _letter_of(text)
    chosen = None
    if letter is not None and prompts.LETTERS.index(letter) < len(order):
        chosen = order[prompts.LETTERS.index(letter)]
    return Answer(
        run=run,
        model=model,
        item=entry.item,
        revision=entry.revision,
        language=lang,
        turn=turn,
        option_order=order,
        correct_index=spec.get("answer"),
        chosen_index=chosen,
        parsed=chosen is not None,
        correct=chosen is not None and chosen == spec.get("answer"),
        call=ri.call,
        raw=text,
    )


def _logprob_answer(
    run: EvaluationRun, link: EvaluationLLMRun, entry: ReleaseItem, lang: str, turn: int, options: dict[int, RunItem]
) -> Answer:
    """Return the answer the options' log-probabilities give: the option with the highest mean, if all are scored."""
    version = entry.revision.content[lang]
    spec = prompts.objective_turns(entry.item.kind, version)[turn]
    prefix = prompts.logprob_prefix(kind=entry.item.kind, version=version, language=lang, turn=turn)
    scores = {}
    for o, ri in sorted(options.items()):
        if isinstance(ri.result, dict):
            mean, total = prompts.continuation_score(ri.result, prompts.option_start(prefix))
            scores[str(o)] = {"mean": mean, "sum": total}
    complete = len(scores) == len(spec["options"]) and all(s["mean"] is not None for s in scores.values())
    chosen = max(scores, key=lambda k: scores[k]["mean"]) if complete else None
    return Answer(
        run=run,
        model=link.model,
        item=entry.item,
        revision=entry.revision,
        language=lang,
        turn=turn,
        option_order=list(range(len(spec["options"]))),
        correct_index=spec.get("answer"),
        chosen_index=int(chosen) if chosen is not None else None,
        parsed=complete,
        correct=complete and int(chosen) == spec.get("answer"),
        scores=scores,
    )


def _collect_responses(run: EvaluationRun, link: EvaluationLLMRun) -> None:
    model = link.model
    entries = {e.item_id: e for e in scored_entries(run)}
    answers, opens = [], []
    logprob_groups: dict[tuple, dict[int, RunItem]] = {}
    missing = 0
    for ri in RunItem.objects.filter(run=link.llm_run).select_related("call"):
        ref = ri.ref
        kind, entry, lang = ref["kind"], entries[ref["item"]], ref["language"]
        text = ri.call.response_text if ri.call else ""
        if ri.status != RunItem.Status.DONE and kind != "logprob":
            # No reply at all (the provider failed): the item is missing for this model, not answered wrongly.
            missing += 1
        elif kind == "open":
            ok = bool(text.strip())
            opens.append(
                OpenResponse(run=run, model=model, item=entry.item, language=lang, text=text, ok=ok, call=ri.call)
            )
        elif kind == "letter":
            answers.append(_letter_answer(run, link, entry, ri, text))
        else:
            logprob_groups.setdefault((entry.item_id, lang, ref["turn"]), {})[ref["option"]] = ri
    for (item_id, lang, turn), options in logprob_groups.items():
        if any(ri.status != RunItem.Status.DONE for ri in options.values()):
            missing += 1
            continue
        answers.append(_logprob_answer(run, link, entries[item_id], lang, turn, options))
    Answer.objects.bulk_create(answers)
    OpenResponse.objects.bulk_create(opens)
    if missing:
        run.notes = [
            *run.notes,
            _("%(model)s: %(n)s prompts got no reply; those items are missing, not counted as wrong.")
            % {"model": model.code, "n": missing},
        ]
        run.save(update_fields=["notes"])
    link.collected = True
    link.save(update_fields=["collected"])


def _collect_verdicts(run: EvaluationRun, link: EvaluationLLMRun) -> None:
    if run.judge is not None and run.judge.is_jury:
        return jury_verdicts_collect(run, link)
    models = {m.pk: m for m in run.models.all()}
    items = {e.item_id: e.item for e in release_entries(run.release)}
    verdicts = []
    for ri in RunItem.objects.filter(run=link.llm_run).select_related("call"):
        ref, order = ri.ref, ri.ref["order"]
        parsed = ri.status == RunItem.Status.DONE and isinstance(ri.result, dict)
        score = judge_prompts.canonical_from_result(ri.result, order) if parsed else None
        verdicts.append(
            PairVerdict(
                run=run,
                item=items[ref["item"]],
                language=ref["language"],
                model_a=models[ref["model_a"]],
                model_b=models[ref["model_b"]],
                order=order,
                round=link.round,
                parsed=parsed,
                score=score,
                raw=ri.call.response_text if ri.call else "",
                call=ri.call,
            )
        )
    PairVerdict.objects.bulk_create(verdicts)
    link.collected = True
    link.save(update_fields=["collected"])
