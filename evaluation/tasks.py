"""Background task of the evaluation app: a thin wrapper taking an id."""

from django.tasks import task

from evaluation import services
from evaluation.models import EvaluationRun

POLL_SECONDS = 2.0


@task()
def evaluation_advance(run_id: int) -> str:
    """Advance an evaluation run; check again later while its LLM runs are still working."""
    run = EvaluationRun.objects.get(pk=run_id)
    phase = services.evaluation_run_advance(run=run)
    if phase not in (EvaluationRun.Phase.DONE, EvaluationRun.Phase.CANCELLED):
        services.schedule_advance(run_id, delay=POLL_SECONDS)
    return phase
