"""The demo `make run` builds gives each role something to do: the expert has comparisons left to label and items
to review, the demo labels carry the time they took (so precision planning shows expert hours), and the simulated
replies read as replies, in both languages."""

import statistics

import pytest

from annotation.labelling.models import ComparisonSet, ExpertLabel, LabelAssignment, ModelResponse
from annotation.screening.criteria import default_criteria_create
from annotation.screening.models import Criterion, ReviewAssignment
from calibration.models import CalibrationRun

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def demo(simulator, settings):
    from demo.base import demo_seed
    from demo.evaluation import demo_studies
    from llm import services as llm_services

    settings.LLM_SIMULATOR_URL = simulator.base_url
    default_criteria_create(Criterion)  # a data migration's rows, gone after an earlier transactional test's flush
    demo_seed()
    llm_services.simulator_endpoints_register(base_url=simulator.base_url)
    return demo_studies()


def test_the_demo_gives_the_expert_work_times_its_labels_and_its_replies_read_as_replies(demo):
    """One build of the demo (a minute or more) for the three checks."""
    expert_has_work(demo)
    labels_are_timed()
    replies_read_as_replies()
    eicap_release_is_evaluated(demo)


def expert_has_work(demo: str) -> None:
    assert "comparisons left for expert" in demo
    open_set = ComparisonSet.objects.get(name="Demo labelling: your turn")
    left = LabelAssignment.objects.filter(comparison__comparison_set=open_set, label__isnull=True)
    assert left.filter(expert__username="expert").count() == left.count() > 0
    # The other experts have labelled theirs.
    assert ExpertLabel.objects.filter(assignment__comparison__comparison_set=open_set).exists()
    assert ReviewAssignment.objects.filter(reviewer__username="expert", review__isnull=True).exists()
    # Building the studies again changes nothing.
    from demo.evaluation import demo_studies

    assert demo_studies().count("already present") == 5  # calibration, labelling, EiCAP, both evaluations


def labels_are_timed() -> None:
    seconds = list(ExpertLabel.objects.values_list("seconds_spent", flat=True))
    assert seconds and None not in seconds
    assert min(seconds) >= 8 and max(seconds) <= 310
    assert 20 <= statistics.median(seconds) <= 80
    report = CalibrationRun.objects.get(name="Demo calibration").report
    assert report["planning"]["seconds_per_label"] > 0


def replies_read_as_replies() -> None:
    replies = list(ModelResponse.objects.values_list("language", "text"))
    english = [text for language, text in replies if language == "en"]
    chinese = [text for language, text in replies if language == "zh"]
    assert english and chinese
    starts = ("That sounds", "I can hear", "It makes sense", "I'm really sorry", "I'm sorry", "Here are", "A few ideas")
    assert all(text.startswith(starts) for text in english), english
    assert all(any("\u4e00" <= ch <= "\u9fff" for ch in text) for text in chinese)
    # No word picked at random from the prompt ("you're dealing with third").
    assert not any("dealing with" in text for text in english)


def eicap_release_is_evaluated(demo: str) -> None:
    """The EiCAP release is evaluated as EiCAP does: two models by log-probability, one by letter choice."""
    from evaluation.models import EvaluationRun

    assert "demo EiCAP evaluation: done" in demo
    run = EvaluationRun.objects.get(name="Demo EiCAP evaluation")
    assert run.phase == EvaluationRun.Phase.DONE and run.release.benchmark.slug == "eicap"
    eicap = run.report["eicap"]
    assert [(r["model"], r["protocol"]) for r in eicap["protocols"]] == [
        ("M01", "logprob"),
        ("M02", "logprob"),
        ("M03", "letter"),
    ]
    assert eicap["subcategories"] and eicap["turns"] and eicap["agreement"] and eicap["margins"]
