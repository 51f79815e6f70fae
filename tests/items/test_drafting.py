"""LLM drafting end to end against the simulator: candidates land as drafts, malformed ones are reported."""

import pytest
from django.core.exceptions import ValidationError

from annotation.items.models import Dimension, Item
from annotation.items.services import drafting
from tests.factories import make_item, work_llm_run


@pytest.fixture
def template(transactional_db, taxonomy, lead):
    seed = make_item(uid="seed-1", user=lead, status="accepted")
    return drafting.item_template_save(
        dimension=Dimension.objects.get(benchmark__slug="facet", code="hidden_emotion_recognition"),
        kind="mcq",
        instructions="Write a short scenario where the feeling is implied, not named.",
        user=lead,
        seed_items=[seed],
    )


def test_drafting_job_creates_bilingual_drafts_with_provenance(template, make_endpoint, lead):
    job = drafting.drafting_job_start(
        template=template,
        endpoint=make_endpoint("sim-drafter", for_drafting=True),
        count=7,
        languages=["en"],
        translate=True,
        user=lead,
        start=False,
    )
    work_llm_run(job.llm_run_id)
    job = drafting.drafting_job_collect(job=job, user=lead)
    # The simulator repeats some of its few scenarios: exact repeats are skipped (and reported), never malformed.
    duplicates = [f for f in job.failures if f.get("kind") == drafting.DUPLICATE]
    assert len(job.created_uids) + len(duplicates) == 7 and len(duplicates) == len(job.failures)
    item = Item.objects.get(uid=job.created_uids[0])
    assert (item.origin, item.status, item.has_en, item.has_zh) == ("llm_draft", "draft", True, True)
    assert item.metadata["machine_drafted_languages"] == ["zh"]
    assert item.metadata["draft"]["job"] == job.pk and item.metadata["draft"]["prompt"][0]["content"]
    assert "米娅" in str(item.metadata["draft"]["prompt"]) or "Mia" in str(item.metadata["draft"]["prompt"])
    # Collecting again changes nothing.
    assert drafting.drafting_job_collect(job=job, user=lead).created_uids == job.created_uids


def test_malformed_drafts_are_reported_not_imported(template, make_endpoint, lead, simulator):
    simulator.configure(garbage_rate=1.0)
    job = drafting.drafting_job_start(
        template=template,
        endpoint=make_endpoint("sim-drafter", for_drafting=True),
        count=3,
        languages=["en"],
        user=lead,
        start=False,
    )
    work_llm_run(job.llm_run_id)
    job = drafting.drafting_job_collect(job=job, user=lead)
    assert job.created_uids == [] and len(job.failures) == 1
    assert not Item.objects.filter(origin="llm_draft").exists()


def test_a_failing_endpoint_is_reported_and_nothing_is_half_saved(template, make_endpoint, lead):
    job = drafting.drafting_job_start(
        template=template,
        endpoint=make_endpoint("sim-drafter", for_drafting=True, base_url="http://127.0.0.1:9/v1"),
        count=2,
        languages=["zh"],
        user=lead,
        start=False,
    )
    work_llm_run(job.llm_run_id)
    job = drafting.drafting_job_collect(job=job, user=lead)
    assert job.created_uids == [] and job.failures[0]["where"] == "run"
    assert not Item.objects.filter(origin="llm_draft").exists()


def test_bad_job_settings_are_refused(template, make_endpoint, lead):
    with pytest.raises(ValidationError, match="at least one language"):
        drafting.drafting_job_start(
            template=template,
            endpoint=make_endpoint("sim-drafter", for_drafting=True),
            count=2,
            languages=[],
            user=lead,
        )
    with pytest.raises(ValidationError, match="1 to 1000"):
        drafting.drafting_job_start(
            template=template,
            endpoint=make_endpoint("sim-drafter", for_drafting=True),
            count=0,
            languages=["en"],
            user=lead,
        )
