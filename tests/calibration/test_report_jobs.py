"""The calibration report is computed by a worker: the page and the API queue it, show where it stands (queued,
computing, done, failed), and the worker computes it and draws the page's figure in advance."""

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from calibration import services, tasks
from calibration.models import CalibrationRun
from tests.factories import make_calibration_run, run_queued_report_computations
from tests.factories.llm import lose_queued_task

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def finished_run(labelled_set, make_endpoint, researcher):
    return make_calibration_run(
        comparison_set=labelled_set,
        judges={"careful": make_endpoint("sim-judge-noise2")},
        name="jobs",
        user=researcher,
        bootstrap=30,
        report=False,
    )


def queued_computations() -> int:
    return DBTaskResult.objects.ready().filter(task_path=tasks.report_compute.module_path).count()


def test_the_page_queues_the_report_shows_its_state_and_the_worker_computes_it(finished_run, researcher, login):
    client = login(researcher)
    run_page = f"/calibration/runs/{finished_run.pk}/"

    response = client.post(f"{run_page}report/", follow=True)

    finished_run.refresh_from_db()
    assert finished_run.report is None and finished_run.report_state == "queued"
    assert queued_computations() == 1
    page = response.content.decode()
    assert "computed in the background" in page
    state = page.split('id="report-state"', 1)[1].split("</div>", 1)[0]
    assert 'data-state="queued"' in state and 'hx-get="?part=report-state"' in state and "queued" in state
    assert 'id="compute-report"' not in page, "no second request while one is under way"
    partial = client.get(f"{run_page}?part=report-state", headers={"HX-Request": "true"})
    assert partial.status_code == 200 and 'id="report-state"' in partial.content.decode()

    assert run_queued_report_computations() == 1

    finished_run.refresh_from_db()
    assert finished_run.report_state == "done" and finished_run.report_digest and finished_run.report_error == ""
    # The next poll finds it done: the browser reloads the page, which shows the report.
    partial = client.get(f"{run_page}?part=report-state", headers={"HX-Request": "true"})
    assert partial.headers.get("HX-Refresh") == "true"
    page = client.get(run_page).content.decode()
    assert "Suggested primary judge" in page and 'id="compute-report"' in page
    assert 'hx-get="?part=report-state"' not in page


def test_the_worker_draws_the_figure_in_every_language_into_the_shared_cache(finished_run):
    cache.clear()
    services.calibration_report_request(run=finished_run)
    run_queued_report_computations()

    keys = [k for k in cache._cache if "calibration-forest" in k]  # noqa: SLF001 (locmem keeps its keys here)
    assert any(":en:svg:" in k for k in keys) and any(":zh-hans:svg:" in k for k in keys)


def test_the_api_answers_202_with_a_status_url_and_a_second_request_changes_nothing(finished_run, login, researcher):
    client = login(researcher)
    report_url = f"/api/calibration/runs/{finished_run.pk}/report/"

    response = client.post(report_url)

    assert response.status_code == 202, response.json()
    body = response.json()
    assert body["state"] == "queued" and body["under_way"] is True
    status_url = f"http://testserver/api/calibration/runs/{finished_run.pk}/report/status/"
    assert body["status_url"] == status_url and response["Location"] == status_url
    assert client.get(report_url).status_code == 409
    again = client.post(report_url)
    assert again.status_code == 202 and again.json()["requested_at"] == body["requested_at"]
    assert queued_computations() == 1
    assert client.get(status_url).json()["state"] == "queued"
    assert client.get(f"/api/calibration/runs/{finished_run.pk}/").json()["report_state"] == "queued"

    assert run_queued_report_computations() == 1

    status = client.get(status_url).json()
    assert status["state"] == "done" and status["under_way"] is False and status["report_digest"]
    assert client.get(status["report_url"]).json()["report_digest"] == status["report_digest"]


def test_a_failed_computation_is_recorded_and_shown_and_can_be_requested_again(
    finished_run, researcher, login, monkeypatch
):
    import calibration.report

    def broken(run: CalibrationRun) -> dict:
        raise RuntimeError("the bootstrap ran out of memory")

    monkeypatch.setattr(calibration.report, "build_report", broken)
    client = login(researcher)
    client.post(f"/calibration/runs/{finished_run.pk}/report/")

    run_queued_report_computations()

    finished_run.refresh_from_db()
    assert finished_run.report_state == "failed" and finished_run.report is None
    assert finished_run.report_error == "RuntimeError: the bootstrap ran out of memory"
    page = client.get(f"/calibration/runs/{finished_run.pk}/").content.decode()
    assert "Computing the report failed:" in page and "the bootstrap ran out of memory" in page
    assert 'id="compute-report"' in page
    monkeypatch.undo()
    client.post(f"/calibration/runs/{finished_run.pk}/report/")
    run_queued_report_computations()
    finished_run.refresh_from_db()
    assert finished_run.report_state == "done" and finished_run.report_error == ""


def test_a_request_whose_worker_vanished_can_be_made_again(finished_run):
    services.calibration_report_request(run=finished_run)
    DBTaskResult.objects.all().delete()  # the worker that held it is gone
    CalibrationRun.objects.filter(pk=finished_run.pk).update(
        report_state="computing", report_requested_at=timezone.now() - timedelta(hours=1)
    )
    finished_run.refresh_from_db()
    assert not services.report_under_way(finished_run)

    services.calibration_report_request(run=finished_run)

    assert queued_computations() == 1
    assert run_queued_report_computations() == 1


def test_a_report_whose_worker_dies_is_marked_failed_by_the_sweep_and_can_be_recomputed(
    finished_run, researcher, login
):
    client = login(researcher)
    client.post(f"/calibration/runs/{finished_run.pk}/report/")
    CalibrationRun.objects.filter(pk=finished_run.pk).update(report_state="computing")

    assert lose_queued_task(tasks.report_compute.module_path) == 1

    finished_run.refresh_from_db()
    assert finished_run.report_state == "failed" and finished_run.report is None
    assert (
        finished_run.report_error
        == "The worker computing this report stopped before it finished: recompute the report."
    )
    page = client.get(f"/calibration/runs/{finished_run.pk}/").content.decode()
    assert finished_run.report_error in page and 'id="compute-report"' in page
    client.post(f"/calibration/runs/{finished_run.pk}/report/")
    assert run_queued_report_computations() == 1
    finished_run.refresh_from_db()
    assert finished_run.report_state == "done" and finished_run.report_error == ""


def test_a_report_cannot_be_requested_before_the_judges_finish(labelled_set, make_endpoint, researcher, login):
    from calibration.models import Judge

    run = services.calibration_run_start(
        name="early",
        comparison_set=labelled_set,
        judges=[
            services.judge_create(
                name="early judge",
                endpoint=make_endpoint("sim-judge-noise2"),
                prompt_set=services.judge_prompts_load_defaults(benchmark=labelled_set.benchmark),
            )
        ],
        combine_rule="facet_tie",
        user=researcher,
        start=False,
    )
    assert Judge.objects.filter(name="early judge").exists()

    response = login(researcher).post(f"/api/calibration/runs/{run.pk}/report/")

    assert response.status_code == 400
    assert "not finished" in str(response.json())
    assert queued_computations() == 0
