"""Keeping a worker's database steps going when the connection goes away.

``retry_database`` runs one database step and, when the connection fails, reconnects with exponential backoff and
runs it again. A process gives up after ``LLM_WORKER_DB_RETRY_SECONDS`` without reaching the database (counted
from the first failure, across its threads) and raises ``DatabaseUnavailable``; ``db_worker`` then exits non-zero
so that a service manager restarts it. A step must be safe to run again (its own transaction, no outer one).
"""

import logging
import threading
import time
from collections.abc import Callable
from contextlib import suppress

from django.conf import settings
from django.db import InterfaceError, OperationalError, connection

logger = logging.getLogger("llm.worker.recovery")

DATABASE_ERRORS = (OperationalError, InterfaceError)
RETRY_FIRST_SECONDS = 0.1
RETRY_MAX_SECONDS = 2.0


class DatabaseUnavailable(Exception):
    """The database stayed out of reach for longer than ``LLM_WORKER_DB_RETRY_SECONDS``."""


_outage_lock = threading.Lock()
_outage_since: float | None = None


def _outage_seconds(now: float) -> float:
    global _outage_since
    with _outage_lock:
        if _outage_since is None:
            _outage_since = now
        return now - _outage_since


def _outage_over() -> None:
    global _outage_since
    with _outage_lock:
        _outage_since = None


def close_connection() -> None:
    """Drop this thread's database connection (broken or not): the next query opens a fresh one."""
    with suppress(Exception):
        connection.close()


def retry_database[T](
    step: Callable[[], T], *, what: str, budget: float | None = None, sleep: Callable[[float], None] = time.sleep
) -> T:
    """Run ``step``; on a database connection error reconnect with backoff and run it again, logging each try.

    Raise ``DatabaseUnavailable`` once this process has gone ``budget`` seconds (``LLM_WORKER_DB_RETRY_SECONDS``)
    without reaching the database.
    """
    limit = settings.LLM_WORKER_DB_RETRY_SECONDS if budget is None else budget
    attempt = 0
    while True:
        try:
            result = step()
        except DATABASE_ERRORS as exc:
            close_connection()
            waited = _outage_seconds(time.monotonic())
            reason = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
            if waited >= limit:
                logger.error(
                    "%s: the database has been out of reach for %.1f s (LLM_WORKER_DB_RETRY_SECONDS=%g); giving up. "
                    "Last error: %s",
                    what,
                    waited,
                    limit,
                    reason,
                )
                raise DatabaseUnavailable(
                    f"The database has been out of reach for {waited:.0f} s (LLM_WORKER_DB_RETRY_SECONDS={limit:g}). "
                    f"Last error: {reason}"
                ) from exc
            delay = min(RETRY_FIRST_SECONDS * 2**attempt, RETRY_MAX_SECONDS, max(limit - waited, 0.01))
            attempt += 1
            logger.warning(
                "%s: database error (%s); reconnecting in %.1f s (try %d, out of reach for %.1f s of at most %g s)",
                what,
                reason,
                delay,
                attempt,
                waited,
                limit,
            )
            sleep(delay)
            continue
        if attempt:
            logger.warning("%s: the database is back after %d tries; carrying on", what, attempt)
        _outage_over()
        return result
