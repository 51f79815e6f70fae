"""A draft release's checklist and card are kept for the record they were computed from (annotation.releases.drafts):
a second view recomputes nothing, any change that could move a check recomputes it, and a large draft is checked
by a worker while the page and the API show the previous result."""

from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.items import services as items
from annotation.releases import services as releases
from annotation.releases.models import Release
from tests.factories import make_item
from tests.factories.llm import run_queued_tasks

TASK = "annotation.releases.tasks.draft_checks_compute"


def _make_draft(lead, version="0.9.0"):
    from annotation.items.models import Benchmark

    return releases.release_create(
        benchmark=Benchmark.objects.get(slug="facet"),
        version=version,
        title="draft",
        user=lead,
        filters={"status": "accepted"},
    )


def _view(client, release):
    with CaptureQueriesContext(connection) as queries:
        response = client.get(f"/releases/facet/{release.version}/")
    assert response.status_code == 200
    return response.content.decode(), queries


def test_a_kept_checklist_is_read_not_recomputed_and_a_change_recomputes_it(accepted_items, admin_user, login, lead):
    client = login(admin_user)
    draft = _make_draft(lead)
    first, computed = _view(client, draft)
    assert "Every item accepted" in first
    again, kept = _view(client, draft)
    assert len(kept) < len(computed)
    assert not [q for q in kept.captured_queries if '"items_itemrevision"."content"' in q["sql"]]
    # A new text of a pinned item sends it back to draft: the kept checklist no longer holds, and is not shown.
    item = accepted_items[0]
    content = item.current_revision.content
    content["en"]["context"] += " Edited."
    items.item_revise(item=item, state=items.ItemState(dimension=item.dimension, content=content), user=lead)
    after, recomputed = _view(client, Release.objects.get(pk=draft.pk))
    assert [q for q in recomputed.captured_queries if '"items_itemrevision"."content"' in q["sql"]]
    assert item.uid in after


def test_the_kept_view_reads_as_many_queries_for_a_larger_draft(accepted_items, admin_user, login, lead):
    client = login(admin_user)
    small = _make_draft(lead, "0.1.0")
    _view(client, small)
    _page, small_queries = _view(client, small)
    for n in range(8):
        make_item(uid=f"more-{n}", user=lead, status="accepted")
    large = _make_draft(lead, "0.2.0")
    _view(client, large)
    _page, large_queries = _view(client, large)
    assert len(large_queries) == len(small_queries) <= 10
    with CaptureQueriesContext(connection) as api_queries:
        assert client.get(f"/api/releases/{large.pk}/validation/").status_code == 200
    assert len(api_queries) <= 10


def test_a_large_draft_is_checked_by_a_worker_while_the_page_and_api_show_the_previous_result(
    accepted_items, admin_user, login, lead, settings
):
    settings.RELEASE_CHECK_INLINE_ENTRIES = 0
    client = login(admin_user)
    draft = _make_draft(lead)
    page, _queries = _view(client, draft)
    assert 'id="draft-state"' in page and 'hx-get="?part=checks"' in page
    assert "Every item accepted" not in page
    api = client.get(f"/api/releases/{draft.pk}/validation/")
    assert api.status_code == 202 and api.json()["checks"] is None and api.json()["current"] is False
    # Two views queue one check.
    assert run_queued_tasks(TASK) == 1
    polled = client.get(f"/releases/facet/{draft.version}/?part=checks", headers={"HX-Request": "true"})
    assert polled.headers.get("HX-Refresh") == "true"
    page, _queries = _view(client, draft)
    assert 'id="draft-state"' not in page
    api = client.get(f"/api/releases/{draft.pk}/validation/")
    assert api.status_code == 200 and api.json()["current"] is True
    codes = [check["code"] for check in api.json()["checks"]]
    assert "all_accepted" in codes
    # The record changes: the previous checklist is shown, marked, until the worker has checked again.
    releases.release_update(release=draft, user=lead, title="renamed")
    page, _queries = _view(client, Release.objects.get(pk=draft.pk))
    assert 'id="draft-state"' in page and "the checklist as of" in page
    api = client.get(f"/api/releases/{draft.pk}/validation/")
    assert api.status_code == 202 and [check["code"] for check in api.json()["checks"]] == codes
    assert run_queued_tasks(TASK) == 1
    assert client.get(f"/api/releases/{draft.pk}/validation/").status_code == 200


def test_while_a_worker_checks_the_page_reads_as_many_queries_for_a_larger_draft(
    accepted_items, admin_user, login, lead, settings
):
    settings.RELEASE_CHECK_INLINE_ENTRIES = 0
    client = login(admin_user)
    small = _make_draft(lead, "0.1.0")
    _view(client, small)  # queues the check, once
    page, small_queries = _view(client, small)
    assert 'id="draft-state"' in page
    for n in range(8):
        make_item(uid=f"more-{n}", user=lead, status="accepted")
    large = _make_draft(lead, "0.2.0")
    _view(client, large)
    page, large_queries = _view(client, large)
    assert 'id="draft-state"' in page and "more-7" in page
    assert len(large_queries) == len(small_queries) <= 10, [q["sql"][:120] for q in large_queries.captured_queries]
    # The entries are counted once, with the checklist's key, not again by the page's paginator.
    assert not [q for q in large_queries.captured_queries if q["sql"].startswith("SELECT COUNT(*) AS")]
    assert run_queued_tasks(TASK) == 2
