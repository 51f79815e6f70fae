"""The demo studies: the calibration demo, the EiCAP study, then a completed evaluation run over simulated models."""

from annotation.releases.models import Release
from demo.calibration import demo_calibration, demo_labelling
from demo.eicap import demo_eicap
from evaluation import services
from evaluation.models import EvaluationRun
from llm.models import Endpoint
from llm.worker.inline import run_work_inline

RUN_NAME = "Demo evaluation"
MODELS = (
    ("Simulator · MCQ 90%", "Perceptive, concise"),
    ("Simulator · MCQ 40%", "Less perceptive, concise"),
    ("Simulator · template style", "Template empathy"),
    ("Simulator · list style", "Advice lists"),
)


def demo_studies() -> str:
    """Create the demo calibration, the labelling left to do, the EiCAP study and the evaluation if missing; return
    what was done."""
    done = [demo_calibration(), demo_labelling(), demo_eicap()]
    if EvaluationRun.objects.filter(name=RUN_NAME).exists():
        return "; ".join([*done, "demo evaluation already present"])
    release = Release.objects.get(benchmark__slug="facet", version="0.1.0")
    run = services.evaluation_run_create(
        name=RUN_NAME,
        release=release,
        endpoints=[Endpoint.objects.get(name=name) for name, _ in MODELS],
        labels=[label for _, label in MODELS],
        languages=["en", "zh"],
        user=None,
        seed=1,
    )
    services.evaluation_run_start(run=run, user=None, start=False)
    for _ in range(10):
        for link in run.llm_runs.filter(collected=False):
            run_work_inline(run_id=link.llm_run_id)
        if services.evaluation_run_advance(run=run, start=False) == EvaluationRun.Phase.DONE:
            break
        run.refresh_from_db()
    run.refresh_from_db()
    return "; ".join([*done, f"demo evaluation: {run.get_phase_display()}"])
