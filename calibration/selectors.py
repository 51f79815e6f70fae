"""Reads of the calibration pages shared with the API and reports: runs, judges, prompts and selections."""

from django.db.models import Prefetch, QuerySet

from annotation.items.models import KeyValidation
from annotation.labelling.models import ExpertLabel
from calibration import suggestion
from calibration.models import (
    CalibrationJudgeRun,
    CalibrationRun,
    Judge,
    JudgePrompt,
    JudgeSelection,
    PromptSet,
    ServedComparison,
)
from calibration.report_facts import CalibrationFacts, ComparisonFacts, LabelFacts, VerdictFacts


def calibration_run_list() -> QuerySet[CalibrationRun]:
    """Return every calibration run with its comparison set, newest first."""
    return CalibrationRun.objects.select_related("comparison_set")


def key_validation_list() -> QuerySet[KeyValidation]:
    """Key validations of EiCAP probes, newest first, with their judge and run."""
    return KeyValidation.objects.select_related("benchmark", "endpoint", "llm_run").order_by("-created_at", "-pk")


def judge_list() -> QuerySet[Judge]:
    """Return every judge with its endpoint and prompt set, and a jury's members."""
    return Judge.objects.select_related("endpoint", "prompt_set").prefetch_related("members")


def prompt_set_list() -> QuerySet[PromptSet]:
    """Return every prompt set with its prompts and their dimensions."""
    return PromptSet.objects.prefetch_related(
        Prefetch("prompts", queryset=JudgePrompt.objects.select_related("dimension"))
    )


def judge_prompt_list() -> QuerySet[JudgePrompt]:
    """Return every judge prompt version with its dimension and author."""
    return JudgePrompt.objects.select_related("dimension", "created_by")


def calibration_run_judges(*, run: CalibrationRun) -> list[CalibrationJudgeRun]:
    """Return the run's candidate judges with their LLM runs."""
    return list(run.judge_runs.select_related("judge", "llm_run"))


def judge_rule_exclusion(*, report: dict, name: str) -> str | None:
    """Return the report's line on why its suggestion rule excluded judge ``name``, or None if the rule allowed it.

    The rule (``calibration.suggestion.suggest``) excludes a judge whose alpha with the experts is undefined or whose
    interval lies wholly below the experts' own alpha, on the overall stratum.
    """
    strata = report.get("strata") or []
    if not strata:
        return None
    overall = strata[0]
    row = overall.get("judges", {}).get(name)
    if row is None:
        return None
    if not suggestion.excluded(row["alpha_with_judge"], overall["baseline"]["alpha_ordinal"]["value"]):
        return None
    prefix = f"{name}: "
    lines = report.get("suggestion", {}).get("reasoning", [])
    return next((line for line in lines if line.startswith(prefix)), prefix + "excluded")


def calibration_run_selection(*, run: CalibrationRun) -> JudgeSelection | None:
    """Return the latest judge selection made on this run's report, if any."""
    return JudgeSelection.objects.filter(calibration_run=run).select_related("judge", "selected_by").first()


def calibration_report_facts(*, run: CalibrationRun) -> CalibrationFacts:
    """Read what the run's report is built from: the set's comparisons, the experts' labels and the verdicts."""
    comparison_set = run.comparison_set
    comparisons = comparison_set.comparisons.select_related("dimension", "response_a", "response_b").order_by("id")
    labels = ExpertLabel.objects.filter(assignment__comparison__comparison_set=comparison_set).select_related(
        "assignment__expert"
    )
    judge_runs = list(run.judge_runs.select_related("judge", "llm_run"))
    juries = list(run.juries.prefetch_related("members"))
    judge_names = {jr.judge_id: jr.judge.name for jr in judge_runs} | {jury.pk: jury.name for jury in juries}
    verdicts = run.verdicts.filter(judge__in=list(judge_names)).values_list(
        "judge_id", "comparison_id", "order", "parsed", "score"
    )
    served = None
    if comparison_set.order == "active":
        served = list(
            ServedComparison.objects.filter(comparison_set=comparison_set)
            .order_by("position")
            .values_list("comparison_id", "probability")
        )
    return CalibrationFacts(
        name=run.name,
        comparison_set=comparison_set.name,
        combine_rule=run.combine_rule,
        seed=run.seed,
        bootstrap=run.bootstrap,
        comparisons=[
            ComparisonFacts(
                id=c.pk,
                item_id=c.item_id,
                dimension=c.dimension.code,
                language=c.language,
                text_a=c.response_a.text,
                text_b=c.response_b.text,
            )
            for c in comparisons
        ],
        labels=[
            LabelFacts(
                comparison_id=label.assignment.comparison_id,
                expert=label.assignment.expert.get_username(),
                score=label.score,
                seconds_spent=label.seconds_spent,
            )
            for label in labels
        ],
        judges=sorted(judge_names.values()),
        verdicts=[
            VerdictFacts(
                judge=judge_names[judge_id], comparison_id=comparison_id, order=order, parsed=parsed, score=score
            )
            for judge_id, comparison_id, order, parsed, score in verdicts
        ],
        spent={jr.judge.name: jr.llm_run.spent for jr in judge_runs},
        juries={jury.name: [m.name for m in jury.members.all()] for jury in juries},
        served=served,
    )
