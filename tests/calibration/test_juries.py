"""Judge juries: combined verdicts, calibration, selection, an evaluation run, the page and the API."""

import json

import pytest
from django.core.exceptions import ValidationError

from calibration import services
from calibration.agreement.juries import combine_orders, combine_verdicts, jury_order_scores, jury_verdict
from calibration.models import Judge, JudgeSelection, JudgeVerdict
from calibration.services import jury_create
from evaluation.models import EvaluationLLMRun, EvaluationRun, PairVerdict
from evaluation.services import runs as evaluation_runs
from evaluation.services.runs import rough_request_cost
from tests.factories import make_evaluation_run, make_frozen_release, make_item, mcq_content
from tests.factories.calibration import make_judge, run_queued_report_computations
from tests.factories.llm import work_llm_run


@pytest.mark.parametrize(
    ("scores", "method", "expected"),
    [
        ([3, 2, -1], "majority", 2),  # A wins 2 of 3; median margin of A's voters (2.5) rounded toward the tie
        ([3, -2, 0], "majority", 0),  # one vote each: no majority, a tie
        ([-4, -4, None], "majority", -4),  # a member without a parseable verdict does not vote
        ([None, None], "majority", None),
        ([3, 2, -1], "mean", 1),  # mean 1.33, rounded to the nearest whole number
        ([-3, -2, 1], "mean", -1),
        ([2, -2], "mean", 0),
        ([1, 1, -1], "mean", 1),  # average pooling keeps the sign: a 2-1 split is a win, as by majority
        ([-1, -1, 1], "mean", -1),
        ([2, 3], "mean", 3),  # 2.5: halves away from zero
        ([-2, -3], "mean", -3),
        ([1, -2], "mean", -1),  # -0.5 keeps its sign
        ([1, 1, -1], "majority", 1),
    ],
)
def test_jury_combines_member_verdicts(scores, method, expected):
    assert combine_verdicts(scores, method) == expected


def test_a_jury_combines_each_members_orders_before_the_members():
    # Position-biased members: two flip with the order. Each member's verdict on the pair is its two orders
    # combined (FACET: an inconsistent pair is a tie), so two of three members tie and the jury ties; combining
    # the members per order first would name A in both orders and make A the winner.
    members = [(1, -1), (1, 1), (-1, 1)]
    assert jury_verdict(members, rule="facet_tie", method="majority") == 0
    per_order = [combine_verdicts([orders[k] for orders in members], "majority") for k in (0, 1)]
    assert combine_orders("facet_tie", *per_order) == 1
    assert jury_verdict([(1, -1), (1, -1), (1, 1)], rule="facet_tie", method="mean") == 1
    assert jury_verdict([(1, -1), (2, 2)], rule="facet_drop", method="majority") == 2  # the flipper does not vote
    assert jury_verdict([(1, -1), (None, 2)], rule="facet_drop", method="mean") is None


@pytest.mark.parametrize("rule", ["facet_tie", "facet_drop", "summed"])
def test_a_jurys_stored_orders_combine_back_to_its_verdict(rule):
    for verdict in [None, *range(-5, 6)]:
        ab, ba = jury_order_scores(verdict, rule)
        assert combine_orders(rule, ab, ba) == verdict


def test_a_jury_needs_two_single_judges(db, taxonomy, make_endpoint):
    one = make_judge(name="one", endpoint=make_endpoint("sim-judge-noise2"))
    with pytest.raises(ValidationError):
        jury_create(name="solo", members=[one], aggregation="majority")
    two = make_judge(name="two", endpoint=make_endpoint("sim-judge-noise6"))
    jury = jury_create(name="pair", members=[one, two], aggregation="mean")
    with pytest.raises(ValidationError):
        jury_create(name="nested", members=[jury, one], aggregation="majority")
    with pytest.raises(ValidationError):
        jury_create(name="odd", members=[one, two], aggregation="median")


def _members(make_endpoint):
    return [
        make_judge(name="careful", endpoint=make_endpoint("sim-judge-noise2")),
        make_judge(name="noisy", endpoint=make_endpoint("sim-judge-noise6")),
        make_judge(name="biased", endpoint=make_endpoint("sim-judge-noise4-bias3")),
    ]


def test_a_jury_is_calibrated_reported_and_selected_like_a_judge(
    transactional_db, labelled_set, make_endpoint, researcher
):
    members = _members(make_endpoint)
    jury = jury_create(name="panel", members=members, aggregation="majority")
    run = services.calibration_run_start(
        name="with jury", comparison_set=labelled_set, judges=[jury], combine_rule="facet_tie", user=researcher,
        bootstrap=20, start=False,
    )
    # Only the members ask an endpoint; the jury's verdicts are combined once all have answered.
    assert sorted(jr.judge.name for jr in run.judge_runs.select_related("judge")) == ["biased", "careful", "noisy"]
    for judge_run in run.judge_runs.all():
        work_llm_run(judge_run.llm_run_id)
    run.refresh_from_db()
    n = labelled_set.comparisons.count()
    verdicts = JudgeVerdict.objects.filter(calibration_run=run, judge=jury)
    assert verdicts.count() == 2 * n
    said: dict[tuple[int, int], dict[str, int | None]] = {}
    for v in JudgeVerdict.objects.filter(calibration_run=run, judge__in=members):
        said.setdefault((v.comparison_id, v.judge_id), {})[v.order] = v.score
    stored: dict[int, dict[str, int | None]] = {}
    for verdict in verdicts:
        stored.setdefault(verdict.comparison_id, {})[verdict.order] = verdict.score
        members_said = json.loads(verdict.raw_output)
        own = {m.name: [said[verdict.comparison_id, m.pk].get(o) for o in ("AB", "BA")] for m in members}
        assert members_said == own
    # One definition of the jury: each member's two orders combined first, then the members.
    for comparison_id, orders in stored.items():
        member_orders = [(said[comparison_id, m.pk].get("AB"), said[comparison_id, m.pk].get("BA")) for m in members]
        expected = jury_verdict(member_orders, rule="facet_tie", method="majority")
        assert combine_orders("facet_tie", orders["AB"], orders["BA"]) == expected, comparison_id
    report = services.calibration_report_compute(run=run)
    assert "panel" in report["judges"] and "panel" in report["strata"][0]["judges"]
    spent = sum(float(report["costs"][m.name]) for m in members)
    assert float(report["costs"]["panel"]) == pytest.approx(spent)
    run.refresh_from_db()
    services.judge_select(run=run, judge=jury, user=researcher, reason="the panel", report_digest=run.report_digest)
    assert JudgeSelection.objects.get().judge == jury


def test_a_jury_as_primary_judge_of_an_evaluation_run(transactional_db, taxonomy, lead, researcher, make_endpoint):
    members = _members(make_endpoint)[:2]
    jury = jury_create(name="duo", members=members, aggregation="mean")
    make_item(uid="jury-mcq", user=lead, status="accepted", content=mcq_content())
    make_item(uid="jury-open", kind="open_prompt", dimension="emotion_matching", user=lead, status="accepted")
    release = make_frozen_release(version="0.1.0", title="jury", user=lead, override_reason="two items")
    endpoints = [make_endpoint("sim-style-concise"), make_endpoint("sim-style-list")]
    planned = evaluation_runs.evaluation_run_create(
        name="plan", release=release, endpoints=endpoints, languages=["en"], user=researcher, judge=jury,
        judge_override_reason="testing the jury",
    )
    estimate = evaluation_runs.evaluation_estimate(run=planned)
    typical = {"messages": [{"content": "x" * 6000}], "max_tokens": 600}
    per_call = sum(
        rough_request_cost(
            typical, price_input=m.endpoint.price_input_per_mtok, price_output=m.endpoint.price_output_per_mtok
        )
        for m in members
    )
    # The jury costs the sum of its members.
    assert estimate["judge_cost_round_robin"] == per_call * estimate["judge_calls_round_robin"] > 0
    run = make_evaluation_run(
        name="with jury", release=release, endpoints=endpoints, user=researcher, judge=jury,
        judge_override_reason="testing the jury",
    )
    assert run.phase == EvaluationRun.Phase.DONE
    judging = EvaluationLLMRun.objects.filter(run=run, kind=EvaluationLLMRun.Kind.JUDGING)
    assert judging.count() == 2  # one per member
    verdicts = PairVerdict.objects.filter(run=run)
    assert verdicts.count() == 2 and all(set(json.loads(v.raw)) == {"careful", "noisy"} for v in verdicts)
    said = json.loads(verdicts[0].raw)
    expected = jury_verdict([said["careful"], said["noisy"]], rule=run.combine_rule, method="mean")
    stored = jury_order_scores(expected, run.combine_rule)
    assert {v.order: v.score for v in verdicts} == dict(zip(("AB", "BA"), stored, strict=True))
    assert all(json.loads(v.raw) == said for v in verdicts)


def test_judge_page_creates_a_jury_and_lists_it(transactional_db, taxonomy, make_endpoint, researcher, login):
    members = _members(make_endpoint)
    client = login(researcher)
    page = client.get("/calibration/").content.decode()
    assert 'href="/calibration/judges/new/"' in page
    assert 'id="jury-form"' in client.get("/calibration/judges/new/").content.decode()
    response = client.post(
        "/calibration/judges/new/",
        {"kind": "jury", "name": "page panel", "members": [m.pk for m in members], "aggregation": "majority"},
    )
    assert response.status_code == 302
    jury = Judge.objects.get(name="page panel")
    assert jury.is_jury and set(jury.members.all()) == set(members)
    assert "page panel" in client.get("/calibration/").content.decode()


def test_jury_api_creates_lists_and_refuses_bad_juries(
    transactional_db, taxonomy, make_endpoint, researcher, make_user, login, django_assert_max_num_queries
):
    members = _members(make_endpoint)
    client = login(researcher)
    created = client.post(
        "/api/calibration/juries/",
        {"name": "api panel", "members": [m.pk for m in members], "aggregation": "mean"},
        content_type="application/json",
    )
    assert created.status_code == 201, created.content
    assert created.json()["kind"] == "jury" and created.json()["member_names"] == ["biased", "careful", "noisy"]
    jury_create(name="second", members=members[:2], aggregation="majority")
    with django_assert_max_num_queries(8):
        listed = client.get("/api/calibration/juries/")
    assert [j["name"] for j in listed.json()["results"]] == ["api panel", "second"]
    bad = client.post(
        "/api/calibration/juries/", {"name": "lonely", "members": [members[0].pk], "aggregation": "mean"},
        content_type="application/json",
    )
    assert bad.status_code == 400
    expert = make_user("expert", username="jury-expert")
    assert login(expert).get("/api/calibration/juries/").status_code == 403


def _work_all(run_id):
    from calibration.models import CalibrationRun

    for judge_run in CalibrationRun.objects.get(pk=run_id).judge_runs.all():
        work_llm_run(judge_run.llm_run_id)


def test_a_jury_is_created_calibrated_and_selected_through_the_pages(
    transactional_db, labelled_set, make_endpoint, researcher, login
):
    members = _members(make_endpoint)
    client = login(researcher)
    client.post(
        "/calibration/judges/new/",
        {"kind": "jury", "name": "ui panel", "members": [m.pk for m in members], "aggregation": "mean"},
    )
    jury = Judge.objects.get(name="ui panel")
    started = client.post(
        "/calibration/runs/new/",
        {"name": "ui jury run", "comparison_set": labelled_set.pk, "judges": [jury.pk], "combine_rule": "facet_tie",
         "seed": 0, "bootstrap": 20},
    )
    assert started.status_code == 302, started.content.decode()[:500]
    run_id = int(started["Location"].rstrip("/").split("/")[-1])
    _work_all(run_id)
    client.post(f"/calibration/runs/{run_id}/report/")
    assert run_queued_report_computations() == 1
    page = client.get(f"/calibration/runs/{run_id}/").content.decode()
    assert f'<option value="{jury.pk}"' in page and "ui panel" in page
    # The report says which rule made the jury's verdicts.
    assert 'id="jury-rule"' in page and "each member's two orders first" in page.replace("&#x27;", "'")
    assert "ui panel: mean signed score, keeping its sign" in page
    client.post(f"/calibration/runs/{run_id}/select/", {"judge": jury.pk, "reason": "the jury agrees best"})
    assert JudgeSelection.objects.get().judge == jury


def test_a_jury_is_created_calibrated_and_selected_through_the_api(
    transactional_db, labelled_set, make_endpoint, researcher, client
):
    members = _members(make_endpoint)
    client.force_login(researcher)
    jury = client.post(
        "/api/calibration/juries/",
        {"name": "api jury", "members": [m.pk for m in members], "aggregation": "majority"},
        content_type="application/json",
    ).json()
    run = client.post(
        "/api/calibration/runs/",
        {"name": "api jury run", "comparison_set": labelled_set.pk, "judges": [jury["id"]], "bootstrap": 20},
        content_type="application/json",
    )
    assert run.status_code == 201, run.json()
    run_id = run.json()["id"]
    _work_all(run_id)
    assert client.post(f"/api/calibration/runs/{run_id}/report/").status_code == 202
    assert run_queued_report_computations() == 1
    report = client.get(f"/api/calibration/runs/{run_id}/report/")
    assert report.status_code == 200 and "api jury" in report.json()["report"]["judges"]
    selected = client.post(
        f"/api/calibration/runs/{run_id}/select/", {"judge": jury["id"], "reason": "panel"},
        content_type="application/json",
    )
    assert selected.status_code == 201, selected.json()
    assert JudgeSelection.objects.get().judge_id == jury["id"]


def test_the_overview_runs_the_same_queries_for_2_or_5_judges_and_a_jury(
    transactional_db, taxonomy, make_endpoint, researcher, login
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client = login(researcher)
    members = _members(make_endpoint)
    client.get("/calibration/")
    with CaptureQueriesContext(connection) as few:
        assert client.get("/calibration/").status_code == 200
    jury_create(name="overview panel", members=members, aggregation="majority")
    for n, model in enumerate(("sim-judge-noise3", "sim-judge-noise5", "sim-judge-noise7")):
        make_judge(name=f"more {n}", endpoint=make_endpoint(model))
    with CaptureQueriesContext(connection) as many:
        page = client.get("/calibration/").content.decode()
    assert "overview panel" in page and "more 2" in page
    assert len(many) == len(few) <= 10, [q["sql"][:100] for q in many]
