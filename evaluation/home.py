"""The researcher's part of the home page ("My work"): running and finished evaluation, calibration and LLM runs.

Registered with ``core.home`` (``evaluation.apps``); evaluation is the top of the layers, so it may read all three.
"""

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import BooleanField, Case, ExpressionWrapper, F, Q, QuerySet, Value, When, Window
from django.db.models.functions import RowNumber

from calibration.models import CalibrationRun
from core import home
from evaluation.models import EvaluationRun
from llm.models import Run

RUNS_LIMIT = 8


def _rank(condition: Q, newest: str) -> Window:
    """Number the rows meeting ``condition`` newest first (by ``newest``, then id); the others are numbered apart."""
    return Window(
        RowNumber(),
        partition_by=[Case(When(condition, then=Value(0)), default=Value(1))],
        order_by=[F(newest).desc(nulls_last=True), F("id").desc()],
    )


def _two_lists(runs: QuerySet, running: Q, running_order: str, done: Q, done_order: str) -> tuple[list, list]:
    """Return the newest ``RUNS_LIMIT`` running and done runs, in one query (a run may be in both lists)."""
    flags = {"is_running": running, "is_done": done}
    ranked = runs.annotate(
        **{name: ExpressionWrapper(condition, output_field=BooleanField()) for name, condition in flags.items()},
        running_rank=_rank(running, running_order),
        done_rank=_rank(done, done_order),
    )
    chosen = list(ranked.filter(running | done).filter(Q(running_rank__lte=RUNS_LIMIT) | Q(done_rank__lte=RUNS_LIMIT)))
    first = sorted((r for r in chosen if r.is_running and r.running_rank <= RUNS_LIMIT), key=lambda r: r.running_rank)
    second = sorted((r for r in chosen if r.is_done and r.done_rank <= RUNS_LIMIT), key=lambda r: r.done_rank)
    return first, second


def researcher_overview(*, user: AbstractBaseUser) -> dict:
    """Return running and finished evaluation and calibration runs and active LLM runs, as the user may see them."""
    result: dict = {}
    if user.has_perm("evaluation.run_evaluation"):
        running = Q(phase__in=(EvaluationRun.Phase.RESPONSES, EvaluationRun.Phase.JUDGING))
        result["evaluation_running"], result["evaluation_done"] = _two_lists(
            EvaluationRun.objects.select_related("release"),
            running=running,
            running_order="created_at",
            done=Q(phase=EvaluationRun.Phase.DONE),
            done_order="finished_at",
        )
    if user.has_perm("calibration.run_judge"):
        result["calibration_running"], result["calibration_done"] = _two_lists(
            CalibrationRun.objects.select_related("comparison_set").defer("report"),
            running=Q(collected_at__isnull=True),
            running_order="created_at",
            done=Q(report__isnull=False),
            done_order="reported_at",
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
