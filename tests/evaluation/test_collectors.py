"""The one contract for consuming LLM runs: structured references and collectors, across every consuming app.

Item uids may contain ``:``; nothing splits a run item's key, so such items go through drafting, response
generation, calibration and evaluation runs like any other.
"""

import pytest

from annotation.items.models import Benchmark, Dimension, Item
from annotation.items.services import drafting
from annotation.labelling import services as labelling
from annotation.labelling.models import ModelResponse
from evaluation.models import Answer, EvaluationRun, OpenResponse, PairVerdict
from llm import collectors
from llm.models import Run, RunItem
from tests.factories import (
    make_calibration_run,
    make_evaluation_run,
    make_frozen_release,
    make_item,
    make_judge_selection,
    make_labelled_comparison_set,
    mcq_content,
    work_llm_run,
)

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
        work_llm_run(run.pk)


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
    work_llm_run(run.pk)
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
        template=template,
        endpoint=make_endpoint("sim-drafter", for_drafting=True),
        count=3,
        languages=["en"],
        user=lead,
        start=False,
    )
    work_llm_run(job.llm_run_id)
    job.refresh_from_db()
    assert job.collected and len(job.created_uids) == 3 and job.failures == []


def test_colon_uids_go_through_calibration_and_evaluation(colon_items, make_endpoint, lead, researcher, make_user):
    mcq, opened = colon_items
    facet = Benchmark.objects.get(slug="facet")
    for model in ("sim-style-concise", "sim-style-list", "sim-style-template"):
        labelling.responses_generate(benchmark=facet, endpoint=make_endpoint(model), user=lead, start=False)
    drive_llm_runs(labelling.RESPONSES_PURPOSE)
    experts = [make_user("expert", username=f"colon-x{i}") for i in range(2)]
    comparison_set = make_labelled_comparison_set(
        experts=experts, name="colon", user=lead, languages=("en",), seed=1, rule=lambda assignment: 2
    )
    calibration = make_calibration_run(
        comparison_set=comparison_set,
        judges={"j": make_endpoint("sim-judge-noise2")},
        name="colon",
        user=researcher,
    )
    assert calibration.collected_at is not None
    stored = set(calibration.verdicts.values_list("comparison__item__uid", "order"))
    assert stored == {(OPEN_UID, order) for order in ("AB", "BA")} and calibration.verdicts.filter(parsed=True).exists()
    report = calibration.report
    make_judge_selection(run=calibration, judge=calibration.judge_runs.get().judge, user=researcher, reason="test")
    assert report

    release = make_frozen_release(version="0.1.0", title="colon", user=lead, override_reason="two items")
    run = make_evaluation_run(
        name="colon",
        release=release,
        endpoints=[make_endpoint("sim-mcq-acc90"), make_endpoint("sim-style-concise")],
        languages=["en", "zh"],
        user=researcher,
    )
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
