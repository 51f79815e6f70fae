"""The release checklist names every pinned revision that did not pass screening (one newer, or older, than the
revision an accepting decision accepted, or one never accepted), and freezing is refused while it does."""

import pytest
from django.core.exceptions import ValidationError

from annotation.items import services
from annotation.items.models import Benchmark, Item, StatusDecision
from annotation.releases import selectors
from annotation.releases import services as releases
from annotation.screening import services as screening
from tests.factories import make_item, make_review, make_screening_round, mcq_content

pytestmark = pytest.mark.django_db


def build(version: str = "1.0.0", **kwargs: object):
    return releases.release_create(
        benchmark=Benchmark.objects.get(slug="facet"), version=version, title=f"FACET {version}", user=None, **kwargs
    )


def screened_check(release):
    return next(c for c in selectors.release_validate(release=release) if c.code == "revisions_screened")


def reword(item: Item, user, question: str) -> None:
    content = mcq_content()
    content["en"]["question"] = question
    content["zh"]["question"] = "她此刻可能是什么感受？"
    services.item_revise(item=item, state=services.ItemState(dimension=item.dimension, content=content), user=user)


def test_items_accepted_at_their_pinned_revision_pass(taxonomy, lead):
    make_item(uid="rs-ok", user=lead, status="accepted")

    check = screened_check(build())

    assert check.passed and check.offenders == [] and check.params == {"ok": 1, "n": 1}


def test_a_revision_saved_during_screening_and_accepted_by_the_round_is_named(taxonomy, lead, expert, make_user):
    """The round accepts what its reviewers read: a newer text the item gained meanwhile passed no screening."""
    second = make_user("expert", username="expert2")
    make_item(uid="rs-clean", user=lead)
    changed = make_item(uid="rs-changed", user=lead)
    round = make_screening_round(user=lead, reviewers=[expert, second])
    reword(changed, lead, "What might she feel at this moment?")
    for uid in ("rs-clean", "rs-changed"):
        for reviewer in (expert, second):
            make_review(round=round, uid=uid, reviewer=reviewer, decision="accept")
    screening.round_close(round=round, user=lead)
    assert set(Item.objects.filter(uid__startswith="rs-").values_list("status", flat=True)) == {"accepted"}

    release = build()
    check = screened_check(release)

    assert not check.passed
    assert check.offenders == ["rs-changed"]
    assert check.details == ["rs-changed: revision 2 pinned, revision 1 accepted"]
    assert check.params == {"ok": 1, "n": 2}
    by_code = {c.code: c for c in selectors.release_validate(release=release)}
    assert by_code["all_accepted"].passed, "every item says accepted: only this check sees the unscreened text"
    with pytest.raises(ValidationError, match="Every pinned revision passed screening"):
        releases.release_freeze(release=release, user=lead)


def test_a_pinned_revision_never_accepted_and_one_older_than_the_accepted_are_named(taxonomy, lead):
    make_item(uid="rs-draft", user=lead)
    older = make_item(uid="rs-older", user=lead, status="accepted")
    release = build(filters={})
    reword(older, lead, "What might she feel at this moment?")
    services.item_status_decide(item=older, status="accepted", user=lead, reason="read again", source="lead_decision")

    check = screened_check(release)

    assert check.offenders == ["rs-draft"], "revision 1 of rs-older was accepted when the release pinned it"
    assert check.details == ["rs-draft: revision 1 pinned, never accepted"]
    rebuilt = build("1.0.1", filters={})
    assert screened_check(rebuilt).offenders == ["rs-draft"], "the rebuilt release pins the accepted revision 2"


def test_a_lead_decision_and_an_import_record_the_revision_they_accepted(taxonomy, lead):
    item = make_item(uid="rs-lead", user=lead)
    reword(item, lead, "What might she feel at this moment?")

    decision = services.item_status_decide(
        item=item, status="accepted", user=lead, reason="fine", source=StatusDecision.Source.LEAD_DECISION
    )

    assert decision.reference == {"revision": 2}
    imported = Item.objects.get(uid=make_item(uid="rs-import", user=lead, status="accepted").uid)
    assert imported.status_decisions.get(to_status="accepted").reference["revision"] == 1


def test_an_older_acceptance_without_a_revision_counts_the_revision_current_at_the_time(taxonomy, lead):
    item = make_item(uid="rs-legacy", user=lead)
    # As recorded before acceptances named their revision.
    StatusDecision.objects.create(
        item=item, from_status="draft", to_status="accepted", source="lead_decision", reason="old record", reference={}
    )
    Item.objects.filter(pk=item.pk).update(status="accepted")
    release = build()
    assert screened_check(release).passed

    reword(item, lead, "What might she feel at this moment?")
    releases.release_items_change(release=release, user=None, remove=["rs-legacy"])
    releases.release_items_change(release=release, user=None, add=["rs-legacy"])

    assert screened_check(release).details == ["rs-legacy: revision 2 pinned, revision 1 accepted"]


def test_the_release_page_lists_the_unscreened_items_and_the_api_refuses_to_freeze(taxonomy, lead, admin_user, login):
    make_item(uid="rs-page", user=lead)
    release = build(filters={})
    client = login(admin_user)

    page = client.get("/releases/facet/1.0.0/").content.decode()

    assert 'id="check-revisions_screened"' in page
    line = page.split('id="check-revisions_screened"', 1)[1].split("</li>", 1)[0]
    assert "Every pinned revision passed screening" in line and "0 of 1 pinned revision passed screening" in line
    assert "/items/rs-page/" in line
    response = client.post(f"/api/releases/{release.pk}/freeze/", {}, content_type="application/json")
    assert response.status_code == 400
    assert "Every pinned revision passed screening" in response.content.decode()
    release.refresh_from_db()
    assert not release.is_frozen


def test_the_check_reads_a_fixed_number_of_queries(taxonomy, lead, django_assert_max_num_queries):
    for n in range(6):
        make_item(uid=f"rs-many-{n}", user=lead, status="accepted")
    release = build()

    with django_assert_max_num_queries(3):
        accepted = selectors.release_accepted_revisions(release=release)

    assert sorted(accepted.values()) == [{1}] * 6
