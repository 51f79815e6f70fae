"""What the evaluation API needs besides the services and selectors: pausing and resuming a run's LLM runs, the
list of runs with their models, and the progress with the number of paused LLM runs."""

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Prefetch, QuerySet
from django.utils.translation import gettext as _

from evaluation.models import EvaluationRun, ModelUnderTest
from evaluation.progress import RUNNING_PHASES, run_progress
from llm import services as llm_services
from llm.models import Run


def evaluation_runs_with_models() -> QuerySet[EvaluationRun]:
    """Return evaluation runs with release, judge, author and models under test (with endpoints), without reports."""
    models = ModelUnderTest.objects.select_related("endpoint").order_by("code")
    return (
        EvaluationRun.objects.select_related("release__benchmark", "judge", "created_by", "budget_pool")
        .prefetch_related(Prefetch("models", queryset=models))
        .defer("report")
    )


def evaluation_run_progress(*, run: EvaluationRun) -> dict:
    """Return ``evaluation.progress.run_progress`` with the run's id and the number of its paused LLM runs."""
    paused = run.llm_runs.filter(llm_run__status=Run.Status.PAUSED).count()
    return {"id": run.pk, **run_progress(run), "paused_llm_runs": paused}


def _running(run: EvaluationRun) -> EvaluationRun:
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
    run = _running(run)
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
    run = _running(run)
    resumed = 0
    for link in run.llm_runs.select_related("llm_run"):
        if link.llm_run.status == Run.Status.PAUSED:
            llm_services.run_resume(run=link.llm_run)
            resumed += 1
    if not resumed:
        raise ValidationError(_("No part of this evaluation is paused; there is nothing to resume."))
    return run
