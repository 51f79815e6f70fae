"""Evaluation runs: create, estimate, start, advance through the phases, compute the report, cancel."""

import logging
from decimal import Decimal

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from annotation.releases.models import Release, ReleaseItem
from annotation.releases.selectors import release_entries
from calibration.juries import jury_members
from calibration.models import CombineRule, Judge, JudgeSelection
from calibration.services import primary_judge
from evaluation import prompts
from evaluation.models import EvaluationLLMRun, EvaluationRun, ModelUnderTest, OpenResponse
from evaluation.progress import RUNNING_PHASES
from evaluation.ratings import DEFAULT_MARGIN_MAPPING, MARGIN_MAPPINGS
from evaluation.services.common import EVALUATION_PURPOSE
from evaluation.services.judging import adaptive_next, round_robin, start_judging
from llm import services as llm_services
from llm.calls import build_request, rough_request_cost
from llm.models import BudgetPool, Endpoint, Run

logger = logging.getLogger(__name__)


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
    pairing: str = EvaluationRun.Pairing.AUTO,
    combine_rule: str | None = None,
    margin_mapping: str = DEFAULT_MARGIN_MAPPING,
    seed: int = 0,
    labels: list[str] | None = None,
    budget: Decimal | None = None,
    held_out_release: Release | None = None,
) -> EvaluationRun:
    """Plan a run on a frozen release; the judge defaults to the selected primary judge.

    Running with another judge, or with none (objective items only), needs a recorded reason. ``budget`` (in the
    endpoints' currency) is shared by all the run's LLM runs: they pause before a request that could exceed it.
    ``held_out_release``: a frozen probe set of other items (another generator's), whose objective items every model
    also answers; the report gives each model's accuracy on both, never pooled.
    """
    endpoints = list(dict.fromkeys(endpoints))
    languages = [lang for lang in ("en", "zh") if lang in languages]
    errors = _plan_errors(release=release, name=name, endpoints=endpoints, languages=languages)
    errors += _held_out_errors(release=release, held_out=held_out_release)
    judge, selection, judge_errors = _judge_choice(judge=judge, override_reason=judge_override_reason)
    if combine_rule is None:
        combine_rule = selection.calibration_run.combine_rule if selection else CombineRule.FACET_TIE
    errors += judge_errors + _options_errors(
        combine_rule=combine_rule, margin_mapping=margin_mapping, protocol=protocol, endpoints=endpoints, budget=budget
    )
    if errors:
        raise ValidationError(errors)
    run = EvaluationRun(
        name=name,
        release=release,
        languages=languages,
        held_out_release=held_out_release,
        judge=judge,
        judge_selection=selection if selection is not None and judge == selection.judge else None,
        judge_override_reason=judge_override_reason.strip(),
        combine_rule=combine_rule,
        protocol=protocol,
        pairing=pairing,
        margin_mapping=margin_mapping,
        seed=seed,
        created_by=user,
        budget_pool=llm_services.budget_pool_create(name=name, budget=budget),
    )
    run.full_clean()
    run.save()
    for n, endpoint in enumerate(endpoints, start=1):
        label = labels[n - 1] if labels and n <= len(labels) else endpoint.name
        ModelUnderTest.objects.create(run=run, endpoint=endpoint, code=f"M{n:02d}", label=label)
    return run


def _plan_errors(*, release: Release, name: str, endpoints: list[Endpoint], languages: list[str]) -> list[str]:
    """Return what is wrong with the release, name, models and languages of a planned run."""
    errors = []
    if not release.is_frozen:
        errors.append(
            _("Release %(version)s is a draft; evaluation runs only on frozen releases.") % {"version": release.version}
        )
    if EvaluationRun.objects.filter(name=name).exists():
        errors.append(_("An evaluation run named %(name)s already exists.") % {"name": name})
    if not endpoints:
        errors.append(_("Choose at least one model under test."))
    if not languages:
        errors.append(_("Choose at least one language."))
    return errors


def _held_out_errors(*, release: Release, held_out: Release | None) -> list[str]:
    """Return what is wrong with a held-out release: a draft, the release itself, or sharing items with it."""
    if held_out is None:
        return []
    if held_out.pk == release.pk:
        return [_("The held-out release must be another release than the one evaluated.")]
    errors = []
    if not held_out.is_frozen:
        errors.append(
            _("The held-out release %(version)s is a draft; freeze it first.") % {"version": held_out.version}
        )
    shared = ReleaseItem.objects.filter(release=held_out, item__in=release.entries.values("item")).count()
    if shared:
        errors.append(
            _("The held-out release shares %(n)s items with the release evaluated; a held-out set holds other items.")
            % {"n": shared}
        )
    return errors


def _judge_choice(
    *, judge: Judge | None, override_reason: str
) -> tuple[Judge | None, JudgeSelection | None, list[str]]:
    """Return the run's judge (the primary judge unless a reason is recorded), the selection in force, and errors.

    Running with another judge than the primary one, or without a primary judge selected, needs a reason.
    """
    selection = primary_judge()
    overridden = bool(override_reason.strip())
    if judge is None and selection is not None and not overridden:
        judge = selection.judge
    errors = []
    if selection is None and not overridden:
        errors.append(_("No primary judge is selected; select one in calibration or record why you run without it."))
    elif selection is not None and judge is not None and judge != selection.judge and not overridden:
        errors.append(_("%(judge)s is not the selected primary judge; record why you use it.") % {"judge": judge})
    return judge, selection, errors


def _options_errors(
    *, combine_rule: str, margin_mapping: str, protocol: str, endpoints: list[Endpoint], budget: Decimal | None
) -> list[str]:
    """Return what is wrong with the rule, margin mapping, protocol and budget of a planned run."""
    errors = []
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
    if budget is not None and Decimal(budget) < 0:
        errors.append(_("A budget cannot be negative."))
    return errors


def scored_entries(run: EvaluationRun) -> list[ReleaseItem]:
    """Return the entries the models answer: the release's, then the objective ones of the held-out release."""
    entries = release_entries(run.release)
    if run.held_out_release_id:
        entries += [e for e in release_entries(run.held_out_release) if e.item.kind != "open_prompt"]
    return entries


def _response_prompts(run: EvaluationRun, model: ModelUnderTest, entries: list | None = None) -> list[dict]:
    """The prompts ``model`` answers (``entries``: the run's ``scored_entries``, read once for every model)."""
    result = []
    for entry in scored_entries(run) if entries is None else entries:
        item, revision = entry.item, entry.revision
        for lang in run.languages:
            version = revision.content.get(lang)
            if not version:
                continue
            if item.kind == "open_prompt":
                result.append(
                    {
                        "ref": {"kind": "open", "item": item.pk, "language": lang},
                        "messages": prompts.open_messages(version=version),
                    }
                )
                continue
            turns = prompts.objective_turns(item.kind, version)
            orders = [
                prompts.option_order(
                    uid=item.uid, model_code=model.code, language=lang, turn=t, seed=run.seed, n=len(spec["options"])
                )
                for t, spec in enumerate(turns)
            ]
            for t, spec in enumerate(turns):
                if model.protocol == EvaluationRun.Protocol.LOGPROB:
                    prefix = prompts.logprob_prefix(kind=item.kind, version=version, language=lang, turn=t)
                    for o, option in enumerate(spec["options"]):
                        result.append(
                            {
                                "ref": {"kind": "logprob", "item": item.pk, "language": lang, "turn": t, "option": o},
                                "prompt": prompts.logprob_prompt(prefix, option),
                                "params": {"echo": True, "logprobs": 1, "max_tokens": 0},
                            }
                        )
                    continue
                answer = spec.get("answer")
                hint = prompts.LETTERS[orders[t].index(answer)] if answer is not None else None
                result.append(
                    {
                        "ref": {"kind": "letter", "item": item.pk, "language": lang, "turn": t},
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
    calls, cost, cost_batch = 0, Decimal("0"), Decimal("0")
    entries = scored_entries(run)
    models = list(run.models.select_related("endpoint"))
    for model in models:
        endpoint = model.endpoint
        for prompt in _response_prompts(run, model, entries):
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
            batch_input, batch_output = endpoint.prices(batch=True)
            cost_batch += rough_request_cost(request, price_input=batch_input, price_output=batch_output)
    n_models = len(models)
    open_items = sum(
        1
        for e in entries
        for lang in run.languages
        if e.item.kind == "open_prompt" and e.revision.content.get(lang)
    )
    judge_calls = open_items * n_models * (n_models - 1) if run.judge_id else 0
    judge_cost = judge_cost_batch = Decimal("0")
    if judge_calls:
        # A jury asks each of its members, so it costs the sum of theirs.
        for endpoint in (member.endpoint for member in jury_members(run.judge)):
            typical = {"messages": [{"content": "x" * 6000}], "max_tokens": 600}
            per_call = rough_request_cost(
                typical, price_input=endpoint.price_input_per_mtok, price_output=endpoint.price_output_per_mtok
            )
            batch_input, batch_output = endpoint.prices(batch=True)
            judge_cost += per_call * judge_calls
            judge_cost_batch += (
                rough_request_cost(typical, price_input=batch_input, price_output=batch_output) * judge_calls
            )
    return {
        "response_calls": calls,
        "response_cost": cost,
        "judge_calls_round_robin": judge_calls,
        "judge_cost_round_robin": judge_cost,
        "total_cost": cost + judge_cost,
        # The same calls at the endpoints' batch prices (the same as live where an endpoint sets none).
        "response_cost_batch": cost_batch,
        "judge_cost_round_robin_batch": judge_cost_batch,
        "total_cost_batch": cost_batch + judge_cost_batch,
        "budget": run.budget_pool.budget if run.budget_pool_id else None,
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


def evaluation_run_start(*, run: EvaluationRun, user: AbstractBaseUser | None, start: bool = True) -> EvaluationRun:
    """Start collecting responses from every model (one background LLM run per model).

    The log-probability protocol first probes each endpoint over the network, outside any transaction; the
    phase is then checked again under a lock, so two starts cannot both create runs.
    """
    run.refresh_from_db()
    if run.phase != EvaluationRun.Phase.DRAFT:
        raise ValidationError(_("This run has already started."))
    for model in run.models.select_related("endpoint", "run"):
        if model.protocol == EvaluationRun.Protocol.LOGPROB:
            logprob_probe(endpoint=model.endpoint)
    return _start_responses(run=run, user=user, start=start)


@transaction.atomic
def _start_responses(*, run: EvaluationRun, user: AbstractBaseUser | None, start: bool) -> EvaluationRun:
    run = EvaluationRun.objects.select_for_update().get(pk=run.pk)
    if run.phase != EvaluationRun.Phase.DRAFT:
        raise ValidationError(_("This run has already started."))
    run.phase = EvaluationRun.Phase.RESPONSES
    run.save(update_fields=["phase"])
    entries = scored_entries(run)
    for model in run.models.select_related("endpoint"):
        prompts_for_model = _response_prompts(run, model, entries)
        if not prompts_for_model:
            raise ValidationError(_("The release has no items in the chosen languages."))
        parser = "logprobs" if model.protocol == EvaluationRun.Protocol.LOGPROB else "text"
        llm_run = llm_services.run_create(
            endpoint=model.endpoint,
            prompts=prompts_for_model,
            parser=parser,
            name=f"{run.name} · {model.code} responses",
            user=user,
            purpose=EVALUATION_PURPOSE,
            start=start,
            budget_pool=run.budget_pool,
        )
        EvaluationLLMRun.objects.create(run=run, kind=EvaluationLLMRun.Kind.RESPONSES, model=model, llm_run=llm_run)
    return run


def _share_budget(run: EvaluationRun) -> None:
    """Put the run's LLM runs that do not share its budget yet (judging rounds) under it, before their tasks start."""
    if run.budget_pool_id is not None:
        Run.objects.filter(pk__in=run.llm_runs.values("llm_run"), budget_pool__isnull=True).update(
            budget_pool=run.budget_pool_id
        )


@transaction.atomic
def evaluation_budget_set(*, run: EvaluationRun, budget: Decimal | None) -> EvaluationRun:
    """Set, raise or remove an evaluation run's budget; LLM runs it paused resume when it is raised.

    Raise ``ValidationError`` (field ``budget``) for a negative budget or one below what was already spent.
    """
    run = EvaluationRun.objects.select_for_update().get(pk=run.pk)
    if run.budget_pool_id is None:
        # A run planned before budgets existed: its LLM runs so far count against the new budget.
        runs = Run.objects.filter(pk__in=run.llm_runs.values("llm_run"))
        pool = llm_services.budget_pool_create(name=run.name, budget=None)
        pool.spent = sum(runs.values_list("spent", flat=True), Decimal("0"))
        pool.save(update_fields=["spent"])
        runs.update(budget_pool=pool)
        run.budget_pool = pool
        run.save(update_fields=["budget_pool"])
    llm_services.budget_pool_set(pool=run.budget_pool, budget=budget)
    run.budget_pool = BudgetPool.objects.get(pk=run.budget_pool_id)
    return run


@transaction.atomic
def evaluation_run_advance(*, run: EvaluationRun, user: AbstractBaseUser | None = None, start: bool = True) -> str:
    """Move a run forward if every LLM run of its current phase has been collected; return the phase afterwards.

    The collector calls this after storing each LLM run's results; calling it again changes nothing.
    """
    run = EvaluationRun.objects.select_for_update().get(pk=run.pk)
    return advance_locked(run, user=user, start=start)


def advance_locked(run: EvaluationRun, *, user: AbstractBaseUser | None, start: bool) -> str:
    """Advance ``run`` (locked by the caller): start judging, another adaptive round, or compute the report."""
    if run.phase not in (EvaluationRun.Phase.RESPONSES, EvaluationRun.Phase.JUDGING):
        return run.phase
    if run.llm_runs.filter(collected=False).exists():
        return run.phase
    has_open = OpenResponse.objects.filter(run=run, ok=True).exists()
    if run.phase == EvaluationRun.Phase.RESPONSES:
        run.phase = EvaluationRun.Phase.JUDGING
        run.save(update_fields=["phase"])
        if run.judge_id and has_open and run.models.count() >= 2:
            strata = round_robin(run) if run.pairing == EvaluationRun.Pairing.ROUND_ROBIN else adaptive_next(run)
            if start_judging(run, strata, user, start):
                _share_budget(run)
                return run.phase
    elif (
        EvaluationRun.Pairing(run.pairing).in_rounds
        and run.adaptive_round < run.adaptive_rounds
        and start_judging(run, adaptive_next(run), user, start)
    ):
        _share_budget(run)
        return run.phase
    _report_store(run)
    # Draw the page's figures now, in the worker that collects the run, so the first reader does not wait for them.
    transaction.on_commit(lambda: figures_draw(run_id=run.pk))
    return run.phase


def figures_draw(*, run_id: int) -> None:
    """Draw a finished run's page figures (SVG) in every interface language into the shared cache.

    The page draws any that are missing itself, so a failure here costs the first reader the wait, nothing else.
    """
    # deferred: evaluation.report.files loads matplotlib, which only drawing needs (no process loads it at start)
    from evaluation.report.files import run_figures

    run = EvaluationRun.objects.filter(pk=run_id, report__isnull=False).first()
    if run is None:
        return
    for language, _name in settings.LANGUAGES:
        try:
            with translation.override(language):
                run_figures(run, "svg")
        except Exception:  # noqa: BLE001 (the page draws them on demand)
            logger.exception("Drawing the figures of evaluation run %s in %s failed", run_id, language)


@transaction.atomic
def evaluation_report_compute(*, run: EvaluationRun) -> dict:
    """Recompute a finished run's report from its stored answers and verdicts (the same data gives the same report)."""
    run.phase = EvaluationRun.objects.select_for_update().values_list("phase", flat=True).get(pk=run.pk)
    if run.phase != EvaluationRun.Phase.DONE:
        raise ValidationError(
            _("The report is computed when the run is done; this run is %(phase)s.")
            % {"phase": run.get_phase_display()}
        )
    return _report_store(run)


def _report_store(run: EvaluationRun) -> dict:
    # deferred: evaluation.report loads the figures' matplotlib too (through its files), only where reports are built
    from evaluation.report import build_report, report_digest

    report = build_report(run)
    run.report, run.report_digest = report, report_digest(report)
    run.phase = EvaluationRun.Phase.DONE
    run.finished_at = run.finished_at or timezone.now()
    run.save(update_fields=["report", "report_digest", "phase", "finished_at"])
    return report


@transaction.atomic
def evaluation_run_cancel(*, run: EvaluationRun) -> EvaluationRun:
    """Cancel a running run and its background LLM runs; what was collected stays."""
    run = EvaluationRun.objects.select_for_update().get(pk=run.pk)
    if run.phase not in (EvaluationRun.Phase.RESPONSES, EvaluationRun.Phase.JUDGING):
        raise ValidationError(
            _("Only a running evaluation can be cancelled; this one is %(phase)s.") % {"phase": run.get_phase_display()}
        )
    run.phase = EvaluationRun.Phase.CANCELLED
    run.save(update_fields=["phase"])
    for link in run.llm_runs.select_related("llm_run"):
        if link.llm_run.status not in Run.FINISHED:
            llm_services.run_cancel(run=link.llm_run)
    return run


def _running_locked(run: EvaluationRun) -> EvaluationRun:
    run = EvaluationRun.objects.select_for_update().get(pk=run.pk)
    if run.phase not in RUNNING_PHASES:
        raise ValidationError(
            _("Only a running evaluation can be paused or resumed; this one is %(phase)s.")
            % {"phase": run.get_phase_display()}
        )
    return run


@transaction.atomic
def evaluation_run_pause(*, run: EvaluationRun) -> EvaluationRun:
    """Pause every queued or running LLM run of a running evaluation; what is in flight finishes."""
    run = _running_locked(run)
    paused = 0
    for link in run.llm_runs.select_related("llm_run"):
        if link.llm_run.can_become(Run.Status.PAUSED):
            llm_services.run_pause(run=link.llm_run)
            paused += 1
    if not paused:
        raise ValidationError(_("Nothing of this evaluation is queued or running; there is nothing to pause."))
    return run


@transaction.atomic
def evaluation_run_resume(*, run: EvaluationRun) -> EvaluationRun:
    """Queue the paused LLM runs of a running evaluation again; done work is kept."""
    run = _running_locked(run)
    resumed = 0
    for link in run.llm_runs.select_related("llm_run"):
        if link.llm_run.status == Run.Status.PAUSED:
            llm_services.run_resume(run=link.llm_run)
            resumed += 1
    if not resumed:
        raise ValidationError(_("No part of this evaluation is paused; there is nothing to resume."))
    return run
