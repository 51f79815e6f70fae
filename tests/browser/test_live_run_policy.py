"""The live evaluation page keeps to the Content-Security-Policy while htmx polls it and swaps in the finished report
(no style attribute set by a swap, no inline script or eval), with no console error."""

import pytest
from playwright.sync_api import expect

from evaluation import services
from tests.browser.test_csp import LISTEN
from tests.browser.test_item_edit import sign_in
from tests.evaluation.conftest import frozen_release, primary  # noqa: F401
from tests.factories import drive_evaluation_run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_polling_and_the_swap_to_the_report_raise_no_policy_violation(
    page,
    live_server,
    frozen_release,  # noqa: F811
    primary,  # noqa: F811
    make_endpoint,
    researcher,
):
    run = services.evaluation_run_create(
        name="live under the policy",
        release=frozen_release,
        endpoints=[make_endpoint("sim-mcq-acc90"), make_endpoint("sim-style-concise")],
        languages=["en"],
        user=researcher,
    )
    services.evaluation_run_start(run=run, user=researcher, start=False)
    page.add_init_script(LISTEN)
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    sign_in(page, live_server, researcher)
    page.goto(f"{live_server.url}/evaluation/{run.pk}/")
    for _ in range(2):  # two polls while the run is under way
        with page.expect_response(lambda response: "part=live" in response.url):
            pass
    drive_evaluation_run(run)
    expect(page.locator("#leaderboard")).to_be_visible(timeout=30_000)
    expect(page.locator("#run-phase")).to_have_text("done")
    page.wait_for_timeout(500)  # htmx settles the swapped content
    assert page.evaluate("window.__csp") == []
    assert errors == []
