"""Demo studies for ``make run``: model responses, three experts' labels, simulated judges, a calibration report
and a primary-judge selection. Needs the LLM simulator running; idempotent."""

from datetime import timedelta

import numpy as np
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.utils import timezone

from annotation.items.models import Benchmark
from annotation.labelling import services as comparisons
from annotation.labelling.models import ComparisonSet, LabelAssignment, ModelResponse
from annotation.labelling.pairwise import shown_choice
from calibration import services
from calibration.models import CalibrationRun, Judge
from demo.base import DEMO_PASSWORD
from llm.models import Endpoint
from llm.simulator.simulation import quality_score
from llm.worker.inline import run_work_inline

RESPONDERS = ("Simulator · template style", "Simulator · list style", "Simulator · concise style")
JUDGES = (
    ("Careful judge (simulated)", "Simulator · judge (accurate)"),
    ("Noisy, position-biased judge (simulated)", "Simulator · judge (noisy, biased to A)"),
)
EXPERTS = ("expert", "expert2", "expert3")
SET_NAME = "Demo validation subset"
# A second, smaller set the demo expert has not labelled yet (the others have): something to do on first sign-in.
OPEN_SET_NAME = "Demo labelling: your turn"


def _experts() -> list:
    User = get_user_model()
    group = Group.objects.get(name="expert")
    users = []
    for username in EXPERTS:
        user, created = User.objects.get_or_create(username=username, defaults={"email": f"{username}@example.org"})
        if created:
            user.set_password(DEMO_PASSWORD)
            user.save()
        user.groups.add(group)
        users.append(user)
    return users


def _responses(benchmark: Benchmark) -> None:
    """Ask each simulated responder to answer every open demo prompt in both languages (cached after the first)."""
    for name in RESPONDERS:
        endpoint = Endpoint.objects.get(name=name)
        if ModelResponse.objects.filter(model_name=endpoint.model).exists():
            continue
        run = comparisons.responses_generate(benchmark=benchmark, endpoint=endpoint, user=None, start=False)
        run_work_inline(run_id=run.pk)
        comparisons.responses_collect(run=run)


def _labels(comparison_set: ComparisonSet, *, leave_open_for: tuple[str, ...] = ()) -> None:
    """Three experts who prefer by the hidden quality with their own noise (deterministic), each label taking a
    plausible time (a median of about 40 s, drawn with its own seed), as if they had opened each comparison that
    long before answering. The experts named in ``leave_open_for`` keep their comparisons to label."""
    rng = np.random.default_rng(7)
    timing = np.random.default_rng(8)
    noise = {"expert": 4.0, "expert2": 6.0, "expert3": 9.0}
    for a in (
        LabelAssignment.objects.filter(comparison__comparison_set=comparison_set, label__isnull=True)
        .exclude(expert__username__in=leave_open_for)
        .select_related("comparison__response_a", "comparison__response_b", "expert")
        .order_by("id")
    ):
        c = a.comparison
        diff = (
            quality_score(c.response_a.text)
            - quality_score(c.response_b.text)
            + rng.normal(0, noise[a.expert.username])
        )
        score = 0 if abs(diff) < 4 else int(np.sign(diff)) * min(5, 1 + int(abs(diff) // 10))
        winner, margin = shown_choice(shown_order=a.shown_order, score=score)
        seconds = int(np.clip(timing.lognormal(np.log(40.0), 0.5), 8, 300))
        LabelAssignment.objects.filter(pk=a.pk).update(first_viewed_at=timezone.now() - timedelta(seconds=seconds))
        comparisons.label_submit(comparison=c, expert=a.expert, winner=winner, margin=margin or None)


def demo_labelling() -> str:
    """Create the set the demo expert still has to label (the other two experts have), if it does not exist."""
    if ComparisonSet.objects.filter(name=OPEN_SET_NAME).exists():
        return "demo labelling set already present"
    experts = _experts()
    comparison_set = comparisons.comparison_set_build(
        name=OPEN_SET_NAME,
        benchmark=Benchmark.objects.get(slug="facet"),
        experts=experts,
        user=None,
        seed=2,
        per_stratum=2,
        description="A few pairs of simulated replies: expert2 and expert3 have labelled them, expert has not.",
    )
    _labels(comparison_set, leave_open_for=("expert",))
    left = LabelAssignment.objects.filter(comparison__comparison_set=comparison_set, label__isnull=True).count()
    return f"demo labelling: {left} comparisons left for expert"


def demo_calibration() -> str:
    """Create the demo calibration study if it does not exist yet; return what was done."""
    if CalibrationRun.objects.filter(name="Demo calibration").exists():
        return "demo calibration already present"
    benchmark = Benchmark.objects.get(slug="facet")
    experts = _experts()
    _responses(benchmark)
    comparison_set = ComparisonSet.objects.filter(name=SET_NAME).first() or comparisons.comparison_set_build(
        name=SET_NAME,
        benchmark=benchmark,
        experts=experts,
        user=None,
        seed=1,
        description="Pairs of simulated replies, labelled by three (simulated) experts.",
    )
    _labels(comparison_set)
    prompt_set = services.judge_prompts_load_defaults(benchmark=benchmark)
    judges = [
        Judge.objects.filter(name=name).first()
        or services.judge_create(name=name, endpoint=Endpoint.objects.get(name=endpoint), prompt_set=prompt_set)
        for name, endpoint in JUDGES
    ]
    run = services.calibration_run_start(
        name="Demo calibration",
        comparison_set=comparison_set,
        judges=judges,
        combine_rule="facet_tie",
        user=None,
        start=False,
    )
    for judge_run in run.judge_runs.all():
        run_work_inline(run_id=judge_run.llm_run_id)
    report = services.calibration_report_compute(run=run)
    researcher = get_user_model().objects.get(username="researcher")
    chosen = Judge.objects.get(name=report["suggestion"]["judge"] or judges[0].name)
    services.judge_select(
        run=run,
        judge=chosen,
        user=researcher,
        report_digest=run.report_digest,
        reason="Demo: the suggested judge (highest lower bound of alpha with the judge added).",
    )
    return f"demo calibration: {comparison_set.comparisons.count()} comparisons, primary judge {chosen.name}"
