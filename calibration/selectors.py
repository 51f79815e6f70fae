"""Reads of the calibration pages shared with the API and reports: runs, judges, prompts and selections."""

from django.db.models import Prefetch, QuerySet

from calibration.models import CalibrationJudgeRun, CalibrationRun, Judge, JudgePrompt, JudgeSelection, PromptSet


def calibration_run_list() -> QuerySet[CalibrationRun]:
    """Return every calibration run with its comparison set, newest first."""
    return CalibrationRun.objects.select_related("comparison_set")


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


def calibration_run_selection(*, run: CalibrationRun) -> JudgeSelection | None:
    """Return the latest judge selection made on this run's report, if any."""
    return JudgeSelection.objects.filter(calibration_run=run).select_related("judge", "selected_by").first()
