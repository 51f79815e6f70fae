"""The EiCAP audit in a browser: an expert accepts, rejects and edits replies in place (htmx), then expands."""

import pytest
from playwright.sync_api import expect

from annotation.items.models import Item, Reply
from tests.browser.test_item_edit import sign_in
from tests.factories import make_reply_set

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_expert_audits_a_reply_set_and_expands_it(page, live_server, taxonomy, expert):
    reply_set = make_reply_set(uid="br-rs-1", user=expert, turns=1)
    # Preferred replies first, as the page shows them.
    replies = list(Reply.objects.filter(turn__reply_set=reply_set).order_by("-role", "position"))
    sign_in(page, live_server, expert)
    page.goto(f"{live_server.url}/reply-sets/{reply_set.uid}/")

    first = page.locator(f"#reply-{replies[0].pk}")
    first.locator("button[value=accept]").click()
    expect(page.locator(f"#reply-{replies[0].pk} .badge.audit")).to_have_text("accepted")

    second = page.locator(f"#reply-{replies[1].pk}")
    second.locator("button[value=reject]").click()
    expect(page.locator(f"#reply-{replies[1].pk} .error")).to_contain_text("Say why")
    second = page.locator(f"#reply-{replies[1].pk}")
    second.locator("input[name=reason]").fill("Too much like a distractor.")
    second.locator("button[value=reject]").click()
    expect(page.locator(f"#reply-{replies[1].pk} .badge.audit")).to_have_text("rejected")

    third = page.locator(f"#reply-{replies[2].pk}")
    third.locator("summary").first.click()
    area = third.locator("textarea[name=text_en]")
    area.fill(area.input_value() + " Take your time.")
    third.locator("button[value=edit]").click()
    expect(page.locator(f"#reply-{replies[2].pk} .badge.audit")).to_have_text("edited and accepted")
    expect(page.locator(f"#reply-{replies[2].pk} .reply-history ins")).to_have_count(1)

    for reply in replies[3:]:
        page.locator(f"#reply-{reply.pk} button[value=accept]").click()
        expect(page.locator(f"#reply-{reply.pk} .badge.audit")).to_have_text("accepted")
    page.click("#expand")
    expect(page.locator("#probes")).to_contain_text("br-rs-1-p1")
    # Preferred reply 2 was rejected: probes 1 and 3 only.
    assert sorted(Item.objects.values_list("uid", flat=True)) == ["br-rs-1-p1", "br-rs-1-p3"]
    assert Reply.objects.get(pk=replies[2].pk).current_revision.number == 2
