"""Item statuses change only through the workflow: screening outcomes, or a lead expert's or admin's recorded
decision with a reason; the API and imports refuse a status from an expert; the item page shows every decision."""

import json

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import IntegrityError, transaction

from annotation.items import services
from annotation.items.models import Item, ItemRevision, StatusDecision
from annotation.screening import services as screening
from annotation.screening.models import RoundItem
from tests.factories import make_item, make_review, make_screening_round, mcq_content

LEAD_DECISION = StatusDecision.Source.LEAD_DECISION


def record(uid: str, **overrides: object) -> dict:
    base = {
        "format": "eistudio-item/1",
        "uid": uid,
        "benchmark": "facet",
        "dimension": "hidden_emotion_recognition",
        "kind": "mcq",
        "origin": "expert",
        "content": mcq_content(),
    }
    base.update(overrides)
    return base


def jsonl(*records: dict) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")


def trail(item: Item) -> list[tuple[str, str, str]]:
    return [(d.from_status, d.to_status, d.source) for d in item.status_decisions.order_by("id")]


def post_json(client, path: str, body: dict):
    return client.post(path, data=json.dumps(body), content_type="application/json")


def accept(item: Item, user, reason: str = "meets every criterion") -> StatusDecision:
    return services.item_status_decide(item=item, status="accepted", user=user, reason=reason, source=LEAD_DECISION)


# --- the service ------------------------------------------------------------------------------------------


def test_a_created_item_is_a_draft_with_its_creation_recorded(taxonomy, expert):
    item = make_item(uid="st-new", user=expert)

    assert item.status == "draft"
    (decision,) = item.status_decisions.all()
    assert (decision.from_status, decision.to_status, decision.source) == ("", "draft", "created")
    assert decision.decided_by == expert


def test_a_lead_decision_sets_the_status_and_records_who_when_and_why(taxonomy, lead, expert):
    item = make_item(uid="st-lead", user=expert)

    decision = accept(item, lead, reason="  Clear scenario, unambiguous key.  ")

    item.refresh_from_db()
    assert item.status == "accepted" and item.updated_by == lead
    assert (decision.from_status, decision.to_status, decision.source) == ("draft", "accepted", "lead_decision")
    assert decision.decided_by == lead
    assert decision.reason == "Clear scenario, unambiguous key."
    assert decision.created_at is not None
    assert item.revisions.count() == 1, "a status decision is not a content change"


def test_an_admin_may_decide_too(taxonomy, admin_user, expert):
    item = make_item(uid="st-admin", user=expert)
    services.item_status_decide(
        item=item, status="rejected", user=admin_user, reason="duplicate of st-1", source=LEAD_DECISION
    )
    item.refresh_from_db()
    assert item.status == "rejected"


@pytest.mark.parametrize("role", ["expert", "researcher"])
def test_an_expert_or_researcher_cannot_decide_a_status(taxonomy, make_user, role):
    item = make_item(uid="st-refused", user=make_user("lead_expert", username="author"))
    user = make_user(role, username=f"st-{role}")

    with pytest.raises(services.StatusDecisionForbidden, match="lead expert or an admin"):
        accept(item, user)

    item.refresh_from_db()
    assert item.status == "draft"
    assert trail(item) == [("", "draft", "created")]


def test_a_lead_decision_without_a_reason_is_refused(taxonomy, lead):
    item = make_item(uid="st-noreason", user=lead)

    with pytest.raises(ValidationError) as excinfo:
        accept(item, lead, reason="   ")

    assert "reason" in excinfo.value.message_dict
    item.refresh_from_db()
    assert item.status == "draft" and item.status_decisions.count() == 1


def test_a_lead_decision_does_not_put_items_in_screening_nor_decide_items_in_screening(taxonomy, lead, expert):
    item = make_item(uid="st-screen", user=expert)
    with pytest.raises(ValidationError, match="only screening rounds put items in screening"):
        services.item_status_decide(
            item=item, status="in_screening", user=lead, reason="skip the round", source=LEAD_DECISION
        )

    make_screening_round(user=lead, reviewers=[expert], reviewers_per_item=1)
    item.refresh_from_db()
    assert item.status == "in_screening"
    with pytest.raises(ValidationError, match="its round decides it"):
        accept(item, lead)
    item.refresh_from_db()
    assert item.status == "in_screening"


def test_deciding_the_status_an_item_already_has_is_refused(taxonomy, lead):
    item = make_item(uid="st-same", user=lead)
    with pytest.raises(ValidationError, match="already draft"):
        services.item_status_decide(item=item, status="draft", user=lead, reason="again", source=LEAD_DECISION)
    assert item.status_decisions.count() == 1


def test_status_decisions_are_a_permanent_record(taxonomy, lead):
    item = make_item(uid="st-permanent", user=lead)
    decision = accept(item, lead)

    decision.reason = "rewritten"
    with pytest.raises(ValidationError, match="permanent record"):
        decision.save()
    with pytest.raises(ValidationError, match="permanent record"):
        decision.delete()
    with pytest.raises(ValidationError, match="permanent record"):
        StatusDecision.objects.filter(pk=decision.pk).update(reason="rewritten")
    decision.refresh_from_db()
    assert decision.reason == "meets every criterion"


def test_the_database_refuses_a_decision_outside_screening_without_a_reason(taxonomy, lead):
    item = make_item(uid="st-db", user=lead)
    with pytest.raises(IntegrityError), transaction.atomic():
        StatusDecision.objects.create(
            item=item, from_status="draft", to_status="accepted", source=LEAD_DECISION, reason="", decided_by=lead
        )


def test_the_database_refuses_a_decision_that_changes_nothing(taxonomy, lead):
    item = make_item(uid="st-db-same", user=lead)
    with pytest.raises(IntegrityError), transaction.atomic():
        StatusDecision.objects.create(
            item=item, from_status="draft", to_status="draft", source=LEAD_DECISION, reason="x", decided_by=lead
        )


def test_roles_lead_experts_and_admins_may_decide_statuses(make_user):
    allowed = {
        role: make_user(role, username=f"r-{role}").has_perm("items.decide_status")
        for role in ("researcher", "expert", "lead_expert", "admin")
    }
    assert allowed == {"researcher": False, "expert": False, "lead_expert": True, "admin": True}


# --- screening outcomes -----------------------------------------------------------------------------------


def test_screening_opens_closes_and_adjudicates_through_recorded_decisions(taxonomy, lead, expert, make_user):
    second = make_user("expert", username="expert2")
    for uid in ("sc-accept", "sc-reject", "sc-conflict"):
        make_item(uid=uid, user=lead)
    round = make_screening_round(user=lead, reviewers=[expert, second], reviewers_per_item=2)
    for reviewer in (expert, second):
        make_review(round=round, uid="sc-accept", reviewer=reviewer, decision="accept")
        make_review(round=round, uid="sc-reject", reviewer=reviewer, decision="reject")
    make_review(round=round, uid="sc-conflict", reviewer=expert, decision="accept")
    make_review(round=round, uid="sc-conflict", reviewer=second, decision="reject")

    screening.round_close(round=round, user=lead, note="first pass")
    conflict = RoundItem.objects.get(round=round, item__uid="sc-conflict")
    screening.round_item_adjudicate(round_item=conflict, user=lead, decision="accept", note="the key holds")

    accepted = Item.objects.get(uid="sc-accept")
    assert accepted.status == "accepted"
    assert trail(accepted) == [
        ("", "draft", "created"),
        ("draft", "in_screening", "screening"),
        ("in_screening", "accepted", "screening"),
    ]
    opened, closed = accepted.status_decisions.filter(source="screening").order_by("id")
    assert opened.reference == {"round": round.pk, "number": round.number}
    assert closed.reference["outcome"] == "accept" and closed.reference["adjudicated"] is False
    assert closed.decided_by == lead and closed.reason == "first pass"
    assert Item.objects.get(uid="sc-reject").status == "rejected"
    adjudicated = Item.objects.get(uid="sc-conflict").status_decisions.order_by("id").last()
    assert (adjudicated.from_status, adjudicated.to_status) == ("in_screening", "accepted")
    assert adjudicated.reference["adjudicated"] is True and adjudicated.reference["round_item"] == conflict.pk
    assert adjudicated.reason == "the key holds"


# --- import -----------------------------------------------------------------------------------------------


def test_an_expert_import_creates_drafts(taxonomy, expert):
    report = services.items_import(data=jsonl(record("im-1"), record("im-2", status="draft")), user=expert)

    assert report.created == ["im-1", "im-2"]
    assert set(Item.objects.values_list("status", flat=True)) == {"draft"}
    assert not StatusDecision.objects.exclude(source="created").exists()


def test_an_expert_cannot_import_an_accepted_item_and_nothing_is_written(taxonomy, expert):
    data = jsonl(record("im-ok"), record("im-accepted", status="accepted"))

    with pytest.raises(services.ImportFailed) as excinfo:
        services.items_import(data=data, user=expert)

    (error,) = excinfo.value.errors
    assert (error.line, error.field) == (2, "status")
    assert "only a lead expert or an admin may import an item as accepted" in error.message
    assert Item.objects.count() == 0 and ItemRevision.objects.count() == 0 and StatusDecision.objects.count() == 0


def test_an_expert_import_never_changes_the_status_of_an_existing_item(taxonomy, lead, expert):
    item = make_item(uid="im-existing", user=lead)
    accept(item, lead)
    edited = mcq_content()
    edited["en"]["question"] = "How does Mia feel?"

    with pytest.raises(services.ImportFailed) as excinfo:
        services.items_import(data=jsonl(record("im-existing", status="draft", content=edited)), user=expert)

    (error,) = excinfo.value.errors
    assert (error.line, error.field) == (1, "status")
    assert "item im-existing is accepted" in error.message
    item.refresh_from_db()
    assert item.status == "accepted" and item.revisions.count() == 1


def test_an_expert_import_of_new_text_returns_an_accepted_item_to_draft_and_then_keeps_it(taxonomy, lead, expert):
    item = make_item(uid="im-keep", user=lead)
    accept(item, lead)
    edited = mcq_content()
    edited["en"]["question"] = "How does Mia feel?"

    revised = services.items_import(data=jsonl(record("im-keep", content=edited)), user=expert)
    again = services.items_import(data=jsonl(record("im-keep", status="draft", content=edited)), user=expert)

    assert revised.revised == ["im-keep"] and again.unchanged == ["im-keep"]
    item.refresh_from_db()
    # The new text has not been screened (tests/items/test_revise_accepted.py has the rule on every path).
    assert item.status == "draft"
    assert trail(item) == [
        ("", "draft", "created"),
        ("draft", "accepted", "lead_decision"),
        ("accepted", "draft", "revision"),
    ]


def test_an_expert_import_keeps_an_accepted_item_accepted_when_the_text_is_the_same(taxonomy, lead, expert):
    item = make_item(uid="im-same", user=lead)
    accept(item, lead)

    again = services.items_import(data=jsonl(record("im-same", status="accepted")), user=expert)

    assert again.unchanged == ["im-same"]
    item.refresh_from_db()
    assert item.status == "accepted"
    assert trail(item) == [("", "draft", "created"), ("draft", "accepted", "lead_decision")]


def test_a_lead_import_of_accepted_items_is_recorded_as_import_decisions(taxonomy, lead):
    services.items_import(data=jsonl(record("im-a"), record("im-b", status="accepted")), user=lead)

    item = Item.objects.get(uid="im-b")
    assert item.status == "accepted"
    assert trail(item) == [("", "draft", "created"), ("draft", "accepted", "import")]
    decision = item.status_decisions.get(source="import")
    assert decision.decided_by == lead
    assert decision.reference == {"format": "eistudio", "line": 2, "revision": 1}
    assert "line 2" in decision.reason
    assert Item.objects.get(uid="im-a").status == "draft"


def test_a_lead_reimport_with_another_status_is_recorded_and_without_one_keeps_it(taxonomy, lead):
    services.items_import(data=jsonl(record("im-re", status="accepted")), user=lead)
    services.items_import(data=jsonl(record("im-re")), user=lead)
    assert Item.objects.get(uid="im-re").status == "accepted"

    services.items_import(data=jsonl(record("im-re", status="rejected")), user=lead)

    item = Item.objects.get(uid="im-re")
    assert item.status == "rejected"
    assert trail(item)[-1] == ("accepted", "rejected", "import")


def test_a_dry_run_records_no_decision(taxonomy, lead):
    services.items_import(data=jsonl(record("im-dry", status="accepted")), user=lead, dry_run=True)
    assert StatusDecision.objects.count() == 0


def test_reimporting_emobench_keeps_items_accepted_by_a_lead(taxonomy, lead, expert):
    row = {
        "qid": "1",
        "language": "en",
        "category": "Personal-Others",
        "question type": "Action",
        "scenario": "Sarah's brother is bullied at school and begs her not to tell their parents.",
        "subject": "Sarah",
        "choices": ["Keep the secret", "Tell their parents", "Confront the bullies", "Suggest a counselor"],
        "label": "Suggest a counselor",
    }
    data = jsonl(row)
    services.items_import(data=data, user=expert, format="emobench")
    item = Item.objects.get(uid="emobench-ea-1")
    assert item.status == "draft"
    accept(item, lead)

    report = services.items_import(data=data, user=expert, format="emobench")

    assert report.unchanged == ["emobench-ea-1"]
    item.refresh_from_db()
    assert item.status == "accepted"


def test_the_import_command_refuses_a_status_from_an_expert(taxonomy, expert, tmp_path):
    path = tmp_path / "items.jsonl"
    path.write_bytes(jsonl(record("cmd-1", status="accepted")))

    with pytest.raises(CommandError, match="nothing was imported"):
        call_command("import_items", str(path), user=expert.username)

    assert not Item.objects.filter(uid="cmd-1").exists()


# --- API --------------------------------------------------------------------------------------------------


def api_create_body(uid: str = "api-st", **overrides: object) -> dict:
    body = record(uid, message="first draft")
    del body["format"], body["origin"]
    body.update(overrides)
    return body


def test_an_expert_cannot_create_an_accepted_item_through_the_api(taxonomy, expert, login):
    response = post_json(login(expert), "/api/items/", api_create_body(status="accepted"))

    assert response.status_code == 400
    (message,) = response.json()["status"]
    assert "Only a lead expert or an admin" in message and "accepted" in message
    assert not Item.objects.filter(uid="api-st").exists()


def test_an_expert_may_create_a_draft_through_the_api(taxonomy, expert, login):
    response = post_json(login(expert), "/api/items/", api_create_body(status="draft"))

    assert response.status_code == 201
    assert response.json()["status"] == "draft"


def test_a_lead_creating_an_accepted_item_through_the_api_gives_a_reason(taxonomy, lead, login):
    client = login(lead)
    refused = post_json(client, "/api/items/", api_create_body(status="accepted"))
    assert refused.status_code == 400 and "status_reason" in refused.json()
    assert not Item.objects.filter(uid="api-st").exists()

    response = post_json(
        client, "/api/items/", api_create_body(status="accepted", status_reason="from the validated pilot set")
    )

    assert response.status_code == 201 and response.json()["status"] == "accepted"
    decision = Item.objects.get(uid="api-st").status_decisions.get(source="lead_decision")
    assert (decision.decided_by, decision.reason) == (lead, "from the validated pilot set")


def test_revising_through_the_api_refuses_a_status_change(taxonomy, lead, expert, login):
    make_item(uid="api-rev", user=lead)
    edited = mcq_content()
    edited["en"]["question"] = "How does Mia feel?"
    body = {"dimension": "hidden_emotion_recognition", "content": edited, "status": "accepted"}

    response = post_json(login(expert), "/api/items/api-rev/revise/", body)

    assert response.status_code == 400
    assert "POST /api/items/api-rev/status/" in response.json()["status"][0]
    item = Item.objects.get(uid="api-rev")
    assert item.status == "draft" and item.revisions.count() == 1


def test_the_status_endpoint_refuses_an_expert_and_records_a_lead_decision(taxonomy, lead, expert, client):
    make_item(uid="api-dec", user=lead)
    body = {"status": "accepted", "reason": "reviewed in the workshop"}

    client.force_login(expert)
    refused = post_json(client, "/api/items/api-dec/status/", body)
    assert refused.status_code == 403 and "lead expert or an admin" in refused.json()["detail"]
    assert Item.objects.get(uid="api-dec").status == "draft"

    client.force_login(lead)
    missing = post_json(client, "/api/items/api-dec/status/", {"status": "accepted"})
    assert missing.status_code == 400 and "reason" in missing.json()
    response = post_json(client, "/api/items/api-dec/status/", body)

    assert response.status_code == 201
    data = response.json()
    assert (data["from_status"], data["to_status"], data["source"]) == ("draft", "accepted", "lead_decision")
    assert (data["decided_by"], data["reason"]) == ("lead1", "reviewed in the workshop")
    assert Item.objects.get(uid="api-dec").status == "accepted"


def test_the_status_endpoint_lists_the_decisions_to_any_reader(taxonomy, lead, researcher, login):
    accept(make_item(uid="api-list", user=lead), lead)

    response = login(researcher).get("/api/items/api-list/status/")

    assert response.status_code == 200
    assert [(d["to_status"], d["source"]) for d in response.json()] == [
        ("draft", "created"),
        ("accepted", "lead_decision"),
    ]


# --- the item page ----------------------------------------------------------------------------------------


def test_the_item_page_shows_the_history_of_status_decisions(taxonomy, lead, expert, researcher, login):
    item = make_item(uid="pg-hist", user=expert)
    accept(item, lead, reason="Clear scenario, unambiguous key.")

    body = login(researcher).get("/items/pg-hist/").content.decode()

    assert 'id="status-history"' in body
    assert "Clear scenario, unambiguous key." in body
    assert "lead1" in body and "expert1" in body
    assert "lead decision" in body and "created" in body
    assert 'class="badge status-draft">draft</span> → <span class="badge status-accepted">accepted' in body
    assert 'id="status-decide"' not in body


def test_the_item_page_names_the_round_of_a_screening_decision(taxonomy, lead, expert, login):
    make_item(uid="pg-round", user=lead)
    round = make_screening_round(user=lead, reviewers=[expert], reviewers_per_item=1)

    body = login(expert).get("/items/pg-round/").content.decode()

    assert f"screening round · round {round.number}" in body


def test_an_expert_gets_no_decision_form_and_a_403_on_posting_one(taxonomy, lead, expert, login):
    make_item(uid="pg-expert", user=lead)
    client = login(expert)

    assert 'id="status-decide"' not in client.get("/items/pg-expert/").content.decode()
    response = client.post("/items/pg-expert/status/", {"status": "accepted", "reason": "looks fine"})

    assert response.status_code == 403
    item = Item.objects.get(uid="pg-expert")
    assert item.status == "draft" and item.status_decisions.count() == 1


def test_a_lead_decides_on_the_item_page_with_a_reason(taxonomy, lead, expert, login):
    make_item(uid="pg-lead", user=expert)
    client = login(lead)
    page = client.get("/items/pg-lead/").content.decode()
    assert 'id="status-decide"' in page and 'value="accepted"' in page and 'value="draft"' not in page

    response = client.post("/items/pg-lead/status/", {"status": "rejected", "reason": "duplicate of pg-1"})

    assert response.status_code == 302 and response["Location"] == "/items/pg-lead/#status-history"
    item = Item.objects.get(uid="pg-lead")
    assert item.status == "rejected"
    assert item.status_decisions.get(source="lead_decision").reason == "duplicate of pg-1"


def test_a_lead_decision_on_the_page_without_a_reason_is_refused_with_a_message(taxonomy, lead, login):
    make_item(uid="pg-noreason", user=lead)

    response = login(lead).post("/items/pg-noreason/status/", {"status": "accepted", "reason": ""})

    assert response.status_code == 400
    assert "This field is required." in response.content.decode()
    item = Item.objects.get(uid="pg-noreason")
    assert item.status == "draft" and item.status_decisions.count() == 1


def test_a_lead_cannot_decide_an_item_in_screening_on_the_page(taxonomy, lead, expert, login):
    make_item(uid="pg-in-round", user=lead)
    make_screening_round(user=lead, reviewers=[expert], reviewers_per_item=1)
    client = login(lead)
    page = client.get("/items/pg-in-round/").content.decode()
    assert 'id="status-decide"' not in page and "its round decides it" in page

    response = client.post("/items/pg-in-round/status/", {"status": "accepted", "reason": "skip it"})

    assert response.status_code == 400
    assert "its round decides it" in response.content.decode()
    assert Item.objects.get(uid="pg-in-round").status == "in_screening"


# --- the demo ---------------------------------------------------------------------------------------------


def test_the_demo_imports_its_accepted_items_as_the_lead_s_recorded_decisions(taxonomy):
    from demo.base import demo_seed

    demo_seed()

    accepted = Item.objects.filter(status="accepted")
    assert accepted.exists()
    for item in accepted:
        decision = item.status_decisions.order_by("id").last()
        assert (decision.to_status, decision.source, decision.decided_by.username) == ("accepted", "import", "lead")
