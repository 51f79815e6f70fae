"""Comparing two releases reads a stored comparison (annotation.releases.comparisons): small releases are compared
in the request once per state, large ones by a worker while the page and the API show the previous comparison and
poll; the lists are read a page at a time, in as many queries for a larger release."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.items.models import Benchmark
from annotation.releases import comparisons
from annotation.releases import services as releases
from annotation.releases.models import Release, ReleaseComparison
from tests.factories import make_frozen_release, make_item
from tests.factories.llm import run_queued_tasks

pytestmark = pytest.mark.django_db

TASK = "annotation.releases.tasks.release_comparison_compute"


def draft(version: str = "1.1.0") -> Release:
    return releases.release_create(
        benchmark=Benchmark.objects.get(slug="facet"),
        version=version,
        title=version,
        user=None,
        filters={"status": "accepted"},
    )


def url(old: Release, new: Release, page: int = 1) -> str:
    return f"/releases/facet/compare/?old={old.version}&new={new.version}&page={page}"


def entry_reads(captured: CaptureQueriesContext) -> list[str]:
    """The queries that read the releases' entries with their revisions: comparing them."""
    return [q["sql"] for q in captured.captured_queries if '"content_hash"' in q["sql"]]


def test_small_releases_are_compared_once_and_the_stored_comparison_is_read_after(
    accepted_items, lead, researcher, login
):
    old = make_frozen_release(version="1.0.0")
    make_item(uid="rel-new", user=lead, status="accepted")
    new = draft()
    client = login(researcher)
    with CaptureQueriesContext(connection) as first:
        html = client.get(url(old, new)).content.decode()
    assert entry_reads(first) and "Added (1)" in html and "/items/rel-new/" in html and "4 items unchanged" in html
    with CaptureQueriesContext(connection) as again:
        assert "/items/rel-new/" in client.get(url(old, new)).content.decode()
    assert not entry_reads(again) and len(again) <= 10
    # The draft changes: compared again, in the request as it is small.
    releases.release_items_change(release=new, user=lead, remove=["rel-new"])
    html = client.get(url(old, Release.objects.get(pk=new.pk))).content.decode()
    assert "Added (0)" in html and "/items/rel-new/" not in html
    assert ReleaseComparison.objects.count() == 1


def test_large_releases_are_compared_by_a_worker_while_the_page_and_the_api_poll(
    accepted_items, lead, researcher, login, settings
):
    settings.RELEASE_CHECK_INLINE_ENTRIES = 0
    old = make_frozen_release(version="1.0.0")
    make_item(uid="rel-new", user=lead, status="accepted")
    new = draft()
    client = login(researcher)
    with CaptureQueriesContext(connection) as captured:
        html = client.get(url(old, new)).content.decode()
    assert not entry_reads(captured)
    assert 'id="compare-state"' in html and "part=state" in html and "/items/rel-new/" not in html
    api = client.get(f"/api/releases/{new.pk}/compare/?against={old.pk}")
    assert api.status_code == 202 and api.json()["current"] is False and api.json()["added"] is None
    assert run_queued_tasks(TASK) == 1  # two views queue one comparison
    polled = client.get(url(old, new) + "&part=state", headers={"HX-Request": "true"})
    assert polled.headers.get("HX-Refresh") == "true"
    html = client.get(url(old, new)).content.decode()
    assert 'id="compare-state"' not in html and "/items/rel-new/" in html
    api = client.get(f"/api/releases/{new.pk}/compare/?against={old.pk}").json()
    assert api["current"] and api["added"] == ["rel-new"] and api["counts"]["unchanged"] == 4
    # The draft changes: the previous comparison is shown, marked, until the worker compares again.
    releases.release_items_change(release=new, user=lead, remove=["rel-new"])
    new.refresh_from_db()
    html = client.get(url(old, new)).content.decode()
    assert 'id="compare-state"' in html and "the comparison as of" in html and "/items/rel-new/" in html
    assert run_queued_tasks(TASK) == 1
    assert "/items/rel-new/" not in client.get(url(old, new)).content.decode()


def test_two_frozen_releases_are_compared_once_for_all_time(accepted_items, lead, researcher, login, settings):
    settings.RELEASE_CHECK_INLINE_ENTRIES = 0
    old = make_frozen_release(version="1.0.0")
    make_item(uid="rel-new", user=lead, status="accepted")
    new = make_frozen_release(version="1.1.0")
    client = login(researcher)
    client.get(url(old, new))
    assert run_queued_tasks(TASK) == 1
    make_item(uid="rel-later", user=lead, status="accepted")  # the bank moves on; frozen releases do not
    for _ in range(2):
        assert "/items/rel-new/" in client.get(url(old, new)).content.decode()
    assert run_queued_tasks(TASK) == 0


def test_the_lists_are_read_a_page_at_a_time_in_as_many_queries_for_more_changes(
    accepted_items, lead, researcher, login, monkeypatch
):
    monkeypatch.setattr(comparisons, "CHANGES_PER_PAGE", 1)
    old = make_frozen_release(version="1.0.0")
    client = login(researcher)

    def counted(new: Release, page: int) -> tuple[str, int]:
        client.get(url(old, new, page))  # compared (small releases) and stored
        with CaptureQueriesContext(connection) as captured:
            html = client.get(url(old, new, page)).content.decode()
        return html, len(captured)

    make_item(uid="rel-a1", user=lead, status="accepted")
    small_html, small = counted(draft("1.1.0"), 1)
    for n in range(2, 6):
        make_item(uid=f"rel-a{n}", user=lead, status="accepted")
    new = draft("1.2.0")
    large_html, large = counted(new, 2)
    assert small == large <= 10
    assert "/items/rel-a1/" in small_html and "Page 2 of 5" in large_html
    assert "/items/rel-a2/" in large_html and "/items/rel-a1/" not in large_html
    # A page beyond the last is the last; the API pages the same way.
    assert "/items/rel-a5/" in client.get(url(old, new, 99)).content.decode()
    api = client.get(f"/api/releases/{new.pk}/compare/?against={old.pk}&page=3").json()
    assert (api["page"], api["pages"], api["added"], api["counts"]["added"]) == (3, 5, ["rel-a3"], 5)
