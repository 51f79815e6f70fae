"""The live evaluation run page: header, actions, progress and report follow the run's phase through htmx polling."""

from datetime import timedelta

import pytest
from django.utils import timezone

from evaluation import services
from evaluation.models import EvaluationRun
from evaluation.progress import estimate_seconds_left, overall_percent, run_progress
from evaluation.selectors import evaluation_run_llm_runs
from tests.factories import drive_evaluation_run

HTMX = {"HX-Request": "true"}


def test_overall_percent_gives_responses_the_first_half_when_judging_follows():
    assert overall_percent(phase="responses", responses=(5, 10), judging=(0, 0), expects_judging=True) == 25.0
    assert overall_percent(phase="judging", responses=(10, 10), judging=(3, 4), expects_judging=True) == 87.5
    assert overall_percent(phase="responses", responses=(5, 10), judging=(0, 0), expects_judging=False) == 50.0
    assert overall_percent(phase="draft", responses=(0, 0), judging=(0, 0), expects_judging=True) == 0.0
    assert overall_percent(phase="done", responses=(1, 10), judging=(0, 0), expects_judging=True) == 100.0


def test_a_running_run_never_reads_a_hundred_percent_before_it_is_done():
    assert overall_percent(phase="judging", responses=(10, 10), judging=(8, 8), expects_judging=True) < 100


def test_time_left_follows_the_pace_so_far():
    assert estimate_seconds_left(percent=25.0, elapsed_seconds=60) == 180
    assert estimate_seconds_left(percent=0.0, elapsed_seconds=60) is None
    assert estimate_seconds_left(percent=50.0, elapsed_seconds=None) is None


@pytest.fixture
def started_run(frozen_release, primary, make_endpoint, researcher):
    run = services.evaluation_run_create(
        name="live",
        release=frozen_release,
        endpoints=[make_endpoint("sim-mcq-acc90"), make_endpoint("sim-style-concise")],
        languages=["en"],
        user=researcher,
    )
    return services.evaluation_run_start(run=run, user=researcher, start=False)


def test_run_progress_reports_phase_percent_and_counts(started_run):
    progress = run_progress(started_run)
    # The page passes the LLM runs it has read: the same answer, without the query.
    assert run_progress(started_run, llm_runs=evaluation_run_llm_runs(run=started_run)) == progress
    assert progress["phase"] == EvaluationRun.Phase.RESPONSES
    assert progress["running"] and not progress["done"]
    assert progress["percent"] == 0.0
    assert progress["counts"]["planned"] > 0
    assert progress["counts"]["remaining"] == progress["counts"]["planned"]
    assert set(progress["counts"]["by_kind"]) == {"responses"}
    drive_evaluation_run(started_run)
    started_run.refresh_from_db()
    done = run_progress(started_run)
    assert run_progress(started_run, llm_runs=evaluation_run_llm_runs(run=started_run)) == done
    assert done["done"] and done["percent"] == 100.0 and done["eta_seconds"] is None
    assert done["counts"]["by_kind"]["judging"]["done"] > 0


def test_once_every_call_has_answered_the_page_says_results_are_collected_not_zero_seconds_left(
    started_run, researcher, login
):
    """The stall at the end (collection, the next phase planned, the report built) shows as collecting, with no
    time left estimated from the pace of calls."""
    from django.db.models import F

    from llm.models import Run

    Run.objects.filter(pk__in=started_run.llm_runs.values("llm_run")).update(
        done=F("planned"), started_at=timezone.now() - timedelta(seconds=30)
    )
    progress = run_progress(started_run)
    assert progress["running"] and progress["collecting"] and progress["eta_seconds"] is None
    page = login(researcher).get(f"/evaluation/{started_run.pk}/?part=live", headers=HTMX).content.decode()
    assert 'id="run-collecting"' in page and "left" not in page.split('id="run-summary"')[1].split("</p>")[0]
    api = login(researcher).get(f"/api/evaluation/runs/{started_run.pk}/progress/")
    assert api.status_code == 200 and api.json()["collecting"] is True


def test_live_part_polls_while_running_then_shows_done_and_the_report(
    started_run, researcher, login, django_assert_max_num_queries
):
    client = login(researcher)
    url = f"/evaluation/{started_run.pk}/?part=live"
    with django_assert_max_num_queries(12):
        running = client.get(url, headers=HTMX).content.decode()
    assert 'id="run-live"' in running and 'hx-trigger="every 2s"' in running
    assert "collecting responses" in running and 'id="cancel-run"' in running
    assert "% overall" in running
    assert 'id="leaderboard"' not in running
    # The full page holds the same polling region, so a page opened before the run ends follows it.
    assert 'hx-get="?part=live"' in client.get(f"/evaluation/{started_run.pk}/").content.decode()

    drive_evaluation_run(started_run)
    done = client.get(url, headers=HTMX).content.decode()
    assert 'id="run-phase">done<' in done.replace("\n", "")
    assert 'id="cancel-run"' not in done
    assert "hx-trigger" not in done
    assert 'id="leaderboard"' in done and 'class="card figure"' in done



def test_the_run_list_shows_each_running_runs_percentage_and_polls_while_any_runs(
    started_run, researcher, login, django_assert_max_num_queries
):
    client = login(researcher)
    with django_assert_max_num_queries(10) as one_run:
        page = client.get("/evaluation/").content.decode()
    # More runs on the page (three drafts), the same queries: the progress of a page's runs is read for all at once.
    for n in range(3):
        services.evaluation_run_create(
            name=f"more {n}",
            release=started_run.release,
            endpoints=[m.endpoint for m in started_run.models.all()],
            languages=["en"],
            user=researcher,
        )
    with django_assert_max_num_queries(10) as four_runs:
        client.get("/evaluation/")
    assert len(four_runs) == len(one_run)
    expected = run_progress(started_run)
    assert expected["running"] and f"{expected['percent']}%" in page
    assert 'hx-trigger="every 2s"' in page
    partial = client.get("/evaluation/", headers=HTMX).content.decode()
    assert partial.lstrip().startswith('<div id="runs"') and "<html" not in partial
    drive_evaluation_run(started_run)
    done = client.get("/evaluation/").content.decode()
    assert 'hx-trigger="every 2s"' not in done and "100%" in done
