"""The page of a frozen release reads what was recorded at freeze and never the items' content."""

from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.releases import selectors as release_selectors
from annotation.releases import services as releases
from annotation.releases.models import Release
from tests.factories import make_item


def test_frozen_release_page_reads_no_item_content_and_no_file_but_the_card(frozen, admin_user, login):
    client = login(admin_user)
    with CaptureQueriesContext(connection) as queries:
        page = client.get(f"/releases/facet/{frozen.version}/")
    assert page.status_code == 200
    sql = [q["sql"] for q in queries]
    assert not [s for s in sql if '"items_itemrevision"."content"' in s or '"items_item"."search_text"' in s]
    file_reads = [s for s in sql if '"releases_releasefile"."content"' in s]
    assert len(file_reads) == 1  # the kept README.md, shown as the dataset card
    html = page.content.decode()
    for entry in release_selectors.release_entries(frozen):
        assert entry.item.uid in html and f"r{entry.revision.number}" in html


def test_frozen_release_page_queries_do_not_grow_with_its_items(frozen, admin_user, login, lead, fixed_clock):
    client = login(admin_user)
    client.get(f"/releases/facet/{frozen.version}/")
    with CaptureQueriesContext(connection) as small:
        client.get(f"/releases/facet/{frozen.version}/")
    for n in range(6):
        make_item(uid=f"more-{n}", user=lead, status="accepted")
    bigger = releases.release_create(
        benchmark=frozen.benchmark, version="2.0.0", title="more", user=lead, filters={"status": "accepted"}
    )
    releases.release_freeze(release=bigger, user=lead, override_reason="test")
    assert Release.objects.get(pk=bigger.pk).entries.count() > frozen.entries.count()
    client.get("/releases/facet/2.0.0/")  # the first view sorts the entries once; later views read the kept order
    with CaptureQueriesContext(connection) as large:
        client.get("/releases/facet/2.0.0/?page=999")
    assert len(large) == len(small)


def test_release_page_lists_a_newer_revision_of_a_pinned_item(frozen, admin_user, login, lead):
    entry = release_selectors.release_entries(frozen)[0]
    content = entry.revision.content
    content["en"]["context"] += " Later edit."
    from annotation.items import services

    services.item_revise(
        item=entry.item, state=services.ItemState(dimension=entry.item.dimension, content=content), user=lead
    )
    html = login(admin_user).get(f"/releases/facet/{frozen.version}/").content.decode()
    assert f"/items/{entry.item.uid}/history/?a={entry.revision.number}" in html


def test_the_pinned_items_of_a_large_release_are_listed_a_page_at_a_time(frozen, admin_user, login, lead, monkeypatch):
    from annotation.releases import views

    monkeypatch.setattr(views, "ENTRIES_PER_PAGE", 2)
    uids = sorted(entry.item.uid for entry in release_selectors.release_entries(frozen))
    assert len(uids) > 2
    client = login(admin_user)
    first = client.get(f"/releases/facet/{frozen.version}/").content.decode()
    second = client.get(f"/releases/facet/{frozen.version}/?page=2").content.decode()
    assert uids[0] in first and uids[1] in first and uids[2] not in first
    assert uids[2] in second and uids[0] not in second
    assert "?page=2#pinned" in first
    last = client.get(f"/releases/facet/{frozen.version}/?page=999").content.decode()
    assert uids[-1] in last  # a page past the end shows the last one
