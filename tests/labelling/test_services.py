"""Model responses, comparison sets, canonical labels and the labelling pages."""

import json

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from items.models import Benchmark
from items.services import ImportFailed
from labelling import services as comparisons
from labelling.models import Comparison, ComparisonSet, ExpertLabel, LabelAssignment, ModelResponse
from labelling.pairwise import canonical_score, shown_choice
from tests.factories import make_item

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("order", "winner", "margin", "score"),
    [
        ("AB", "left", 3, 3),
        ("AB", "right", 5, -5),
        ("BA", "left", 3, -3),
        ("BA", "right", 1, 1),
        ("BA", "tie", None, 0),
    ],
)
def test_labels_are_stored_in_canonical_orientation(order, winner, margin, score):
    assert canonical_score(shown_order=order, winner=winner, margin=margin) == score
    assert shown_choice(shown_order=order, score=score) == (winner, margin or 0)


@pytest.mark.parametrize(("winner", "margin"), [("left", 0), ("left", 6), ("tie", 2), ("both", 1), ("right", None)])
def test_invalid_verdicts_are_refused(winner, margin):
    with pytest.raises(ValueError):
        canonical_score(shown_order="AB", winner=winner, margin=margin)


def jsonl(*rows):
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()


@pytest.fixture
def prompts(taxonomy, lead):
    items = []
    for i, dim in enumerate(["emotion_matching", "emotion_deepening"]):
        items.append(make_item(uid=f"op-{i}", kind="open_prompt", dimension=dim, user=lead, status="accepted"))
    rows = [
        {"item": item.uid, "language": lang, "model": model, "text": f"{model} answers {item.uid} in {lang}."}
        for item in items
        for lang in ("en", "zh")
        for model in ("m-alpha", "m-beta", "m-gamma")
    ]
    assert comparisons.responses_import(data=jsonl(*rows), user=lead) == {"created": 12, "unchanged": 0}
    return items


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
    with pytest.raises(ValidationError, match="already labelled"):
        comparisons.label_submit(comparison=comparison, expert=expert, winner="right", margin=1)
    assert ExpertLabel.objects.count() == 1


def test_labelling_page_hides_model_names_and_other_experts_labels(prompts, make_user, login):
    experts = [make_user("expert", username=f"e{i}") for i in range(2)]
    cs = build(experts)
    comparison = cs.comparisons.first()
    comparisons.label_submit(comparison=comparison, expert=experts[0], winner="left", margin=5, rationale="SECRET-NOTE")
    client = login(experts[1])
    assignment = LabelAssignment.objects.get(comparison=comparison, expert=experts[1])
    html = client.get(f"/labelling/{cs.pk}/{assignment.pk}/").content.decode()
    assert "answers op-" in html
    assert "m-alpha" not in html and "m-beta" not in html and "m-gamma" not in html
    assert "SECRET-NOTE" not in html
    response = client.post(f"/labelling/{cs.pk}/{assignment.pk}/", {"winner": "right", "margin": "2"})
    assert response.status_code == 302
    label = ExpertLabel.objects.get(assignment=assignment)
    assert label.score == (-2 if assignment.shown_order == "AB" else 2)
    other = LabelAssignment.objects.get(comparison=comparison, expert=experts[0])
    assert client.get(f"/labelling/{cs.pk}/{other.pk}/").status_code == 403


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


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("As an AI language model developed by OpenAI, I hear you.", "[model], I hear you."),
        ("I'm ChatGPT and I care.", "I'm [model] and I care."),
        ("m-beta here: take a breath.", "[model] here: take a breath."),
        ("作为一个由深度求索开发的人工智能助手，我理解你。", "[model]，我理解你。"),
        ("我是通义千问，我在这里陪你。", "我是[model]，我在这里陪你。"),
        ("Beta-blockers are medicines.", "Beta-blockers are medicines."),
    ],
)
def test_anonymise_removes_model_names_and_self_identification(text, expected):
    from labelling.pairwise import anonymise

    assert anonymise(text, ["m-beta"]) == expected
