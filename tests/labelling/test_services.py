"""Model responses (imported, or generated through an endpoint and collected once), comparison sets, labels."""

import json

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from annotation.items.models import Benchmark
from annotation.items.services import ImportFailed
from annotation.labelling import services as comparisons
from annotation.labelling.models import Comparison, ComparisonSet, ExpertLabel, LabelAssignment, ModelResponse
from tests.factories import make_item, work_llm_run

pytestmark = pytest.mark.django_db


def jsonl(*rows):
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()


def test_response_import_is_idempotent_and_refuses_bad_rows_entirely(prompts, lead):
    good = {"item": "op-0", "language": "en", "model": "m-alpha", "text": "m-alpha answers op-0 in en."}
    assert comparisons.responses_import(data=jsonl(good), user=lead) == {"created": 0, "unchanged": 1}
    mcq = make_item(uid="not-open", user=lead)
    bad = [
        {"item": "op-0", "language": "fr", "model": "m-new", "text": "x"},
        {"item": mcq.uid, "language": "en", "model": "m-new", "text": "x"},
        {"item": "op-0", "language": "en", "model": "m-alpha", "text": "changed text"},
        {"item": "op-1", "language": "en", "model": "m-new", "text": "fine"},
        {"item": "op-1", "language": "en", "model": "m-new", "text": "fine"},
    ]
    with pytest.raises(ImportFailed) as exc:
        comparisons.responses_import(data=jsonl(*bad), user=lead)
    assert [str(e) for e in exc.value.errors] == [
        "line 1: language: must be en or zh, got 'fr'",
        "line 2: item: item not-open is mcq; responses belong to open prompts",
        "line 3: text: a different text is already stored for this item, language and model",
        "line 5: model: duplicate response (first on line 4)",
    ]
    assert ModelResponse.objects.count() == 12


def build(experts, **kwargs):
    return comparisons.comparison_set_build(
        name=kwargs.pop("name", "validation"),
        benchmark=Benchmark.objects.get(slug="facet"),
        experts=experts,
        user=None,
        **kwargs,
    )


def test_stratified_set_samples_per_dimension_and_language_and_is_reproducible(prompts, make_user):
    experts = [make_user("expert", username=f"e{i}") for i in range(3)]
    first = build(experts, per_stratum=2, seed=7)
    strata = {(c.dimension.code, c.language) for c in first.comparisons.select_related("dimension")}
    assert first.comparisons.count() == 8 and len(strata) == 4
    for c in first.comparisons.all():
        assert c.response_a_id != c.response_b_id and c.response_a.item_id == c.item_id == c.response_b.item_id
    assert LabelAssignment.objects.filter(comparison__comparison_set=first).count() == 24
    second = build(experts, per_stratum=2, seed=7, name="again")

    def pairs(cs):
        return sorted(
            (c.response_a.model_name, c.response_b.model_name, c.item.uid, c.language) for c in cs.comparisons.all()
        )

    assert pairs(first) == pairs(second)


def test_overlap_gives_each_comparison_to_k_experts_in_balanced_rotation(prompts, make_user):
    experts = [make_user("expert", username=f"e{i}") for i in range(3)]
    cs = build(experts, experts_per_comparison=2)
    assert cs.comparisons.count() == 12
    per_expert = [LabelAssignment.objects.filter(expert=e, comparison__comparison_set=cs).count() for e in experts]
    assert sorted(per_expert) == [8, 8, 8]
    assert {c.assignments.count() for c in cs.comparisons.all()} == {2}


def test_label_rules_not_assigned_second_label_and_margin(prompts, make_user, researcher):
    expert = make_user("expert", username="e0")
    cs = build([expert])
    comparison = cs.comparisons.first()
    with pytest.raises(ValidationError, match="not assigned to you"):
        comparisons.label_submit(comparison=comparison, expert=researcher, winner="left", margin=2)
    with pytest.raises(ValidationError, match="Choose a margin"):
        comparisons.label_submit(comparison=comparison, expert=expert, winner="left", margin=9)
    with pytest.raises(ValidationError, match="A tie has no margin"):
        comparisons.label_submit(comparison=comparison, expert=expert, winner="tie", margin=2)
    label = comparisons.label_submit(comparison=comparison, expert=expert, winner="left", margin=4, rationale="warmer")
    assignment = label.assignment
    assert label.score == (4 if assignment.shown_order == "AB" else -4) and label.shown_order == assignment.shown_order
    with pytest.raises(comparisons.LabelConflict, match="already labelled"):
        comparisons.label_submit(comparison=comparison, expert=expert, winner="right", margin=1)
    assert (
        comparisons.label_submit(comparison=comparison, expert=expert, winner="left", margin=4, rationale="warmer")
        == label
    )
    assert ExpertLabel.objects.count() == 1


def test_comparison_never_pairs_a_response_with_itself(prompts):
    response = ModelResponse.objects.first()
    cs = ComparisonSet.objects.create(name="constraint", benchmark=Benchmark.objects.get(slug="facet"))
    with pytest.raises(IntegrityError), transaction.atomic():
        Comparison.objects.create(
            comparison_set=cs,
            item=response.item,
            language="en",
            dimension=response.item.dimension,
            response_a=response,
            response_b=response,
        )


def test_responses_are_generated_from_an_endpoint_and_collected_once(transactional_db, taxonomy, lead, make_endpoint):
    make_item(uid="open-gen", kind="open_prompt", dimension="emotion_matching", user=lead, status="accepted")
    endpoint = make_endpoint("sim-style-concise")
    run = comparisons.responses_generate(
        benchmark=Benchmark.objects.get(slug="facet"), endpoint=endpoint, user=lead, start=False
    )
    with pytest.raises(ValidationError, match="still working"):
        comparisons.responses_collect(run=run)
    work_llm_run(run.pk)
    # The responses collector stored both replies when the run finished; collecting again stores nothing.
    run.refresh_from_db()
    assert run.collected_at is not None and not run.collect_error
    assert ModelResponse.objects.filter(item__uid="open-gen").count() == 2
    assert comparisons.responses_collect(run=run, user=lead) == {"created": 0, "missing": 0}
    response = ModelResponse.objects.get(item__uid="open-gen", language="zh")
    assert (response.model_name, response.source) == ("sim-style-concise", "generated")
