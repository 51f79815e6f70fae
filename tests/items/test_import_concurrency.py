"""Simultaneous imports of the same items: none fails with a database error, none writes an item twice.

Real threads with their own connections, on SQLite and on PostgreSQL (``DATABASE_URL``).
"""

import pytest

from annotation.items import services
from annotation.items.models import Item, ItemRevision
from tests.concurrency import run_together
from tests.items.test_import_bulk import bulk_file

pytestmark = pytest.mark.django_db(transaction=True)


def test_simultaneous_imports_of_new_uids_create_each_item_once(taxonomy):
    data = bulk_file(20)
    results = run_together([lambda: services.items_import(data=data, user=None) for _ in range(3)])
    reports = [r for r in results if isinstance(r, services.ImportReport)]
    refusals = [r for r in results if isinstance(r, services.ImportFailed)]
    assert len(reports) + len(refusals) == 3, results
    # Whoever wrote first created the items; the others either waited and found them unchanged or were refused
    # naming the line of every uid taken meanwhile: never a half-written import.
    assert sorted(len(r.created) for r in reports)[-1] == 20
    assert all(len(r.created) in (0, 20) for r in reports)
    for refusal in refusals:
        assert all(e.field == "record" and "already exists" in e.message for e in refusal.errors)
        assert [e.line for e in refusal.errors] == sorted(e.line for e in refusal.errors)
    assert Item.objects.count() == 20 and ItemRevision.objects.count() == 20


def test_simultaneous_reimports_of_changed_content_number_revisions_in_turn(taxonomy):
    services.items_import(data=bulk_file(10), user=None)
    first = bulk_file(10).replace(b"Scene", b"First scene")
    second = bulk_file(10).replace(b"Scene", b"Second scene")
    results = run_together([lambda data=data: services.items_import(data=data, user=None) for data in (first, second)])
    assert all(isinstance(r, services.ImportReport) and len(r.revised) == 10 for r in results), results
    for item in Item.objects.select_related("current_revision"):
        assert sorted(item.revisions.values_list("number", flat=True)) == [1, 2, 3]
        assert item.current_revision.number == 3
