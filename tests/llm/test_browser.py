"""In Chromium: the run page follows a run live (htmx polling) and pauses it without a page load."""

import pytest
from playwright.sync_api import expect

from llm import services
from llm.models import Run
from tests.browser.conftest import browser, page  # noqa: F401
from tests.factories import PASSWORD, mcq_prompts

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
]


def test_the_run_page_shows_progress_live_and_pauses_the_run(page, live_server, researcher, make_endpoint):  # noqa: F811
    run = services.run_create(
        endpoint=make_endpoint(), prompts=mcq_prompts(10), parser="mcq_letter", name="live run", start=False
    )
    page.goto(f"{live_server.url}/login/")
    page.fill("#id_username", researcher.username)
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.goto(f"{live_server.url}/llm/runs/{run.pk}/")
    progress = page.locator("#progress")
    expect(progress).to_contain_text("queued")
    expect(page.locator(".sim-badge").first).to_have_text("Simulator")

    # What a worker would write; the page picks it up on its own within a couple of seconds.
    Run.objects.filter(pk=run.pk).update(status=Run.Status.RUNNING, done=4, cached=1)
    expect(progress).to_contain_text("4 (40.0%)", timeout=5000)
    expect(progress).to_contain_text("running")

    progress.get_by_role("button", name="Pause").click()
    expect(progress).to_contain_text("paused")
    expect(progress.get_by_role("button", name="Resume")).to_be_visible()
    assert Run.objects.get(pk=run.pk).status == Run.Status.PAUSED
