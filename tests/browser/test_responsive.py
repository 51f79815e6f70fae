"""Phones and laptops: at 390 px and 1366 px, in English and Chinese, the main pages of each role fit the window
(nothing scrolls sideways), the navigation collapses into a menu on the phone, and its Chinese labels stay on one
line. No console error on the way."""

import pytest
from playwright.sync_api import expect

from annotation.labelling.models import ComparisonSet, LabelAssignment
from annotation.releases.models import Release
from annotation.screening.models import ReviewAssignment, ScreeningRound
from calibration.models import CalibrationRun
from evaluation.models import EvaluationRun
from tests.browser.test_item_edit import sign_in
from tests.core.test_blindness import study  # noqa: F401  (the audit's realistic study, as a fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIEWPORTS = ((390, 844), (1366, 768))
LANGUAGES = ("en", "zh-hans")

# Leaf elements past the window's right edge: named in a failure, to find what pushes the page.
OVERFLOW = """() => {
  const width = window.innerWidth;
  const wide = [];
  for (const e of document.querySelectorAll("body *")) {
    const box = e.getBoundingClientRect();
    if (box.right > width + 1 && (!e.children.length || getComputedStyle(e).overflowX === "visible"))
      wide.push(`${e.tagName}.${e.className} ${Math.round(box.right)}px`);
  }
  return {scroll: document.scrollingElement.scrollWidth, width, wide: wide.slice(0, 5)};
}"""

# How many lines each navigation link's text takes.
NAV_LINES = """() => Array.from(document.querySelectorAll(".mainnav a")).map((a) => {
  const range = document.createRange();
  range.selectNodeContents(a);
  const tops = new Set(Array.from(range.getClientRects()).map((r) => Math.round(r.top)));
  return [a.textContent.trim(), tops.size];
})"""


def main_pages(role: str, user) -> list[str]:
    """The pages each role spends the day on (the study has one of each thing they open)."""
    release = Release.objects.filter(status=Release.Status.FROZEN).first()
    release_url = f"/releases/{release.benchmark.slug}/{release.version}/"
    common = ["/", "/items/", "/coverage/", "/labelling/", "/releases/", release_url]
    if role == "expert":
        review = ReviewAssignment.objects.filter(reviewer=user).select_related("round_item").first()
        label = LabelAssignment.objects.filter(expert=user, label__isnull=True).first()
        return [
            *common,
            "/screening/",
            f"/screening/{review.round_item.round_id}/review/{review.pk}/",
            f"/labelling/{label.comparison.comparison_set_id}/{label.pk}/",
            "/items/blind-draft/",
        ]
    if role == "lead_expert":
        screening_round = ScreeningRound.objects.first()
        return [*common, "/screening/", f"/screening/{screening_round.pk}/", "/screening/new/"]
    evaluation = EvaluationRun.objects.exclude(report=None).first() or EvaluationRun.objects.first()
    calibration_run = CalibrationRun.objects.first()
    pages = [
        *common,
        "/labelling/new/",
        f"/labelling/{ComparisonSet.objects.first().pk}/data/",
        "/calibration/",
        f"/calibration/runs/{calibration_run.pk}/",
        "/evaluation/",
        f"/evaluation/{evaluation.pk}/",
        f"/evaluation/{evaluation.pk}/drill/",
        "/llm/",
        "/llm/endpoints/",
    ]
    if role == "admin":
        pages += ["/releases/new/", "/screening/"]
    return pages


def test_main_pages_of_each_role_fit_phones_and_laptops_in_both_languages(browser, live_server, study):  # noqa: F811
    problems: dict[str, object] = {}
    errors: list[str] = []
    for role in ("expert", "lead_expert", "researcher", "admin"):
        user = study[role]
        pages = main_pages(role, user)
        for width, height in VIEWPORTS:
            for language in LANGUAGES:
                context = browser.new_context(locale="en-US", viewport={"width": width, "height": height})
                page = context.new_page()
                page.set_default_timeout(15000)
                page.on("console", lambda m, r=role: errors.append(f"{r}: {m.text}") if m.type == "error" else None)
                page.on("pageerror", lambda e, r=role: errors.append(f"{r}: {e}"))
                sign_in(page, live_server, user)
                if language != "en":
                    page.wait_for_load_state("load")  # app.js is deferred: it submits the select once loaded
                    with page.expect_navigation():
                        page.select_option("#language-select", language)
                toggle = page.locator("[data-nav-toggle]")
                nav = page.locator("#mainnav")
                if width < 900:
                    # The navigation is behind the menu button; the button opens and closes it.
                    expect(nav).to_be_hidden()
                    expect(toggle).to_have_attribute("aria-expanded", "false")
                    toggle.click()
                    expect(nav).to_be_visible()
                    expect(toggle).to_have_attribute("aria-expanded", "true")
                    wrapped = [(text, lines) for text, lines in page.evaluate(NAV_LINES) if lines != 1]
                    assert not wrapped, (role, width, language, wrapped)
                    fits = page.evaluate(OVERFLOW)
                    assert fits["scroll"] <= fits["width"], ("menu open", role, language, fits)
                    page.keyboard.press("Escape")
                    expect(nav).to_be_hidden()
                else:
                    expect(toggle).to_be_hidden()
                    expect(nav).to_be_visible()
                    wrapped = [(text, lines) for text, lines in page.evaluate(NAV_LINES) if lines != 1]
                    assert not wrapped, (role, width, language, wrapped)
                for url in pages:
                    response = page.goto(f"{live_server.url}{url}")
                    assert response.status == 200, (role, url, response.status)
                    fits = page.evaluate(OVERFLOW)
                    if fits["scroll"] > fits["width"]:
                        problems[f"{role} {width}px {language} {url}"] = fits
                context.close()
    assert not problems, "\n".join(f"{page}: {fits}" for page, fits in problems.items())
    assert not errors, "\n".join(errors)
