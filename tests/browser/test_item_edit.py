import re

import pytest
from playwright.sync_api import expect

from annotation.items.models import Item
from tests.factories import PASSWORD, make_item

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def sign_in(page, live_server, user) -> None:
    page.goto(f"{live_server.url}/login/")
    page.fill("#id_username", user.username)
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    expect(page.locator(".who")).to_contain_text(user.username)


def test_expert_edits_chinese_text_and_sees_new_revision_with_diff(page, live_server, taxonomy, expert):
    item = make_item(uid="browser-edit-1", user=expert)
    sign_in(page, live_server, expert)

    page.goto(f"{live_server.url}/items/")
    page.click("text=browser-edit-1")
    expect(page.locator(".lang-zh")).to_contain_text("米娅最可能有什么感受？")
    page.click("nav.tabs >> text=Edit")

    page.fill("#zh-question", "米娅此刻最可能有什么感受？")
    page.fill("#id_message", "Clarify the Chinese question")
    page.click("#save-revision")

    expect(page).to_have_url(re.compile(r"/items/browser-edit-1/history/\?a=1&b=2$"))
    expect(page.locator("#diff-title")).to_contain_text("r1")
    inserted = page.locator(".diff.lang-zh ins")
    expect(inserted).to_have_text(["此刻"])
    expect(page.locator(".diff.lang-en ins")).to_have_count(0)
    expect(page.locator(".history table")).to_contain_text("Clarify the Chinese question")

    item.refresh_from_db()
    assert item.current_revision.number == 2
    assert item.current_revision.author == expert
    assert item.current_revision.content["zh"]["question"] == "米娅此刻最可能有什么感受？"
    assert Item.objects.get(uid="browser-edit-1").revisions.count() == 2
