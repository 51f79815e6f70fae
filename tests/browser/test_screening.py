import pytest
from playwright.sync_api import expect

from annotation.items.models import Benchmark, Item
from annotation.screening import services as screening
from annotation.screening.criteria import default_criteria_create
from annotation.screening.models import Criterion, Review, RoundItem
from tests.browser.test_item_edit import sign_in
from tests.browser.test_labelling_flow import sent
from tests.factories import make_item, mcq_content

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def criteria(db):
    """Restore the default criteria (a data migration) that transactional tests flush away."""
    default_criteria_create(Criterion)


def test_reviewer_completes_a_review_with_the_keyboard_only(page, live_server, taxonomy, criteria, lead, expert):
    make_item(uid="kbd-1", user=lead)
    content = mcq_content()
    content["en"]["context"] = "A different scenario entirely, at a train station."
    make_item(uid="kbd-2", content=content, user=lead)
    round = screening.round_open(
        benchmark=Benchmark.objects.get(slug="facet"),
        title="Keyboard",
        user=lead,
        reviewers=[expert],
        reviewers_per_item=1,
    )
    sign_in(page, live_server, expert)
    page.goto(f"{live_server.url}/screening/{round.pk}/review/")
    expect(page.locator("h1")).to_contain_text("kbd-1")
    expect(page.locator("#progress-text")).to_have_text("0 / 2")
    for key in ["4", "5", "3", "3", "4", "4", "p"]:  # six scores and pass on the answer key, in order
        page.keyboard.press(key)
    page.keyboard.press("a")
    page.keyboard.press("c")
    page.keyboard.type("Clear and plausible.")
    page.keyboard.press("Escape")
    expect(page.locator("#autosave-status")).to_have_text("Draft saved", timeout=10000)
    page.keyboard.press("Control+Enter")
    expect(page.locator("h1")).to_contain_text("kbd-2")
    expect(page.locator("#progress-text")).to_have_text("1 / 2")
    sent(page)  # the next item is shown in place while the review is posted in the background

    review = Review.objects.get(assignment__round_item__item__uid="kbd-1")
    assert review.status == "submitted" and review.decision == "accept"
    assert review.comment == "Clear and plausible."
    assert review.scores == {
        "scenario_plausibility": 4,
        "linguistic_clarity": 5,
        "emotional_ambiguity": 3,
        "difficulty_level": 3,
        "coverage": 4,
        "option_quality": 4,
        "answer_key_correctness": "pass",
    }

    # On the second item: C puts the caret after the comment already written, so typing appends to it; a change
    # submitted at once (before its autosave's delay ran out) sends no autosave after the submit.
    autosaves = []
    page.on("response", lambda r: autosaves.append(r.status) if "/autosave/" in r.url else None)
    page.fill("#comment", "Plausible")
    page.locator("#comment").evaluate("field => field.blur()")
    page.keyboard.press("c")
    page.keyboard.type(", but the options overlap.")
    expect(page.locator("#comment")).to_have_value("Plausible, but the options overlap.")
    page.keyboard.press("Escape")
    for key in ["3", "3", "3", "3", "3", "3", "p", "r"]:
        page.keyboard.press(key)
    page.keyboard.press("Control+Enter")
    expect(page.locator("#comment")).to_have_count(0)  # the round's last item: its page is left
    page.wait_for_timeout(2500)  # longer than the autosave's delays: a pending one would have been sent by now
    assert 400 not in autosaves, autosaves
    second = Review.objects.get(assignment__round_item__item__uid="kbd-2")
    assert second.status == "submitted" and second.comment == "Plausible, but the options overlap."


def test_lead_expert_adjudicates_a_conflict_seeing_all_reviews(page, live_server, taxonomy, criteria, lead, make_user):
    reviewers = [make_user("expert", username="amy"), make_user("expert", username="bo")]
    make_item(uid="conf-1", user=lead)
    round = screening.round_open(
        benchmark=Benchmark.objects.get(slug="facet"),
        title="Conflict",
        user=lead,
        reviewers=reviewers,
        reviewers_per_item=2,
    )
    ri = RoundItem.objects.get(round=round)
    scores = {c.code: ("pass" if c.scale == "pass_fail" else 3) for c in screening.criteria_for(round, ri.item)}
    screening.review_submit(round_item=ri, reviewer=reviewers[0], scores=scores, decision="accept")
    screening.review_submit(
        round_item=ri, reviewer=reviewers[1], scores=scores, decision="reject", comment="Key is off"
    )
    screening.round_close(round=round, user=lead)

    sign_in(page, live_server, lead)
    page.goto(f"{live_server.url}/screening/{round.pk}/")
    expect(page.locator("#alpha")).to_be_visible()
    page.click("#adjudicate-first")
    cards = page.locator(".review-card")
    expect(cards).to_have_count(2)
    expect(cards.nth(0)).to_contain_text("amy")
    expect(cards.nth(1)).to_contain_text("Key is off")
    page.keyboard.press("r")
    page.keyboard.press("n")
    page.keyboard.type("Fix the key, then screen again.")
    page.keyboard.press("Control+Enter")
    expect(page.locator(".messages")).to_contain_text("Decision recorded for conf-1")

    ri.refresh_from_db()
    assert (ri.outcome, ri.adjudicated_by, ri.adjudication_note) == ("revise", lead, "Fix the key, then screen again.")
    assert Item.objects.get(uid="conf-1").status == "draft"
