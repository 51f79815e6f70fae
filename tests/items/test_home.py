"""The home page, "My work": each role sees its own queues, feedback and runs, in a fixed number of queries."""

import pytest

from annotation.screening import services as screening_services
from annotation.screening.criteria import default_criteria_create
from annotation.screening.models import Criterion, RoundItem
from llm import services as llm_services
from tests.factories import make_item, make_review, make_screening_round, mcq_content, mcq_prompts


@pytest.fixture(autouse=True)
def criteria(db):
    default_criteria_create(Criterion)


@pytest.fixture
def reviewers(make_user):
    return [make_user("expert", username=f"rev{i}", first_name=f"Reviewer{i}", last_name="Smith") for i in range(2)]


def authored(expert, n: int) -> list:
    items = []
    for i in range(n):
        content = mcq_content()
        content["en"]["context"] = f"Authored scenario {i}: a friend forgets a birthday."
        items.append(make_item(uid=f"mine-{i}", content=content, user=expert))
    return items


@pytest.fixture
def sent_back_round(taxonomy, expert, lead, reviewers):
    """A closed round that sent the expert's two items back for revision, with the reviewers' comments."""
    items = authored(expert, 2)
    round = make_screening_round(user=lead, reviewers=reviewers, title="Spring round")
    for item in items:
        for reviewer in reviewers:
            make_review(
                round=round,
                uid=item.uid,
                reviewer=reviewer,
                decision="revise",
                comment=f"{reviewer.username} says the options overlap",
            )
    screening_services.round_close(round=round, user=lead)
    return round


def test_expert_sees_items_sent_back_with_reviewers_scores_decisions_and_comments(sent_back_round, expert, login):
    html = login(expert).get("/").content.decode()
    assert 'id="sent-back"' in html
    assert "mine-0" in html and "mine-1" in html
    assert "rev0 says the options overlap" in html and "rev1 says the options overlap" in html
    assert "Reviewer0 Smith" in html
    assert "Scenario plausibility" in html
    assert "back to authors" in html or "revise" in html
    assert "/items/mine-0/edit/" in html
    # The round's decisions on the expert's items are listed as recent decisions.
    assert 'id="recent-decisions"' in html and "screening round" in html


def test_reviewer_sees_their_queue_with_count_and_next_link(taxonomy, expert, lead, reviewers, login):
    authored(expert, 3)
    round = make_screening_round(user=lead, reviewers=reviewers, title="Open round")
    make_review(round=round, uid="mine-0", reviewer=reviewers[0], decision="accept")
    html = login(reviewers[0]).get("/").content.decode()
    assert 'id="my-review-queue"' in html and "Open round" in html
    assert f"/screening/{round.pk}/review/" in html
    assert "1 / 3" in html and "2 left" in html
    # Review is blind while the round is open: the author sees nothing of it yet.
    author_home = login(expert).get("/").content.decode()
    assert "No item of yours has been sent back." in author_home


def test_lead_sees_open_rounds_reviewer_progress_agreement_and_conflicts(
    taxonomy, expert, lead, reviewers, login, sent_back_round
):
    content = mcq_content()
    content["en"]["context"] = "A conflict-worthy scenario about a lost phone."
    make_item(uid="disputed", content=content, user=expert)
    disputed_round = make_screening_round(user=lead, reviewers=reviewers, title="Disputed round")
    make_review(round=disputed_round, uid="disputed", reviewer=reviewers[0], decision="accept")
    make_review(round=disputed_round, uid="disputed", reviewer=reviewers[1], decision="reject")
    for uid in ("mine-0", "mine-1"):
        for reviewer in reviewers:
            make_review(round=disputed_round, uid=uid, reviewer=reviewer, decision="accept")
    screening_services.round_close(round=disputed_round, user=lead)
    conflict = RoundItem.objects.get(round=disputed_round, outcome=RoundItem.Outcome.CONFLICT)
    make_item(uid="still-open", user=expert)
    make_screening_round(user=lead, reviewers=reviewers, title="Current round")
    html = login(lead).get("/").content.decode()
    assert 'id="rounds-to-close"' in html and "Current round" in html and "rev0" in html
    assert 'id="conflicts"' in html and f"/screening/{disputed_round.pk}/adjudicate/{conflict.pk}/" in html
    # rev0 agreed with every final outcome so far (2 revise in round 1, 2 accepts in round 2; the conflict has none).
    assert "100%" in html


def test_expert_home_hides_lead_and_researcher_parts(taxonomy, expert, login):
    html = login(expert).get("/").content.decode()
    assert 'id="my-review-queue"' in html and 'id="my-labelling"' in html
    assert 'id="rounds-to-close"' not in html and 'id="running-runs"' not in html


def test_researcher_sees_runs_and_reports_but_no_expert_queues(taxonomy, researcher, login):
    html = login(researcher).get("/").content.decode()
    assert 'id="running-runs"' in html and 'id="finished-reports"' in html
    assert "Nothing is running." in html
    assert 'id="my-review-queue"' not in html and 'id="sent-back"' not in html


def test_admin_sees_lead_and_researcher_parts(taxonomy, admin_user, login):
    html = login(admin_user).get("/").content.decode()
    assert 'id="rounds-to-close"' in html and 'id="running-runs"' in html


def test_expert_home_query_count_does_not_grow_with_items_and_rounds(
    sent_back_round, expert, lead, reviewers, login, django_assert_max_num_queries
):
    client = login(expert)
    client.get("/")  # warm the bank summary cache, as the page is under load
    # One query reads the bank's version (the cache key of the counts).
    with django_assert_max_num_queries(11):
        assert client.get("/").status_code == 200
    authored(expert, 0)
    for i in range(6):
        content = mcq_content()
        content["en"]["context"] = f"More scenarios {i} about a late train."
        make_item(uid=f"more-{i}", content=content, user=expert)
    second = make_screening_round(user=lead, reviewers=[*reviewers, expert], title="Second round")
    for assignment in second.round_items.all():
        for reviewer in reviewers:
            make_review(round=second, uid=assignment.item.uid, reviewer=reviewer, decision="revise")
    screening_services.round_close(round=second, user=lead, unreviewed="decide_on_submitted")
    client.get("/")  # the writes made a new version of the bank: its counts are counted once
    with django_assert_max_num_queries(11):
        html = client.get("/").content.decode()
    assert "more-5" in html


def test_researcher_sees_a_queued_llm_run_with_a_link(taxonomy, researcher, login, make_endpoint):
    run = llm_services.run_create(
        endpoint=make_endpoint("sim-mcq-acc90"),
        prompts=mcq_prompts(2),
        parser="mcq_letter",
        name="home probe",
        user=researcher,
        start=False,
    )
    html = login(researcher).get("/").content.decode()
    running = html[html.index('id="running-runs"') : html.index('id="finished-reports"')]
    assert f'href="/llm/runs/{run.pk}/"' in running and "home probe" in running
    assert "Nothing is running." not in running


def test_expert_home_never_shows_llm_runs(taxonomy, expert, login, make_endpoint):
    llm_services.run_create(
        endpoint=make_endpoint("sim-mcq-acc90"),
        prompts=mcq_prompts(1),
        parser="mcq_letter",
        name="secret model run",
        start=False,
    )
    html = login(expert).get("/").content.decode()
    assert "secret model run" not in html and "/llm/runs/" not in html


def test_a_user_without_roles_gets_the_bank_overview_and_no_work_sections(taxonomy, make_user, login):
    response = login(make_user(None, username="no-role")).get("/")
    html = response.content.decode()
    assert response.status_code == 200 and "The item bank" in html
    assert 'id="my-review-queue"' not in html and 'id="running-runs"' not in html and 'id="sent-back"' not in html


def test_an_item_accepted_since_it_was_sent_back_is_no_longer_listed_as_sent_back(sent_back_round, expert, lead, login):
    from annotation.items.models import Item, StatusDecision
    from annotation.items.services import item_status_decide

    item = Item.objects.get(uid="mine-0")
    item_status_decide(
        item=item, status=Item.Status.ACCEPTED, user=lead, reason="fixed", source=StatusDecision.Source.LEAD_DECISION
    )
    for user in (expert, lead):
        html = login(user).get("/").content.decode()
        sent_back = html.split('id="sent-back"')[1].split("</section>")[0] if 'id="sent-back"' in html else ""
        assert "mine-0" not in sent_back
    assert "mine-1" in login(expert).get("/").content.decode().split('id="sent-back"')[1].split("</section>")[0]


def test_status_counts_follow_a_round_closing_at_once(taxonomy, expert, lead, reviewers, login):
    """The counts are cached under the bank's version, not for a time: the page after the write shows it."""
    items = authored(expert, 2)
    round = make_screening_round(user=lead, reviewers=reviewers, title="Counting round")
    client = login(lead)

    def count(status: str) -> int:
        html = client.get("/").content.decode()
        return int(html.split(f'data-status="{status}"')[1].split(">")[1].split("<")[0])

    assert count("in_screening") == 2 and count("accepted") == 0
    for item in items:
        for reviewer in reviewers:
            make_review(round=round, uid=item.uid, reviewer=reviewer, decision="accept")
    screening_services.round_close(round=round, user=lead)
    assert count("accepted") == 2 and count("in_screening") == 0
