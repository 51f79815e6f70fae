"""Labelling at the expert's pace: on Enter the next comparison, fetched ahead, is shown in the same document while
the label is posted in the background; a refused or unsent label brings the expert back to it."""

import json

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from annotation.items.models import Benchmark
from annotation.labelling import selectors
from annotation.labelling import services as comparisons
from annotation.labelling.models import ExpertLabel, LabelAssignment
from tests.browser.test_item_edit import sign_in
from tests.factories import make_item

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Every layout shift of the page (hadRecentInput or not) and a mark that a new document would not carry.
WATCH = """
window.__shifts = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) window.__shifts.push(entry.value);
}).observe({ type: "layout-shift", buffered: true });
"""


def sent(page) -> None:
    """Wait until no label is being sent in the background (the page marks its main part busy meanwhile)."""
    expect(page.locator("main.page")).not_to_have_attribute("aria-busy", "true")


def fetched_ahead(page, url: str) -> None:
    """Wait until the page has fetched ``url`` ahead (a fetch, not a navigation)."""
    page.wait_for_function(
        "(url) => performance.getEntriesByType('resource')"
        ".some((e) => e.initiatorType === 'fetch' && e.name.endsWith(url) && e.responseEnd > 0)",
        arg=url,
    )


def refuse_posts(route) -> None:
    """A route that cuts the connection of every POST (an unsent form) and lets the rest through."""
    if route.request.method == "POST":
        route.abort("internetdisconnected")
    else:
        route.continue_()


def shown(page) -> str:
    return page.locator("#label-page").get_attribute("data-url")


@pytest.fixture
def four(taxonomy, lead, expert):
    item = make_item(uid="flow-1", kind="open_prompt", dimension="emotion_matching", user=lead, status="accepted")
    rows = [
        {"item": item.uid, "language": "en", "model": name, "text": f"Reply {n}: that must be hard.\n" * (n + 1)}
        for n, name in enumerate(["f1", "f2", "f3", "f4"])
    ]
    comparisons.responses_import(data="".join(json.dumps(r) + "\n" for r in rows).encode(), user=lead)
    return comparisons.comparison_set_build(
        name="flow", benchmark=Benchmark.objects.get(slug="facet"), experts=[expert], user=lead, languages=("en",)
    )


def url_of(cs, assignment: LabelAssignment) -> str:
    return f"/labelling/{cs.pk}/{assignment.pk}/"


def test_enter_shows_the_next_comparison_in_place_and_stores_the_label(page, live_server, four, expert):
    cs = four
    queue = list(selectors.expert_queue(comparison_set=cs, expert=expert))
    total = len(queue)
    assert total >= 4
    first, second, third = queue[:3]
    page.add_init_script(WATCH)
    errors = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    sign_in(page, live_server, expert)
    page.goto(f"{live_server.url}{url_of(cs, first)}")
    fetched_ahead(page, url_of(cs, second))
    # Fetched ahead, not seen: the next comparison's clock has not started.
    assert LabelAssignment.objects.get(pk=second.pk).first_viewed_at is None
    page.evaluate("window.__sameDocument = true; window.__shifts = []")
    pressed = timezone.now()

    page.keyboard.press("ArrowLeft")
    page.keyboard.press("2")
    page.keyboard.press("Enter")
    expect(page.locator("#label-page")).to_have_attribute("data-url", url_of(cs, second))
    assert page.url == f"{live_server.url}{url_of(cs, second)}"
    expect(page.locator("#progress-text")).to_have_text(f"1 / {total}")
    expect(page.locator("#label-back")).to_have_attribute("href", url_of(cs, first))
    sent(page)
    assert page.evaluate("window.__sameDocument") is True
    assert page.evaluate("performance.getEntriesByType('navigation').length") == 1
    assert page.evaluate("window.__shifts") == []

    label = ExpertLabel.objects.get(assignment=first)
    assert label.score == (2 if first.shown_order == "AB" else -2) and label.seconds_spent is not None
    viewed = LabelAssignment.objects.get(pk=second.pk).first_viewed_at
    assert viewed is not None and viewed >= pressed  # the comparison shown is timed from when it was shown
    assert ExpertLabel.objects.filter(assignment__expert=expert).count() == 1

    # The keys work on the comparison shown in place: a tie disables the margins, Enter goes on again.
    fetched_ahead(page, url_of(cs, third))
    page.keyboard.press("t")
    expect(page.locator("#margin-1")).to_be_disabled()
    page.keyboard.press("Enter")
    expect(page.locator("#label-page")).to_have_attribute("data-url", url_of(cs, third))
    sent(page)
    expect(page.locator("#progress-text")).to_have_text(f"2 / {total}")
    assert ExpertLabel.objects.get(assignment=second).score == 0
    assert page.evaluate("window.__sameDocument") is True
    assert page.evaluate("window.__shifts") == []

    # ? shows the keys; U goes back to the label just given (a page load), as before.
    page.keyboard.press("Shift+?")
    expect(page.locator("#shortcuts")).to_be_visible()
    page.keyboard.press("Shift+?")
    page.keyboard.press("u")
    page.wait_for_url(f"{live_server.url}{url_of(cs, second)}")
    expect(page.locator("#label-existing")).to_be_visible()
    expect(page.locator("#winner-tie")).to_be_checked()
    assert not errors, errors


def test_a_refused_label_brings_the_expert_back_with_the_error_and_nothing_stored_twice(
    page, live_server, four, expert
):
    cs = four
    first, second, third = list(selectors.expert_queue(comparison_set=cs, expert=expert))[:3]
    sign_in(page, live_server, expert)
    page.goto(f"{live_server.url}{url_of(cs, first)}")
    fetched_ahead(page, url_of(cs, second))
    # The same comparison labelled meanwhile in another tab, with another verdict: the POST answers 409.
    comparisons.label_submit(comparison=first.comparison, expert=expert, winner="tie", margin=None)
    page.keyboard.press("ArrowRight")
    page.keyboard.press("4")
    page.keyboard.press("Enter")
    expect(page.locator("#label-error")).to_contain_text("You already labelled this comparison.")
    expect(page.locator("#label-page")).to_have_attribute("data-url", url_of(cs, first))
    assert page.url == f"{live_server.url}{url_of(cs, first)}"
    expect(page.locator("#winner-right")).to_be_checked()  # what the expert chose is still there
    expect(page.locator("#margin-4")).to_be_checked()
    label = ExpertLabel.objects.get(assignment=first)
    assert label.score == 0 and ExpertLabel.objects.filter(assignment__expert=expert).count() == 1
    # The comparison shown for a moment was never timed: the server never showed it.
    assert LabelAssignment.objects.get(pk=second.pk).first_viewed_at is None


def test_an_unsent_label_restores_the_comparison_and_sends_again(page, live_server, four, expert):
    cs = four
    first, second = list(selectors.expert_queue(comparison_set=cs, expert=expert))[:2]
    sign_in(page, live_server, expert)
    page.goto(f"{live_server.url}{url_of(cs, first)}")
    fetched_ahead(page, url_of(cs, second))
    target = f"{live_server.url}{url_of(cs, first)}"

    page.route(target, refuse_posts)
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("5")
    page.keyboard.press("r")
    page.keyboard.type("Kind and concrete.")
    page.keyboard.press("Escape")
    page.keyboard.press("Enter")
    expect(page.locator(".messages .msg-error")).to_contain_text("could not be sent")
    expect(page.locator("#label-page")).to_have_attribute("data-url", url_of(cs, first))
    assert page.url == target
    expect(page.locator("#winner-left")).to_be_checked()
    expect(page.locator("#margin-5")).to_be_checked()
    expect(page.locator("#rationale")).to_have_value("Kind and concrete.")
    assert not ExpertLabel.objects.filter(assignment=first).exists()

    page.unroute(target, refuse_posts)
    fetched_ahead(page, url_of(cs, second))
    page.keyboard.press("Enter")
    expect(page.locator("#label-page")).to_have_attribute("data-url", url_of(cs, second))
    sent(page)
    label = ExpertLabel.objects.get(assignment=first)
    assert label.score == (5 if first.shown_order == "AB" else -5) and label.rationale == "Kind and concrete."
    expect(page.locator(".messages")).to_have_count(0)


def test_without_a_comparison_ahead_the_form_is_posted_as_before(page, live_server, four, expert):
    cs = four
    queue = list(selectors.expert_queue(comparison_set=cs, expert=expert))
    for assignment in queue[:-1]:
        comparisons.label_submit(comparison=assignment.comparison, expert=expert, winner="tie", margin=None)
    sign_in(page, live_server, expert)
    page.goto(f"{live_server.url}{url_of(cs, queue[-1])}")
    assert page.locator("#label-page").get_attribute("data-next-url") == ""
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("1")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    expect(page.locator(".messages")).to_contain_text("You have labelled every comparison")
    assert ExpertLabel.objects.filter(assignment__expert=expert).count() == len(queue)
