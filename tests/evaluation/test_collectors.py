"""The one contract for consuming LLM runs: structured references and collectors, across every consuming app.

Item uids may contain ``:``; nothing splits a run item's key, so such items go through drafting, response
generation, calibration and evaluation runs like any other.
"""

import pytest

from calibration import services as calibration_services
from calibration.models import JudgeSelection
from evaluation import services
from evaluation.models import Answer, EvaluationRun, OpenResponse, PairVerdict
from items import drafting
from items.models import Benchmark, Dimension, Item
from labelling import services as labelling
from labelling.models import ModelResponse
from labelling.pairwise import shown_choice
from llm import collectors, runner
from llm.models import Run, RunItem
from releases import services as releases
from tests.factories import make_item, mcq_content

MCQ_UID = "facet:mcq:1"
OPEN_UID = "facet:open:1"


@pytest.fixture
def colon_items(transactional_db, taxonomy, lead):
    mcq = make_item(uid=MCQ_UID, user=lead, status="accepted", content=mcq_content())
    opened = make_item(uid=OPEN_UID, kind="open_prompt", dimension="emotion_matching", user=lead, status="accepted")
    return mcq, opened


def drive_llm_runs(purpose: str) -> None:
    """Work every unfinished run of ``purpose`` in this process; each is collected as it finishes."""
    for run in Run.objects.filter(purpose=purpose).exclude(status__in=Run.FINISHED):
        runner.run_work(run_id=run.pk)


def test_every_consuming_app_registers_a_collector():
    assert {"drafting", "labelling.responses", "calibration", "evaluation"} <= set(collectors.purposes())


def test_run_items_carry_structured_references_and_keys_are_never_parsed(colon_items, make_endpoint, lead):
    run = labelling.responses_generate(
        benchmark=Benchmark.objects.get(slug="facet"),
        endpoint=make_endpoint("sim-style-concise"),
        user=lead,
        start=False,
    )
    item = Item.objects.get(uid=OPEN_UID)
    assert {(ri.ref["item"], ri.ref["language"]) for ri in RunItem.objects.filter(run=run)} == {
        (item.pk, "en"),
        (item.pk, "zh"),
    }
    runner.run_work(run_id=run.pk)
    run.refresh_from_db()
    assert run.collected_at is not None and run.collect_error == ""
    assert set(ModelResponse.objects.filter(item=item).values_list("language", flat=True)) == {"en", "zh"}


def test_a_drafting_job_seeded_with_a_colon_uid_item_is_collected(colon_items, make_endpoint, lead):
    mcq, _open = colon_items
    template = drafting.item_template_save(
        dimension=Dimension.objects.get(benchmark__slug="facet", code="hidden_emotion_recognition"),
        kind="mcq",
        instructions="Write a short scenario where the feeling is implied, not named.",
        user=lead,
        seed_items=[mcq],
    )
    job = drafting.drafting_job_start(
        template=template, endpoint=make_endpoint("sim-drafter"), count=3, languages=["en"], user=lead, start=False
    )
    runner.run_work(run_id=job.llm_run_id)
    job.refresh_from_db()
    assert job.collected and len(job.created_uids) == 3 and job.failures == []


def test_colon_uids_go_through_calibration_and_evaluation(colon_items, make_endpoint, lead, researcher, make_user):
    mcq, opened = colon_items
    facet = Benchmark.objects.get(slug="facet")
    for model in ("sim-style-concise", "sim-style-list", "sim-style-template"):
        labelling.responses_generate(benchmark=facet, endpoint=make_endpoint(model), user=lead, start=False)
    drive_llm_runs(labelling.RESPONSES_PURPOSE)
    experts = [make_user("expert", username=f"colon-x{i}") for i in range(2)]
    comparison_set = labelling.comparison_set_build(
        name="colon", benchmark=facet, experts=experts, user=lead, languages=("en",), seed=1
    )
    for assignment in comparison_set.comparisons.get(pk=comparison_set.comparisons.first().pk).assignments.all():
        winner, margin = shown_choice(shown_order=assignment.shown_order, score=2)
        labelling.label_submit(comparison=assignment.comparison, expert=assignment.expert, winner=winner, margin=margin)
    prompt_set = calibration_services.judge_prompts_load_defaults(benchmark=facet)
    judge = calibration_services.judge_create(
        name="j", endpoint=make_endpoint("sim-judge-noise2"), prompt_set=prompt_set
    )
    calibration = calibration_services.calibration_run_start(
        name="colon",
        comparison_set=comparison_set,
        judges=[judge],
        combine_rule="facet_tie",
        user=researcher,
        start=False,
    )
    drive_llm_runs(calibration_services.CALIBRATION_PURPOSE)
    calibration.refresh_from_db()
    assert calibration.collected_at is not None
    stored = set(calibration.verdicts.values_list("comparison__item__uid", "order"))
    assert stored == {(OPEN_UID, order) for order in ("AB", "BA")} and calibration.verdicts.filter(parsed=True).exists()
    report = calibration_services.calibration_report_compute(run=calibration)
    JudgeSelection.objects.create(
        judge=judge,
        calibration_run=calibration,
        reason="test",
        selected_by=researcher,
        report_digest=calibration.report_digest,
    )
    assert report

    release = releases.release_freeze(
        release=releases.release_create(benchmark=facet, version="0.1.0", title="colon", user=lead),
        user=lead,
        override_reason="two items",
    )
    run = services.evaluation_run_create(
        name="colon",
        release=release,
        endpoints=[make_endpoint("sim-mcq-acc90"), make_endpoint("sim-style-concise")],
        languages=["en", "zh"],
        user=researcher,
    )
    services.evaluation_run_start(run=run, user=researcher, start=False)
    for _ in range(5):
        drive_llm_runs(services.EVALUATION_PURPOSE)
    run.refresh_from_db()
    assert run.phase == EvaluationRun.Phase.DONE
    assert set(Answer.objects.filter(run=run).values_list("item__uid", flat=True)) == {MCQ_UID}
    assert set(OpenResponse.objects.filter(run=run, ok=True).values_list("item__uid", "language")) == {
        (OPEN_UID, "en"),
        (OPEN_UID, "zh"),
    }
    verdicts = PairVerdict.objects.filter(run=run)
    assert (
        set(verdicts.values_list("item__uid", flat=True)) == {OPEN_UID} and verdicts.count() == 4
    )  # 2 languages, 2 orders
    assert run.report["subjective"]["judge_calls"] == 4
