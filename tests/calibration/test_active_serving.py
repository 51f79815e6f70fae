"""A comparison set in active order: served by priority within strata, draws recorded, report corrected for it."""

import json

import pytest
from django.core.exceptions import ValidationError

from annotation.items.models import Benchmark
from annotation.labelling import services as labelling_services
from annotation.labelling.models import ComparisonSet, ExpertLabel
from annotation.labelling.pairwise import shown_choice
from annotation.labelling.selectors import label_next
from calibration import services as calibration_services
from calibration.models import ServedComparison
from tests.calibration.conftest import REPLIES
from tests.factories import make_item, prefer_by_quality
from tests.factories.calibration import make_calibration_run


def _active_set(lead, experts, name="active"):
    rows = []
    for n in range(3):
        item = make_item(uid=f"act-{name}-{n}", kind="open_prompt", dimension="emotion_matching", user=lead,
                         status="accepted")
        for language in ("en", "zh"):
            for style, text in REPLIES.items():
                rows.append({"item": item.uid, "language": language, "model": f"m-{style}", "text": f"{text} ({n})"})
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()
    labelling_services.responses_import(data=data, user=lead)
    cs = labelling_services.comparison_set_build(
        name=name, benchmark=Benchmark.objects.get(slug="facet"), experts=experts, user=lead, seed=5,
        per_stratum=8,
    )
    labelling_services.comparison_set_order_set(comparison_set=cs, order="active")
    return cs


def _label(assignment, rule):
    winner, margin = shown_choice(shown_order=assignment.shown_order, score=rule(assignment))
    labelling_services.label_submit(
        comparison=assignment.comparison, expert=assignment.expert, winner=winner, margin=margin or None
    )


def test_active_set_serves_strata_in_turn_keeps_overlap_and_records_each_draw(
    transactional_db, taxonomy, lead, make_user, make_endpoint, researcher, login
):
    experts = [make_user("expert", username=f"ax{i}") for i in range(2)]
    cs = _active_set(lead, experts)
    run = make_calibration_run(
        comparison_set=cs,
        judges={"careful": make_endpoint("sim-judge-noise2"), "noisy": make_endpoint("sim-judge-noise6")},
        name="active-cal",
        user=researcher,
        bootstrap=20,
        report=False,
    )
    rule = prefer_by_quality(noise=4.0, seed=1)
    first = label_next(comparison_set=cs, expert=experts[0])
    assert label_next(comparison_set=cs, expert=experts[0]) == first  # asking again draws nothing new
    served = ServedComparison.objects.get(comparison_set=cs)
    assert served.comparison == first.comparison and served.position == 1 and 0 < served.probability <= 1
    _label(first, rule)
    # The other expert labels the same comparison first: overlap for reliability is kept.
    second = label_next(comparison_set=cs, expert=experts[1])
    assert second.comparison == first.comparison and ServedComparison.objects.filter(comparison_set=cs).count() == 1
    _label(second, rule)
    with pytest.raises(ValidationError):
        labelling_services.comparison_set_order_set(comparison_set=cs, order="random")
    while (nxt := label_next(comparison_set=cs, expert=experts[0])) is not None:
        _label(nxt, rule)
        other = label_next(comparison_set=cs, expert=experts[1])
        assert other.comparison == nxt.comparison
        _label(other, rule)
    records = list(ServedComparison.objects.filter(comparison_set=cs).select_related("comparison").order_by("position"))
    assert [r.position for r in records] == list(range(1, 17))
    languages = [r.comparison.language for r in records]
    # Strata take turns: after every pair of draws both languages are equally served.
    assert all(languages[: 2 * k].count("en") == k for k in range(1, 9))
    assert all(0 < r.probability <= 1 and r.remaining >= 1 for r in records)
    assert records[-1].probability == 1.0 and records[-1].remaining == 1
    assert ExpertLabel.objects.filter(assignment__comparison__comparison_set=cs).count() == 32
    report = calibration_services.calibration_report_compute(run=run)
    design = report["design"]
    assert design["n_served_used"] == 16 and design["choice"] in {"careful", "noisy"}
    assert set(design["judges"]) == {"careful", "noisy"}
    assert all(0 <= e["value"] <= 1 for e in design["judges"].values())
    page = login(researcher).get(f"/calibration/runs/{run.pk}/").content.decode()
    assert 'id="design-weighted"' in page and "Raj" in page


def test_active_set_without_judge_verdicts_is_served_uniformly(transactional_db, taxonomy, lead, make_user):
    experts = [make_user("expert", username="solo")]
    cs = _active_set(lead, experts, name="no-judges")
    nxt = label_next(comparison_set=cs, expert=experts[0])
    record = ServedComparison.objects.get(comparison_set=cs)
    assert record.comparison == nxt.comparison and record.priority == 0
    assert record.probability == pytest.approx(1 / record.remaining)


def test_set_create_page_offers_the_active_order(db, taxonomy, lead, researcher, make_user, login):
    expert = make_user("expert", username="pageexpert")
    item = make_item(uid="act-page", kind="open_prompt", dimension="emotion_matching", user=lead, status="accepted")
    rows = [{"item": item.uid, "language": "en", "model": f"m-{s}", "text": t} for s, t in REPLIES.items()]
    labelling_services.responses_import(
        data="".join(json.dumps(r) + "\n" for r in rows).encode(), user=lead
    )
    client = login(researcher)
    assert 'name="order"' in client.get("/labelling/new/").content.decode()
    response = client.post(
        "/labelling/new/",
        {"name": "paged", "benchmark": Benchmark.objects.get(slug="facet").pk, "experts": [expert.pk], "seed": 0,
         "order": "active"},
    )
    assert response.status_code == 302
    assert ComparisonSet.objects.get(name="paged").order == "active"
