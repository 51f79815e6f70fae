"""Run requests or service calls at the same moment from several threads, each with its own database connection.

Used by tests marked ``django_db(transaction=True)``: what the threads write is committed, so every thread sees the
others' work as a real server process would. Each thread closes its connection when done.
"""

import threading
import time
from collections.abc import Callable

from django.db import connection


def run_together(calls: list[Callable[[], object]], *, timeout: float = 60) -> list[object]:
    """Start every call at once (behind a barrier) and return each one's result, or the exception it raised."""
    barrier = threading.Barrier(len(calls))
    results: list[object] = [None] * len(calls)

    def run(index: int, call: Callable[[], object]) -> None:
        try:
            barrier.wait(timeout)
            results[index] = call()
        except Exception as exc:  # the test reports what each thread raised
            results[index] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
    assert not any(thread.is_alive() for thread in threads), "a thread did not finish"
    return results


def wait_until_blocked(*, count: int = 1, timeout: float = 10) -> None:
    """Wait until ``count`` other sessions wait for a row lock (PostgreSQL); on SQLite, give them a moment.

    SQLite has no lock view: a writer there waits at BEGIN IMMEDIATE, which a short pause lets it reach.
    """
    deadline = time.monotonic() + timeout
    if connection.vendor != "postgresql":
        time.sleep(0.5)
        return
    while time.monotonic() < deadline:
        with connection.cursor() as cursor:
            # Statistics views are read once per transaction unless the snapshot is cleared.
            cursor.execute("SELECT pg_stat_clear_snapshot()")
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
            )
            if cursor.fetchone()[0] >= count:
                return
        time.sleep(0.02)
    raise AssertionError(f"{count} session(s) did not start waiting for the lock within {timeout} s")
