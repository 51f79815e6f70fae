"""Who builds comparison sets never labels them: sets are assigned only to those who may label, never to their
builder, and the builders' pages are closed to labellers (and the labelling pages to builders)."""

import pytest
from django.core.exceptions import ValidationError

from annotation.items.models import Benchmark
from annotation.labelling import services as comparisons
from annotation.labelling.forms import ComparisonSetForm
from annotation.labelling.models import ComparisonSet, LabelAssignment


def build(*, experts, user, name="blind"):
    return comparisons.comparison_set_build(
        name=name, benchmark=Benchmark.objects.get(slug="facet"), experts=experts, user=user
    )


def test_a_set_is_refused_for_users_who_may_not_label(prompts, expert, researcher, admin_user):
    with pytest.raises(ValidationError) as refused:
        build(experts=[expert, researcher, admin_user], user=None)

    assert refused.value.messages == [
        "Only experts and lead experts label comparisons, so these users cannot be assigned: admin1, researcher1."
    ]
    assert not ComparisonSet.objects.exists()


def test_the_builder_of_a_set_cannot_be_one_of_its_labellers(prompts, make_user):
    builder_and_expert = make_user("researcher", username="both")
    builder_and_expert.groups.add(*make_user("expert", username="plain-expert").groups.all())

    with pytest.raises(ValidationError) as refused:
        build(experts=[builder_and_expert], user=builder_and_expert)

    assert refused.value.messages == ["both builds this set and sees its model names, so cannot also label it."]


def test_the_build_form_offers_experts_and_lead_experts_only(db, expert, lead, researcher, admin_user):
    offered = {label for _pk, label in ComparisonSetForm().fields["experts"].choices}

    assert offered == {expert.username, lead.username}


def test_a_lead_expert_labels_but_neither_builds_sets_nor_imports_responses(prompts, lead, expert, login):
    cs = build(experts=[lead, expert], user=None)
    client = login(lead)

    assert client.get("/labelling/new/").status_code == 403
    assert client.get("/labelling/responses/import/").status_code == 403
    assignment = LabelAssignment.objects.filter(comparison__comparison_set=cs, expert=lead).first()
    assert client.get(f"/labelling/{cs.pk}/{assignment.pk}/").status_code == 200


def test_a_researcher_builds_sets_but_cannot_label(prompts, expert, researcher, login):
    cs = build(experts=[expert], user=researcher)
    client = login(researcher)

    assert client.get("/labelling/new/").status_code == 200
    assignment = LabelAssignment.objects.filter(comparison__comparison_set=cs).first()
    response = client.get(f"/labelling/{cs.pk}/{assignment.pk}/")
    assert response.status_code == 403
    assert "labelling.label_comparisons" in response.content.decode()
