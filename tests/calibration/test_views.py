"""Calibration pages: the report with its chart and downloads, and selecting the primary judge."""

import json

from calibration.models import JudgeSelection
from tests.factories import make_calibration_run, run_queued_report_computations


def test_report_page_downloads_and_selection_through_the_ui(
    transactional_db, labelled_set, make_endpoint, researcher, login
):
    run = make_calibration_run(
        comparison_set=labelled_set,
        judges={"careful": make_endpoint("sim-judge-noise2")},
        name="ui",
        combine_rule="summed",
        user=researcher,
        bootstrap=50,
        report=False,
    )
    judge = run.judge_runs.get().judge
    client = login(researcher)
    assert client.post(f"/calibration/runs/{run.pk}/report/").status_code == 302
    assert run_queued_report_computations() == 1
    html = client.get(f"/calibration/runs/{run.pk}/").content.decode()
    assert 'src="data:image/svg+xml;base64,' in html and "Suggested primary judge" in html and "careful" in html
    # Each expert of the set, with agreement and attention checks (none set here), next to the report.
    experts = html.split('id="experts"')[1].split("</section>")[0]
    assert "Agreement with the others" in experts and "Attention checks right" in experts
    csv_text = client.get(f"/calibration/runs/{run.pk}/report.csv").content.decode()
    assert csv_text.splitlines()[0].startswith("stratum,rater,alpha")
    assert "\\begin{tabular}" in client.get(f"/calibration/runs/{run.pk}/report.tex").content.decode()
    assert json.loads(client.get(f"/calibration/runs/{run.pk}/report.json").content)["judges"] == ["careful"]
    # The override is recorded only if the rule excluded the judge; as the only candidate it is chosen either way.
    client.post(
        f"/calibration/runs/{run.pk}/select/", {"judge": judge.pk, "reason": "only candidate", "override_rule": "on"}
    )
    assert JudgeSelection.objects.get().judge == judge
