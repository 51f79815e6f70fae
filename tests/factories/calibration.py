"""Judges and calibration runs made through the calibration services, with the judges' LLM runs worked here.

The judges' verdicts are stored by the calibration collector when each LLM run's finish commits, so these
factories need committed transactions (``transactional_db`` in tests) and an endpoint that answers (the simulator).
"""

from collections.abc import Mapping

from django.contrib.auth.models import AbstractBaseUser

from annotation.items.models import Benchmark
from annotation.labelling.models import ComparisonSet
from calibration import services
from calibration.models import CalibrationRun, Judge, JudgeSelection
from llm.models import Endpoint
from tests.factories.llm import run_queued_tasks, work_llm_run


def make_judge(*, name: str, endpoint: Endpoint, benchmark: str = "facet") -> Judge:
    """Register ``endpoint`` as a candidate judge with the default judge prompts."""
    prompt_set = services.judge_prompts_load_defaults(benchmark=Benchmark.objects.get(slug=benchmark))
    return services.judge_create(name=name, endpoint=endpoint, prompt_set=prompt_set)


def make_calibration_run(
    *,
    comparison_set: ComparisonSet,
    judges: Mapping[str, Endpoint],
    name: str = "calibration",
    combine_rule: str = "facet_tie",
    user: AbstractBaseUser | None = None,
    bootstrap: int = 200,
    seed: int = 0,
    report: bool = True,
) -> CalibrationRun:
    """Ask each judge (``judges`` maps its name to its endpoint) about every comparison of the set, in both orders,
    and compute the report unless ``report`` is false."""
    run = services.calibration_run_start(
        name=name,
        comparison_set=comparison_set,
        judges=[make_judge(name=judge, endpoint=endpoint) for judge, endpoint in judges.items()],
        combine_rule=combine_rule,
        user=user,
        seed=seed,
        bootstrap=bootstrap,
        start=False,
    )
    for judge_run in run.judge_runs.all():
        work_llm_run(judge_run.llm_run_id)
    if report:
        services.calibration_report_compute(run=run)
    run.refresh_from_db()
    return run


def run_queued_report_computations() -> int:
    """Compute the queued calibration reports in this process, as a ``db_worker`` would; return how many ran."""
    from calibration import tasks

    return run_queued_tasks(tasks.report_compute.module_path)


def make_judge_selection(
    *, run: CalibrationRun, user: AbstractBaseUser, judge: Judge | None = None, reason: str = "chosen in a test"
) -> JudgeSelection:
    """Select ``judge`` (by default the report's suggestion, else the run's first judge) as the primary judge."""
    # With no judge given and none suggested (the rule excluded every one), the test chooses against the rule.
    override = judge is None and run.report["suggestion"]["judge"] is None
    if judge is None:
        suggested = run.report["suggestion"]["judge"]
        judge_runs = run.judge_runs.select_related("judge").order_by("id")
        judge = next((r.judge for r in judge_runs if r.judge.name == suggested), judge_runs[0].judge)
    return services.judge_select(
        run=run, judge=judge, user=user, reason=reason, report_digest=run.report_digest, override_rule=override
    )
