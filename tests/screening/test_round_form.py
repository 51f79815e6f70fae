"""The new-round form names dimensions (it used to take a typed code) and keeps a dimension to its benchmark."""

from annotation.items.models import Benchmark, Dimension
from annotation.screening.models import Criterion, RoundItem, ScreeningRound
from tests.factories import make_item


def test_the_round_form_offers_dimensions_by_name_and_filters_by_the_chosen_one(
    taxonomy, lead, reviewers, candidates, login
):
    make_item(uid="other-dim", dimension="explicit_emotion_recognition", user=lead)
    client = login(lead)
    page = client.get("/screening/new/").content.decode()
    hidden = Dimension.objects.get(benchmark__slug="facet", code="hidden_emotion_recognition")
    assert f'<option value="{hidden.pk}">{hidden.benchmark.name} · {hidden.name}</option>' in page
    answer = client.post(
        "/screening/new/",
        {
            "benchmark": Benchmark.objects.get(slug="facet").pk,
            "title": "Only hidden",
            "dimension": hidden.pk,
            "criteria": list(Criterion.objects.filter(dimension=None).values_list("pk", flat=True)),
            "reviewers": [str(reviewers[0].pk)],
            "reviewers_per_item": 1,
        },
    )
    assert answer.status_code == 302, answer.content.decode()[:3000]
    round = ScreeningRound.objects.get(title="Only hidden")
    assert round.filters == {"dimension": "hidden_emotion_recognition"}
    assert set(RoundItem.objects.filter(round=round).values_list("item__uid", flat=True)) == {
        c.uid for c in candidates
    }


def test_a_dimension_of_another_benchmark_is_refused(taxonomy, lead, reviewers, login):
    other = Dimension.objects.exclude(benchmark__slug="facet").first()
    if other is None:  # the taxonomy fixture holds FACET and EiCAP
        raise AssertionError("the taxonomy has a second benchmark")
    answer = login(lead).post(
        "/screening/new/",
        {
            "benchmark": Benchmark.objects.get(slug="facet").pk,
            "title": "Mixed",
            "dimension": other.pk,
            "criteria": list(Criterion.objects.filter(dimension=None).values_list("pk", flat=True)),
            "reviewers": [str(reviewers[0].pk)],
            "reviewers_per_item": 1,
        },
    )
    assert answer.status_code == 400
    assert "belongs to another benchmark" in answer.content.decode()
    assert not ScreeningRound.objects.filter(title="Mixed").exists()
