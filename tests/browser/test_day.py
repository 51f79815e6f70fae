"""Each role's working day in the browser, on a laptop in English and on a phone in Chinese: the expert reviews with
keys, labels with keys, skips and goes back; the lead closes the round; the researcher sets attention checks and
reads each expert's statistics; the admin adds checked items to a draft release from the item list and freezes it.
No console error, and no page scrolls sideways."""

import json

import pytest
from playwright.sync_api import expect

from annotation.items.models import Benchmark
from annotation.labelling import services as comparisons
from annotation.labelling.models import Comparison, ExpertLabel
from annotation.releases import services as releases
from annotation.releases.models import Release
from annotation.screening import services as screening
from annotation.screening.criteria import default_criteria_create
from annotation.screening.models import Criterion, Review, ScreeningRound
from tests.browser.test_item_edit import sign_in
from tests.factories import make_item, mcq_content

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FITS = "() => document.scrollingElement.scrollWidth <= window.innerWidth"


@pytest.fixture
def day(taxonomy, lead, expert, researcher, admin_user):
    default_criteria_create(Criterion)  # a data migration's rows, gone after an earlier transactional test's flush
    for n in range(2):
        content = mcq_content()
        content["en"]["context"] = f"Day scenario {n}: a friend cancels plans at the last minute."
        make_item(uid=f"day-draft-{n}", content=content, user=lead)
    screening_round = screening.round_open(
        benchmark=Benchmark.objects.get(slug="facet"),
        title="Day round",
        user=lead,
        reviewers=[expert],
        reviewers_per_item=1,
    )
    prompt = make_item(uid="day-open", kind="open_prompt", dimension="emotion_matching", user=lead, status="accepted")
    make_item(uid="day-accepted", user=lead, status="accepted")
    rows = [
        {"item": prompt.uid, "language": "en", "model": name, "text": f"Reply {n}: that sounds hard; what happened?"}
        for n, name in enumerate(["m1", "m2", "m3"])
    ]
    comparisons.responses_import(data="".join(json.dumps(r) + "\n" for r in rows).encode(), user=lead)
    comparison_set = comparisons.comparison_set_build(
        name="Day set",
        benchmark=Benchmark.objects.get(slug="facet"),
        experts=[expert],
        user=researcher,
        languages=("en",),
    )
    draft = releases.release_create(
        benchmark=Benchmark.objects.get(slug="facet"), version="9.0.0", title="Day draft", user=admin_user, filters={}
    )
    draft.entries.all().delete()
    return {"round": screening_round, "set": comparison_set, "release": draft}


class Day:
    """One browser context at a width and language; every page visited is checked for sideways scroll."""

    def __init__(self, browser, live_server, width: int, language: str) -> None:
        self.context = browser.new_context(locale="en-US", viewport={"width": width, "height": 800})
        self.page = self.context.new_page()
        self.page.set_default_timeout(20000)
        self.url, self.language, self.errors, self.wide = live_server.url, language, [], []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.live_server = live_server

    def sign_in(self, user) -> None:
        # Leave the last page first: a request it still had in flight (a poll) could set a cookie after the clear
        # and make the sign-in form's CSRF token stale.
        self.page.goto("about:blank")
        self.context.clear_cookies()
        sign_in(self.page, self.live_server, user)
        if self.language != "en":
            with self.page.expect_navigation():
                self.page.select_option("#language-select", self.language)

    def go(self, path: str) -> None:
        self.page.goto(f"{self.url}{path}")
        self.check()

    def check(self) -> None:
        self.page.wait_for_load_state("load")
        if not self.page.evaluate(FITS):
            self.wide.append(self.page.url)


@pytest.mark.parametrize(("width", "language"), [(1366, "en"), (390, "zh-hans")])
def test_each_role_walks_its_day(browser, live_server, day, expert, lead, researcher, admin_user, width, language):
    walk = Day(browser, live_server, width, language)
    page = walk.page

    # The expert: the home page, a review with the keys, then labelling with keys, skip and back.
    walk.sign_in(expert)
    walk.go("/")
    walk.go(f"/screening/{day['round'].pk}/review/")
    for key in ["4", "5", "3", "3", "4", "4", "p", "a"]:
        page.keyboard.press(key)
    page.keyboard.press("Control+Enter")
    expect(page.locator("#progress-text")).to_have_text("1 / 2")
    walk.check()
    for key in ["4", "4", "4", "4", "4", "4", "p", "a"]:
        page.keyboard.press(key)
    with page.expect_navigation():
        page.keyboard.press("Control+Enter")
    walk.check()
    assert Review.objects.filter(status=Review.Status.SUBMITTED).count() == 2
    walk.go(f"/labelling/{day['set'].pk}/next/")
    expect(page.locator("#progress-text")).to_have_text("0 / 3")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("2")
    page.keyboard.press("Enter")
    expect(page.locator("#progress-text")).to_have_text("1 / 3")
    walk.check()
    skipped_url = page.url
    with page.expect_navigation():
        page.keyboard.press("s")  # put this one aside
    assert page.url != skipped_url
    walk.check()
    with page.expect_navigation():
        page.keyboard.press("b")  # back to the label given
    expect(page.locator("#label-existing")).to_be_visible()
    walk.check()
    assert ExpertLabel.objects.count() == 1

    # The lead: close the round (every item reviewed and accepted).
    walk.sign_in(lead)
    walk.go(f"/screening/{day['round'].pk}/")
    with page.expect_navigation():
        page.click("#close")
    walk.check()
    assert ScreeningRound.objects.get(pk=day["round"].pk).status == ScreeningRound.Status.CLOSED
    walk.go("/")

    # The researcher: an attention check on the set, and each expert's statistics.
    walk.sign_in(researcher)
    first = Comparison.objects.filter(comparison_set=day["set"]).order_by("id").first()
    walk.go(f"/labelling/{day['set'].pk}/data/")
    page.fill("#id_attention_checks", f"{first.pk} A")
    with page.expect_navigation():
        page.click("#attention-checks button[type=submit]")
    walk.check()
    expect(page.locator("#attention-checks")).to_contain_text(f"#{first.pk}")
    expect(page.locator("#experts")).to_contain_text(expert.username)
    assert Comparison.objects.get(pk=first.pk).gold_winner == 1
    walk.go("/labelling/?q=day")

    # The admin: check two accepted items on the item list, add them to the draft release, freeze it.
    walk.sign_in(admin_user)
    walk.go("/items/?status=accepted")
    for uid in ("day-open", "day-accepted"):
        page.check(f"input[name=uids][value={uid}]")
    page.select_option("#bulk-release-select", str(day["release"].pk))
    with page.expect_navigation():
        page.click("#bulk-release button")
    walk.check()
    release = Release.objects.get(pk=day["release"].pk)
    assert set(release.entries.values_list("item__uid", flat=True)) == {"day-open", "day-accepted"}
    walk.go(f"/releases/facet/{release.version}/")
    page.fill("#override_reason", "A day's test release.")
    page.check("#confirm-freeze")
    with page.expect_navigation():
        page.click("#freeze")
    walk.check()
    assert Release.objects.get(pk=release.pk).status == Release.Status.FROZEN
    walk.go("/releases/?status=frozen")

    walk.context.close()
    assert not walk.wide, walk.wide
    assert not walk.errors, walk.errors
