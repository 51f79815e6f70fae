"""The demo studies: the calibration demo, the EiCAP study, then completed evaluation runs over simulated models:
one of the FACET release, and one of the EiCAP release (two models by log-probability, one by letter choice)."""

from decimal import Decimal

from django.db import transaction

from annotation.releases.models import Release
from demo.calibration import demo_calibration, demo_labelling
from demo.eicap import RELEASE as EICAP_RELEASE
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
EICAP_RUN_NAME = "Demo EiCAP evaluation"
# Two open models scored by log-probability (legacy completions with echo), then a chat-only model by letter choice:
# the first is the baseline of the log-probability protocol (M01).
LOGPROB_MODELS = (
    ("sim-base", "Simulator · base model (log-probabilities)", "Base model"),
    ("sim-tuned", "Simulator · tuned model (log-probabilities)", "Tuned model"),
)
LETTER_MODEL = ("Simulator · MCQ 70%", "Chat-only model")


def _finish(run: EvaluationRun) -> EvaluationRun:
    """Work the run's LLM runs in this process and advance it until it is done (at most ten phases)."""
    services.evaluation_run_start(run=run, user=None, start=False)
    for _ in range(10):
        for link in run.llm_runs.filter(collected=False):
            run_work_inline(run_id=link.llm_run_id)
        if services.evaluation_run_advance(run=run, start=False) == EvaluationRun.Phase.DONE:
            break
        run.refresh_from_db()
    run.refresh_from_db()
    return run


@transaction.atomic
def _logprob_endpoints() -> list[Endpoint]:
    """The simulator's log-probability endpoints (legacy completions), beside the chat ones it registers."""
    chat = Endpoint.objects.get(name=LETTER_MODEL[0])
    endpoints = []
    for model, name, _label in LOGPROB_MODELS:
        endpoint = Endpoint.objects.filter(name=name).first() or Endpoint(name=name)
        endpoint.base_url, endpoint.model, endpoint.api_style = chat.base_url, model, Endpoint.ApiStyle.COMPLETIONS
        endpoint.is_simulator, endpoint.max_concurrency = True, 32
        endpoint.price_input_per_mtok, endpoint.price_output_per_mtok = Decimal("0.2"), Decimal("0.6")
        endpoint.notes = chat.notes
        endpoint.full_clean()
        endpoint.save()
        endpoints.append(endpoint)
    return endpoints


def demo_eicap_evaluation() -> str:
    """Evaluate the demo EiCAP release (mixed protocol) if not done yet; return what was done."""
    if EvaluationRun.objects.filter(name=EICAP_RUN_NAME).exists():
        return "demo EiCAP evaluation already present"
    run = services.evaluation_run_create(
        name=EICAP_RUN_NAME,
        release=Release.objects.get(benchmark__slug="eicap", version=EICAP_RELEASE),
        endpoints=[*_logprob_endpoints(), Endpoint.objects.get(name=LETTER_MODEL[0])],
        labels=[label for *_, label in LOGPROB_MODELS] + [LETTER_MODEL[1]],
        languages=["en", "zh"],
        user=None,
        protocol=EvaluationRun.Protocol.MIXED,
        seed=1,
    )
    return f"demo EiCAP evaluation: {_finish(run).get_phase_display()}"


def demo_studies() -> str:
    """Create the demo calibration, the labelling left to do, the EiCAP study and the evaluations if missing; return
    what was done."""
    done = [demo_calibration(), demo_labelling(), demo_eicap()]
    if EvaluationRun.objects.filter(name=RUN_NAME).exists():
        done.append("demo evaluation already present")
    else:
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
        done.append(f"demo evaluation: {_finish(run).get_phase_display()}")
    return "; ".join([*done, demo_eicap_evaluation()])
