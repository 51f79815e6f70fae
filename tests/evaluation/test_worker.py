"""An evaluation run started from the page is carried to the end by a real background worker."""

import pytest

from evaluation.models import EvaluationRun
from tests.workers import wait_for_workers_ready, wait_until

pytestmark = pytest.mark.worker


@pytest.mark.usefixtures("primary")
def test_a_started_run_is_advanced_by_the_db_worker_to_a_report(
    frozen_release,
    make_endpoint,
    researcher,
    login,
    workers,
):
    workers.start()
    wait_for_workers_ready(workers)
    endpoints = [make_endpoint("sim-mcq-acc90"), make_endpoint("sim-style-concise")]
    client = login(researcher)
    response = client.post(
        "/evaluation/new/",
        {
            "name": "via worker",
            "release": frozen_release.pk,
            "endpoints": [e.pk for e in endpoints],
            "languages": ["en"],
            "protocol": "letter",
            "pairing": "round_robin",
            "seed": 0,
        },
    )
    assert response.status_code == 302
    run = EvaluationRun.objects.get(name="via worker")
    assert "Estimate before starting" in client.get(f"/evaluation/{run.pk}/").content.decode()
    assert client.post(f"/evaluation/{run.pk}/start/").status_code == 302

    def finished() -> bool:
        run.refresh_from_db()
        return run.phase == EvaluationRun.Phase.DONE

    wait_until(finished, 120, "the evaluation run to finish")
    assert run.report["subjective"]["judge_calls"] > 0
    assert {r["model"] for r in run.report["objective"]["summary"]} == {"M01", "M02"}
