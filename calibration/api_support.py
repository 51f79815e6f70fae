"""Reads the calibration API needs besides ``calibration.selectors``: runs with their judges' LLM runs prefetched."""

from django.db.models import Prefetch, QuerySet

from calibration.models import CalibrationJudgeRun, CalibrationRun, Judge
from llm.models import Run


def calibration_runs_with_judges() -> QuerySet[CalibrationRun]:
    """Return calibration runs with comparison set, author, judges' LLM runs (``api_judge_runs``) and juries."""
    judge_runs = CalibrationJudgeRun.objects.select_related("judge", "llm_run__endpoint").order_by("judge__name")
    return CalibrationRun.objects.select_related("comparison_set", "created_by").prefetch_related(
        Prefetch("judge_runs", queryset=judge_runs, to_attr="api_judge_runs"),
        Prefetch("juries", queryset=Judge.objects.order_by("name"), to_attr="api_juries"),
    )


def judge_runs_status(judge_runs: list[CalibrationJudgeRun]) -> str:
    """Return the status ``calibration.services.calibration_run_status`` gives, from already loaded judge runs."""
    if any(jr.llm_run.status not in Run.FINISHED for jr in judge_runs):
        return "running"
    return "collecting" if any(jr.llm_run.collected_at is None for jr in judge_runs) else "finished"


def judges_with_members() -> QuerySet[Judge]:
    """Return every judge with its endpoint, prompt set and (for juries) member judges."""
    return Judge.objects.select_related("endpoint", "prompt_set").prefetch_related("members")
