"""The Content-Security-Policy holds on every page: Chromium loads each HTML page of the URL resolver as the admin
and as an expert, with the policy enforced, and no script, style, handler or image is blocked."""

import pytest
from django.test import Client

from annotation.labelling.models import LabelAssignment
from tests.browser.test_item_edit import sign_in
from tests.core import crawl
from tests.core.test_blindness import study  # noqa: F401  (the audit's realistic study, as a fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Records every violation the browser reports, before any of the page's own scripts run.
LISTEN = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__csp.push(`${e.violatedDirective} blocked ${e.blockedURI || "inline"} at ${e.sourceFile}:${e.lineNumber}`);
});
"""


def html_pages(user) -> list[str]:
    """One concrete URL of every route that answers this user with an HTML page (found with the test client)."""
    client = Client()
    client.force_login(user)
    client.raise_request_exception = False
    table = crawl.route_table(crawl.routes())
    pages = []
    for route in table.values():
        if route.is_api and route.name != "api-docs":
            continue
        for url in crawl.seed_urls(route, table)[:2]:
            response = client.get(url)
            if response.status_code == 200 and response.get("Content-Type", "").startswith("text/html"):
                pages.append(url)
                break
    return pages


@pytest.mark.parametrize("role", ["admin", "expert"])
def test_no_page_violates_the_content_security_policy(page, live_server, study, role):  # noqa: F811
    user = study[role]
    pages = html_pages(user)
    assert len(pages) >= (60 if role == "admin" else 15), pages  # the crawl found the app's pages
    page.add_init_script(LISTEN)
    console = []

    def on_console(message: object) -> None:
        if "Content Security Policy" in message.text:
            console.append(message.text)

    page.on("console", on_console)
    sign_in(page, live_server, user)
    violations = {}
    for url in pages:
        response = page.goto(f"{live_server.url}{url}")
        assert "script-src 'self'" in response.headers["content-security-policy"]
        page.wait_for_load_state("load")
        found = page.evaluate("window.__csp")
        if found:
            violations[url] = found
    assert not violations, violations
    assert not console, console


def test_scripted_behaviour_works_under_the_policy(page, live_server, study):  # noqa: F811
    """What used to be inline (handlers, style attributes, htmx's indicator style) works from app.js and app.css."""
    expert = study["expert"]
    open_set = LabelAssignment.objects.filter(expert=expert, label__isnull=True).values_list(
        "comparison__comparison_set_id", flat=True
    )[0]
    sign_in(page, live_server, expert)
    page.goto(f"{live_server.url}/coverage/")
    with page.expect_navigation():
        page.select_option("select[name=by]", index=1)  # data-autosubmit: the form submits itself
    assert "by=" in page.url
    page.goto(f"{live_server.url}/labelling/{open_set}/next/")
    bar = page.locator(".progress-bar span").first
    percent = float(bar.get_attribute("data-percent"))
    assert 0 < percent < 100
    width = bar.evaluate("e => e.style.width")
    assert width == f"{percent:g}%"
