"""The researcher's part of the home page ("My work"): running and finished evaluation, calibration and LLM runs.

Registered with ``core.home`` (``evaluation.apps``); evaluation is the top of the layers, so it may read all three.
"""

from django.contrib.auth.models import AbstractBaseUser

from calibration.models import CalibrationRun
from core import home
from evaluation.models import EvaluationRun
from llm.models import Run

RUNS_LIMIT = 8


def researcher_overview(*, user: AbstractBaseUser) -> dict:
    """Return running and finished evaluation and calibration runs and active LLM runs, as the user may see them."""
    result: dict = {}
    if user.has_perm("evaluation.run_evaluation"):
        running = (EvaluationRun.Phase.RESPONSES, EvaluationRun.Phase.JUDGING)
        runs = EvaluationRun.objects.select_related("release")
        result["evaluation_running"] = list(runs.filter(phase__in=running).order_by("-created_at")[:RUNS_LIMIT])
        result["evaluation_done"] = list(
            runs.filter(phase=EvaluationRun.Phase.DONE).order_by("-finished_at", "-id")[:RUNS_LIMIT]
        )
    if user.has_perm("calibration.run_judge"):
        runs = CalibrationRun.objects.select_related("comparison_set").defer("report")
        running = runs.filter(collected_at__isnull=True).order_by("-created_at")
        result["calibration_running"] = list(running[:RUNS_LIMIT])
        result["calibration_done"] = list(
            runs.filter(report__isnull=False).order_by("-reported_at", "-id")[:RUNS_LIMIT]
        )
    if user.has_perm("llm.view_run"):
        result["llm_running"] = list(
            Run.objects.filter(status__in=Run.ACTIVE).select_related("endpoint").order_by("-created_at")[:RUNS_LIMIT]
        )
    return result


@home.panel("researcher", template="evaluation/_home_panel.html", position=40)
def researcher_panel(user: AbstractBaseUser) -> dict | None:
    """Runs the user may see, for those who may see evaluation, calibration or LLM runs."""
    context = researcher_overview(user=user)
    if not any(key in context for key in ("evaluation_done", "calibration_done", "llm_running")):
        return None
    return context
