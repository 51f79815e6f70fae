"""EiCAP's whole protocol once, through its pages, with the simulator and real workers (the issue's done-when):
an expert drafts reply sets with the simulator and audits them, a lead expands them into probes, a researcher has a
second simulated judge validate the keys, an admin freezes the release, the researcher evaluates two models by
log-probability and one by letter choice and reads every EiCAP analysis on the report page in English and Chinese.

Every step is a page: drafting (/drafting/), the audit (/reply-sets/<uid>/), the expansion (/reply-sets/), the key
validation (/calibration/key-validation/), the release (/releases/new/ and its freeze form) and the evaluation
(/evaluation/new/, then Start). Workers (``manage.py db_worker``) answer the LLM runs, as in production.
"""

import re

import pytest
from playwright.sync_api import expect

from annotation.items.models import Dimension, Item, ItemTemplate, KeyValidation, Reply, ReplySet
from annotation.releases.models import Release
from evaluation.models import EvaluationRun
from tests.browser.test_item_edit import sign_in
from tests.workers import wait_for_workers_ready, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

# (leaf, user turns): a two-turn set for the turn decomposition, a one-turn set in another layer.
LEAVES = (("two_turn_context_tracking", 2), ("basic_emotion_labels", 1))
NUMBER = re.compile(r"\d\.\d{3}")
PERCENT = re.compile(r"\d+\.\d\d")


def switch_user(page, live_server, user) -> None:  # noqa: ANN001
    page.goto("about:blank")
    page.context.clear_cookies()
    sign_in(page, live_server, user)


def draft(page, url: str, drafter) -> None:  # noqa: ANN001
    """Write a reply-set template per leaf and start a drafting job of one reply set with it, in both languages."""
    for code, turns in LEAVES:
        leaf = Dimension.objects.get(benchmark__slug="eicap", code=code)
        page.goto(f"{url}/drafting/")
        page.select_option("#id_t-dimension", str(leaf.pk))
        page.select_option("#id_t-kind", "reply_set")
        page.fill("#id_t-instructions", "Everyday situations a person brings to a supportive assistant.")
        page.click("button:has-text('Save template version')")
        expect(page.locator("body")).to_contain_text("Saved")
        template = ItemTemplate.objects.get(dimension=leaf, kind="reply_set")
        page.select_option("#id_j-template", str(template.pk))
        page.select_option("#id_j-endpoint", str(drafter.pk))
        page.fill("#id_j-count", "1")
        page.check("input[name='j-languages'][value='en']")
        page.check("input[name='j-languages'][value='zh']")
        page.select_option("#id_j-turns", str(turns))
        page.click("button:has-text('Draft candidates')")
        expect(page).to_have_url(re.compile(r"/drafting/jobs/\d+/$"))


def audit(page, url: str, reply_set: ReplySet, *, edit: bool) -> None:  # noqa: ANN001
    """Accept every reply of a set on its page; with ``edit``, edit its first preferred reply instead."""
    page.goto(f"{url}/reply-sets/{reply_set.uid}/")
    replies = list(Reply.objects.filter(turn__reply_set=reply_set).order_by("turn__number", "-role", "position"))
    for n, reply in enumerate(replies):
        box = page.locator(f"#reply-{reply.pk}")
        if edit and n == 0:
            box.locator("summary").first.click()
            area = box.locator("textarea[name=text_en]")
            area.fill(area.input_value() + " Take your time.")
            box.locator("button[value=edit]").click()
            expect(page.locator(f"#reply-{reply.pk} .badge.audit")).to_have_text("edited and accepted")
        else:
            box.locator("button[value=accept]").click()
            expect(page.locator(f"#reply-{reply.pk} .badge.audit")).to_have_text("accepted")


def read_the_report(page) -> None:  # noqa: ANN001
    """Every EiCAP analysis is on the page with numbers, in whatever language the page is in."""
    section = page.locator("#eicap")
    expect(section).to_be_visible()
    for figure in ("heatmap", "turns", "agreement", "margins"):  # drawn by the worker that finished the run
        image = page.locator(f"#figure-eicap_{figure}_en img")
        expect(image).to_have_attribute("src", re.compile(r"^data:image/(svg\+xml|png);base64,"))
        image.scroll_into_view_if_needed()
        expect(image).to_be_visible()
    summary = page.locator("#eicap-summary tbody")
    # Macro, micro and chance in per cent; Sig. as "better / tested" for the models compared with a baseline.
    expect(summary).to_contain_text(PERCENT)
    # Sig./N: the tuned model against the base model, significantly better in k of the two subcategories.
    assert summary.locator("tr", has_text="M02").count() == 2  # English and Chinese
    for row in range(2):
        sig = summary.locator("tr", has_text="M02").nth(row).locator("td").nth(7)
        expect(sig).to_have_text(re.compile(r"^\s*\d\s*/\s*2\s*$"))
    for code in ("M01", "M02", "M03"):
        expect(summary).to_contain_text(code)
    # Letter choice is reported apart: marked † and said not to be comparable.
    expect(summary).to_contain_text("†")
    expect(page.locator("#eicap-not-comparable")).to_be_visible()
    expect(page.locator("#eicap-layers tbody")).to_contain_text(NUMBER)
    turns = page.locator("#eicap-turns tbody")
    expect(turns).to_contain_text(NUMBER)
    assert turns.locator("tr").count() == 3 * 2  # three models, two languages
    margins = page.locator("#eicap-margins tbody")
    expect(margins).to_contain_text(NUMBER)
    assert margins.locator("tr").count() == 2 * 2  # log-probability models only
    agreement = page.locator("#eicap-agreement tbody")
    expect(agreement).to_contain_text("M01 · M02")
    expect(agreement).not_to_contain_text("M03")  # no agreement across protocols
    expect(agreement).to_contain_text(NUMBER)
    page.locator("#eicap-significance summary").click()
    expect(page.locator("#eicap-significance tbody")).to_contain_text(NUMBER)
    page.locator("#eicap details summary").last.click()
    subcategories = page.locator("#eicap-subcategories tbody")
    expect(subcategories).to_contain_text(NUMBER)
    assert subcategories.locator("tr").count() == 3 * 2 * 2  # models x languages x subcategories


def test_an_eicap_set_is_drafted_audited_validated_frozen_evaluated_and_read(
    page, live_server, taxonomy, expert, lead, researcher, admin_user, make_endpoint, workers
):
    url = live_server.url
    page.set_default_timeout(60_000)  # a loaded machine, with workers writing to the same database
    drafter = make_endpoint("sim-drafter", name="drafter", for_drafting=True)
    judge = make_endpoint("sim-mcq-acc90", name="second judge")
    # The form lists endpoints by name, and codes follow that order: the base model is M01, the baseline.
    endpoints = [
        make_endpoint("sim-base", api_style="completions", name="1 base model"),
        make_endpoint("sim-tuned", api_style="completions", name="2 tuned model"),
        make_endpoint("sim-mcq-acc70", name="3 chat-only model"),
    ]
    # 1. The expert drafts one reply set per leaf with the simulator and audits every reply.
    sign_in(page, live_server, expert)
    workers.start()
    wait_for_workers_ready(workers)
    draft(page, url, drafter)
    wait_until(lambda: ReplySet.objects.filter(benchmark__slug="eicap").count() == 2, 240, "two reply sets drafted")
    for n, reply_set in enumerate(ReplySet.objects.filter(benchmark__slug="eicap").order_by("pk")):
        audit(page, url, reply_set, edit=n == 0)
    page.goto(f"{url}/reply-sets/")
    expect(page.locator("body")).to_contain_text("audited")

    # 2. The lead expands every audited set into probes, accepted as built (the audit stands for screening).
    switch_user(page, live_server, lead)
    page.goto(f"{url}/reply-sets/")
    page.check("input[name=accept]")
    page.click("#expand-all")
    probes = Item.objects.filter(benchmark__slug="eicap", kind="multi_turn_choice")
    wait_until(lambda: probes.filter(status="accepted").count() == 6, 60, "six accepted probes")

    # 3. The researcher has a second simulated judge, of another family, validate the keys.
    switch_user(page, live_server, researcher)
    page.goto(f"{url}/calibration/key-validation/")
    page.select_option("#id_benchmark", str(probes.first().benchmark_id))
    page.select_option("#id_endpoint", str(judge.pk))
    page.click("button:has-text('Validate the keys')")
    expect(page.locator("#kappa")).to_contain_text("Cohen's kappa", timeout=240_000)
    expect(page.locator("#kappa")).to_contain_text(NUMBER)
    assert KeyValidation.objects.get().collected

    # 4. The admin builds the release from the accepted probes and freezes it.
    switch_user(page, live_server, admin_user)
    page.goto(f"{url}/releases/new/")
    page.select_option("#id_benchmark", str(probes.first().benchmark_id))
    page.fill("#id_version", "1.0.0")
    page.fill("#id_title", "EiCAP probes, one day's work")
    page.click("button:has-text('Create draft release')")
    expect(page.locator("body")).to_contain_text("created with 6 items")
    page.fill("#override_reason", "Six probes: far below EiCAP's per-subcategory targets.")
    page.check("#confirm-freeze")
    page.click("#freeze")
    release = Release.objects.get(benchmark__slug="eicap", version="1.0.0")
    wait_until(lambda: Release.objects.get(pk=release.pk).status == Release.Status.FROZEN, 30, "the release frozen")

    # 5. The researcher evaluates two models by log-probability and one by letter choice (protocol mixed).
    switch_user(page, live_server, researcher)
    page.goto(f"{url}/evaluation/new/")
    page.fill("#id_name", "EiCAP day")
    page.select_option("#id_release", str(release.pk))
    for endpoint in endpoints:
        page.check(f"input[name=endpoints][value='{endpoint.pk}']")
    page.check("input[name=languages][value='en']")
    page.check("input[name=languages][value='zh']")
    page.select_option("#id_protocol", EvaluationRun.Protocol.MIXED)
    page.fill("#id_judge_override_reason", "Probes only: no open items to judge.")
    page.click("button:has-text('Create and see the estimate')")
    expect(page).to_have_url(re.compile(r"/evaluation/\d+/$"))
    run = EvaluationRun.objects.get(name="EiCAP day")
    page.click("#start-run")
    expect(page.locator("#run-phase")).to_have_text("done", timeout=300_000)
    run.refresh_from_db()
    assert [r["protocol"] for r in run.report["eicap"]["protocols"]] == ["logprob", "logprob", "letter"]

    # 6. Every analysis is on the report page, in English and then in Chinese.
    page.goto(f"{url}/evaluation/{run.pk}/")
    expect(page.locator("#eicap h2")).to_have_text("EiCAP analyses of the multi-turn choice probes")
    read_the_report(page)
    page.wait_for_load_state("load")  # app.js is deferred: it submits the select's change once loaded
    with page.expect_navigation():
        page.select_option("#language-select", "zh-hans")
    page.goto(f"{url}/evaluation/{run.pk}/")
    expect(page.locator("#eicap h2")).to_have_text("多轮选择探针的 EiCAP 分析")
    expect(page.locator("#eicap")).to_contain_text("两轮探针的轮次分解")
    expect(page.locator("#eicap")).to_contain_text("模型间一致率")
    expect(page.locator("#eicap")).to_contain_text("得分差")
    expect(page.locator("#eicap-summary thead")).to_contain_text("显著更好 / 子类别数")
    read_the_report(page)
