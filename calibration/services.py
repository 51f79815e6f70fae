"""Every write of the calibration app: judge prompts, prompt sets, judges and juries, calibration runs, selection."""

import json
import logging
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from annotation.items.models import Benchmark, Dimension
from annotation.labelling.models import ComparisonSet
from annotation.labelling.pairwise import anonymise
from annotation.labelling.selectors import set_model_names
from calibration import prompts, selectors
from calibration.agreement.juries import jury_order_scores, jury_verdict
from calibration.juries import MIN_MEMBERS, expand_candidates
from calibration.models import (
    CalibrationJudgeRun,
    CalibrationRun,
    CombineRule,
    Judge,
    JudgeKind,
    JudgePrompt,
    JudgeSelection,
    JudgeVerdict,
    JuryAggregation,
    PromptSet,
)
from core.errors import ServiceError
from llm import collectors
from llm import services as llm_services
from llm.models import Endpoint, Run, RunItem

VERDICT_PARSER = "calibration.verdict"
CALIBRATION_PURPOSE = "calibration"

logger = logging.getLogger(__name__)


@transaction.atomic
def judge_prompt_create(
    *,
    dimension: Dimension,
    criteria: str,
    analysis_steps: str,
    length_penalty: str,
    user: AbstractBaseUser | None,
    few_shot: list[dict] | None = None,
    notes: str = "",
) -> JudgePrompt:
    """Save a new version of the judge prompt for a subjective dimension."""
    if not dimension.subjective:
        raise ValidationError(_("Judge prompts are for subjective dimensions; %(dim)s is not.") % {"dim": dimension})
    few_shot = few_shot or []
    if not isinstance(few_shot, list) or not all(
        isinstance(e, dict) and {"exemplary", "poor"} <= set(e) for e in few_shot
    ):
        raise ValidationError(_('Few-shot examples must be a list of objects with "exemplary" and "poor" replies.'))
    latest = JudgePrompt.objects.filter(dimension=dimension).order_by("-version").first()
    prompt = JudgePrompt(
        dimension=dimension,
        version=(latest.version + 1) if latest else 1,
        criteria=criteria.strip(),
        analysis_steps=analysis_steps.strip(),
        length_penalty=length_penalty.strip(),
        few_shot=few_shot,
        notes=notes,
        created_by=user,
    )
    prompt.full_clean()
    prompt.save()
    return prompt


@transaction.atomic
def prompt_set_create(*, name: str, judge_prompts: list[JudgePrompt], user: AbstractBaseUser | None) -> PromptSet:
    """Bundle one prompt version per dimension as the next version of the named prompt set."""
    dims = [p.dimension_id for p in judge_prompts]
    if len(dims) != len(set(dims)):
        raise ValidationError(_("A prompt set holds one prompt per dimension."))
    if not judge_prompts:
        raise ValidationError(_("Choose at least one judge prompt."))
    latest = PromptSet.objects.filter(name=name).order_by("-version").first()
    prompt_set = PromptSet(name=name, version=(latest.version + 1) if latest else 1, created_by=user)
    prompt_set.full_clean()
    prompt_set.save()
    prompt_set.prompts.set(judge_prompts)
    return prompt_set


@transaction.atomic
def judge_create(*, name: str, endpoint: Endpoint, prompt_set: PromptSet) -> Judge:
    """Register a candidate judge (an endpoint with a prompt set version)."""
    judge = Judge(name=name, endpoint=endpoint, prompt_set=prompt_set)
    judge.full_clean()
    judge.save()
    return judge


def judge_prompts_load_defaults(*, benchmark: Benchmark, user: AbstractBaseUser | None = None) -> PromptSet:
    """Create version 1 of the default judge prompts (fixtures/judge_prompts.json) and a 'default' prompt set."""
    data = json.loads((Path(settings.BASE_DIR) / "fixtures" / "judge_prompts.json").read_text(encoding="utf-8"))
    existing = PromptSet.objects.filter(name=data["name"]).order_by("version").first()
    if existing is not None:
        return existing
    created = []
    for code, spec in data["dimensions"].items():
        dimension = Dimension.objects.get(benchmark=benchmark, code=code)
        created.append(
            judge_prompt_create(
                dimension=dimension,
                criteria=spec["criteria"],
                analysis_steps=data["analysis_steps"],
                length_penalty=data["length_penalty"],
                few_shot=spec.get("few_shot", []),
                user=user,
            )
        )
    return prompt_set_create(name=data["name"], judge_prompts=created, user=user)


def judge_messages(*, prompt: JudgePrompt, content: dict, first: str, second: str) -> list[dict]:
    """Return the chat messages asking a judge to compare two (already anonymised) responses."""
    dimension = prompt.dimension
    return [
        {
            "role": "system",
            "content": prompts.system_message(
                dimension_name=dimension.name_en,
                definition=dimension.definition_en,
                criteria=prompt.criteria,
                analysis_steps=prompt.analysis_steps,
                length_penalty=prompt.length_penalty,
                few_shot=prompt.few_shot,
            ),
        },
        {
            "role": "user",
            "content": prompts.user_message(
                context=content.get("context", ""), prompt=content.get("prompt", ""), first=first, second=second
            ),
        },
    ]


def judging_prompts(*, comparisons: list, prompt_by_dimension: dict[int, JudgePrompt], names: list[str]) -> list[dict]:
    """Return run prompts for every comparison in both orders (reference ``{"comparison": id, "order": "AB"}``)."""
    result = []
    for c in comparisons:
        content = c.item.current_revision.content.get(c.language, {}) if c.item.current_revision else {}
        a, b = anonymise(c.response_a.text, names), anonymise(c.response_b.text, names)
        prompt = prompt_by_dimension[c.dimension_id]
        for order, first, second in (("AB", a, b), ("BA", b, a)):
            result.append(
                {
                    "ref": {"comparison": c.pk, "order": order},
                    "messages": judge_messages(prompt=prompt, content=content, first=first, second=second),
                }
            )
    return result


@transaction.atomic
def calibration_run_start(
    *,
    name: str,
    comparison_set: ComparisonSet,
    judges: list[Judge],
    combine_rule: str,
    user: AbstractBaseUser | None,
    seed: int = 0,
    bootstrap: int = 1000,
    start: bool = True,
) -> CalibrationRun:
    """Ask every judge about every comparison of the set in both orders, as one LLM run per judge."""
    errors = []
    judges, juries = expand_candidates(list(judges))
    if combine_rule not in CombineRule.values:
        errors.append(_("Unknown order-combination rule %(rule)s.") % {"rule": combine_rule})
    if not judges:
        errors.append(_("Choose at least one judge."))
    comparisons = list(
        comparison_set.comparisons.select_related("item__current_revision", "dimension", "response_a", "response_b")
    )
    if not comparisons:
        errors.append(_("The comparison set has no comparisons."))
    dims = {c.dimension_id: c.dimension for c in comparisons}
    prompt_maps = {}
    for judge in judges:
        by_dim = {p.dimension_id: p for p in judge.prompt_set.prompts.select_related("dimension")}
        missing = sorted(d.code for pk, d in dims.items() if pk not in by_dim)
        if missing:
            errors.append(
                _("Judge %(judge)s has no prompt for: %(dims)s.") % {"judge": judge.name, "dims": ", ".join(missing)}
            )
        prompt_maps[judge.pk] = by_dim
    if errors:
        raise ValidationError(errors)
    run = CalibrationRun(
        name=name,
        comparison_set=comparison_set,
        combine_rule=combine_rule,
        seed=seed,
        bootstrap=bootstrap,
        created_by=user,
    )
    run.full_clean()
    run.save()
    run.juries.set(juries)
    names = set_model_names(comparison_set=comparison_set)
    for judge in judges:
        llm_run = llm_services.run_create(
            endpoint=judge.endpoint,
            prompts=judging_prompts(comparisons=comparisons, prompt_by_dimension=prompt_maps[judge.pk], names=names),
            parser=VERDICT_PARSER,
            name=f"{name} · {judge.name}",
            user=user,
            purpose=CALIBRATION_PURPOSE,
            start=start,
        )
        CalibrationJudgeRun.objects.create(calibration_run=run, judge=judge, llm_run=llm_run)
    return run


def calibration_run_status(*, run: CalibrationRun, judge_runs: list[CalibrationJudgeRun] | None = None) -> str:
    """Return 'running' while a judge's LLM run works, 'collecting' until its verdicts are stored, else 'finished'.

    ``judge_runs``: the run's judge runs with their LLM runs, when the caller has read them already.
    """
    if judge_runs is not None:
        runs = [(jr.llm_run.status, jr.llm_run.collected_at) for jr in judge_runs]
    else:
        runs = list(run.judge_runs.values_list("llm_run__status", "llm_run__collected_at"))
    if any(status not in Run.FINISHED for status, _collected in runs):
        return "running"
    return "collecting" if any(collected is None for _status, collected in runs) else "finished"


@collectors.register(CALIBRATION_PURPOSE)
def _collect(llm_run: Run) -> None:
    calibration_verdicts_collect(llm_run=llm_run)


@transaction.atomic
def calibration_verdicts_collect(*, llm_run: Run) -> dict:
    """Store one judge's verdicts from its finished LLM run; unparseable or failed replies count as failures.

    Called by the calibration collector when the judge's run finishes; verdicts already stored are kept, so a
    second call stores nothing. The calibration run is marked collected when every judge's run is.
    """
    judge_run = CalibrationJudgeRun.objects.select_related("judge").get(llm_run=llm_run)
    # Lock the calibration run: two judges' runs finishing at once must not both miss the other's verdicts.
    run = CalibrationRun.objects.select_for_update().get(pk=judge_run.calibration_run_id)
    counts = {"parsed": 0, "failed": 0}
    existing = set(run.verdicts.filter(judge=judge_run.judge).values_list("comparison_id", "order"))
    new = []
    for item in RunItem.objects.filter(run=llm_run).select_related("call"):
        comparison_id, order = item.ref["comparison"], item.ref["order"]
        if (comparison_id, order) in existing or item.status == RunItem.Status.PENDING:
            continue
        parsed = item.status == RunItem.Status.DONE and isinstance(item.result, dict)
        score = prompts.canonical_from_result(item.result, order) if parsed else None
        new.append(
            JudgeVerdict(
                calibration_run=run,
                judge=judge_run.judge,
                comparison_id=comparison_id,
                order=order,
                call=item.call,
                raw_output=item.call.response_text if item.call else "",
                parsed=parsed,
                score=score,
                error="" if parsed else (item.error or _("no parseable verdict")),
            )
        )
        counts["parsed" if parsed else "failed"] += 1
    JudgeVerdict.objects.bulk_create(new)
    others = run.judge_runs.exclude(pk=judge_run.pk).filter(llm_run__collected_at__isnull=True)
    if run.collected_at is None and not others.exists():
        # Every member has answered now, so the juries' verdicts can be combined from theirs.
        jury_verdicts_store(run=run)
        run.collected_at = timezone.now()
        run.save(update_fields=["collected_at"])
    return counts


class JudgeExcludedByRule(ServiceError):
    """The report's rule excluded the judge, and the choice did not say it overrides the rule."""

    status_code = 400
    code = "judge_excluded"


@transaction.atomic
def judge_select(
    *,
    run: CalibrationRun,
    judge: Judge,
    user: AbstractBaseUser,
    reason: str,
    report_digest: str,
    override_rule: bool = False,
) -> JudgeSelection:
    """Record the primary judge: who chose it, when, why and on which report (by its checksum).

    A judge the report's rule excluded is chosen only with ``override_rule`` and a reason; the selection records
    that it went against the rule, and the report's line on the judge, for every evaluation that uses it.
    """
    if not run.judge_runs.filter(judge=judge).exists() and not run.juries.filter(pk=judge.pk).exists():
        raise ValidationError(_("Judge %(judge)s was not part of this calibration run.") % {"judge": judge.name})
    if not reason.strip():
        raise ValidationError(_("Say why this judge is chosen; the reason is part of the record."))
    if not run.verdicts.filter(judge=judge, parsed=True).exists():
        raise ValidationError(
            _("Judge %(judge)s has no parseable verdicts; it cannot be selected.") % {"judge": judge.name}
        )
    exclusion = selectors.judge_rule_exclusion(report=run.report or {}, name=judge.name)
    if exclusion is not None and not override_rule:
        raise JudgeExcludedByRule(
            _(
                "The report's rule excluded %(judge)s (%(why)s). To choose it anyway, confirm that you override the "
                "rule and say why; the choice is recorded as made against the rule."
            )
            % {"judge": judge.name, "why": exclusion}
        )
    selection = JudgeSelection(
        judge=judge,
        calibration_run=run,
        reason=reason.strip(),
        selected_by=user,
        report_digest=report_digest,
        against_rule=exclusion is not None,
        rule_note=exclusion or "",
    )
    selection.full_clean()
    selection.save()
    return selection


def primary_judge() -> JudgeSelection | None:
    """Return the selection in force (the latest), if any."""
    return JudgeSelection.objects.select_related("judge", "calibration_run", "selected_by").first()


# A request whose computation has not finished after this long lost its worker: it may be requested again.
REPORT_STALE_SECONDS = 900


def _report_refusal(run: CalibrationRun) -> str | None:
    """Return why the run's report cannot be computed yet, or None."""
    if calibration_run_status(run=run) != "finished":
        return _("The judges' runs are not finished and collected yet; wait for them to finish.")
    if not run.verdicts.exists():
        return _("No judge verdicts yet.")
    return None


def report_under_way(run: CalibrationRun) -> bool:
    """Return whether a worker is (or will be) computing the run's report, as requested less than 15 minutes ago."""
    return (
        run.report_state in (CalibrationRun.ReportState.QUEUED, CalibrationRun.ReportState.COMPUTING)
        and run.report_requested_at is not None
        and (timezone.now() - run.report_requested_at).total_seconds() < REPORT_STALE_SECONDS
    )


@transaction.atomic
def calibration_report_request(*, run: CalibrationRun) -> CalibrationRun:
    """Queue the computation of the run's report for a worker (``calibration.tasks.report_compute``).

    The request itself is a short write; the worker computes the report outside any transaction and stores it in
    another short one, so no request (and no sign-in) waits for the statistics. A request while one is under way
    changes nothing. Refused until every judge's run has finished and been collected.
    """
    # deferred: calibration.tasks imports this module
    from calibration import tasks

    locked = CalibrationRun.objects.select_for_update().get(pk=run.pk)
    refusal = _report_refusal(locked)
    if refusal:
        raise ValidationError(refusal)
    if not report_under_way(locked):
        locked.report_state, locked.report_error = CalibrationRun.ReportState.QUEUED, ""
        locked.report_requested_at = timezone.now()
        locked.save(update_fields=["report_state", "report_error", "report_requested_at"])
        transaction.on_commit(lambda: tasks.report_compute.enqueue(locked.pk))
    run.report_state, run.report_error = locked.report_state, locked.report_error
    run.report_requested_at = locked.report_requested_at
    return locked


def calibration_report_lost(run_id: int) -> None:
    """Record that the worker computing a run's report stopped (killed, or its machine went away): the report
    failed, and *Recompute report* asks for it again (``llm.worker.recovery.on_task_lost``)."""
    under_way = (CalibrationRun.ReportState.QUEUED, CalibrationRun.ReportState.COMPUTING)
    CalibrationRun.objects.filter(pk=run_id, report_state__in=under_way).update(
        report_state=CalibrationRun.ReportState.FAILED,
        report_error=_("The worker computing this report stopped before it finished: recompute the report."),
    )


def calibration_report_work(*, run_id: int) -> bool:
    """Compute a queued report (the worker's task); return whether it was computed now.

    The queued request is claimed by one short update, so two workers never compute the same request; a failure is
    recorded on the run (its page shows it) and raised again for the worker's log.
    """
    claimed = CalibrationRun.objects.filter(pk=run_id, report_state=CalibrationRun.ReportState.QUEUED).update(
        report_state=CalibrationRun.ReportState.COMPUTING
    )
    if not claimed:
        return False
    run = CalibrationRun.objects.get(pk=run_id)
    try:
        calibration_report_compute(run=run)
    except Exception as exc:
        error = " ".join(exc.messages) if isinstance(exc, ValidationError) else f"{type(exc).__name__}: {exc}"
        failed = CalibrationRun.ReportState.FAILED
        CalibrationRun.objects.filter(pk=run_id).update(report_state=failed, report_error=error)
        if isinstance(exc, ValidationError):
            return False
        raise
    _figures_draw(run)
    return True


def _figures_draw(run: CalibrationRun) -> None:
    """Draw the run page's figure in every interface language into the shared cache, so no reader waits for it.

    The page draws a missing figure itself, so a failure here costs the first reader the wait, nothing else.
    """
    # deferred: calibration.charts loads matplotlib, which only drawing needs (no process loads it at start)
    from calibration.charts import page_forest

    for language, _name in settings.LANGUAGES:
        try:
            with translation.override(language):
                page_forest(run)
        except Exception:  # noqa: BLE001 (the page draws it on demand)
            logger.exception("Drawing the figure of calibration run %s in %s failed", run.pk, language)


def calibration_report_compute(*, run: CalibrationRun) -> dict:
    """Compute the report from the stored verdicts and store it with its checksum (refused until all are stored).

    The statistics (bootstrap resamples over every stratum: seconds to minutes) are computed outside any
    transaction; only storing the result is one, so on SQLite the write lock is held for a moment, not for the
    computation. The worker calls this for a requested report; the demo and benchmarks call it directly.
    """
    # deferred: the report's statistics (calibration.report) load only where a report is computed
    from calibration import report as reports

    refusal = _report_refusal(run)
    if refusal:
        raise ValidationError(refusal)
    report = reports.build_report(run)
    digest = reports.report_digest(report)
    with transaction.atomic():
        locked = CalibrationRun.objects.select_for_update().get(pk=run.pk)
        locked.report, locked.report_digest, locked.reported_at = report, digest, timezone.now()
        locked.report_state, locked.report_error = CalibrationRun.ReportState.DONE, ""
        locked.save(update_fields=["report", "report_digest", "reported_at", "report_state", "report_error"])
    run.report, run.report_digest, run.reported_at = locked.report, locked.report_digest, locked.reported_at
    run.report_state, run.report_error = locked.report_state, locked.report_error
    return report


@transaction.atomic
def jury_create(*, name: str, members: list[Judge], aggregation: str) -> Judge:
    """Register a jury of single judges combined by ``aggregation`` (majority or mean)."""
    errors = []
    members = list({m.pk: m for m in members}.values())
    if len(members) < MIN_MEMBERS:
        errors.append(_("A jury needs at least two member judges."))
    nested = sorted(m.name for m in members if m.is_jury)
    if nested:
        errors.append(
            _("A jury's members are single judges; these are juries: %(names)s.") % {"names": ", ".join(nested)}
        )
    if aggregation not in JuryAggregation.values:
        errors.append(_("Unknown jury aggregation %(method)s.") % {"method": aggregation})
    if errors:
        raise ValidationError(errors)
    jury = Judge(name=name, kind=JudgeKind.JURY, aggregation=aggregation)
    jury.full_clean()
    jury.save()
    jury.members.set(members)
    return jury


def jury_verdicts_store(*, run: CalibrationRun) -> int:
    """Store every jury's verdicts in a collected calibration run, combined from its members'; return how many.

    Each member's two orders are combined first, by the run's rule, then the members
    (``calibration.agreement.juries.jury_verdict``). Verdicts already stored are kept, so a second call stores nothing.
    """
    created = []
    for jury in run.juries.prefetch_related("members"):
        members = sorted(jury.members.all(), key=lambda m: m.name)
        existing = set(run.verdicts.filter(judge=jury).values_list("comparison_id", flat=True))
        by_comparison: dict[int, dict[int, dict[str, int | None]]] = {}
        for judge_id, comparison_id, order, score in run.verdicts.filter(judge__in=members).values_list(
            "judge_id", "comparison_id", "order", "score"
        ):
            by_comparison.setdefault(comparison_id, {}).setdefault(judge_id, {})[order] = score
        for comparison_id, scores in sorted(by_comparison.items()):
            if comparison_id in existing:
                continue
            member_orders = [(scores.get(m.pk, {}).get("AB"), scores.get(m.pk, {}).get("BA")) for m in members]
            verdict = jury_verdict(member_orders, rule=run.combine_rule, method=jury.aggregation)
            raw_output = json.dumps({m.name: list(o) for m, o in zip(members, member_orders, strict=True)})
            for order, score in zip(("AB", "BA"), jury_order_scores(verdict, run.combine_rule), strict=True):
                created.append(
                    JudgeVerdict(
                        calibration_run=run,
                        judge=jury,
                        comparison_id=comparison_id,
                        order=order,
                        raw_output=raw_output,
                        parsed=score is not None,
                        score=score,
                        error="" if score is not None else _("no member gave a verdict in both orders"),
                    )
                )
    JudgeVerdict.objects.bulk_create(created)
    return len(created)
