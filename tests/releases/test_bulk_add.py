"""The item list's bulk action "add to a release": the checked items are pinned in the chosen draft release."""

from annotation.items.models import Benchmark
from annotation.releases import services as releases
from annotation.releases.models import Release


def draft(user) -> Release:
    return releases.release_create(
        benchmark=Benchmark.objects.get(slug="facet"), version="2.0.0", title="Draft two", user=user, filters={}
    )


def test_checked_items_are_added_to_a_draft_release_and_those_in_it_left(accepted_items, admin_user, login):
    release = draft(admin_user)
    release.entries.all().delete()
    client = login(admin_user)
    page = client.get("/items/").content.decode()
    assert 'id="bulk-release"' in page and f'<option value="{release.pk}">' in page
    uids = [accepted_items[0].uid, accepted_items[1].uid]
    first = client.post(
        "/releases/add-items/", {"release": release.pk, "uids": uids, "next": "/items/?status=accepted"}
    )
    assert first.status_code == 302 and first["Location"] == "/items/?status=accepted"
    assert set(release.entries.values_list("item__uid", flat=True)) == set(uids)
    again = client.post(
        "/releases/add-items/", {"release": release.pk, "uids": [uids[0], accepted_items[2].uid]}, follow=True
    )
    assert "1 items added to facet 2.0.0 (1 already in it)." in again.content.decode()
    assert release.entries.count() == 3


def test_no_release_no_items_or_a_frozen_release_is_refused_with_a_message(accepted_items, admin_user, login):
    client = login(admin_user)
    frozen = draft(admin_user)
    releases.release_freeze(release=frozen, user=admin_user, override_reason="test")
    answer = client.post("/releases/add-items/", {"release": frozen.pk, "uids": [accepted_items[0].uid]}, follow=True)
    assert "Choose a draft release to add the items to." in answer.content.decode()
    answer = client.post("/releases/add-items/", {"release": "", "uids": [accepted_items[0].uid]}, follow=True)
    assert "Choose a draft release to add the items to." in answer.content.decode()
    other = releases.release_create(
        benchmark=Benchmark.objects.get(slug="facet"), version="3.0.0", title="Three", user=admin_user, filters={}
    )
    answer = client.post("/releases/add-items/", {"release": other.pk}, follow=True)
    assert "Check at least one item to add." in answer.content.decode()


def test_only_release_managers_see_or_use_the_action(accepted_items, admin_user, lead, login):
    release = draft(admin_user)
    client = login(lead)
    assert 'id="bulk-release"' not in client.get("/items/").content.decode()
    assert client.post("/releases/add-items/", {"release": release.pk, "uids": ["rel-0"]}).status_code == 403
