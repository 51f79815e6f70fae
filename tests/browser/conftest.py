import os

import pytest

from tests.conftest import chromium_path

# Playwright's sync API runs an event loop in the test thread; the ORM calls in these tests are synchronous.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


# Module scope: Playwright's sync API keeps an event loop running in this thread while it is open, which would
# stop later tests from running asyncio code (the LLM worker) in the same thread.
@pytest.fixture(scope="module")
def browser():
    path = chromium_path()
    if path is None:
        if os.environ.get("REQUIRE_BROWSER") == "1":
            pytest.fail("REQUIRE_BROWSER=1 but Chromium is not installed (apt-get install chromium)")
        pytest.skip("Chromium not found at /usr/bin/chromium: browser tests skipped (set REQUIRE_BROWSER=1 to fail)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=path,
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(locale="en-US")
    page = context.new_page()
    page.set_default_timeout(15000)
    yield page
    context.close()
