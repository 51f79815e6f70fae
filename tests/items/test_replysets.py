"""EiCAP reply sets through the services: drafting with the simulator, the audit, expansion into probes."""

import json

import pytest
from django.core.exceptions import ValidationError

from annotation.items.content import check_parity
from annotation.items.models import Dimension, Item, Reply, ReplyAudit, ReplySet
from annotation.items.services import drafting, expansion, replysets
from tests.factories import work_llm_run


@pytest.fixture
def reply_template(transactional_db, taxonomy, lead):
    return drafting.item_template_save(
        dimension=Dimension.objects.get(benchmark__slug="eicap", code="two_turn_context_tracking"),
        kind=replysets.REPLY_SET,
        instructions="Everyday situations; turn 2 reveals the cause.",
        user=lead,
    )


def draft(template, endpoint, user, **fields):
    job = drafting.drafting_job_start(
        template=template,
        endpoint=endpoint,
        user=user,
        start=False,
        **{"count": 2, "languages": ["en", "zh"], **fields},
    )
    work_llm_run(job.llm_run_id)
    job.refresh_from_db()
    return job


def audit_all(reply_set, user, reject=()):
    for reply in Reply.objects.filter(turn__reply_set=reply_set):
        key = (reply.turn.number, reply.role, reply.position)
        if key in reject:
            replysets.reply_audit(reply=reply, decision="reject", user=user, reason="off principle")
        else:
            replysets.reply_audit(reply=reply, decision="accept", user=user)


def test_a_reply_set_job_drafts_two_turn_dialogues_with_six_replies_per_turn(reply_template, make_endpoint, lead):
    job = draft(reply_template, make_endpoint("sim-drafter", for_drafting=True), lead, turns=2, count=3)
    assert job.collected and len(job.created_uids) == 3 and job.failures == []
    reply_set = ReplySet.objects.get(uid=job.created_uids[0])
    assert reply_set.dimension.code == "two_turn_context_tracking" and reply_set.job == job
    turns = list(reply_set.turns.all())
    assert [t.number for t in turns] == [1, 2] and set(turns[0].user) == {"en", "zh"}
    for turn in turns:
        replies = list(turn.replies.select_related("current_revision"))
        assert sorted((r.role, r.position) for r in replies) == sorted(
            (role, p) for role in ("preferred", "distractor") for p in (1, 2, 3)
        )
        for reply in replies:
            assert reply.audit == "pending" and reply.current_revision.number == 1
            content = reply.current_revision.content
            assert content["en"]["text"] and content["zh"]["text"]
            verb = "Follows" if reply.role == "preferred" else "Violates"
            assert content["en"]["principle"].startswith(verb)
    # The prompt asked for the leaf's principle and for turn 2 to reframe turn 1.
    prompt = job.llm_run.items.first().request["messages"][0]["content"]
    assert "Two-Turn Context Tracking" in prompt and "Turn 2 reframes turn 1" in prompt
    # Collecting again changes nothing.
    assert drafting.drafting_job_collect(job=job, user=lead).created_uids == job.created_uids
    assert ReplySet.objects.count() == 3


def test_given_user_turns_are_used_verbatim(reply_template, make_endpoint, lead):
    given = [[{"en": "My sister forgot my birthday again.", "zh": "我妹妹又忘了我的生日。"}]]
    job = draft(reply_template, make_endpoint("sim-drafter", for_drafting=True), lead, given_turns=json.dumps(given))
    assert job.count == 1 and len(job.created_uids) == 1
    turn = ReplySet.objects.get(uid=job.created_uids[0]).turns.get()
    assert turn.user == given[0][0]
    assert "birthday" in turn.replies.first().current_revision.content["en"]["text"]


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("not json", "not JSON"),
        ([["a", "b", "c"]], "one or two user turns"),
        ([[{"en": "only English"}]], "no zh text"),
    ],
)
def test_bad_given_turns_are_refused(reply_template, make_endpoint, lead, given, message):
    with pytest.raises(ValidationError, match=message):
        drafting.drafting_job_start(
            template=reply_template,
            endpoint=make_endpoint("sim-drafter", for_drafting=True),
            count=1,
            languages=["en", "zh"],
            user=lead,
            start=False,
            given_turns=given if isinstance(given, str) else json.dumps(given),
        )


def test_a_malformed_reply_set_is_reported_not_stored(reply_template, make_endpoint, lead, simulator):
    simulator.configure(garbage_rate=1.0)
    job = draft(reply_template, make_endpoint("sim-drafter", for_drafting=True), lead, count=1)
    assert job.created_uids == [] and len(job.failures) == 1 and not ReplySet.objects.exists()


def test_the_audit_accepts_rejects_and_edits_with_revisions(reply_template, make_endpoint, expert, lead):
    job = draft(reply_template, make_endpoint("sim-drafter", for_drafting=True), lead, count=1)
    reply = Reply.objects.filter(turn__reply_set__uid=job.created_uids[0]).select_related("current_revision").first()
    with pytest.raises(ValidationError, match="Say why"):
        replysets.reply_audit(reply=reply, decision="reject", user=expert)
    with pytest.raises(ValidationError, match="changes nothing"):
        replysets.reply_audit(reply=reply, decision="edit", user=expert, content=reply.current_revision.content)
    with pytest.raises(ValidationError, match="Unknown decision"):
        replysets.reply_audit(reply=reply, decision="maybe", user=expert)
    edited = {lang: {**v, "text": v["text"] + " Take your time."} for lang, v in reply.current_revision.content.items()}
    replysets.reply_audit(reply=reply, decision="edit", user=expert, content=edited, reason="a gentler close")
    reply.refresh_from_db()
    assert reply.audit == "edited" and reply.current_revision.number == 2 and reply.audited_by == expert
    assert reply.current_revision.content == edited and reply.revisions.count() == 2
    with pytest.raises(ValidationError, match="after you read revision 1"):
        replysets.reply_audit(reply=reply, decision="accept", user=expert, base_revision=1)
    replysets.reply_audit(reply=reply, decision="accept", user=expert, base_revision=2)
    reply.refresh_from_db()
    assert reply.audit == "edited"  # accepting it again keeps the record that it was edited
    replysets.reply_audit(reply=reply, decision="reject", user=expert, reason="too long now")
    assert list(ReplyAudit.objects.filter(reply=reply).values_list("decision", "revision")) == [
        ("edited", 2),
        ("edited", 2),
        ("rejected", 2),
    ]
    with pytest.raises(ValidationError, match="immutable"):
        reply.current_revision.save()


def test_expansion_builds_one_vs_three_probes_with_seeded_key_positions(reply_template, make_endpoint, lead):
    job = draft(reply_template, make_endpoint("sim-drafter", for_drafting=True), lead, turns=2, count=1)
    reply_set = ReplySet.objects.get(uid=job.created_uids[0])
    report = expansion.reply_set_expand(reply_set=reply_set, user=lead)
    assert report.created == [] and "not audited yet" in report.problems[0]["reason"]
    audit_all(reply_set, lead, reject={(1, "preferred", 3)})
    report = expansion.reply_set_expand(reply_set=reply_set, user=lead, seed=7)
    assert report.created == [f"{reply_set.uid}-p1", f"{reply_set.uid}-p2"]
    assert "Preferred reply 3" in report.problems[0]["reason"]
    item = Item.objects.get(uid=report.created[0])
    assert (item.kind, item.status, item.origin, item.dimension) == (
        "multi_turn_choice",
        "draft",
        "llm_draft",
        reply_set.dimension,
    )
    content = item.current_revision.content
    assert check_parity("multi_turn_choice", content) == []
    preferred = {
        t: Reply.objects.get(turn__reply_set=reply_set, turn__number=t, role="preferred", position=1) for t in (1, 2)
    }
    for lang in ("en", "zh"):
        turns = content[lang]["turns"]
        assert len(turns) == 2 and turns[1]["user"] == reply_set.turns.get(number=2).user[lang]
        for t, turn in enumerate(turns):
            assert len(turn["options"]) == 4
            assert turn["options"][turn["answer"]] == preferred[t + 1].current_revision.content[lang]["text"]
            order = expansion.key_order(seed=7, uid=item.uid, language=lang, turn=t)
            assert turn["answer"] == order.index(0)
            ids = item.metadata["eicap"]["options"][lang][t]
            assert ids[turn["answer"]] == preferred[t + 1].pk
    # Expanding again changes nothing; a new edit revises the probe.
    again = expansion.reply_set_expand(reply_set=reply_set, user=lead, seed=7)
    assert again.created == [] and sorted(again.unchanged) == report.created
    reply = preferred[1]
    new = {lang: {**v, "text": v["text"] + " I'm here."} for lang, v in reply.current_revision.content.items()}
    replysets.reply_audit(reply=reply, decision="edit", user=lead, content=new, reason="warmer")
    third = expansion.reply_set_expand(reply_set=reply_set, user=lead, seed=7)
    assert third.revised == [f"{reply_set.uid}-p1"]
    # Rejecting a preferred reply withdraws its probe (listed for rejection, never deleted).
    replysets.reply_audit(reply=reply, decision="reject", user=lead, reason="no")
    assert expansion.reply_set_expand(reply_set=reply_set, user=lead, seed=7).withdrawn == [f"{reply_set.uid}-p1"]


def test_key_positions_spread_over_the_four_options():
    answers = [
        expansion.key_order(seed=0, uid=f"x-{n}", language=lang, turn=0).index(0) for n in range(200) for lang in "ez"
    ]
    assert min(answers.count(p) for p in range(4)) > 60


def test_a_rejected_distractor_blocks_the_set_and_accepting_needs_a_lead(reply_template, make_endpoint, lead, expert):
    job = draft(reply_template, make_endpoint("sim-drafter", for_drafting=True), lead, count=1)
    reply_set = ReplySet.objects.get(uid=job.created_uids[0])
    audit_all(reply_set, expert, reject={(1, "distractor", 2)})
    report = expansion.reply_set_expand(reply_set=reply_set, user=expert)
    assert report.created == [] and "2 accepted distractors" in report.problems[0]["reason"]
    with pytest.raises(ValidationError, match="lead expert"):
        expansion.reply_set_expand(reply_set=reply_set, user=expert, accept=True)
    audit_all(reply_set, lead)
    report = expansion.reply_set_expand(reply_set=reply_set, user=lead, accept=True)
    assert len(report.created) == 3
    assert set(Item.objects.filter(uid__in=report.created).values_list("status", flat=True)) == {"accepted"}
