"""Evaluation runs made through the evaluation services and worked to the end here.

The evaluation collector stores what each LLM run brought back when its finish commits, so these factories need
committed transactions (``transactional_db`` in tests), a primary judge (or a reason to run without one) and
endpoints that answer (the simulator).
"""

from django.contrib.auth.models import AbstractBaseUser

from annotation.releases.models import Release
from evaluation import services
from evaluation.models import EvaluationRun
from llm.models import Endpoint
from tests.factories.llm import work_llm_run


def drive_evaluation_run(run: EvaluationRun) -> None:
    """Work every queued LLM run in this process and advance the evaluation until it is done."""
    for _ in range(10):
        for link in run.llm_runs.filter(collected=False):
            work_llm_run(link.llm_run_id)
        if services.evaluation_run_advance(run=run, start=False) == EvaluationRun.Phase.DONE:
            return
        run.refresh_from_db()
    raise AssertionError("the run did not finish")


def make_evaluation_run(
    *,
    release: Release,
    endpoints: list[Endpoint],
    user: AbstractBaseUser | None,
    name: str = "evaluation",
    languages: tuple[str, ...] = ("en",),
    **options: object,
) -> EvaluationRun:
    """Create, start and finish an evaluation of ``endpoints`` on a frozen ``release``; return it with its report.

    ``options`` (seed, pairing, protocol, judge, labels, ...) go to ``evaluation_run_create``.
    """
    run = services.evaluation_run_create(
        name=name, release=release, endpoints=endpoints, languages=list(languages), user=user, **options
    )
    services.evaluation_run_start(run=run, user=user, start=False)
    drive_evaluation_run(run)
    run.refresh_from_db()
    return run
