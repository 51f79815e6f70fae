"""The report page shows precision planning for the target the researcher sets."""

from annotation.labelling.models import ExpertLabel
from tests.factories import make_calibration_run


def test_report_page_plans_comparisons_and_hours_for_the_researchers_target(
    transactional_db, labelled_set, make_endpoint, researcher, login
):
    ExpertLabel.objects.filter(assignment__comparison__comparison_set=labelled_set).update(seconds_spent=90)
    run = make_calibration_run(
        comparison_set=labelled_set,
        judges={"careful": make_endpoint("sim-judge-noise2"), "noisy": make_endpoint("sim-judge-noise6")},
        name="plan",
        combine_rule="summed",
        user=researcher,
        bootstrap=20,
    )
    run.refresh_from_db()
    inputs = run.report["planning"]
    assert set(inputs["judges"]) == {"careful", "noisy"} and inputs["seconds_per_label"] == 90.0
    client = login(researcher)
    html = client.get(f"/calibration/runs/{run.pk}/").content.decode()
    assert 'id="planning"' in html and "1/√n" in html and "design effect" in html
    tight = client.get(f"/calibration/runs/{run.pk}/", {"target": "0.01"}).context["planning"]
    loose = client.get(f"/calibration/runs/{run.pk}/", {"target": "0.4"}).context["planning"]
    # The noisy judge disagrees with the experts now and then, so its interval has a width to shrink.
    noisy_tight = next(r for r in tight["judges"] if r["name"] == "noisy")
    noisy_loose = next(r for r in loose["judges"] if r["name"] == "noisy")
    assert noisy_tight["half_width"] > 0.01
    assert tight["target_half_width"] == 0.01 and noisy_tight["more_comparisons"] > noisy_loose["more_comparisons"]
    assert noisy_tight["more_hours"] == noisy_tight["more_comparisons"] * inputs["labels_per_comparison"] * 90 / 3600
    bad = client.get(f"/calibration/runs/{run.pk}/", {"target": "-1"})
    assert bad.context["planning"]["target_half_width"] == 0.05 and "error" in bad.content.decode()
