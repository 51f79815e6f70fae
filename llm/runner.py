"""Work on a run inside a worker process: lease chunks, serve cache hits, send the rest, store the outcomes.

Called by the ``llm.tasks.run_work`` task. Any number of workers, on any number of machines sharing one
database, can work on the same run: each leases whole chunks (``select_for_update(skip_locked=True)`` on
PostgreSQL, a conditional UPDATE elsewhere) and renews the lease while it works. Every write for a chunk is
fenced by the claim number it was leased with, so a worker whose lease was taken over writes nothing.

Exactly-once billing: a call's n-th billable send always carries the same ``Idempotency-Key`` (its request
hash, suffixed with n after the first). If a worker dies after sending but before storing the reply, the
worker that takes over sends the same key again; a provider that honours idempotency keys (the simulator does)
returns the stored reply without billing it twice. See docs/llm.md for providers that do not.

The event loop runs in the worker's main thread; every database access goes through one extra thread, so the
ORM is never touched from async code and one connection serves the whole task. A lost database connection does
not fail the run: each database step is run again after reconnecting (``llm.recovery.retry_database``), with the
worker's own bookkeeping put back as it was before the failed step. If the database stays away for longer than
``LLM_WORKER_DB_RETRY_SECONDS``, the task gives up, releases nothing and leaves the run running: its leases
expire and a live worker queues the run again.

Requests are admitted by a ``llm.limits.SharedGate``, so the endpoint's concurrency and rate limits hold across
every worker.
"""

import asyncio
import dataclasses
import functools
import logging
import os
import signal
import socket
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from django.db import connection, connections, transaction
from django.db.models import F, Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from llm import limits, parsers, recovery
from llm.bulk import update_rows
from llm.executor import CallOutcome, CallSpec, EndpointConfig, Executor
from llm.lifecycle import run_transition
from llm.models import LLMCall, Run, RunChunk, RunItem
from llm.recording import (
    CALL_OUTCOME_FIELDS,
    CallState,
    KeyProblem,
    endpoint_config,
    json_safe,
    merge_outcome,
    outcome_cost,
    parse_cached,
)

logger = logging.getLogger("llm.runner")

TICK_SECONDS = 0.05


def worker_identity() -> str:
    """Return a name for this worker process that is unique across machines and restarts."""
    return f"{socket.gethostname()[:40]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


@dataclass
class Lease:
    chunk_id: int
    token: int
    pending: int  # distinct calls of this chunk still to store
    items_by_call: dict[int, list[int]] = field(default_factory=dict)
    items_left_pending: bool = False

    def copy(self) -> "Lease":
        return dataclasses.replace(self, items_by_call=dict(self.items_by_call))


@dataclass
class FlushResult:
    status: str
    lost: set[int]


class RunWorker:
    """One task's work on one run."""

    def __init__(self, run: Run, config: EndpointConfig, owner: str) -> None:
        self.run_id = run.pk
        self.endpoint = run.endpoint
        self.parser_name = run.parser
        self.parser = parsers.get(run.parser)
        self.max_parse_retries = run.max_parse_retries
        self.config = config
        self.owner = owner
        self.lease_seconds = settings.LLM_LEASE_SECONDS
        self.flush_seconds = settings.LLM_FLUSH_SECONDS
        self.leases: dict[int, Lease] = {}
        self.lost: set[int] = set()
        self.calls: dict[int, CallState] = {}
        self.succeeded_here = 0
        self.stop_requested = False
        self.previous_handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
        self.db_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="llm-db")
        # After a flush that failed, its commit may still have happened: the next flush checks what it stored.
        self.verify_next_flush = False
        self.gate = limits.SharedGate(
            limit=config.max_concurrency,
            rpm=config.rpm_limit,
            lease_seconds=self.lease_seconds,
            hold=self._hold_slots,
            reserve=self._reserve_starts,
        )

    # --- database side (always in the db thread) ------------------------------------------------------------

    def _claimable(self, now: object) -> Q:
        return Q(status=RunChunk.Status.PENDING) | Q(status=RunChunk.Status.LEASED, lease_expires_at__lt=now)

    def claim(self) -> tuple[Lease, list[CallSpec]] | None:
        """Lease the next available chunk and prepare it: cache hits are stored at once, the rest returned.

        If the database fails, the chunk is forgotten here; should its lease have been committed after all, the
        lease expires unrenewed and the chunk is claimed again.
        """
        before = set(self.leases)
        try:
            return self._claim()
        except recovery.DATABASE_ERRORS:
            for chunk_id in set(self.leases) - before:
                del self.leases[chunk_id]
            raise

    def _claim(self) -> tuple[Lease, list[CallSpec]] | None:
        with transaction.atomic():
            now = timezone.now()
            if not Run.objects.filter(pk=self.run_id, status=Run.Status.RUNNING).exists():
                return None
            chunks = RunChunk.objects.filter(run_id=self.run_id).filter(self._claimable(now)).order_by("number")
            claimed = None
            if connection.features.has_select_for_update_skip_locked:
                chunk = chunks.select_for_update(skip_locked=True).first()
                if chunk is not None:
                    RunChunk.objects.filter(pk=chunk.pk).update(
                        status=RunChunk.Status.LEASED,
                        lease_owner=self.owner,
                        lease_expires_at=now + timedelta(seconds=self.lease_seconds),
                        claims=F("claims") + 1,
                    )
                    claimed = (chunk.pk, chunk.claims + 1)
            else:
                for chunk_id, claims in chunks.values_list("pk", "claims")[:8]:
                    updated = (
                        RunChunk.objects.filter(pk=chunk_id, claims=claims)
                        .filter(self._claimable(now))
                        .update(
                            status=RunChunk.Status.LEASED,
                            lease_owner=self.owner,
                            lease_expires_at=now + timedelta(seconds=self.lease_seconds),
                            claims=claims + 1,
                        )
                    )
                    if updated:
                        claimed = (chunk_id, claims + 1)
                        break
            if claimed is None:
                return None
            return self._prepare(*claimed, now=now)

    def _prepare(self, chunk_id: int, token: int, *, now: object) -> tuple[Lease, list[CallSpec]]:
        items = list(
            RunItem.objects.filter(chunk_id=chunk_id, status=RunItem.Status.PENDING).values(
                "pk", "request_hash", "hints", "call_id"
            )
        )
        by_hash: dict[str, list[dict]] = {}
        for item in items:
            by_hash.setdefault(item["request_hash"], []).append(item)
        calls = {c["request_hash"]: c for c in self._calls(list(by_hash))}
        missing = [h for h in by_hash if h not in calls]
        if missing:
            fresh = Run.objects.values_list("fresh", flat=True).get(pk=self.run_id)
            requests = dict(
                RunItem.objects.filter(chunk_id=chunk_id, request_hash__in=missing).values_list(
                    "request_hash", "request"
                )
            )
            LLMCall.objects.bulk_create(
                [LLMCall(endpoint=self.endpoint, request_hash=h, request=requests[h], fresh=fresh) for h in missing],
                ignore_conflicts=True,
            )
            calls.update({c["request_hash"]: c for c in self._calls(missing)})
        lease = Lease(chunk_id=chunk_id, token=token, pending=0)
        specs: list[CallSpec] = []
        updates: list[dict] = []
        n_cached = n_failed = 0
        for digest, group in by_hash.items():
            call = calls[digest]
            self.calls[call["pk"]] = CallState(
                call_id=call["pk"],
                sends=call["sends"],
                retries=call["retries"],
                input_tokens=call["input_tokens"],
                output_tokens=call["output_tokens"],
                cost=call["cost"],
                attempts=list(call["attempts"] or []),
            )
            item_ids = [item["pk"] for item in group]
            parse_retries = self.max_parse_retries
            if call["status"] == LLMCall.Status.SUCCEEDED:
                result, problem = parse_cached(self.parser, call["response_text"], call["response_json"])
                if not problem or parse_retries == 0:
                    status = RunItem.Status.FAILED if problem else RunItem.Status.DONE
                    updates += [
                        {"pk": i, "call": call["pk"], "status": status, "cached": not problem, "result": result}
                        | {"error": problem, "finished_at": now}
                        for i in item_ids
                    ]
                    n_failed += len(item_ids) if problem else 0
                    n_cached += 0 if problem else len(item_ids)
                    continue
                parse_retries -= 1
            updates += [
                {"pk": item["pk"], "call": call["pk"], "status": RunItem.Status.PENDING, "cached": False}
                | {"result": None, "error": "", "finished_at": None}
                for item in group
                if item["call_id"] != call["pk"]
            ]
            lease.items_by_call[call["pk"]] = item_ids
            lease.pending += 1
            specs.append(
                CallSpec(
                    ident=(chunk_id, call["pk"]),
                    request=call["request"],
                    call_hash=digest,
                    first_send=call["sends"],
                    hints=group[0]["hints"] or {},
                    parser=self.parser,
                    max_parse_retries=parse_retries,
                )
            )
        update_rows(RunItem, updates, ["call", "status", "cached", "result", "error", "finished_at"])
        if n_cached or n_failed:
            Run.objects.filter(pk=self.run_id).update(
                done=F("done") + n_cached,
                cached=F("cached") + n_cached,
                failed=F("failed") + n_failed,
                heartbeat_at=now,
            )
        if lease.pending == 0:
            self._finish_chunk(chunk_id, now)
        else:
            self.leases[chunk_id] = lease
        return lease, specs

    def _calls(self, hashes: list[str]) -> list[dict]:
        return list(
            LLMCall.objects.filter(endpoint=self.endpoint, request_hash__in=hashes).values(
                "pk",
                "request_hash",
                "request",
                "status",
                "sends",
                "retries",
                "input_tokens",
                "output_tokens",
                "cost",
                "attempts",
                "response_text",
                "response_json",
            )
        )

    def _finish_chunk(self, chunk_id: int, now: object) -> None:
        RunChunk.objects.filter(pk=chunk_id).update(status=RunChunk.Status.DONE, finished_at=now, lease_expires_at=None)
        if not RunChunk.objects.filter(run_id=self.run_id).exclude(status=RunChunk.Status.DONE).exists():
            run_transition(run_id=self.run_id, to=Run.Status.DONE, finished_at=now)

    def flush(self, outcomes: list[CallOutcome]) -> FlushResult:
        """Store outcomes and renew leases in one transaction; report the run's status and any lost leases.

        If the database fails, this worker's bookkeeping is put back as it was, so that the same flush can run
        again after reconnecting; that next flush first looks up which outcomes the failed one stored after all
        (its commit may have succeeded unseen), so nothing is counted twice.
        """
        leases = {chunk_id: lease.copy() for chunk_id, lease in self.leases.items()}
        calls = {cid: dataclasses.replace(self.calls[cid]) for cid in {o.spec.ident[1] for o in outcomes}}
        lost, succeeded = set(self.lost), self.succeeded_here
        try:
            result = self._flush(outcomes)
        except recovery.DATABASE_ERRORS:
            self.leases, self.lost, self.succeeded_here = leases, lost, succeeded
            self.calls.update(calls)
            self.verify_next_flush = True
            raise
        self.verify_next_flush = False
        return result

    def _stored_already(self, outcomes: list[CallOutcome]) -> set[int]:
        """Return the calls among ``outcomes`` whose items are no longer pending: an unseen commit stored them."""
        first_items = {}
        for outcome in outcomes:
            chunk_id, call_id = outcome.spec.ident
            lease = self.leases.get(chunk_id)
            item_ids = lease.items_by_call.get(call_id) if lease else None
            if item_ids:
                first_items[item_ids[0]] = call_id
        stored = RunItem.objects.filter(pk__in=list(first_items)).exclude(status=RunItem.Status.PENDING)
        return {first_items[pk] for pk in stored.values_list("pk", flat=True)}

    def _flush(self, outcomes: list[CallOutcome]) -> FlushResult:
        with transaction.atomic():
            now = timezone.now()
            expires = now + timedelta(seconds=self.lease_seconds)
            for chunk_id, lease in list(self.leases.items()):
                renewed = RunChunk.objects.filter(
                    pk=chunk_id, status=RunChunk.Status.LEASED, lease_owner=self.owner, claims=lease.token
                ).update(lease_expires_at=expires)
                if not renewed:
                    logger.warning(
                        "Run %s: lease on chunk %s was taken over; dropping its results", self.run_id, chunk_id
                    )
                    self.lost.add(chunk_id)
                    del self.leases[chunk_id]
            stored = self._stored_already(outcomes) if self.verify_next_flush else set()
            calls: list[dict] = []
            items: list[dict] = []
            done = failed = 0
            spent = Decimal("0")
            broken = ""
            finished_chunks = []
            for outcome in outcomes:
                chunk_id, call_id = outcome.spec.ident
                lease = self.leases.get(chunk_id)
                if lease is None:
                    continue
                state = self.calls[call_id]
                cost = outcome_cost(outcome, self.endpoint)
                values = merge_outcome(state, outcome, cost)
                item_ids = lease.items_by_call.pop(call_id, [])
                lease.pending -= 1
                if lease.pending == 0:
                    finished_chunks.append(chunk_id)
                if outcome.received:
                    self.succeeded_here += 1
                if call_id in stored:
                    continue
                calls.append({"pk": call_id, **values})
                if self._endpoint_broken(outcome):
                    # The items stay pending: once the endpoint is fixed, resuming the run sends them again.
                    broken = broken or outcome.error
                    lease.items_left_pending = True
                    continue
                if outcome.received and outcome.parsed is not False:
                    result, problem = json_safe(outcome.result)
                else:
                    result, problem = None, outcome.error or "failed"
                for index, item_id in enumerate(item_ids):
                    item_cost = cost if index == 0 else Decimal("0")
                    spent += item_cost
                    status = RunItem.Status.FAILED if problem else RunItem.Status.DONE
                    if problem:
                        failed += 1
                    else:
                        done += 1
                    items.append(
                        {
                            "pk": item_id,
                            "status": status,
                            "result": result,
                            "error": problem,
                            "cost": item_cost,
                            "finished_at": now,
                        }
                    )
            update_rows(LLMCall, calls, CALL_OUTCOME_FIELDS)
            update_rows(RunItem, items, ["status", "result", "error", "cost", "finished_at"])
            Run.objects.filter(pk=self.run_id).update(
                done=F("done") + done, failed=F("failed") + failed, spent=F("spent") + spent, heartbeat_at=now
            )
            if broken:
                run_transition(run_id=self.run_id, to=Run.Status.FAILED, error=broken, finished_at=now)
            for chunk_id in finished_chunks:
                if not self.leases[chunk_id].items_left_pending:
                    del self.leases[chunk_id]
                    self._finish_chunk(chunk_id, now)
            status = Run.objects.values_list("status", flat=True).get(pk=self.run_id)
            return FlushResult(status=status, lost=set(self.lost))

    def _endpoint_broken(self, outcome: CallOutcome) -> bool:
        if outcome.endpoint_broken:
            return True
        # Unreachable before anything ever came back: the base URL is wrong, not this one request.
        return outcome.error_kind == "connection" and self.succeeded_here == 0 and not self._run_has_replies()

    def _run_has_replies(self) -> bool:
        run = Run.objects.only("done", "cached").get(pk=self.run_id)
        return run.done > run.cached

    def release(self) -> None:
        """Give back unfinished chunks and the endpoint's slots so that other workers can take them at once."""
        with transaction.atomic():
            for chunk_id, lease in self.leases.items():
                RunChunk.objects.filter(pk=chunk_id, lease_owner=self.owner, claims=lease.token).exclude(
                    status=RunChunk.Status.DONE
                ).update(status=RunChunk.Status.PENDING, lease_owner="", lease_expires_at=None)
            limits.slots_release(endpoint_id=self.endpoint.pk, owner=self.owner)
        self.leases.clear()

    async def _hold_slots(self, want: int) -> int:
        return await self._db(
            functools.partial(
                limits.slots_hold,
                endpoint_id=self.endpoint.pk,
                owner=self.owner,
                limit=self.config.max_concurrency,
                want=want,
                lease_seconds=self.lease_seconds,
            )
        )

    async def _reserve_starts(self, count: int) -> float:
        return await self._db(
            functools.partial(
                limits.starts_reserve, endpoint_id=self.endpoint.pk, rpm=self.config.rpm_limit, count=count
            )
        )

    def state(self) -> tuple[str, int]:
        """Return the run's status and how many of its chunks are not done."""
        status = Run.objects.values_list("status", flat=True).get(pk=self.run_id)
        unfinished = RunChunk.objects.filter(run_id=self.run_id).exclude(status=RunChunk.Status.DONE).count()
        if unfinished == 0 and status == Run.Status.RUNNING:
            run_transition(run_id=self.run_id, to=Run.Status.DONE, finished_at=timezone.now())
            status = Run.Status.DONE
        return status, unfinished

    # --- the event loop side ------------------------------------------------------------------------------

    @staticmethod
    def _collect(inflight: set, buffer: list, task: asyncio.Task) -> None:
        inflight.discard(task)
        if not task.cancelled():
            buffer.append(task.result())

    def _request_stop(self, signum: int, previous: object) -> None:
        """Stop taking chunks and finish what is in flight; let db_worker's own handler see the signal too."""
        logger.warning("Run %s: %s received, finishing requests in flight", self.run_id, signal.strsignal(signum))
        self.stop_requested = True
        if callable(previous):
            previous(signum, None)

    async def _db(self, function: object, *args: object) -> object:
        """Run a database step in the database thread, again after reconnecting if the connection fails."""
        step = functools.partial(recovery.retry_database, functools.partial(function, *args), what=f"Run {self.run_id}")
        return await asyncio.get_running_loop().run_in_executor(self.db_thread, step)

    async def main(self) -> None:
        inflight: set[asyncio.Task] = set()
        buffer: list[CallOutcome] = []
        target = max(2 * self.config.max_concurrency, 8)
        stopping = cancelling = False
        more_chunks = True
        last_flush = time.monotonic()
        heartbeat_every = max(self.lease_seconds / 3, 0.2)
        next_state_check = 0.0
        loop = asyncio.get_running_loop()
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(signum, self._request_stop, signum, self.previous_handlers.get(signum))
        async with Executor(self.config, gate=self.gate) as executor:
            while True:
                await self.gate.maintain()
                if self.stop_requested and not stopping:
                    stopping = True
                while not stopping and more_chunks and len(inflight) < target:
                    claimed = await self._db(self.claim)
                    if claimed is None:
                        more_chunks = False
                        break
                    _lease, specs = claimed
                    for spec in specs:
                        task = asyncio.create_task(executor.call(spec))
                        inflight.add(task)
                        task.add_done_callback(functools.partial(self._collect, inflight, buffer))
                now = time.monotonic()
                due = buffer and (now - last_flush >= self.flush_seconds or not inflight or len(buffer) >= 500)
                if due or (self.leases and now - last_flush >= heartbeat_every):
                    batch, buffer[:] = list(buffer), []
                    result = await self._db(self.flush, batch)
                    last_flush = time.monotonic()
                    if result.status != Run.Status.RUNNING:
                        stopping = True
                        cancelling = result.status in (Run.Status.CANCELLED, Run.Status.FAILED)
                    if cancelling:
                        for task in list(inflight):
                            task.cancel()
                    continue
                if not inflight and not buffer:
                    if stopping:
                        break
                    if now < next_state_check:
                        await asyncio.sleep(TICK_SECONDS)
                        continue
                    status, unfinished = await self._db(self.state)
                    if status != Run.Status.RUNNING or unfinished == 0:
                        break
                    # Other workers hold the remaining chunks: wait, and take over any whose lease expires.
                    more_chunks = True
                    next_state_check = time.monotonic() + min(1.0, self.lease_seconds / 4)
                    continue
                await asyncio.sleep(TICK_SECONDS)
                if time.monotonic() >= next_state_check:
                    more_chunks = True
                    next_state_check = time.monotonic() + 0.5

    def close(self) -> None:
        def close_connections() -> None:
            with suppress(Exception):
                connections.close_all()

        self.db_thread.submit(close_connections).result()
        self.db_thread.shutdown(wait=True)


def run_work(*, run_id: int, owner: str | None = None) -> str:
    """Work on a run until it is done, paused, cancelled or failed, or other workers hold the rest; return its status.

    Never raises for a provider's errors: they are recorded on the calls, items and run. Raises
    ``llm.recovery.DatabaseUnavailable`` when the database stays out of reach, leaving the run running.
    """
    owner = owner or worker_identity()
    retry = functools.partial(recovery.retry_database, what=f"Run {run_id}")

    def start() -> Run:
        now = timezone.now()
        started = Coalesce(F("started_at"), now)
        run_transition(run_id=run_id, to=Run.Status.RUNNING, started_at=started, heartbeat_at=now)
        return Run.objects.select_related("endpoint").get(pk=run_id)

    run = retry(start)
    if run.status != Run.Status.RUNNING:
        return run.status
    try:
        config = endpoint_config(run.endpoint)
        parsers.get(run.parser)
    except (KeyProblem, KeyError) as exc:
        message = str(exc).strip('"')
        retry(lambda: run_transition(run_id=run_id, to=Run.Status.FAILED, error=message, finished_at=timezone.now()))
        return Run.Status.FAILED
    worker = RunWorker(run, config, owner)
    interrupted = database_lost = False
    try:
        asyncio.run(worker.main())
    except (KeyboardInterrupt, SystemExit):
        interrupted = True
        raise
    except (recovery.DatabaseUnavailable, *recovery.DATABASE_ERRORS):
        # Release nothing and record nothing: the leases expire, and a live worker queues the run again.
        database_lost = True
        logger.error("Run %s: worker %s lost the database; the run stays running for other workers", run_id, owner)
        raise
    except Exception as exc:
        logger.exception("Run %s: worker %s stopped by an unexpected error", run_id, owner)
        error = f"Internal error in worker {owner}: {type(exc).__name__}: {exc}"
        retry(lambda: run_transition(run_id=run_id, to=Run.Status.FAILED, error=error, finished_at=timezone.now()))
        raise
    finally:
        for signum, handler in worker.previous_handlers.items():
            if threading.current_thread() is threading.main_thread() and handler is not None:
                signal.signal(signum, handler)
        try:
            if not database_lost:
                worker.db_thread.submit(retry, worker.release).result()
        finally:
            worker.close()
        if (interrupted or worker.stop_requested) and not database_lost:
            retry(lambda: _continue_later(run_id))
    return retry(lambda: Run.objects.values_list("status", flat=True).get(pk=run_id))


def _continue_later(run_id: int) -> None:
    """Queue another task for a run this worker left unfinished because it was asked to stop."""
    from llm.tasks import run_work as run_work_task

    if Run.objects.filter(pk=run_id, status=Run.Status.RUNNING).exists():
        run_work_task.enqueue(run_id)
