import json

import pytest
from playwright.sync_api import expect

from annotation.items.models import Benchmark
from annotation.labelling import services as comparisons
from annotation.labelling.models import ExpertLabel, LabelAssignment, LabelChange
from tests.browser.test_item_edit import sign_in
from tests.browser.test_labelling_flow import sent
from tests.factories import make_item

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_expert_labels_two_comparisons_with_the_keyboard(page, live_server, taxonomy, lead, expert):
    item = make_item(uid="lab-1", kind="open_prompt", dimension="emotion_matching", user=lead, status="accepted")
    rows = [
        {"item": item.uid, "language": "en", "model": name, "text": f"Reply {n}: I'm sorry it hurts so much."}
        for n, name in enumerate(["m1", "m2", "m3"])
    ]
    comparisons.responses_import(data="".join(json.dumps(r) + "\n" for r in rows).encode(), user=lead)
    cs = comparisons.comparison_set_build(
        name="kbd", benchmark=Benchmark.objects.get(slug="facet"), experts=[expert], user=lead, languages=("en",)
    )
    sign_in(page, live_server, expert)
    page.goto(f"{live_server.url}/labelling/{cs.pk}/next/")
    expect(page.locator("#progress-text")).to_have_text("0 / 3")
    first = LabelAssignment.objects.get(pk=int(page.url.rstrip("/").rsplit("/", 1)[1]))
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("3")
    page.keyboard.press("r")
    page.keyboard.type("Names the feeling.")
    page.keyboard.press("Escape")
    page.keyboard.press("Enter")
    expect(page.locator("#progress-text")).to_have_text("1 / 3")
    page.keyboard.press("t")
    expect(page.locator("#margin-1")).to_be_disabled()
    page.keyboard.press("Enter")
    expect(page.locator("#progress-text")).to_have_text("2 / 3")
    sent(page)

    label = ExpertLabel.objects.get(assignment=first)
    assert label.score == (3 if first.shown_order == "AB" else -3)
    assert label.rationale == "Names the feeling." and label.seconds_spent is not None
    assert ExpertLabel.objects.filter(score=0).count() == 1

    # Undo: back to the tie just given, change it to "right ++", and continue where the queue left off.
    third_url = page.url
    page.click("#label-back")
    expect(page.locator("#label-existing")).to_be_visible()
    expect(page.locator("#winner-tie")).to_be_checked()
    tied = LabelAssignment.objects.get(pk=int(page.url.rstrip("/").rsplit("/", 1)[1]))
    page.keyboard.press("ArrowRight")
    page.keyboard.press("2")
    page.keyboard.press("Enter")
    expect(page.locator("#progress-text")).to_have_text("2 / 3")
    assert page.url == third_url
    sent(page)
    relabelled = ExpertLabel.objects.get(assignment=tied)
    assert relabelled.score == (-2 if tied.shown_order == "AB" else 2)
    change = LabelChange.objects.get(label=relabelled)
    assert change.old_score == 0 and change.new_score == relabelled.score and change.seconds_spent is not None

    # Skip: the last open comparison is put aside and, being the only one left, comes back.
    page.click("#label-skip")
    expect(page.locator("#progress-text")).to_have_text("2 / 3")
    assert page.url == third_url
    assert LabelAssignment.objects.get(pk=int(third_url.rstrip("/").rsplit("/", 1)[1])).skipped_at is not None


def test_keys_skip_go_back_and_show_the_list_and_no_autosave_follows_a_submit(
    page, live_server, taxonomy, lead, expert
):
    item = make_item(uid="lab-keys", kind="open_prompt", dimension="emotion_matching", user=lead, status="accepted")
    rows = [
        {"item": item.uid, "language": "en", "model": name, "text": f"Reply {n}: that sounds hard."}
        for n, name in enumerate(["k1", "k2", "k3"])
    ]
    comparisons.responses_import(data="".join(json.dumps(r) + "\n" for r in rows).encode(), user=lead)
    cs = comparisons.comparison_set_build(
        name="keys", benchmark=Benchmark.objects.get(slug="facet"), experts=[expert], user=lead, languages=("en",)
    )
    errors = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    sign_in(page, live_server, expert)
    page.goto(f"{live_server.url}/labelling/{cs.pk}/next/")
    first_url = page.url
    # ? shows the list of keys, and again hides it.
    page.keyboard.press("Shift+?")
    expect(page.locator("#shortcuts")).to_be_visible()
    page.keyboard.press("Shift+?")
    expect(page.locator("#shortcuts")).to_be_hidden()
    # S puts the comparison aside: the next one is shown.
    page.keyboard.press("s")
    page.wait_for_url(lambda url: url != first_url)
    assert LabelAssignment.objects.get(pk=int(first_url.rstrip("/").rsplit("/", 1)[1])).skipped_at is not None
    # R focuses the rationale with the caret after what is written: typing appends.
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("2")
    page.fill("#rationale", "Warm")
    page.locator("#rationale").evaluate("field => field.blur()")
    page.keyboard.press("r")
    page.keyboard.type(" and specific.")
    expect(page.locator("#rationale")).to_have_value("Warm and specific.")
    page.keyboard.press("Escape")
    labelled_url = page.url
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: url != labelled_url)
    # B goes back to the label just given, to change it.
    page.keyboard.press("b")
    page.wait_for_url(labelled_url)
    expect(page.locator("#label-existing")).to_be_visible()
    assert ExpertLabel.objects.get(assignment_id=int(labelled_url.rstrip("/").rsplit("/", 1)[1])).rationale == (
        "Warm and specific."
    )
    assert not [e for e in errors if "Content Security Policy" in e or "400" in e], errors
