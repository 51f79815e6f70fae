"""The queue's locking rule, with committed transactions from two threads: a write that waited for an
assignment's lock sees what the holder of the lock committed, its round or set closed included."""

import threading

import pytest
from django.core.exceptions import ValidationError
from django.db import connection, transaction

from tests.concurrency import wait_until_blocked

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_write_waiting_for_the_lock_is_refused_when_the_round_or_set_closed_meanwhile(work):
    first, second, *_rest = work.queue()
    work.finish(first)
    results: list[object] = []

    def waiting_finish() -> None:
        try:
            results.append(work.finish(second))
        except Exception as exc:  # the assertion below names it
            results.append(exc)
        finally:
            connection.close()

    with transaction.atomic():
        work.model.objects.select_for_update().get(pk=second.pk)
        work.close()
        waiter = threading.Thread(target=waiting_finish)
        waiter.start()
        wait_until_blocked()
    waiter.join(30)

    assert len(results) == 1
    assert isinstance(results[0], ValidationError) and "closed" in str(results[0]), results
    assert getattr(work.model.objects.get(pk=second.pk), work.model.DONE_AT) is None
