"""Each role's working day in the browser, shared by tests/browser/test_day.py and scripts/bench_day.py.

``day_prepare`` creates what one walk needs (on an empty test database or on the demo data); ``Walk`` is one
browser context at a width and language that records, on every page it visits, console errors, sideways scroll
and the server time of every document and XHR response; ``expert_day``, ``lead_day``, ``researcher_day`` and
``admin_day`` walk each role through the UI as a user would (clicks and keys), asserting what the pages show and
what is stored.
"""

import json
import tempfile
import zipfile
from io import StringIO
from pathlib import Path

from django.contrib.auth.models import AbstractBaseUser
from django.core.management import call_command
from playwright.sync_api import Browser, Page, expect

from annotation.items.models import Benchmark, Item
from annotation.labelling import services as comparisons
from annotation.labelling.models import Comparison, ComparisonSet, ExpertLabel, LabelAssignment
from annotation.releases import services as releases
from annotation.releases.models import Release
from annotation.screening import services as screening
from annotation.screening.models import Review, RoundItem, ScreeningRound
from calibration.models import CalibrationRun, Judge, JudgeSelection
from evaluation.models import EvaluationRun
from llm.models import Endpoint
from tests.factories import make_item, mcq_content
from tests.factories.labelling import make_labelled_comparison_set
from tests.factories.screening import make_review

FITS = "() => document.scrollingElement.scrollWidth <= document.scrollingElement.clientWidth"
# A worker runs the judges, the models and the reports: generous on a loaded machine.
WORK_TIMEOUT_MS = 180_000
REVISE_COMMENT = "Say whose feelings the question asks about."
REPLIES = (
    "That sounds hard; what happened when they cancelled?",
    "I'm really sorry to hear that. It's completely understandable to feel this way.",
    "Here are some steps:\n1. Rest\n2. Talk to them\n3. Plan something else",
)


def day_prepare(
    *,
    tag: str,
    version: str,
    expert: AbstractBaseUser,
    other_expert: AbstractBaseUser,
    lead: AbstractBaseUser,
    researcher: AbstractBaseUser,
    admin: AbstractBaseUser,
    judges: list[Judge],
) -> dict:
    """Create one walk's material, named after ``tag``: a round of two draft items the expert and ``other_expert``
    review (the other expert accepts the first and rejects the second, so that the second becomes a conflict when
    the expert accepts it), an open prompt with three replies and a set for the expert to label, a set both experts
    labelled (to calibrate the candidate ``judges`` on), and an empty draft release."""
    facet = Benchmark.objects.get(slug="facet")
    # The expert's own item, sent back to its author by an earlier round: the expert revises it.
    mine = make_item(uid=f"{tag}-mine", user=expert).uid
    returned = screening.round_open(
        benchmark=facet,
        title=f"Day earlier round {tag}",
        user=lead,
        reviewers=[other_expert, lead],
        reviewers_per_item=2,
        uids=[mine],
    )
    for reviewer in (other_expert, lead):
        make_review(round=returned, uid=mine, reviewer=reviewer, decision="revise", comment=REVISE_COMMENT)
    screening.round_close(round=returned, user=lead)
    uids = []
    for n in range(2):
        content = mcq_content()
        content["en"]["context"] = f"Day scenario {tag}-{n}: a friend cancels plans at the last minute."
        content["zh"]["context"] = f"日常情境{tag}-{n}：朋友在最后一刻取消了约定。"
        uids.append(make_item(uid=f"{tag}-draft-{n}", content=content, user=lead).uid)
    screening_round = screening.round_open(
        benchmark=facet,
        title=f"Day round {tag}",
        user=lead,
        reviewers=[expert, other_expert],
        reviewers_per_item=2,
        uids=uids,
    )
    make_review(round=screening_round, uid=uids[0], reviewer=other_expert, decision="accept")
    make_review(round=screening_round, uid=uids[1], reviewer=other_expert, decision="reject")
    prompt = make_item(
        uid=f"{tag}-open", kind="open_prompt", dimension="emotion_matching", user=lead, status="accepted"
    )
    make_item(uid=f"{tag}-accepted", user=lead, status="accepted")
    rows = [
        {"item": prompt.uid, "language": "en", "model": f"{tag}-m{n}", "text": f"{text} ({tag})"}
        for n, text in enumerate(REPLIES)
    ]
    comparisons.responses_import(data="".join(json.dumps(r) + "\n" for r in rows).encode(), user=lead)
    emotion_matching = list(facet.dimensions.filter(code="emotion_matching"))
    label_set = comparisons.comparison_set_build(
        name=f"Day set {tag}",
        benchmark=facet,
        experts=[expert],
        user=researcher,
        languages=("en",),
        dimensions=emotion_matching,
    )
    calibration_set = make_labelled_comparison_set(
        experts=[expert, other_expert],
        name=f"Day calibration set {tag}",
        user=lead,
        languages=("en",),
        dimensions=emotion_matching,
    )
    draft = releases.release_create(
        benchmark=facet,
        version=version,
        title=f"Day draft {tag}: the accepted items of the spring study",
        user=admin,
        filters={},
    )
    draft.entries.all().delete()
    return {
        "tag": tag,
        "round": screening_round,
        "uids": uids,
        "mine": mine,
        "set": label_set,
        "calibration_set": calibration_set,
        "judges": judges,
        "release": draft,
        "items": [prompt.uid, f"{tag}-accepted"],
    }


class Walk:
    """One browser context at a width and language, with what every page visited showed."""

    def __init__(self, browser: Browser, url: str, width: int, language: str, password: str) -> None:
        self.context = browser.new_context(locale="en-US", viewport={"width": width, "height": 800})
        self.page: Page = self.context.new_page()
        # Generous: the machine may be loaded (the first page of a fresh server takes its start-up).
        self.page.set_default_timeout(60_000)
        self.page.set_default_navigation_timeout(120_000)
        self.url, self.width, self.language, self.password = url, width, language, password
        self.errors: list[str] = []
        self.wide: list[str] = []
        self.visited: set[str] = set()
        # (server milliseconds, method, resource type, url): from the request's start to the response's first byte.
        self.timings: list[tuple[float, str, str, str]] = []
        self.page.on(
            "console", lambda m: self.errors.append(f"{self.page.url}: {m.text}") if m.type == "error" else None
        )
        self.page.on("pageerror", lambda e: self.errors.append(f"{self.page.url}: {e}"))
        self.page.on("requestfinished", self._timed)

    def _timed(self, request: object) -> None:
        if request.resource_type not in ("document", "xhr", "fetch"):
            return
        timing = request.timing
        if timing["requestStart"] >= 0 and timing["responseStart"] >= 0:
            server = timing["responseStart"] - timing["requestStart"]
            self.timings.append((round(server, 1), request.method, request.resource_type, request.url))

    @property
    def chinese(self) -> bool:
        return self.language != "en"

    def sign_in(self, user: AbstractBaseUser) -> None:
        # Leave the last page first: a request it still had in flight (a poll) could set a cookie after the clear
        # and make the sign-in form's CSRF token stale.
        self.page.goto("about:blank")
        self.context.clear_cookies()
        self.page.goto(f"{self.url}/login/")
        self.page.fill("#id_username", user.get_username())
        self.page.fill("#id_password", self.password)
        self.page.click("button[type=submit]")
        expect(self.page.locator(".who")).to_contain_text(user.get_username())
        if self.chinese:
            # app.js is deferred: until the page has loaded, a change of the select submits nothing.
            self.page.wait_for_load_state("load")
            with self.page.expect_navigation():
                self.page.select_option("#language-select", self.language)
        expect(self.page.locator("html")).to_have_attribute("lang", "zh-hans" if self.chinese else "en")
        self.check()

    def go(self, path: str) -> None:
        self.page.goto(f"{self.url}{path}")
        self.check()

    def check(self) -> None:
        """Wait for the page to load; note it if it scrolls sideways."""
        self.page.wait_for_load_state("load")
        self.visited.add(self.page.url)
        if not self.page.evaluate(FITS):
            self.wide.append(self.page.url)

    def submit(self, selector: str) -> None:
        """Click a button that submits a form and wait for the page it leads to."""
        with self.page.expect_navigation():
            self.page.click(selector)
        self.check()

    def download(self, selector: str) -> tuple[str, bytes]:
        with self.page.expect_download() as info:
            self.page.locator(selector).first.click()
        download = info.value
        return download.suggested_filename, Path(download.path()).read_bytes()

    def slowest(self, n: int = 10) -> list[tuple[float, str, str, str]]:
        return sorted(self.timings, reverse=True)[:n]

    def close(self) -> None:
        self.context.close()


def shown_pair(page: Page) -> str:
    return (
        page.locator("#response-left .response-text").inner_text()
        + "\n|\n"
        + page.locator("#response-right .response-text").inner_text()
    )


def expect_pair_change(page: Page, before: str) -> None:
    page.wait_for_function(
        """(before) => {
          const text = (id) => (document.querySelector(`#response-${id} .response-text`) || {}).innerText || "";
          return text("left") + "\\n|\\n" + text("right") !== before;
        }""",
        arg=before,
    )


def expect_pair(page: Page, shown: str) -> None:
    page.wait_for_function(
        """(shown) => {
          const text = (id) => (document.querySelector(`#response-${id} .response-text`) || {}).innerText || "";
          return text("left") + "\\n|\\n" + text("right") === shown;
        }""",
        arg=shown,
    )


def expert_day(walk: Walk, data: dict, expert: AbstractBaseUser) -> None:
    """Revise an item the reviewers sent back, review two items with the keys, then label with the keys, put one
    comparison aside and go back to the label given."""
    page = walk.page
    walk.sign_in(expert)
    walk.go("/")
    walk.go(f"/items/{data['mine']}/")
    expect(page.locator(".review-card").first).to_contain_text(REVISE_COMMENT)
    walk.submit("nav.tabs a[href$='/edit/']")
    question = "How does Mia, the friend who was let down, most likely feel?"
    page.fill("#en-question", question)
    page.fill("#id_message", "Revised after review: whose feelings")
    walk.submit("#save-revision")
    expect(page.locator(".history table")).to_contain_text("Revised after review")
    item = Item.objects.select_related("current_revision").get(uid=data["mine"])
    assert item.current_revision.number == 2 and item.current_revision.author_id == expert.pk
    assert item.current_revision.content["en"]["question"] == question
    walk.go(f"/screening/{data['round'].pk}/review/")
    for key in ["4", "5", "3", "3", "4", "4", "p", "a"]:
        page.keyboard.press(key)
    page.keyboard.press("Control+Enter")
    expect(page.locator("#progress-text")).to_have_text("1 / 2")
    # The next item is shown at once and the review sent in the background: wait until it is stored.
    expect(page.locator("main.page")).not_to_have_attribute("aria-busy", "true")
    walk.check()
    for key in ["4", "4", "4", "4", "4", "4", "p", "a"]:
        page.keyboard.press(key)
    with page.expect_navigation():
        page.keyboard.press("Control+Enter")
    walk.check()
    reviews = Review.objects.filter(
        assignment__round=data["round"], assignment__reviewer=expert, status=Review.Status.SUBMITTED
    )
    assert sorted(reviews.values_list("decision", flat=True)) == ["accept", "accept"]

    queue = LabelAssignment.objects.filter(comparison_set=data["set"], expert=expert)
    total = queue.count()
    walk.go(f"/labelling/{data['set'].pk}/next/")
    expect(page.locator("#progress-text")).to_have_text(f"0 / {total}")
    first = shown_pair(page)
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("2")
    page.keyboard.press("Enter")
    expect(page.locator("#progress-text")).to_have_text(f"1 / {total}")
    expect_pair_change(page, first)
    # The next comparison is shown at once and the label sent in the background: wait until it is stored.
    expect(page.locator("main.page")).not_to_have_attribute("aria-busy", "true")
    walk.check()
    label = ExpertLabel.objects.select_related("assignment__comparison__response_a").get(assignment__in=queue)
    # The left response won by two: A's signed score is +2 when A was shown on the left, -2 when it was on the right.
    left_is_a = label.shown_order == "AB"
    assert label.score == (2 if left_is_a else -2), (label.score, label.shown_order)
    assert (label.assignment.comparison.response_a.text in first.split("\n|\n")[0]) is left_is_a
    second = shown_pair(page)
    page.keyboard.press("s")  # put this one aside
    expect_pair_change(page, second)
    expect(page.locator("#progress-text")).to_have_text(f"1 / {total}")
    walk.check()
    assert queue.filter(skipped_at__isnull=False).count() == 1
    page.keyboard.press("b")  # back to the label given
    expect(page.locator("#label-existing")).to_be_visible()
    expect_pair(page, first)
    walk.check()
    assert ExpertLabel.objects.filter(assignment__in=queue).count() == 1


def lead_day(walk: Walk, data: dict, lead: AbstractBaseUser) -> None:
    """Close the round (the first item agreed, the second a conflict), then adjudicate the conflict with the keys."""
    page = walk.page
    walk.sign_in(lead)
    walk.go(f"/screening/{data['round'].pk}/")
    walk.submit("#close")
    assert ScreeningRound.objects.get(pk=data["round"].pk).status == ScreeningRound.Status.CLOSED
    conflict = RoundItem.objects.get(round=data["round"], item__uid=data["uids"][1])
    assert conflict.outcome == RoundItem.Outcome.CONFLICT
    walk.submit("#adjudicate-first")
    expect(page.locator("h1")).to_contain_text(data["uids"][1])
    page.keyboard.press("x")
    expect(page.locator("input[name=decision][value=reject]")).to_be_checked()
    page.keyboard.press("n")
    page.keyboard.type("The other reviewer is right: the key is ambiguous.")
    with page.expect_navigation():
        page.keyboard.press("Control+Enter")
    walk.check()
    conflict.refresh_from_db()
    assert conflict.outcome == RoundItem.Outcome.REJECT and conflict.adjudicated_by_id == lead.pk
    expect(page.locator("main")).to_contain_text(lead.get_username())
    walk.go("/")


def researcher_day(
    walk: Walk,
    data: dict,
    researcher: AbstractBaseUser,
    expert: AbstractBaseUser,
    models: list[Endpoint],
    release: Release,
) -> None:
    """Build a set and give it an attention check; calibrate the judges, compute the report, select the primary
    judge and download the report; evaluate two models with it, read the report and download a table."""
    page = walk.page
    tag = data["tag"]
    walk.sign_in(researcher)
    walk.go("/labelling/new/")
    page.fill("#id_name", f"Day built set {tag}")
    page.select_option("#id_benchmark", str(Benchmark.objects.get(slug="facet").pk))
    page.check(f"input[name=experts][value='{expert.pk}']")
    page.fill("#id_per_stratum", "2")
    walk.submit("form.stack button[type=submit]")
    built = ComparisonSet.objects.get(name=f"Day built set {tag}")
    expect(page.locator("main")).to_contain_text(built.name)
    first = Comparison.objects.filter(comparison_set=built).order_by("id").first()
    walk.go(f"/labelling/{built.pk}/data/")
    page.fill("#id_attention_checks", f"{first.pk} A")
    walk.submit("#attention-checks button[type=submit]")
    expect(page.locator("#attention-checks")).to_contain_text(f"#{first.pk}")
    expect(page.locator("#experts")).to_contain_text(expert.get_username())
    assert Comparison.objects.get(pk=first.pk).gold_winner == 1

    # Calibrate: both candidate judges on the set the experts labelled; a worker asks them.
    walk.go("/calibration/runs/new/")
    page.fill("#id_name", f"Day calibration {tag}")
    page.select_option("#id_comparison_set", str(data["calibration_set"].pk))
    for judge in data["judges"]:
        page.check(f"input[name=judges][value='{judge.pk}']")
    page.fill("#id_bootstrap", "50")
    walk.submit("form.stack button[type=submit]")
    run = CalibrationRun.objects.get(name=f"Day calibration {tag}")
    expect(page.locator("h1")).to_have_text(run.name)
    expect(page.locator("#compute-report")).to_be_visible(timeout=WORK_TIMEOUT_MS)
    walk.check()
    walk.submit("#compute-report")
    # The worker computes the report; the page reloads itself when it is ready.
    expect(page.locator("#select-judge")).to_be_visible(timeout=WORK_TIMEOUT_MS)
    walk.check()
    run.refresh_from_db()
    assert run.report and run.report_digest
    names = [judge.name for judge in data["judges"]]
    for name in names:
        expect(page.locator(".stratum").first).to_contain_text(name)
    suggested = run.report["suggestion"]["judge"]
    chosen = next(j for j in data["judges"] if j.name == (suggested or names[0]))
    page.select_option("#judge", str(chosen.pk))
    if page.locator("#override-rule").count() and suggested is None:
        page.check("#override-rule")
    page.fill("#reason", "The day's test: the suggested judge.")
    walk.submit("#select-judge")
    expect(page.locator("#selection")).to_contain_text(chosen.name)
    selection = JudgeSelection.objects.select_related("judge").first()
    assert selection.judge == chosen and selection.calibration_run_id == run.pk
    name, body = walk.download("a[href$='/report.csv']")
    assert name.endswith(".csv") and chosen.name.encode() in body, name
    name, body = walk.download("a[href$='/report.json']")
    assert json.loads(body)["suggestion"]["judge"] == suggested

    # Evaluate two models on the frozen release with the primary judge; a worker runs it and writes the report.
    walk.go("/evaluation/new/")
    expect(page.locator("main")).to_contain_text(chosen.name)
    page.fill("#id_name", f"Day evaluation {tag}")
    page.select_option("#id_release", str(release.pk))
    for endpoint in models:
        page.check(f"input[name=endpoints][value='{endpoint.pk}']")
    page.uncheck("input[name=languages][value=zh]")
    walk.submit("form.stack button[type=submit]")
    evaluation = EvaluationRun.objects.get(name=f"Day evaluation {tag}")
    assert evaluation.judge_id == chosen.pk
    expect(page.locator("#estimate")).to_be_visible()
    walk.submit("#start-run")
    expect(page.locator("#run-live")).to_have_attribute("data-phase", "done", timeout=WORK_TIMEOUT_MS)
    expect(page.locator("#leaderboard")).to_contain_text("M01")
    expect(page.locator("#leaderboard")).to_contain_text("M02")
    walk.check()
    evaluation.refresh_from_db()
    assert evaluation.phase == EvaluationRun.Phase.DONE and evaluation.report
    walk.go(f"/evaluation/{evaluation.pk}/")  # the report as read later, from a fresh load
    expect(page.locator("#ratings")).to_be_visible()
    name, body = walk.download("#report .page-head .actions a.button")
    assert body and name, name
    name, body = walk.download("a[href$='/answers.csv']")
    assert body.count(b"\n") > 1, body[:200]
    walk.go(f"/evaluation/{evaluation.pk}/drill/")


def admin_day(walk: Walk, data: dict, admin: AbstractBaseUser) -> None:
    """Add two accepted items to the draft release from the item list, freeze it, download the archive and check
    it with ``manage.py verify_release`` and the manifest digest the page shows."""
    page = walk.page
    walk.sign_in(admin)
    walk.go(f"/items/?status=accepted&q={data['tag']}")
    for uid in data["items"]:
        page.check(f"input[name=uids][value='{uid}']")
    page.select_option("#bulk-release-select", str(data["release"].pk))
    walk.submit("#bulk-release button")
    release = Release.objects.get(pk=data["release"].pk)
    assert set(release.entries.values_list("item__uid", flat=True)) == set(data["items"])
    walk.go(f"/releases/facet/{release.version}/")
    page.fill("#override_reason", "A day's test release.")
    page.check("#confirm-freeze")
    walk.submit("#freeze")
    release.refresh_from_db()
    assert release.status == Release.Status.FROZEN
    expect(page.locator("#checksums")).to_contain_text("manifest.json")
    digest = page.locator("#manifest-digest code").inner_text().split("--manifest-sha256")[-1].strip()
    name, body = walk.download("#download")
    assert name.endswith(".zip"), name
    with tempfile.TemporaryDirectory() as folder:
        archive = Path(folder) / name
        archive.write_bytes(body)
        with zipfile.ZipFile(archive) as unpacked:
            unpacked.extractall(Path(folder) / "export")
        manifest = next((Path(folder) / "export").rglob("manifest.json"))
        out = StringIO()
        call_command("verify_release", str(manifest.parent), "--manifest-sha256", digest, stdout=out)
    assert "passed" in out.getvalue() and "FAILED" not in out.getvalue(), out.getvalue()
    walk.go("/releases/?status=frozen")
    expect(page.locator("main")).to_contain_text(release.version)


def walk_the_day(walk: Walk, data: dict, users: dict, models: list[Endpoint], release: Release) -> None:
    """Every role's day, one after the other, in one browser context."""
    expert_day(walk, data, users["expert"])
    lead_day(walk, data, users["lead"])
    researcher_day(walk, data, users["researcher"], users["expert"], models, release)
    admin_day(walk, data, users["admin"])
    assert Judge.objects.filter(pk__in=[j.pk for j in data["judges"]]).count() == len(data["judges"])
