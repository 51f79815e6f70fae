"""The item list's bulk action "open a round": the checked items fill the round form, and the round holds only them."""

from annotation.items.models import Benchmark
from annotation.screening.models import Criterion, RoundItem, ScreeningRound


def test_the_item_list_offers_the_round_action_to_leads_only(taxonomy, lead, expert, candidates, login):
    assert 'id="bulk-round"' in login(lead).get("/items/").content.decode()
    page = login(expert).get("/items/").content.decode()
    assert 'id="bulk-round"' not in page and 'name="uids"' not in page


def test_checked_items_fill_the_round_form_and_the_round_holds_only_them(taxonomy, lead, reviewers, candidates, login):
    client = login(lead)
    chosen = [candidates[0].uid, candidates[2].uid]
    form = client.post("/screening/new/", {"from_items": "1", "uids": chosen})
    assert form.status_code == 200
    page = form.content.decode()
    assert "cand-0 cand-2" in page and 'class="errorlist"' not in page
    facet = Benchmark.objects.get(slug="facet")
    assert f'<option value="{facet.pk}" selected>' in page
    answer = client.post(
        "/screening/new/",
        {
            "benchmark": facet.pk,
            "title": "Two checked",
            "criteria": list(Criterion.objects.filter(dimension=None).values_list("pk", flat=True)),
            "reviewers": [str(reviewers[0].pk)],
            "reviewers_per_item": 1,
            "items": "cand-0, cand-2",
        },
    )
    assert answer.status_code == 302, answer.content.decode()[:2000]
    round = ScreeningRound.objects.get(title="Two checked")
    assert set(RoundItem.objects.filter(round=round).values_list("item__uid", flat=True)) == set(chosen)


def test_an_unknown_or_ineligible_checked_item_is_named_in_the_refusal(taxonomy, lead, reviewers, candidates, login):
    answer = login(lead).post(
        "/screening/new/",
        {
            "benchmark": Benchmark.objects.get(slug="facet").pk,
            "title": "With a stranger",
            "criteria": list(Criterion.objects.filter(dimension=None).values_list("pk", flat=True)),
            "reviewers": [str(reviewers[0].pk)],
            "reviewers_per_item": 1,
            "items": "cand-1 no-such-item",
        },
    )
    assert answer.status_code == 400
    assert "no-such-item" in answer.content.decode()
    assert not ScreeningRound.objects.filter(title="With a stranger").exists()
