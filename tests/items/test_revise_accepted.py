"""A revision of an accepted item sends it back to draft, recorded with the reason, so that no release pins text
that was never screened: through the service, the editor page, the API and imports alike."""

import json

from annotation.items import services
from annotation.items.models import Item, StatusDecision
from annotation.releases.models import ReleaseItem
from tests.factories import make_frozen_release, make_item, mcq_content
from tests.items.test_views import editor_form

REVISION = StatusDecision.Source.REVISION


def accepted_item(uid: str, lead) -> Item:
    item = make_item(uid=uid, user=lead)
    services.item_status_decide(
        item=item, status="accepted", user=lead, reason="meets every criterion", source="lead_decision"
    )
    item.refresh_from_db()
    return item


def reworded(question: str) -> dict:
    content = mcq_content()
    content["en"]["question"] = question
    content["zh"]["question"] = "米娅现在可能有什么感受？"
    return content


def last_decision(item: Item) -> StatusDecision:
    return item.status_decisions.order_by("-id").first()


def test_revising_an_accepted_item_returns_it_to_draft_with_the_reason_recorded(taxonomy, lead, expert):
    item = accepted_item("ra-service", lead)
    state = services.ItemState(dimension=item.dimension, content=reworded("What might Mia feel now?"))

    revision = services.item_revise(item=item, state=state, user=expert, message="new wording")

    assert revision.number == 2
    item.refresh_from_db()
    assert item.status == "draft"
    decision = last_decision(item)
    assert (decision.from_status, decision.to_status, decision.source) == ("accepted", "draft", REVISION)
    assert decision.decided_by == expert
    assert decision.reference == {"revision": 2}
    assert "Revision 2 changed an accepted item" in decision.reason


def test_saving_an_accepted_item_unchanged_keeps_it_accepted(taxonomy, lead, expert):
    item = accepted_item("ra-same", lead)
    state = services.ItemState(dimension=item.dimension, content=mcq_content())

    assert services.item_revise(item=item, state=state, user=expert) is None

    item.refresh_from_db()
    assert item.status == "accepted"
    assert not item.status_decisions.filter(source=REVISION).exists()


def test_revising_a_draft_records_no_status_decision(taxonomy, expert):
    item = make_item(uid="ra-draft", user=expert)
    state = services.ItemState(dimension=item.dimension, content=reworded("What might Mia feel now?"))

    services.item_revise(item=item, state=state, user=expert)

    assert list(item.status_decisions.values_list("source", flat=True)) == ["created"]


def test_a_release_built_after_the_revision_leaves_the_unscreened_item_out(taxonomy, lead, expert):
    kept = accepted_item("ra-kept", lead)
    revised = accepted_item("ra-revised", lead)
    state = services.ItemState(dimension=revised.dimension, content=reworded("What might Mia feel now?"))
    services.item_revise(item=revised, state=state, user=expert)

    release = make_frozen_release(version="2.0.0", user=lead)

    pinned = set(ReleaseItem.objects.filter(release=release).values_list("item__uid", flat=True))
    assert pinned == {kept.uid}


def test_the_editor_warns_before_and_after_saving_an_accepted_item(taxonomy, lead, expert, login):
    item = accepted_item("ra-page", lead)
    client = login(expert)

    before = client.get("/items/ra-page/edit/").content.decode()
    assert 'id="accepted-notice"' in before
    response = client.post("/items/ra-page/edit/", editor_form(item, **{"en-question": "What might Mia feel now?"}))

    assert response.status_code == 302
    item.refresh_from_db()
    assert item.status == "draft"
    page = client.get(response["Location"]).content.decode()
    assert "Revision 2 changed an accepted item" in page
    detail = client.get("/items/ra-page/").content.decode()
    assert "revision after acceptance" in detail and "revision 2" in detail


def test_the_editor_of_a_draft_shows_no_acceptance_notice(taxonomy, expert, login):
    make_item(uid="ra-page-draft", user=expert)

    assert 'id="accepted-notice"' not in login(expert).get("/items/ra-page-draft/edit/").content.decode()


def test_revising_an_accepted_item_through_the_api_returns_it_to_draft(taxonomy, lead, expert, login):
    accepted_item("ra-api", lead)
    body = {
        "dimension": "hidden_emotion_recognition",
        "content": reworded("What might Mia feel now?"),
        "message": "via the API",
        "base_revision": 1,
    }

    response = login(expert).post("/api/items/ra-api/revise/", data=json.dumps(body), content_type="application/json")

    assert response.status_code == 200, response.content
    assert response.json()["status"] == "draft"
    assert last_decision(Item.objects.get(uid="ra-api")).source == REVISION


def record(uid: str, content: dict, **fields: object) -> bytes:
    line = {
        "format": "eistudio-item/1",
        "uid": uid,
        "benchmark": "facet",
        "dimension": "hidden_emotion_recognition",
        "kind": "mcq",
        "origin": "expert",
        "content": content,
        **fields,
    }
    return (json.dumps(line, ensure_ascii=False) + "\n").encode("utf-8")


def test_reimporting_new_text_for_an_accepted_item_returns_it_to_draft(taxonomy, lead, expert):
    item = accepted_item("ra-import", lead)

    report = services.items_import(data=record("ra-import", reworded("What might Mia feel now?")), user=expert)

    assert report.revised == ["ra-import"]
    item.refresh_from_db()
    assert item.status == "draft"
    decision = last_decision(item)
    assert (decision.from_status, decision.to_status, decision.source) == ("accepted", "draft", REVISION)
    assert decision.reference == {"revision": 2}


def test_reimporting_the_same_text_keeps_an_accepted_item_accepted(taxonomy, lead, expert):
    item = accepted_item("ra-import-same", lead)

    services.items_import(data=record("ra-import-same", mcq_content()), user=expert)

    item.refresh_from_db()
    assert item.status == "accepted"


def test_new_text_marked_accepted_in_the_file_still_returns_the_item_to_draft(taxonomy, lead):
    # An exported file says "accepted" for every accepted item: editing its text and importing it back must not
    # accept the new, unscreened text.
    item = accepted_item("ra-import-lead", lead)
    data = record("ra-import-lead", reworded("What might Mia feel now?"), status="accepted")

    services.items_import(data=data, user=lead)

    item.refresh_from_db()
    assert item.status == "draft"
    assert last_decision(item).source == REVISION
