"""Evaluation runs: create, estimate, start, advance through the phases, and collect what came back."""

import itertools
from datetime import timedelta
from decimal import Decimal

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from calibration import prompts as judge_prompts
from calibration.models import CombineRule, Judge
from calibration.services import judge_messages, primary_judge
from evaluation import prompts
from evaluation.models import Answer, EvaluationLLMRun, EvaluationRun, ModelUnderTest, OpenResponse, PairVerdict
from labelling.pairwise import anonymise
from llm import services as llm_services
from llm.calls import build_request, rough_request_cost
from llm.models import Endpoint, Run, RunItem
from releases.models import Release

FINISHED = {Run.Status.DONE, Run.Status.FAILED, Run.Status.CANCELLED}
OBJECTIVE = ("mcq", "multi_turn_choice")
MARGIN_MAPPINGS = ("linear", "sqrt", "log", "fixed")


def _entries(run: EvaluationRun) -> list:
    return list(run.release.entries.select_related("item", "revision", "item__dimension").order_by("item__uid"))


@transaction.atomic
def evaluation_run_create(
    *,
    name: str,
    release: Release,
    endpoints: list[Endpoint],
    languages: list[str],
    user: AbstractBaseUser | None,
    judge: Judge | None = None,
    judge_override_reason: str = "",
    protocol: str = EvaluationRun.Protocol.LETTER,
    pairing: str = EvaluationRun.Pairing.ROUND_ROBIN,
    combine_rule: str | None = None,
    margin_mapping: str = "linear",
    seed: int = 0,
    labels: list[str] | None = None,
) -> EvaluationRun:
    """Plan a run on a frozen release; the judge defaults to the selected primary judge.

    Running with another judge, or with none (objective items only), needs a recorded reason.
    """
    errors = []
    if not release.is_frozen:
        errors.append(
            _("Release %(version)s is a draft; evaluation runs only on frozen releases.") % {"version": release.version}
        )
    if EvaluationRun.objects.filter(name=name).exists():
        errors.append(_("An evaluation run named %(name)s already exists.") % {"name": name})
    endpoints = list(dict.fromkeys(endpoints))
    if not endpoints:
        errors.append(_("Choose at least one model under test."))
    languages = [lang for lang in ("en", "zh") if lang in languages]
    if not languages:
        errors.append(_("Choose at least one language."))
    selection = primary_judge()
    if judge is None and selection is not None and not judge_override_reason.strip():
        judge = selection.judge
    if selection is None and not judge_override_reason.strip():
        errors.append(_("No primary judge is selected; select one in calibration or record why you run without it."))
    elif selection is not None and judge is not None and judge != selection.judge and not judge_override_reason.strip():
        errors.append(_("%(judge)s is not the selected primary judge; record why you use it.") % {"judge": judge})
    if combine_rule is None:
        combine_rule = selection.calibration_run.combine_rule if selection else CombineRule.FACET_TIE
    if combine_rule not in CombineRule.values:
        errors.append(_("Unknown order-combination rule."))
    if margin_mapping not in MARGIN_MAPPINGS:
        errors.append(_("Unknown margin mapping; choose linear, sqrt, log or fixed."))
    if protocol == EvaluationRun.Protocol.LOGPROB:
        wrong = [e.name for e in endpoints if e.api_style != Endpoint.ApiStyle.COMPLETIONS]
        if wrong:
            errors.append(
                _("The log-probability protocol needs legacy completions endpoints; not: %(names)s.")
                % {"names": ", ".join(wrong)}
            )
    if errors:
        raise ValidationError(errors)
    run = EvaluationRun(
        name=name,
        release=release,
        languages=languages,
        judge=judge,
        judge_override_reason=judge_override_reason.strip(),
        combine_rule=combine_rule,
        protocol=protocol,
        pairing=pairing,
        margin_mapping=margin_mapping,
        seed=seed,
        created_by=user,
    )
    run.full_clean()
    run.save()
    for n, endpoint in enumerate(endpoints, start=1):
        label = labels[n - 1] if labels and n <= len(labels) else endpoint.name
        ModelUnderTest.objects.create(run=run, endpoint=endpoint, code=f"M{n:02d}", label=label)
    return run


def _response_prompts(run: EvaluationRun, model: ModelUnderTest) -> list[dict]:
    result = []
    for entry in _entries(run):
        item, revision = entry.item, entry.revision
        for lang in run.languages:
            version = revision.content.get(lang)
            if not version:
                continue
            if item.kind == "open_prompt":
                result.append({"key": f"open:{item.uid}:{lang}", "messages": prompts.open_messages(version=version)})
                continue
            turns = prompts.objective_turns(item.kind, version)
            orders = [
                prompts.option_order(
                    uid=item.uid, model_code=model.code, language=lang, turn=t, seed=run.seed, n=len(spec["options"])
                )
                for t, spec in enumerate(turns)
            ]
            for t, spec in enumerate(turns):
                if run.protocol == EvaluationRun.Protocol.LOGPROB:
                    prefix = prompts.logprob_prefix(kind=item.kind, version=version, language=lang, turn=t)
                    for o, option in enumerate(spec["options"]):
                        result.append(
                            {
                                "key": f"lp:{item.uid}:{lang}:{t}:{o}",
                                "prompt": f"{prefix} {option}",
                                "params": {"echo": True, "logprobs": 1, "max_tokens": 0},
                            }
                        )
                    continue
                answer = spec.get("answer")
                hint = prompts.LETTERS[orders[t].index(answer)] if answer is not None else None
                result.append(
                    {
                        "key": f"obj:{item.uid}:{lang}:{t}",
                        "messages": prompts.letter_messages(
                            kind=item.kind, version=version, language=lang, turn=t, orders=orders
                        ),
                        "params": {"max_tokens": 16},
                        **({"hints": {"answer": hint}} if hint else {}),
                    }
                )
    return result


def evaluation_estimate(*, run: EvaluationRun) -> dict:
    """Estimate the calls and money of the response phase and of round-robin judging, before starting."""
    calls, cost = 0, Decimal("0")
    for model in run.models.select_related("endpoint"):
        endpoint = model.endpoint
        for prompt in _response_prompts(run, model):
            request = build_request(
                api_style=endpoint.api_style,
                model=endpoint.model,
                defaults=endpoint.default_params(),
                messages=prompt.get("messages"),
                prompt=prompt.get("prompt"),
                params=prompt.get("params"),
            )
            calls += 1
            cost += rough_request_cost(
                request, price_input=endpoint.price_input_per_mtok, price_output=endpoint.price_output_per_mtok
            )
    n_models = run.models.count()
    open_items = sum(
        1
        for e in _entries(run)
        for lang in run.languages
        if e.item.kind == "open_prompt" and e.revision.content.get(lang)
    )
    judge_calls = open_items * n_models * (n_models - 1) if run.judge_id else 0
    judge_cost = Decimal("0")
    if judge_calls:
        endpoint = run.judge.endpoint
        per_call = rough_request_cost(
            {"messages": [{"content": "x" * 6000}], "max_tokens": 600},
            price_input=endpoint.price_input_per_mtok,
            price_output=endpoint.price_output_per_mtok,
        )
        judge_cost = per_call * judge_calls
    return {
        "response_calls": calls,
        "response_cost": cost,
        "judge_calls_round_robin": judge_calls,
        "judge_cost_round_robin": judge_cost,
        "total_cost": cost + judge_cost,
    }


def logprob_probe(*, endpoint: Endpoint) -> None:
    """Check that an endpoint really returns prompt log-probabilities; raise ValidationError if it does not."""
    result = llm_services.call_make(
        endpoint=endpoint,
        prompt="The sky is blue.",
        params={"echo": True, "logprobs": 1, "max_tokens": 0},
        parser="logprobs",
    )
    if not result.ok:
        raise ValidationError(
            _(
                "%(endpoint)s does not return prompt log-probabilities (echo with logprobs): %(error)s. "
                "Without them the log-probability protocol would score at chance; use the letter protocol."
            )
            % {"endpoint": endpoint.name, "error": result.call.error or _("no log-probabilities in the reply")}
        )


@transaction.atomic
def evaluation_run_start(*, run: EvaluationRun, user: AbstractBaseUser | None, start: bool = True) -> EvaluationRun:
    """Start collecting responses from every model (one background LLM run per model)."""
    run = EvaluationRun.objects.select_for_update().get(pk=run.pk)
    if run.phase != EvaluationRun.Phase.DRAFT:
        raise ValidationError(_("This run has already started."))
    if run.protocol == EvaluationRun.Protocol.LOGPROB:
        for model in run.models.select_related("endpoint"):
            logprob_probe(endpoint=model.endpoint)
    for model in run.models.select_related("endpoint"):
        prompts_for_model = _response_prompts(run, model)
        if not prompts_for_model:
            raise ValidationError(_("The release has no items in the chosen languages."))
        parser = "logprobs" if run.protocol == EvaluationRun.Protocol.LOGPROB else "text"
        llm_run = llm_services.run_create(
            endpoint=model.endpoint,
            prompts=prompts_for_model,
            parser=parser,
            name=f"{run.name} · {model.code} responses",
            user=user,
            purpose="evaluation",
            start=start,
        )
        EvaluationLLMRun.objects.create(run=run, kind=EvaluationLLMRun.Kind.RESPONSES, model=model, llm_run=llm_run)
    run.phase = EvaluationRun.Phase.RESPONSES
    run.save(update_fields=["phase"])
    if start:
        schedule_advance(run.pk)
    return run


def schedule_advance(run_id: int, delay: float = 0.0) -> None:
    """Queue the task that moves the run forward, after the current transaction commits."""
    from evaluation import tasks

    def enqueue() -> None:
        task = tasks.evaluation_advance
        if delay:
            task = task.using(run_after=timezone.now() + timedelta(seconds=delay))
        task.enqueue(run_id)

    transaction.on_commit(enqueue)


def _letter_of(text: str) -> str | None:
    from llm.parsers import ParseError, parse_mcq_letter

    try:
        return parse_mcq_letter(text, {})["letter"]
    except ParseError:
        return None


def _collect_responses(run: EvaluationRun, link: EvaluationLLMRun) -> None:
    model = link.model
    entries = {e.item.uid: e for e in _entries(run)}
    items = {
        key: item
        for key, item in ((ri.key, ri) for ri in RunItem.objects.filter(run=link.llm_run).select_related("call"))
    }
    answers, opens = [], []
    logprob_groups: dict[tuple, dict[int, RunItem]] = {}
    missing = 0
    for key, ri in items.items():
        parts = key.split(":")
        kind, uid, lang = parts[0], parts[1], parts[2]
        entry = entries[uid]
        text = ri.call.response_text if ri.call else ""
        if ri.status != RunItem.Status.DONE and kind != "lp":
            # No reply at all (the provider failed): the item is missing for this model, not answered wrongly.
            missing += 1
            continue
        if kind == "open":
            ok = bool(text.strip())
            opens.append(
                OpenResponse(run=run, model=model, item=entry.item, language=lang, text=text, ok=ok, call=ri.call)
            )
        elif kind == "obj":
            turn = int(parts[3])
            version = entry.revision.content[lang]
            spec = prompts.objective_turns(entry.item.kind, version)[turn]
            order = prompts.option_order(
                uid=uid, model_code=model.code, language=lang, turn=turn, seed=run.seed, n=len(spec["options"])
            )
            letter = _letter_of(text)
            chosen = None
            if letter is not None and prompts.LETTERS.index(letter) < len(order):
                chosen = order[prompts.LETTERS.index(letter)]
            answers.append(
                Answer(
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
            )
        else:
            logprob_groups.setdefault((uid, lang, int(parts[3])), {})[int(parts[4])] = ri
    for (uid, lang, turn), options in logprob_groups.items():
        entry = entries[uid]
        version = entry.revision.content[lang]
        spec = prompts.objective_turns(entry.item.kind, version)[turn]
        prefix = prompts.logprob_prefix(kind=entry.item.kind, version=version, language=lang, turn=turn)
        if any(ri.status != RunItem.Status.DONE for ri in options.values()):
            missing += 1
            continue
        scores = {}
        for o, ri in sorted(options.items()):
            if isinstance(ri.result, dict):
                mean, total = prompts.continuation_score(ri.result, len(prefix) + 1)
                scores[str(o)] = {"mean": mean, "sum": total}
        complete = len(scores) == len(spec["options"]) and all(s["mean"] is not None for s in scores.values())
        chosen = max(scores, key=lambda k: scores[k]["mean"]) if complete else None
        answers.append(
            Answer(
                run=run,
                model=model,
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
        )
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


def _judge_prompt_map(run: EvaluationRun) -> dict:
    return {p.dimension_id: p for p in run.judge.prompt_set.prompts.select_related("dimension")}


def _pairs(models: list[ModelUnderTest]) -> list[tuple[ModelUnderTest, ModelUnderTest]]:
    return list(itertools.combinations(sorted(models, key=lambda m: m.code), 2))


def _start_judging(run: EvaluationRun, pairs_by_stratum: dict, user: AbstractBaseUser | None, start: bool) -> bool:
    """Queue the judge on the given pairs (both orders); return False when there is nothing to judge."""
    prompt_map = _judge_prompt_map(run)
    responses = {
        (r.item_id, r.language, r.model_id): r
        for r in OpenResponse.objects.filter(run=run, ok=True).select_related("item__current_revision")
    }
    names = [m.endpoint.model for m in run.models.select_related("endpoint")] + [m.label for m in run.models.all()]
    entries = {e.item_id: e for e in _entries(run)}
    batch, missing = [], set()
    for (item_id, lang), pairs in pairs_by_stratum.items():
        entry = entries[item_id]
        prompt = prompt_map.get(entry.item.dimension_id)
        if prompt is None:
            missing.add(entry.item.dimension.code)
            continue
        content = entry.revision.content.get(lang, {})
        for a, b in pairs:
            ra, rb = responses.get((item_id, lang, a.pk)), responses.get((item_id, lang, b.pk))
            if ra is None or rb is None:
                continue
            ta, tb = anonymise(ra.text, names), anonymise(rb.text, names)
            for order, first, second in (("AB", ta, tb), ("BA", tb, ta)):
                batch.append(
                    {
                        "key": f"pair:{entry.item.uid}:{lang}:{a.code}:{b.code}:{order}",
                        "messages": judge_messages(prompt=prompt, content=content, first=first, second=second),
                    }
                )
    if missing:
        run.notes = [
            *run.notes,
            _("No judge prompt for: %(dims)s; those items were not judged.") % {"dims": ", ".join(sorted(missing))},
        ]
        run.save(update_fields=["notes"])
    if not batch:
        return False
    run.adaptive_round += 1
    run.save(update_fields=["adaptive_round"])
    llm_run = llm_services.run_create(
        endpoint=run.judge.endpoint,
        prompts=batch,
        parser="calibration.verdict",
        name=f"{run.name} · judging {run.adaptive_round}",
        user=user,
        purpose="evaluation",
        start=start,
    )
    EvaluationLLMRun.objects.create(
        run=run, kind=EvaluationLLMRun.Kind.JUDGING, llm_run=llm_run, round=run.adaptive_round
    )
    return True


def _collect_verdicts(run: EvaluationRun, link: EvaluationLLMRun) -> None:
    models = {m.code: m for m in run.models.all()}
    items = {e.item.uid: e.item for e in _entries(run)}
    verdicts = []
    for ri in RunItem.objects.filter(run=link.llm_run).select_related("call"):
        _, uid, lang, code_a, code_b, order = ri.key.split(":")
        parsed = ri.status == RunItem.Status.DONE and isinstance(ri.result, dict)
        score = None
        if parsed:
            verdict = judge_prompts.Verdict(ri.result["winner"], int(ri.result["margin"]))
            score = judge_prompts.canonical_from_order(verdict, order)
        verdicts.append(
            PairVerdict(
                run=run,
                item=items[uid],
                language=lang,
                model_a=models[code_a],
                model_b=models[code_b],
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


def _round_robin(run: EvaluationRun) -> dict:
    models = list(run.models.all())
    strata = {}
    for entry in _entries(run):
        if entry.item.kind != "open_prompt":
            continue
        for lang in run.languages:
            if entry.revision.content.get(lang):
                strata[(entry.item_id, lang)] = _pairs(models)
    return strata


def _adaptive_next(run: EvaluationRun) -> dict:
    """Choose the next pairs per item and language by rating uncertainty and match quality (TrueSkill)."""
    from evaluation import ratings

    models = {m.code: m for m in run.models.all()}
    judged = list(PairVerdict.objects.filter(run=run, parsed=True).select_related("model_a", "model_b", "item"))
    strata = {}
    for entry in _entries(run):
        if entry.item.kind != "open_prompt":
            continue
        for lang in run.languages:
            if not entry.revision.content.get(lang):
                continue
            same_dimension = [
                (v.model_a.code, v.model_b.code, v.score)
                for v in judged
                if v.item.dimension_id == entry.item.dimension_id and v.language == lang
            ]
            current = ratings.rate_verdicts(same_dimension, models=sorted(models), seed=run.seed, n_passes=3)
            done = {
                (v.model_a.code, v.model_b.code) for v in judged if v.item_id == entry.item_id and v.language == lang
            }
            choices = ratings.pairs_adaptive(
                {r.model: (r.mu, r.sigma) for r in current.ratings},
                n_pairs=run.adaptive_pairs_per_round,
                seed=run.seed + run.adaptive_round,
                exclude=done,
            )
            pairs = []
            for choice in choices:
                a, b = sorted((choice.model_a, choice.model_b))
                pairs.append((models[a], models[b]))
            if pairs:
                strata[(entry.item_id, lang)] = pairs
    return strata


@transaction.atomic
def evaluation_run_advance(*, run: EvaluationRun, user: AbstractBaseUser | None = None, start: bool = True) -> str:
    """Move a run forward when its current LLM runs have finished; return the phase afterwards."""
    run = EvaluationRun.objects.select_for_update().get(pk=run.pk)
    if run.phase in (EvaluationRun.Phase.DONE, EvaluationRun.Phase.CANCELLED, EvaluationRun.Phase.DRAFT):
        return run.phase
    links = list(run.llm_runs.filter(collected=False).select_related("llm_run", "model"))
    if any(link.llm_run.status not in FINISHED for link in links):
        return run.phase
    for link in links:
        if link.llm_run.status != Run.Status.DONE:
            run.notes = [
                *run.notes,
                _("%(run)s ended %(status)s: %(error)s")
                % {"run": link.llm_run.name, "status": link.llm_run.status, "error": link.llm_run.error or "—"},
            ]
        if link.kind == EvaluationLLMRun.Kind.RESPONSES:
            _collect_responses(run, link)
        elif link.kind == EvaluationLLMRun.Kind.JUDGING:
            _collect_verdicts(run, link)
    run.save(update_fields=["notes"])
    has_open = OpenResponse.objects.filter(run=run, ok=True).exists()
    if run.phase == EvaluationRun.Phase.RESPONSES:
        run.phase = EvaluationRun.Phase.JUDGING
        run.save(update_fields=["phase"])
        if run.judge_id and has_open and run.models.count() >= 2:
            strata = _round_robin(run) if run.pairing == EvaluationRun.Pairing.ROUND_ROBIN else _adaptive_next(run)
            if _start_judging(run, strata, user, start):
                return run.phase
    elif (
        run.pairing == EvaluationRun.Pairing.ADAPTIVE
        and run.adaptive_round < run.adaptive_rounds
        and _start_judging(run, _adaptive_next(run), user, start)
    ):
        return run.phase
    evaluation_report_compute(run=run)
    return run.phase


def evaluation_report_compute(*, run: EvaluationRun) -> dict:
    """Compute and store the run's report from its stored answers and verdicts; mark the run done."""
    from evaluation.report import build_report, report_digest

    report = build_report(run)
    run.report, run.report_digest = report, report_digest(report)
    run.phase = EvaluationRun.Phase.DONE
    run.finished_at = run.finished_at or timezone.now()
    run.save(update_fields=["report", "report_digest", "phase", "finished_at"])
    return report


@transaction.atomic
def evaluation_run_cancel(*, run: EvaluationRun) -> EvaluationRun:
    """Cancel a run and its background LLM runs; what was collected stays."""
    for link in run.llm_runs.select_related("llm_run"):
        if link.llm_run.status not in FINISHED:
            llm_services.run_cancel(run=link.llm_run)
    run.phase = EvaluationRun.Phase.CANCELLED
    run.save(update_fields=["phase"])
    return run
