import pytest
from playwright.sync_api import expect

from annotation.items.models import Benchmark
from annotation.screening import services as screening
from annotation.screening.criteria import default_criteria_create
from annotation.screening.models import Criterion, Review, ReviewAssignment, ReviewChange
from tests.browser.test_item_edit import sign_in
from tests.browser.test_labelling_flow import sent
from tests.factories import REVIEW_SCORES, make_item

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_reviewer_skips_goes_back_and_changes_a_submitted_review(page, live_server, taxonomy, lead, expert):
    default_criteria_create(Criterion)
    for n in range(3):
        make_item(uid=f"undo-{n}", user=lead)
    round = screening.round_open(
        benchmark=Benchmark.objects.get(slug="facet"), title="Undo", user=lead, reviewers=[expert], reviewers_per_item=1
    )
    first, second, third = ReviewAssignment.objects.filter(round_item__round=round).order_by("position")
    screening.review_submit(round_item=first.round_item, reviewer=expert, scores=REVIEW_SCORES, decision="accept")

    sign_in(page, live_server, expert)
    page.goto(f"{live_server.url}/screening/{round.pk}/review/")
    expect(page.locator("h1")).to_contain_text("undo-1")
    page.click("#review-skip")
    expect(page.locator("h1")).to_contain_text("undo-2")
    expect(page.locator("#skipped-list")).to_contain_text("undo-1")

    page.click("#review-back")
    expect(page.locator("h1")).to_contain_text("undo-0")
    expect(page.locator("#review-existing")).to_be_visible()
    expect(page.locator("#decision-accept")).to_be_checked()
    page.click("#decision-revise")
    page.fill("#comment", "Option B fits as well.")
    page.click("#submit-review")
    expect(page.locator("h1")).to_contain_text("undo-2")
    expect(page.locator("#progress-text")).to_have_text("1 / 3")
    sent(page)  # the next item is shown in place while the change is posted in the background

    review = Review.objects.get(assignment=first)
    assert review.decision == "revise" and review.comment == "Option B fits as well."
    change = ReviewChange.objects.get(review=review)
    assert change.old["decision"] == "accept" and change.seconds_spent is not None
    assert ReviewAssignment.objects.get(pk=second.pk).skipped_at is not None
