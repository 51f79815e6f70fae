"""The searchable picker: an expert finds emotions by typing (in either language), keeps earlier choices, and saves."""

import pytest
from playwright.sync_api import expect

from annotation.items.models import Item
from tests.browser.test_item_edit import sign_in
from tests.factories import make_item

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_expert_picks_several_emotions_and_a_scenario_by_search(page, live_server, taxonomy, expert):
    errors = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    make_item(uid="browser-pick", user=expert)
    sign_in(page, live_server, expert)
    page.goto(f"{live_server.url}/items/browser-pick/edit/")

    emotions = page.locator("#id_emotions-search")
    expect(page.locator("#id_emotions")).to_be_hidden()
    emotions.click()
    emotions.fill("joy")
    expect(page.locator(".picker-option.active")).to_have_text("Joy")
    emotions.press("Enter")
    # A second choice, found by its Chinese name, does not drop the first (as a plain click in a multi-select would).
    emotions.fill("兴奋")
    page.locator(".picker-option", has_text="Excitement").click()
    chips = page.locator("#id_emotions").locator("xpath=..").locator(".picker-chip")
    expect(chips).to_have_count(2)
    # Backspace in the empty search box removes the last chip.
    emotions.fill("")
    emotions.press("Backspace")
    expect(chips).to_have_count(1)

    scenario = page.locator("#id_scenario-search")
    scenario.fill("bullying")
    scenario.press("Enter")
    expect(page.locator("#id_scenario").locator("xpath=..").locator(".picker-chip")).to_contain_text("School Bullying")

    page.fill("#id_message", "Label it")
    page.click("#save-revision")
    expect(page.locator("#diff-title")).to_be_visible()
    item = Item.objects.get(uid="browser-pick")
    assert [e.code for e in item.emotions.all()] == ["joy"]
    assert item.scenario.code == "school_bullying"
    assert not [e for e in errors if "Content Security Policy" in e]


def test_seed_items_are_found_through_the_items_api_and_written_as_uids(page, live_server, taxonomy, lead):
    make_item(uid="seed-browser-1", user=lead)
    make_item(uid="seed-browser-2", user=lead)
    sign_in(page, live_server, lead)
    page.goto(f"{live_server.url}/drafting/")
    search = page.locator("#id_t-seed_items-search")
    search.fill("seed-browser-2")
    expect(page.locator(".picker-option", has_text="seed-browser-2")).to_be_visible()
    search.press("Enter")
    search.fill("seed-browser-1")
    page.locator(".picker-option", has_text="seed-browser-1").click()
    assert page.locator("#id_t-seed_items").input_value() == "seed-browser-2 seed-browser-1"
    expect(page.locator("#id_t-seed_items").locator("xpath=..").locator(".picker-chip")).to_have_count(2)
