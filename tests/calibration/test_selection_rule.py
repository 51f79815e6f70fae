"""A judge the calibration report's rule excluded is never made primary by default: the page preselects nothing, and
choosing an excluded judge takes an explicit override with a reason, recorded and shown on every evaluation using it."""

import pytest

from calibration import selectors, services
from tests.factories import make_calibration_run


@pytest.fixture
def run_with_excluded_judge(transactional_db, labelled_set, make_endpoint):
    # The simulated experts prefer by a hidden quality; a judge with noise 400 answers almost at random.
    return make_calibration_run(
        comparison_set=labelled_set,
        judges={"careful": make_endpoint("sim-judge-noise2"), "random": make_endpoint("sim-judge-noise400")},
    )


def judge_named(run, name):
    return run.judge_runs.get(judge__name=name).judge


def test_the_rule_exclusion_is_read_from_the_report(run_with_excluded_judge):
    report = run_with_excluded_judge.report

    assert selectors.judge_rule_exclusion(report=report, name="careful") is None
    why = selectors.judge_rule_exclusion(report=report, name="random")
    assert why.startswith("random: alpha with judge") and why.endswith("significantly worse, excluded.")


def test_a_report_without_strata_excludes_nobody():
    assert selectors.judge_rule_exclusion(report={}, name="any") is None
    assert selectors.judge_rule_exclusion(report={"strata": []}, name="any") is None


def test_an_undefined_alpha_excludes_the_judge():
    report = {
        "strata": [
            {
                "baseline": {"alpha_ordinal": {"value": 0.9}},
                "judges": {"mute": {"alpha_with_judge": {"value": None, "ci_low": None, "ci_high": None}}},
            }
        ],
        "suggestion": {"judge": None, "reasoning": ["mute: alpha with the judge is undefined (no verdicts)."]},
    }

    assert selectors.judge_rule_exclusion(report=report, name="mute") == (
        "mute: alpha with the judge is undefined (no verdicts)."
    )


def test_choosing_an_excluded_judge_needs_the_override(run_with_excluded_judge, researcher):
    run = run_with_excluded_judge
    random = judge_named(run, "random")

    with pytest.raises(services.JudgeExcludedByRule, match="The report's rule excluded random"):
        services.judge_select(run=run, judge=random, user=researcher, reason="cheaper", report_digest=run.report_digest)
    assert services.primary_judge() is None

    selection = services.judge_select(
        run=run, judge=random, user=researcher, reason="cheaper", report_digest=run.report_digest, override_rule=True
    )
    assert selection.against_rule and selection.rule_note.startswith("random: alpha with judge")


def test_choosing_an_allowed_judge_is_not_recorded_as_against_the_rule(run_with_excluded_judge, researcher):
    run = run_with_excluded_judge
    selection = services.judge_select(
        run=run,
        judge=judge_named(run, "careful"),
        user=researcher,
        reason="best lower bound",
        report_digest=run.report_digest,
        override_rule=True,
    )
    assert not selection.against_rule and selection.rule_note == ""


def test_the_page_preselects_no_judge_and_marks_the_excluded_one(run_with_excluded_judge, researcher, login):
    html = login(researcher).get(f"/calibration/runs/{run_with_excluded_judge.pk}/").content.decode()

    start = html.index('<select name="judge"')
    select = html[start : html.index("</select>", start)]
    assert '<option value="" selected>' in select
    assert select.count(" selected") == 1
    assert "random (excluded by the rule)" in select and "careful (excluded" not in select
    assert 'name="override_rule"' in html


def test_the_page_refuses_an_excluded_judge_without_the_override(run_with_excluded_judge, researcher, login):
    run = run_with_excluded_judge
    client = login(researcher)
    url = f"/calibration/runs/{run.pk}/select/"

    page = client.post(url, {"judge": judge_named(run, "random").pk, "reason": "cheaper"}, follow=True)
    assert "The report&#x27;s rule excluded random" in page.content.decode()
    assert services.primary_judge() is None

    page = client.post(
        url, {"judge": judge_named(run, "random").pk, "reason": "cheaper", "override_rule": "on"}, follow=True
    )
    html = page.content.decode()
    assert services.primary_judge().against_rule
    assert 'id="selection-against-rule"' in html


def test_the_api_answers_400_without_the_override(run_with_excluded_judge, researcher, login):
    run = run_with_excluded_judge
    client = login(researcher)
    url = f"/api/calibration/runs/{run.pk}/select/"
    body = {"judge": judge_named(run, "random").pk, "reason": "cheaper"}

    refused = client.post(url, body, content_type="application/json")
    assert refused.status_code == 400 and refused.json()["code"] == "judge_excluded"

    chosen = client.post(url, {**body, "override_rule": True}, content_type="application/json")
    assert chosen.status_code == 201
    assert chosen.json()["against_rule"] is True and chosen.json()["rule_note"].startswith("random:")


def test_an_evaluation_using_a_judge_chosen_against_the_rule_says_so(run_with_excluded_judge, researcher, login):
    run = run_with_excluded_judge
    services.judge_select(
        run=run,
        judge=judge_named(run, "random"),
        user=researcher,
        reason="the only judge we can afford",
        report_digest=run.report_digest,
        override_rule=True,
    )

    html = login(researcher).get("/evaluation/new/").content.decode()

    assert 'id="judge-against-rule"' in html and "the only judge we can afford" in html


def test_an_evaluation_run_records_the_selection_and_its_page_shows_the_override(
    run_with_excluded_judge, researcher, lead, make_endpoint, login
):
    from evaluation import services as evaluation
    from tests.factories import make_frozen_release

    run = run_with_excluded_judge
    selection = services.judge_select(
        run=run,
        judge=judge_named(run, "random"),
        user=researcher,
        reason="the only judge we can afford",
        report_digest=run.report_digest,
        override_rule=True,
    )
    release = make_frozen_release(version="0.3.0", user=lead, override_reason="test sample")
    evaluation_run = evaluation.evaluation_run_create(
        name="uses random", release=release, endpoints=[make_endpoint("sim-chat")], languages=["en"], user=researcher
    )

    assert evaluation_run.judge_selection == selection
    html = login(researcher).get(f"/evaluation/{evaluation_run.pk}/").content.decode()
    assert 'id="judge-against-rule"' in html and "the only judge we can afford" in html
