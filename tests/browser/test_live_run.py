"""A researcher starts an evaluation run and, without reloading, sees it finish and its report appear."""

import pytest
from playwright.sync_api import expect

from evaluation import services
from evaluation.models import EvaluationRun
from tests.browser.test_item_edit import sign_in
from tests.evaluation.conftest import frozen_release, primary  # noqa: F401
from tests.workers import wait_for_workers_ready

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_run_page_switches_to_done_and_shows_the_report_without_reload(
    page, live_server, frozen_release, primary, make_endpoint, researcher, workers  # noqa: F811
):
    run = services.evaluation_run_create(
        name="live in the browser",
        release=frozen_release,
        endpoints=[make_endpoint("sim-mcq-acc90"), make_endpoint("sim-style-concise")],
        languages=["en"],
        user=researcher,
    )
    workers.start()
    wait_for_workers_ready(workers)
    sign_in(page, live_server, researcher)
    page.goto(f"{live_server.url}/evaluation/{run.pk}/")
    expect(page.locator("#run-phase")).to_have_text("not started")
    page.click("#start-run")
    # The start is the last page load: from here on only htmx polling changes the page.
    page.wait_for_load_state("load")
    page.evaluate("window.__notReloaded = true")
    expect(page.locator("#run-phase")).not_to_have_text("not started")
    expect(page.locator("#leaderboard")).to_contain_text("M01", timeout=120_000)
    expect(page.locator("#run-phase")).to_have_text("done")
    expect(page.locator("#cancel-run")).to_have_count(0)
    expect(page.locator("#run-summary")).to_contain_text("Finished")
    expect(page.locator("progress.run-progress")).to_have_attribute("value", "100.0")
    assert page.evaluate("window.__notReloaded") is True
    run.refresh_from_db()
    assert run.phase == EvaluationRun.Phase.DONE
