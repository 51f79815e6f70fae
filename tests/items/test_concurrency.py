"""Simultaneous saves of one item: exactly one wins, every other is told of the conflict (409), none fails (500).

Real threads with their own database connections, on SQLite and on PostgreSQL (``DATABASE_URL``). On PostgreSQL
a save that waited for the row lock must read the item's new current revision, not the one joined before it
waited.
"""

import threading

import pytest
from django.db import connection, transaction
from django.test import Client

from annotation.items import services
from annotation.items.models import Benchmark, Item, ItemRevision
from tests.concurrency import run_together, wait_until_blocked
from tests.factories import make_item, mcq_content

pytestmark = pytest.mark.django_db(transaction=True)

SAVERS = 6


def reworded(text: str) -> dict:
    content = mcq_content()
    content["en"]["question"] = text
    return content


def outcome(result: object) -> int | str:
    """Return the HTTP status of a response, or the exception a request raised (a 500 in production)."""
    return result.status_code if hasattr(result, "status_code") else f"500 {result!r}"


def clients_for(user: object, n: int) -> list[Client]:
    clients = []
    for _ in range(n):
        client = Client()
        client.force_login(user)
        clients.append(client)
    return clients


def test_a_save_that_waited_for_the_lock_sees_the_newer_revision_and_is_a_conflict(taxonomy, expert, lead):
    item = make_item(uid="locked-item", user=expert)
    state = services.ItemState(dimension=item.dimension, content=reworded("Waiting writer's wording?"))
    outcome_of_waiter: list[object] = []

    def waiting_save() -> None:
        try:
            outcome_of_waiter.append(
                services.item_revise(item=Item.objects.get(pk=item.pk), state=state, user=expert, base_revision=1)
            )
        except Exception as exc:  # the assertion below names it
            outcome_of_waiter.append(exc)
        finally:
            connection.close()

    with transaction.atomic():
        Item.objects.select_for_update().get(pk=item.pk)
        waiter = threading.Thread(target=waiting_save)
        waiter.start()
        wait_until_blocked()
        services.item_revise(
            item=item,
            state=services.ItemState(dimension=item.dimension, content=reworded("Lead's wording?")),
            user=lead,
            base_revision=1,
        )
    waiter.join(30)

    assert len(outcome_of_waiter) == 1
    assert isinstance(outcome_of_waiter[0], services.RevisionConflict), outcome_of_waiter
    assert "changed by lead1 (revision 2" in str(outcome_of_waiter[0])
    item.refresh_from_db()
    assert item.current_revision.number == 2
    assert item.current_revision.content["en"]["question"] == "Lead's wording?"


def test_a_save_without_base_revision_that_waited_for_the_lock_numbers_after_the_newer_revision(taxonomy, expert, lead):
    item = make_item(uid="locked-import", user=expert)
    state = services.ItemState(dimension=item.dimension, content=reworded("Re-imported wording?"))
    results: list[object] = []

    def waiting_save() -> None:
        try:
            results.append(services.item_revise(item=Item.objects.get(pk=item.pk), state=state, user=None))
        except Exception as exc:  # the assertion below names it
            results.append(exc)
        finally:
            connection.close()

    with transaction.atomic():
        Item.objects.select_for_update().get(pk=item.pk)
        waiter = threading.Thread(target=waiting_save)
        waiter.start()
        wait_until_blocked()
        services.item_revise(
            item=item,
            state=services.ItemState(dimension=item.dimension, content=reworded("Lead's wording?")),
            user=lead,
        )
    waiter.join(30)

    assert isinstance(results[0], ItemRevision), results
    assert results[0].number == 3
    assert list(item.revisions.order_by("number").values_list("number", flat=True)) == [1, 2, 3]


def test_simultaneous_page_saves_of_one_item_give_one_save_and_conflicts(taxonomy, expert):
    item = make_item(uid="busy-page", user=expert)
    base = {"dimension": str(item.dimension_id), "base_revision": "1", "message": "edited"}
    for lang, version in item.current_revision.content.items():
        base |= {f"{lang}-context": version["context"], f"{lang}-question": version["question"]}
        base |= {f"{lang}-option-{i}": option for i, option in enumerate(version["options"])}
        base[f"{lang}-answer"] = str(version["answer"])
    calls = [
        (lambda c=c, n=n: c.post("/items/busy-page/edit/", {**base, "en-question": f"Editor {n}'s wording?"}))
        for n, c in enumerate(clients_for(expert, SAVERS))
    ]

    statuses = [outcome(r) for r in run_together(calls)]

    assert sorted(statuses, key=str) == [302] + [409] * (SAVERS - 1), statuses
    item.refresh_from_db()
    assert item.revisions.count() == 2
    assert item.current_revision.number == 2


def test_simultaneous_api_revisions_of_one_item_give_one_save_and_json_conflicts(taxonomy, expert):
    make_item(uid="busy-api", user=expert)
    calls = [
        (
            lambda c=c, n=n: c.post(
                "/api/items/busy-api/revise/",
                {
                    "dimension": "hidden_emotion_recognition",
                    "content": reworded(f"Client {n}'s wording?"),
                    "base_revision": 1,
                },
                content_type="application/json",
            )
        )
        for n, c in enumerate(clients_for(expert, SAVERS))
    ]

    responses = run_together(calls)

    statuses = [outcome(r) for r in responses]
    assert sorted(statuses, key=str) == [200] + [409] * (SAVERS - 1), statuses
    conflicts = [r.json() for r in responses if r.status_code == 409]
    assert all(body["code"] == "revision_conflict" and "revision 2" in body["detail"] for body in conflicts)
    assert Item.objects.get(uid="busy-api").revisions.count() == 2


def test_simultaneous_api_creations_of_one_uid_give_one_item_and_clear_refusals(taxonomy, expert):
    body = {
        "uid": "same-uid",
        "benchmark": "facet",
        "dimension": "hidden_emotion_recognition",
        "kind": "mcq",
        "content": mcq_content(),
    }
    calls = [
        (lambda c=c: c.post("/api/items/", body, content_type="application/json")) for c in clients_for(expert, SAVERS)
    ]

    responses = run_together(calls)

    statuses = [outcome(r) for r in responses]
    assert sorted(statuses, key=str) == [201] + [400] * (SAVERS - 1), statuses
    refusals = [r.json() for r in responses if r.status_code == 400]
    assert all(body == {"uid": ["An item with uid same-uid already exists."]} for body in refusals), refusals
    assert Item.objects.filter(uid="same-uid").count() == 1


def test_simultaneous_page_creations_of_one_uid_give_one_item_and_form_errors(taxonomy, expert):
    facet = str(Benchmark.objects.get(slug="facet").pk)
    form = {"uid": "same-page-uid", "benchmark": facet, "kind": "mcq"}
    calls = [(lambda c=c: c.post("/items/new/", form)) for c in clients_for(expert, SAVERS)]

    responses = run_together(calls)

    statuses = [outcome(r) for r in responses]
    assert sorted(statuses, key=str) == [302] + [400] * (SAVERS - 1), statuses
    assert all("already exists" in r.content.decode() for r in responses if r.status_code == 400)
    assert Item.objects.filter(uid="same-page-uid").count() == 1
