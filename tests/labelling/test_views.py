"""Labelling pages: an expert labels blind, sees no model names and no other expert's label."""

import pytest

from annotation.items.models import Benchmark
from annotation.labelling import services as comparisons
from annotation.labelling.models import ExpertLabel, LabelAssignment

pytestmark = pytest.mark.django_db


def test_labelling_page_hides_model_names_and_other_experts_labels(prompts, make_user, login):
    experts = [make_user("expert", username=f"e{i}") for i in range(2)]
    cs = comparisons.comparison_set_build(
        name="validation", benchmark=Benchmark.objects.get(slug="facet"), experts=experts, user=None
    )
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
