"""Reviewing at the expert's pace, as labelling (test_labelling_flow.py): on Ctrl+Enter the next item of the round,
fetched ahead, is shown in the same document while the review is posted in the background; a refused (409) or
unsent review brings the expert back to it; the keys work on each item shown in place and no autosave is sent
after a submit."""

import pytest
from playwright.sync_api import expect

from annotation.items.models import Benchmark
from annotation.screening import services as screening
from annotation.screening.criteria import default_criteria_create
from annotation.screening.models import Criterion, Review, ReviewAssignment
from tests.browser.test_item_edit import sign_in
from tests.browser.test_labelling_flow import WATCH, fetched_ahead, refuse_posts, sent
from tests.factories import REVIEW_SCORES, make_item

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ACCEPT = ["4", "5", "3", "3", "4", "4", "p", "a"]  # six scores, pass on the answer key, accept


# Every autosave the page opens and every form submitted, on the document's clock (one document throughout).
AUTOSAVES = """
window.__autosaves = [];
window.__submits = [];
const open = XMLHttpRequest.prototype.open;
XMLHttpRequest.prototype.open = function (method, url) {
  if (String(url).includes("/autosave/")) window.__autosaves.push({ url: String(url), at: performance.now() });
  return open.apply(this, arguments);
};
document.addEventListener("submit", (event) => {
  window.__submits.push({ action: event.target.action || "", at: performance.now() });
}, true);
"""


@pytest.fixture
def queue(taxonomy, lead, expert):
    default_criteria_create(Criterion)  # a data migration's rows, gone after an earlier transactional test's flush
    for n in range(4):
        make_item(uid=f"flow-{n}", user=lead)
    round = screening.round_open(
        benchmark=Benchmark.objects.get(slug="facet"), title="Flow", user=lead, reviewers=[expert], reviewers_per_item=1
    )
    return round, list(ReviewAssignment.objects.filter(round_item__round=round).order_by("position"))


def url_of(assignment: ReviewAssignment) -> str:
    return f"/screening/{assignment.round_item.round_id}/review/{assignment.pk}/"


def press(page, keys: list[str]) -> None:
    for key in keys:
        page.keyboard.press(key)


def test_ctrl_enter_shows_the_next_item_in_place_and_stores_the_review(page, live_server, queue, expert):
    round, (first, second, third, fourth) = queue
    page.add_init_script(WATCH)
    page.add_init_script(AUTOSAVES)
    errors, autosaves = [], []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("response", lambda r: autosaves.append((r.url, r.status)) if "/autosave/" in r.url else None)
    sign_in(page, live_server, expert)
    page.goto(f"{live_server.url}{url_of(first)}")
    fetched_ahead(page, url_of(second))
    assert not Review.objects.filter(assignment=second).exists()  # fetched ahead: nothing written for it
    entries = page.evaluate("history.length")
    page.evaluate("window.__sameDocument = true; window.__shifts = []")

    press(page, ACCEPT)
    page.keyboard.press("Control+Enter")
    expect(page.locator("#review-page")).to_have_attribute("data-url", url_of(second))
    assert page.url == f"{live_server.url}{url_of(second)}"
    expect(page.locator("h1")).to_contain_text("flow-1")
    expect(page.locator("#progress-text")).to_have_text("1 / 4")
    expect(page.locator("#review-back")).to_have_attribute("href", url_of(first))
    sent(page)
    assert page.evaluate("window.__sameDocument") is True
    assert page.evaluate("performance.getEntriesByType('navigation').length") == 1
    assert page.evaluate("history.length") == entries + 1  # one history entry an item
    assert page.evaluate("window.__shifts") == []
    review = Review.objects.get(assignment=first)
    assert review.status == Review.Status.SUBMITTED and review.decision == "accept" and review.scores == REVIEW_SCORES

    # The keys work on the item shown in place (J/K, scores, R, C appends); a comment typed just before the
    # submit sends no autosave after it.
    fetched_ahead(page, url_of(third))
    press(page, ["3", "3", "3", "3", "3", "3", "k", "2", "p", "r"])
    expect(page.locator("#decision-revise")).to_be_checked()
    page.keyboard.press("c")
    page.keyboard.type("The options overlap.")
    page.keyboard.press("Escape")
    page.keyboard.press("Control+Enter")
    expect(page.locator("#review-page")).to_have_attribute("data-url", url_of(third))
    sent(page)
    expect(page.locator("#progress-text")).to_have_text("2 / 4")
    assert page.evaluate("history.length") == entries + 2
    assert page.evaluate("window.__sameDocument") is True
    revised = Review.objects.get(assignment=second)
    assert revised.status == Review.Status.SUBMITTED and revised.decision == "revise"
    assert revised.comment == "The options overlap." and revised.scores["option_quality"] == 2
    page.wait_for_timeout(2500)  # longer than the autosave's delays: a pending one would have been sent by now
    assert all(status == 200 for _url, status in autosaves), autosaves
    submitted = [s["at"] for s in page.evaluate("window.__submits") if s["action"].endswith(url_of(second))]
    assert submitted, page.evaluate("window.__submits")
    late = [a for a in page.evaluate("window.__autosaves") if url_of(second) in a["url"] and a["at"] > submitted[0]]
    assert not late, late  # no autosave of the item opened after its submit
    assert Review.objects.get(assignment=second).comment == "The options overlap."

    # ? shows the keys; S puts the item shown in place aside (a page load), U goes back to the review given last.
    page.keyboard.press("Shift+?")
    expect(page.locator("#shortcuts")).to_be_visible()
    page.keyboard.press("Shift+?")
    expect(page.locator("#shortcuts")).to_be_hidden()
    with page.expect_navigation():
        page.keyboard.press("s")
    expect(page.locator("h1")).to_contain_text("flow-3")
    expect(page.locator("#skipped-list")).to_contain_text("flow-2")
    assert ReviewAssignment.objects.get(pk=third.pk).skipped_at is not None
    page.keyboard.press("u")
    page.wait_for_url(f"{live_server.url}{url_of(second)}")
    expect(page.locator("#review-existing")).to_be_visible()
    expect(page.locator("#decision-revise")).to_be_checked()
    assert not errors, errors


def test_a_review_submitted_meanwhile_brings_the_expert_back_with_the_409(page, live_server, queue, expert):
    round, (first, second, *_rest) = queue
    answers = []
    page.on("response", lambda r: answers.append(r.status) if r.request.method == "POST" else None)
    sign_in(page, live_server, expert)
    page.goto(f"{live_server.url}{url_of(first)}")
    fetched_ahead(page, url_of(second))
    # The same item reviewed meanwhile in another tab: the POST answers 409 and nothing is replaced.
    screening.review_submit(
        round_item=first.round_item, reviewer=expert, scores=REVIEW_SCORES, decision="reject", comment="Other tab."
    )
    press(page, ACCEPT)
    page.keyboard.press("Control+Enter")
    expect(page.locator("#review-error")).to_contain_text("You already reviewed this item in this round.")
    expect(page.locator("#review-page")).to_have_attribute("data-url", url_of(first))
    assert page.url == f"{live_server.url}{url_of(first)}"
    assert 409 in answers, answers
    expect(page.locator("#decision-accept")).to_be_checked()  # what the expert chose is still there
    review = Review.objects.get(assignment=first)
    assert review.decision == "reject" and review.comment == "Other tab."
    assert Review.objects.filter(assignment__reviewer=expert, status=Review.Status.SUBMITTED).count() == 1
    # The item shown for a moment was never drafted.
    assert not Review.objects.filter(assignment=second).exists()


def test_an_unsent_review_restores_the_item_and_sends_again(page, live_server, queue, expert):
    round, (first, second, *_rest) = queue
    sign_in(page, live_server, expert)
    page.goto(f"{live_server.url}{url_of(first)}")
    fetched_ahead(page, url_of(second))
    target = f"{live_server.url}{url_of(first)}"

    page.route(target, refuse_posts)
    press(page, ACCEPT)
    page.keyboard.press("c")
    page.keyboard.type("Clear and plausible.")
    page.keyboard.press("Escape")
    page.keyboard.press("Control+Enter")
    expect(page.locator(".messages .msg-error")).to_contain_text("could not be sent")
    expect(page.locator("#review-page")).to_have_attribute("data-url", url_of(first))
    assert page.url == target
    expect(page.locator("#decision-accept")).to_be_checked()
    expect(page.locator(".criterion input:checked")).to_have_count(len(REVIEW_SCORES))
    expect(page.locator("#comment")).to_have_value("Clear and plausible.")
    assert not Review.objects.filter(assignment=first, status=Review.Status.SUBMITTED).exists()

    page.unroute(target, refuse_posts)
    fetched_ahead(page, url_of(second))
    page.keyboard.press("Control+Enter")
    expect(page.locator("#review-page")).to_have_attribute("data-url", url_of(second))
    sent(page)
    review = Review.objects.get(assignment=first)
    assert review.status == Review.Status.SUBMITTED and review.comment == "Clear and plausible."
    assert review.scores == REVIEW_SCORES
    expect(page.locator(".messages")).to_have_count(0)


def test_an_incomplete_review_is_posted_as_before_and_shows_its_errors(page, live_server, queue, expert):
    round, (first, second, *_rest) = queue
    sign_in(page, live_server, expert)
    page.goto(f"{live_server.url}{url_of(first)}")
    fetched_ahead(page, url_of(second))
    press(page, ["4", "4", "r"])  # two scores and revise without a comment
    with page.expect_navigation():
        page.keyboard.press("Control+Enter")
    expect(page.locator("#review-error")).to_contain_text("Score every criterion first")
    assert page.url == f"{live_server.url}{url_of(first)}"
    assert not Review.objects.filter(assignment=first, status=Review.Status.SUBMITTED).exists()
