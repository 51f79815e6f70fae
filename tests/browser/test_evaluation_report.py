import threading

import pytest
from django.db import connection
from playwright.sync_api import expect

from evaluation import services
from tests.browser.test_item_edit import sign_in
from tests.evaluation.conftest import frozen_release, primary  # noqa: F401
from tests.factories import drive_evaluation_run as drive

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def drive_and_close(run) -> None:
    try:
        drive(run)
    finally:
        connection.close()


def finished_run(*, name: str, release, make_endpoint, user, timeout: float = 120):  # noqa: ANN001, ANN201
    """An English evaluation run of two simulated models on ``release``, created and driven to its end.

    Playwright's event loop runs in this thread; the LLM worker runs its own loop, so it gets a thread of its own.
    """
    run = services.evaluation_run_create(
        name=name,
        release=release,
        endpoints=[make_endpoint("sim-mcq-acc90"), make_endpoint("sim-style-template")],
        languages=["en"],
        user=user,
    )
    services.evaluation_run_start(run=run, user=user, start=False)
    worker = threading.Thread(target=drive_and_close, args=(run,))
    worker.start()
    worker.join(timeout=timeout)
    return run


def test_researcher_reads_the_report_and_drills_down_to_raw_judge_output(
    page, live_server, frozen_release, primary, make_endpoint, researcher  # noqa: F811  (fixtures imported above)
):
    run = finished_run(name="browser", release=frozen_release, make_endpoint=make_endpoint, user=researcher)
    sign_in(page, live_server, researcher)
    page.goto(f"{live_server.url}/evaluation/{run.pk}/")
    expect(page.locator("#leaderboard")).to_contain_text("M01")
    expect(page.locator(".figure img").first).to_be_visible()
    expect(page.locator("#ratings")).to_contain_text("overall")
    page.locator("#leaderboard a", has_text="M01").first.click()
    expect(page.locator("h1")).to_contain_text("Evidence")
    page.locator("details summary").last.click()
    expect(page.locator("pre.prompt-text").last).to_contain_text("Verdict:")
