"""The EiCAP reply-set audit pages, API and command: who may do what, and what each answer shows."""

import json

import pytest
from django.core.management import call_command

from annotation.items.models import Item, KeyJudgement, KeyValidation, Reply
from annotation.items.services import expansion
from llm.models import Endpoint
from tests.factories import audit_reply_set, make_reply_set


@pytest.fixture
def reply_set(db, taxonomy, lead):
    return make_reply_set(uid="tt-rs-1", user=lead)


def first_reply(reply_set, role="preferred", position=1, turn=1):
    return Reply.objects.select_related("current_revision").get(
        turn__reply_set=reply_set, turn__number=turn, role=role, position=position
    )


def test_the_list_shows_sets_to_audit_in_few_queries(reply_set, lead, login, django_assert_max_num_queries):
    for n in range(2, 6):
        make_reply_set(uid=f"tt-rs-{n}", user=lead, turns=1)
    client = login(lead)
    with django_assert_max_num_queries(12):
        page = client.get("/reply-sets/")
    body = page.content.decode()
    assert page.status_code == 200 and "tt-rs-1" in body and "tt-rs-5" in body
    assert "12 / 12" in body  # a two-turn set: twelve replies, none audited
    assert "tt-rs-5" not in client.get("/reply-sets/?state=expanded").content.decode()


def test_the_detail_page_shows_replies_with_audit_forms_for_experts_only(
    reply_set, expert, researcher, login, django_assert_max_num_queries
):
    client = login(expert)
    with django_assert_max_num_queries(16):
        page = client.get(f"/reply-sets/{reply_set.uid}/")
    body = page.content.decode()
    reply = first_reply(reply_set)
    assert page.status_code == 200 and reply.current_revision.content["en"]["text"] in body
    assert body.count('name="decision" value="accept"') == 12
    client.logout()
    body = login(researcher).get(f"/reply-sets/{reply_set.uid}/").content.decode()
    assert reply.current_revision.content["zh"]["text"] in body and 'value="accept"' not in body


def test_an_expert_accepts_rejects_and_edits_through_the_page(reply_set, expert, login):
    client = login(expert)
    reply = first_reply(reply_set)
    url = f"/reply-sets/replies/{reply.pk}/audit/"
    htmx = {"HX-Request": "true"}
    refused = client.post(url, {"decision": "reject", "base_revision": 1}, headers=htmx)
    assert refused.status_code == 200 and "Say why" in refused.content.decode()
    assert Reply.objects.get(pk=reply.pk).audit == "pending"
    content = reply.current_revision.content
    edit = {
        "decision": "edit",
        "base_revision": 1,
        "reason": "softer close",
        "text_en": content["en"]["text"] + " Take your time.",
        "principle_en": content["en"]["principle"],
        "text_zh": content["zh"]["text"],
        "principle_zh": content["zh"]["principle"],
    }
    answer = client.post(url, edit, headers=htmx)
    assert answer.status_code == 200 and "Take your time." in answer.content.decode()
    reply.refresh_from_db()
    assert (reply.audit, reply.current_revision.number) == ("edited", 2)
    # The page shows the edit as a diff.
    body = client.get(f"/reply-sets/{reply_set.uid}/").content.decode()
    assert "<ins> Take your time.</ins>" in body and "softer close" in body
    # A stale form (revision 1) is refused; without htmx the page comes back with the reason.
    stale = client.post(url, {"decision": "accept", "base_revision": 1}, follow=True)
    assert "after you read revision 1" in stale.content.decode()


def test_researchers_may_not_audit_or_expand(reply_set, researcher, login):
    client = login(researcher)
    reply = first_reply(reply_set)
    assert client.post(f"/reply-sets/replies/{reply.pk}/audit/", {"decision": "accept"}).status_code == 403
    assert client.post(f"/reply-sets/{reply_set.uid}/expand/").status_code == 403
    assert client.post(f"/api/replies/{reply.pk}/audit/", {"decision": "accept"}).status_code == 403
    assert client.post(f"/api/reply-sets/{reply_set.uid}/expand/").status_code == 403
    assert Reply.objects.filter(audit="pending").count() == 12


def test_expanding_through_the_page_and_the_bulk_button(reply_set, expert, lead, login):
    client = login(expert)
    answer = client.post(f"/reply-sets/{reply_set.uid}/expand/", follow=True)
    assert "not audited yet" in answer.content.decode()
    audit_reply_set(reply_set, expert)
    refused = client.post(f"/reply-sets/{reply_set.uid}/expand/", {"accept": "on"}, follow=True)
    assert "Only a lead expert" in refused.content.decode() and not Item.objects.exists()
    answer = client.post("/reply-sets/expand/", follow=True)
    assert "3 created" in answer.content.decode()
    assert Item.objects.filter(uid__startswith="tt-rs-1-p", kind="multi_turn_choice", status="draft").count() == 3
    body = client.get(f"/reply-sets/{reply_set.uid}/").content.decode()
    assert "tt-rs-1-p3" in body


def test_the_api_lists_audits_and_expands(reply_set, expert, lead, login):
    client = login(expert)
    listed = client.get("/api/reply-sets/?state=to_audit").json()
    assert listed["count"] == 1 and listed["results"][0]["uid"] == reply_set.uid
    detail = client.get(f"/api/reply-sets/{reply_set.uid}/").json()
    replies = [r for turn in detail["turns"] for r in turn["replies"]]
    assert len(replies) == 12 and {r["audit"] for r in replies} == {"pending"}
    target = replies[0]
    edited = {lang: {**v, "text": v["text"] + "!"} for lang, v in target["content"].items()}
    answer = client.post(
        f"/api/replies/{target['id']}/audit/",
        json.dumps({"decision": "edit", "content": edited, "reason": "punctuation"}),
        content_type="application/json",
    )
    assert answer.status_code == 200 and answer.json()["revision"] == 2 and answer.json()["audit"] == "edited"
    bad = client.post(
        f"/api/replies/{target['id']}/audit/",
        json.dumps({"decision": "edit", "content": {"en": {"text": ""}}}),
        content_type="application/json",
    )
    assert bad.status_code == 400 and "must not be empty" in json.dumps(bad.json())
    for reply in replies[1:]:
        client.post(f"/api/replies/{reply['id']}/audit/", {"decision": "accept"})
    client.logout()
    report = login(lead).post(
        f"/api/reply-sets/{reply_set.uid}/expand/",
        json.dumps({"seed": 3, "accept": True}),
        content_type="application/json",
    )
    assert report.status_code == 200 and len(report.json()["created"]) == 3
    assert set(Item.objects.values_list("status", flat=True)) == {"accepted"}


def test_the_command_expands_audited_sets(reply_set, lead, capsys):
    audit_reply_set(reply_set, lead, reject={(2, "preferred", 2)})
    call_command("eicap_expand", "--user", lead.username, "--seed", "5")
    out = capsys.readouterr()
    assert "2 probes created" in out.out and "Preferred reply 2" in out.err
    call_command("eicap_expand", reply_set.uid, "--json")
    assert json.loads(capsys.readouterr().out)["unchanged"] == ["tt-rs-1-p1", "tt-rs-1-p3"]


@pytest.fixture
def disagreement(reply_set, lead, make_llm):
    audit_reply_set(reply_set, lead)
    expansion.reply_set_expand(reply_set=reply_set, user=lead)
    item = Item.objects.select_related("current_revision").get(uid="tt-rs-1-p1")
    validation = KeyValidation.objects.create(
        benchmark=item.benchmark,
        endpoint=make_llm,
        collected=True,
        kappa=0.5,
        ci_low=0.1,
        ci_high=0.8,
        n_units=4,
        n_probes=1,
    )
    validation.collected_at = validation.created_at
    validation.save()
    key = item.current_revision.content["en"]["turns"][1]["answer"]
    for lang in ("en", "zh"):
        for turn in (0, 1):
            answer = item.current_revision.content[lang]["turns"][turn]["answer"]
            chosen = (key + 1) % 4 if (lang, turn) == ("en", 1) else answer
            KeyJudgement.objects.create(
                validation=validation,
                item=item,
                revision=item.current_revision,
                language=lang,
                turn=turn,
                key=answer,
                chosen=chosen,
            )
    return KeyJudgement.objects.get(language="en", turn=1)


@pytest.fixture
def make_llm(db):
    return Endpoint.objects.create(name="Secret judge family", base_url="http://127.0.0.1:9/v1", model="gemini-x")


def test_experts_review_disagreements_without_seeing_the_judge(
    disagreement, expert, login, django_assert_max_num_queries
):
    client = login(expert)
    with django_assert_max_num_queries(12):
        assert client.get("/reply-sets/disagreements/").status_code == 200
    for url in ("/reply-sets/disagreements/", "/reply-sets/", f"/reply-sets/{disagreement.item.uid[:-3]}/"):
        body = client.get(url).content.decode()
        assert "Secret judge family" not in body and "gemini-x" not in body
    body = client.get("/reply-sets/disagreements/").content.decode()
    assert "tt-rs-1-p1" in body and "the independent judge chose" in body
    assert "Cohen's kappa with the keys 0.500" in client.get("/reply-sets/").content.decode()
    refused = client.post(f"/reply-sets/disagreements/{disagreement.pk}/review/", {"review": "key_wrong"}, follow=True)
    assert "Say what is wrong" in refused.content.decode()
    client.post(f"/reply-sets/disagreements/{disagreement.pk}/review/", {"review": "key_stands", "back": "set"})
    disagreement.refresh_from_db()
    assert disagreement.review == "key_stands" and disagreement.reviewed_by == expert
    listed = client.get("/api/key-disagreements/").json()
    assert listed["count"] == 1 and "gemini" not in json.dumps(listed)
    answer = client.post(
        f"/api/key-disagreements/{disagreement.pk}/review/", {"review": "key_wrong", "note": "B fits better"}
    )
    assert answer.status_code == 200 and answer.json()["review"] == "key_wrong"


def test_the_audit_pages_read_in_chinese(reply_set, expert, login):
    client = login(expert)
    client.cookies["django_language"] = "zh-hans"
    assert "EiCAP 回复组：审核" in client.get("/reply-sets/").content.decode()
    body = client.get(f"/reply-sets/{reply_set.uid}/").content.decode()
    assert "用户第 2 轮" in body and "展开为探针" in body and "编辑回复" in body
    assert reply_set.turns.get(number=1).user["zh"] in body
