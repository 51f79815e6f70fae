"""Work on a run inside a worker process: lease chunks, serve cache hits, send the rest, store the outcomes.

Called by the ``llm.worker.tasks.run_work`` task. Any number of workers, on any number of machines sharing one
database, can work on the same run: each leases whole chunks (``select_for_update(skip_locked=True)`` on
PostgreSQL, a conditional UPDATE elsewhere) and renews the lease while it works. Every write for a chunk is
fenced by the claim number it was leased with, so a worker whose lease was taken over writes nothing.

Exactly-once billing: a call's n-th billable send always carries the same ``Idempotency-Key`` (its request
hash, suffixed with n after the first). If a worker dies after sending but before storing the reply, the
worker that takes over sends the same key again; a provider that honours idempotency keys (the simulator does)
returns the stored reply without billing it twice. See docs/llm.md for providers that do not.

The event loop runs in the worker's main thread; every database access goes through one extra thread, so the
ORM is never touched from async code and one connection serves the whole task. A lost database connection does
not fail the run: each database step is run again after reconnecting (``llm.worker.database.retry_database``),
with the worker's own bookkeeping put back as it was before the failed step. If the database stays away for
longer than ``LLM_WORKER_DB_RETRY_SECONDS``, the task gives up, releases nothing and leaves the run running: its
leases expire and a live worker queues the run again.

Requests are admitted by a ``llm.worker.limits.SharedGate``, so the endpoint's concurrency and rate limits hold
across every worker.

Batch mode: a chunk's requests go to the provider as one batch (``llm.worker.batches``). The ``RunBatch`` row is
written ("creating", with its requests) before the provider is asked, and the provider's batch id right after; a worker
that finds a row "creating" without an id looks the batch up by its key in the provider's metadata before creating
one. The results are stored as ordinary calls, in the same transaction that marks the batch finished. When the run
is cancelled (or fails) while a worker follows its batches, the worker asks the provider to cancel the open ones.

Budgets: before a live request is sent (or a batch created) its most possible cost is reserved on the run with a
conditional UPDATE (``spent + reserved + cost <= budget``), so the budget holds across workers; the reservation is
released when the outcome is stored. When nothing fits and nothing is reserved any more, the run is paused with
the reason "budget".
"""

import asyncio
import dataclasses
import functools
import logging
import signal
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from decimal import Decimal

from django.db import connections
from django.db.models import F
from django.db.models.functions import Coalesce
from django.utils import timezone

from llm import parsers
from llm.executor import CallOutcome, CallSpec, EndpointConfig, Executor, backoff_delay
from llm.lifecycle import run_transition
from llm.models import Run, RunBatch
from llm.recording import (
    KeyProblem,
    endpoint_config,
)
from llm.worker import batches, database
from llm.worker.chunks import MAX_BATCH_ATTEMPTS, NOTHING, TICK_SECONDS, ChunkStore  # noqa: F401
from llm.worker.leases import BatchProviderError, BatchTaskResult, FlushResult, Lease, worker_identity  # noqa: F401

logger = logging.getLogger("llm.worker.runner")


class RunWorker(ChunkStore):
    """One task's work on one run: the event loop side (``ChunkStore`` holds the database side)."""

    # --- the event loop side ------------------------------------------------------------------------------

    async def _send_live(self, executor: Executor, lease: Lease, spec: CallSpec) -> CallOutcome | None:
        """Send one request, after reserving its most possible cost when the run has a budget; None if not sent."""
        if self.budgeted:
            amount = self.live_cost(spec)
            if not (self._allowance_draw(lease, amount) or await self._budget_reserve(lease, amount)):
                return None
            self.reservations[spec.ident] = amount
        return await executor.call(spec)

    def _expect_live(self, lease: Lease, count: int) -> None:
        """Count ``count`` more live requests of a chunk that will draw on its budget allowance (and take over what
        its claim reserved ahead)."""
        key = (lease.chunk_id, lease.token)
        self.undrawn[key] = self.undrawn.get(key, 0) + count
        if lease.allowance:
            self.allowance[key] = self.allowance.get(key, Decimal("0")) + lease.allowance
            lease.allowance = Decimal("0")

    def _allowance_draw(self, lease: Lease, amount: Decimal) -> bool:
        """Take ``amount`` from what is reserved ahead for the chunk, with no database write; False if it has too
        little, or the lease was not renewed within half a lease (another worker may hold the chunk by now)."""
        key = (lease.chunk_id, lease.token)
        held = self.leases.get(lease.chunk_id)
        left = self.allowance.get(key, Decimal("0"))
        if held is None or held.token != lease.token or left < amount:
            return False
        if time.monotonic() - self.renewed_at >= self.lease_seconds / 2:
            return False
        self.allowance[key] = left - amount
        self._drawn(key)
        return True

    def _drawn(self, key: tuple[int, int]) -> None:
        undrawn = self.undrawn.get(key, 1) - 1
        if undrawn > 0:
            self.undrawn[key] = undrawn
        else:
            self.undrawn.pop(key, None)
            if not self.allowance.get(key):
                self.allowance.pop(key, None)

    async def _budget_reserve(self, lease: Lease, amount: Decimal) -> bool:
        """Reserve the budget for this request and, room allowing, the chunk's next few (one write for several);
        near the end of the budget, give back every allowance first and reserve for this request alone."""
        key = (lease.chunk_id, lease.token)
        # One reservation at a time: requests waiting for room do not all poll the database.
        async with self.reserve_lock:
            while True:
                if self.stopping:
                    return False
                if self._allowance_draw(lease, amount):  # reserved for it while it waited
                    return True
                ahead = max(1, min(self.reserve_block, self.undrawn.get(key, 1)))
                status, got = await self._db(self.reserve, lease.chunk_id, lease.token, amount * ahead, amount)
                if status not in ("ok", "lost"):
                    returns = {k: v for k, v in self.allowance.items() if v > 0}
                    if returns:
                        # Taken from the event loop's side before the database gives them back: none is drawn twice.
                        for k in returns:
                            self.allowance[k] = Decimal("0")
                        status, got = await self._db(self.reserve, lease.chunk_id, lease.token, amount, amount, returns)
                if status == "ok":
                    self.allowance[key] = self.allowance.get(key, Decimal("0")) + got - amount
                    self._drawn(key)
                    return True
                if status in ("paused", "stopped"):
                    self.stopping = True
                if status != "wait":
                    return False
                await asyncio.sleep(min(0.2, self.flush_seconds))

    async def _provider(
        self, executor: Executor, method: object, *args: object, attempts: int | None = None, **kwargs: object
    ) -> object:
        """Call the Files or Batches API, again after transient errors, at most ``attempts`` times in all
        (``LLM_BATCH_API_ATTEMPTS`` by default); raise ``BatchProviderError`` for others or when the tries run out."""
        attempts = attempts or self.batch_api_attempts
        tries = 0
        while True:
            try:
                return await method(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - classified: transient errors are retried, others reported
                kind, message, transient = batches.failure_of(exc, base_url=self.config.base_url)
                if not transient or tries + 1 >= attempts:
                    tried = f" (tried {tries + 1} times)" if transient else ""
                    raise BatchProviderError(kind, message + tried) from exc
                delay = backoff_delay(tries, base=self.config.backoff_base, cap=self.config.backoff_max)
                logger.warning("Run %s: batch API error (%s); trying again in %.1f s", self.run_id, message, delay)
                tries += 1
                await asyncio.sleep(delay)

    async def _batch_find(self, executor: Executor, key: str) -> str:
        """Return the id of the provider's batch created with ``key`` in its metadata, or "" if there is none."""
        page = await self._provider(executor, executor.client.batches.list, limit=100)
        while True:
            for batch in page.data:
                if (batch.metadata or {}).get("eistudio_batch") == key:
                    return batch.id
            if not page.has_next_page():
                return ""
            page = await self._provider(executor, page.get_next_page)

    async def _batch_create(
        self, executor: Executor, lease: Lease, row: dict, specs: list[CallSpec]
    ) -> tuple[str, str] | None:
        """Upload the requests and create the batch; None if the chunk changed hands meanwhile (nothing created)."""
        content = batches.input_jsonl(specs, api_style=self.config.api_style, simulator=self.config.is_simulator)
        upload = await self._provider(
            executor, executor.client.files.create, file=(f"{row['key']}.jsonl", content), purpose="batch"
        )
        # A worker that lost its lease (too slow to renew it) must not create a batch the new holder may create too.
        if not await self._db(self._lease_is_mine, lease.chunk_id, lease.token):
            return None
        batch = await self._provider(
            executor,
            executor.client.batches.create,
            input_file_id=upload.id,
            endpoint=batches.batch_url(self.config.api_style),
            completion_window="24h",
            metadata={"eistudio_batch": row["key"]},
        )
        return batch.id, upload.id

    async def _batch_new(self, executor: Executor, lease: Lease, specs: list[CallSpec], attempt: int) -> object:
        """Record a new batch for ``specs`` (once the budget has room), create it at the provider and follow it."""
        while True:
            status, row = await self._db(self.batch_begin, lease.chunk_id, lease.token, specs, attempt)
            if status == "ok":
                return await self._batch_follow(executor, lease, row, specs, created_here=True)
            if status != "wait" or self.stopping:
                return BatchTaskResult(lease=lease, attempt=attempt)
            await asyncio.sleep(min(self.poll_seconds, 1.0))

    async def _batch_follow(
        self, executor: Executor, lease: Lease, row: dict, specs: list[CallSpec], *, created_here: bool = False
    ) -> BatchTaskResult:
        """Create the batch if nobody did, poll it until it is finished and read its results."""
        batch_id = row["provider_batch_id"]
        try:
            if not batch_id:
                # A worker may have died between creating the batch and recording its id: ask the provider first.
                batch_id = "" if created_here else await self._batch_find(executor, row["key"])
                input_file_id = ""
                if not batch_id:
                    created = await self._batch_create(executor, lease, row, specs)
                    if created is None:
                        return BatchTaskResult(lease=lease, attempt=row["attempt"])
                    batch_id, input_file_id = created
                await self._db(self.batch_submitted, row["pk"], batch_id, input_file_id)
            last_status = None
            while True:
                batch = await self._provider(executor, executor.client.batches.retrieve, batch_id)
                if batch.status != last_status:
                    last_status = batch.status
                    await self._db(self.batch_progress, row["pk"], batch)
                if batch.status in batches.FINISHED:
                    break
                if self.stopping:
                    # Paused or stopping: the batch goes on at the provider; whoever claims the chunk follows it.
                    return BatchTaskResult(lease=lease, attempt=row["attempt"])
                if self.park:
                    # Not waited for here: the chunk is given back until its next poll, and this worker serves others.
                    return BatchTaskResult(lease=lease, attempt=row["attempt"], parked=True)
                await asyncio.sleep(self.poll_seconds)
            lines: dict[str, dict] = {}
            for file_id in (batch.error_file_id, batch.output_file_id):
                if file_id:
                    content = await self._provider(executor, executor.client.files.content, file_id)
                    lines.update(batches.read_lines(content.content))
        except BatchProviderError as exc:
            return await self._batch_gave_up(executor, lease, row, specs, batch_id, exc)
        results = batches.outcomes_from_lines(
            specs, lines, api_style=self.config.api_style, provider_batch_id=batch_id, status=batch.status
        )
        final = batch.status if batch.status in RunBatch.Status.values else RunBatch.Status.COMPLETED
        return BatchTaskResult(
            lease, results.outcomes, results.retry, (row["pk"], lease.chunk_id, final), attempt=row["attempt"]
        )

    async def _batch_gave_up(
        self, executor: Executor, lease: Lease, row: dict, specs: list[CallSpec], batch_id: str, exc: BatchProviderError
    ) -> BatchTaskResult:
        """The Files or Batches API failed for good: record why, then send the requests live or fail the run, as the
        run says (``batch_fallback``). A batch created already is cancelled first, so nobody waits for it."""
        if batch_id:
            try:
                await self._provider(executor, executor.client.batches.cancel, batch_id, attempts=3)
            except BatchProviderError as cancel_error:
                logger.warning("Run %s: the provider did not cancel batch %s: %s", self.run_id, batch_id, cancel_error)
        live = self.batch_fallback == Run.Mode.LIVE
        message = f"The provider's Batch API failed: {exc}"
        await self._db(self.batch_gave_up, row["pk"], lease.chunk_id, lease.token, message, live)
        if live:
            return BatchTaskResult(lease, retry=specs, attempt=MAX_BATCH_ATTEMPTS)
        return BatchTaskResult(lease, attempt=row["attempt"])

    async def _batches_cancel(self, executor: Executor) -> None:
        """Ask the provider to cancel the run's open batches: the run was cancelled (or failed) and nobody will read
        them. A refusal (the batch finished meanwhile) is logged; every one is marked cancelled here."""
        rows = await self._db(self.batches_open)
        for _pk, batch_id, key in rows:
            try:
                if not batch_id:
                    # Left "creating": its worker may have created it before recording the id.
                    batch_id = await self._batch_find(executor, key)
                if batch_id:
                    await self._provider(executor, executor.client.batches.cancel, batch_id, attempts=3)
            except BatchProviderError as exc:
                logger.warning("Run %s: the provider did not cancel batch %s: %s", self.run_id, batch_id or key, exc)
        if rows:
            await self._db(self.batches_cancelled, [pk for pk, _batch_id, _key in rows])
            logger.info("Run %s: %s provider batches cancelled", self.run_id, len(rows))

    async def clean_up(self) -> None:
        """Cancel the open batches of a run that was cancelled or failed while no worker followed them."""
        async with Executor(self.config, gate=self.gate) as executor:
            await self._batches_cancel(executor)

    def _request_stop(self, signum: int, previous: object) -> None:
        """Stop taking chunks and finish what is in flight; let db_worker's own handler see the signal too."""
        logger.warning("Run %s: %s received, finishing requests in flight", self.run_id, signal.strsignal(signum))
        self.stop_requested = True
        if callable(previous):
            previous(signum, None)

    async def _db(self, function: object, *args: object) -> object:
        """Run a database step in the database thread, again after reconnecting if the connection fails."""
        step = functools.partial(database.retry_database, functools.partial(function, *args), what=f"Run {self.run_id}")
        return await asyncio.get_running_loop().run_in_executor(self.db_thread, step)

    async def main(self) -> None:
        """Claim chunks, send their requests and store what comes back until the run stops or nothing is left."""
        loop = asyncio.get_running_loop()
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(signum, self._request_stop, signum, self.previous_handlers.get(signum))
        async with Executor(self.config, gate=self.gate) as executor:
            flight = _Flight(self, executor)
            while True:
                await self.gate.maintain()
                if self.stop_requested or self.stopping:
                    flight.stopping = True
                self.stopping = flight.stopping
                await self._claim_more(flight)
                now = time.monotonic()
                if self._flush_due(flight, now):
                    await self._flush_flight(flight)
                    continue
                if flight.idle:
                    if flight.stopping or await self._idle_done(flight, now):
                        break
                    continue
                await asyncio.sleep(TICK_SECONDS)
                if time.monotonic() >= flight.next_state_check:
                    flight.more_chunks = True
                    flight.next_state_check = time.monotonic() + 0.5

    async def _claim_more(self, flight: "_Flight") -> None:
        """Claim chunks and start their requests until enough are in flight or none is left to claim."""
        target = max(2 * self.config.max_concurrency, 8)
        while not flight.stopping and flight.more_chunks and len(flight.inflight) < target:
            claimed = await self._db(self.claim)
            if claimed is None:
                flight.more_chunks = False
                break
            flight.start(*claimed)

    def _flush_due(self, flight: "_Flight", now: float) -> bool:
        """Whether to store now: outcomes waited long enough or are many, nothing else is in flight, an endpoint
        error (stored at once, so that requests in flight are cancelled), chunks to give back, or a lease to renew."""
        buffer = flight.buffer
        due = buffer and (now - flight.last_flush >= self.flush_seconds or not flight.inflight or len(buffer) >= 500)
        due = (
            due
            or ((flight.finished_batches or self.held) and not flight.inflight)
            or any(o.endpoint_broken for o in buffer)
        )
        heartbeat_every = max(self.lease_seconds / 3, 0.2)
        return bool(due or flight.parking() or (self.leases and now - flight.last_flush >= heartbeat_every))

    async def _flush_flight(self, flight: "_Flight") -> None:
        """Store what came back and renew the leases; stop (and cancel what is in flight) once the run stops."""
        # Chunks whose batches are all under way at the provider, with nothing else in flight: given back.
        parking = flight.parking()
        batch, flight.buffer[:] = list(flight.buffer), []
        finished, flight.finished_batches[:] = tuple(flight.finished_batches), []
        flight.parked.difference_update(parking)
        result = await self._db(self.flush, batch, finished, not flight.inflight, parking)
        flight.last_flush = time.monotonic()
        if result.status != Run.Status.RUNNING:
            flight.stopping = self.stopping = True
            flight.cancelling = result.status in (Run.Status.CANCELLED, Run.Status.FAILED)
        if flight.cancelling:
            for task in list(flight.inflight):
                task.cancel()
            if self.batch_mode and not flight.provider_cancelled:
                flight.provider_cancelled = True
                await self._batches_cancel(flight.executor)

    async def _idle_done(self, flight: "_Flight", now: float) -> bool:
        """With nothing in flight or to store: whether the work is over (the run stopped or finished, or every chunk
        left waits for its batch); otherwise wait for chunks other workers hold, to take over any whose lease
        expires."""
        if now < flight.next_state_check:
            await asyncio.sleep(TICK_SECONDS)
            return False
        status, unfinished, waiting, poll_at = await self._db(self.state)
        if status != Run.Status.RUNNING or unfinished == 0:
            return True
        if self.park and waiting == unfinished:
            # Every chunk left waits for its batch: a task queued for the next poll carries on.
            await self._db(self.poll_later, self.run_id, poll_at)
            return True
        flight.more_chunks = True
        flight.next_state_check = time.monotonic() + min(1.0, self.lease_seconds / 4)
        return False

    def close(self) -> None:
        def close_connections() -> None:
            with suppress(Exception):
                connections.close_all()

        self.db_thread.submit(close_connections).result()
        self.db_thread.shutdown(wait=True)


@dataclasses.dataclass(eq=False)
class _Flight:
    """What one ``RunWorker.main`` has under way: the tasks in flight (by chunk), what they returned that is not
    stored yet, and where its loop stands."""

    worker: RunWorker
    executor: Executor
    inflight: set[asyncio.Task] = dataclasses.field(default_factory=set)
    by_chunk: dict[int, set[asyncio.Task]] = dataclasses.field(default_factory=dict)
    # Chunks whose batches are under way at the provider: given back once nothing else of theirs is in flight.
    parked: set[int] = dataclasses.field(default_factory=set)
    buffer: list[CallOutcome] = dataclasses.field(default_factory=list)
    finished_batches: list[tuple[int, int, str]] = dataclasses.field(default_factory=list)
    stopping: bool = False
    cancelling: bool = False
    provider_cancelled: bool = False
    more_chunks: bool = True
    last_flush: float = dataclasses.field(default_factory=time.monotonic)
    next_state_check: float = 0.0

    @property
    def idle(self) -> bool:
        """Whether nothing is in flight, waits to be stored or is held back."""
        return not self.inflight and not self.buffer and not self.finished_batches and not self.worker.held

    def parking(self) -> tuple[int, ...]:
        """Return the parked chunks with nothing in flight any more."""
        return tuple(chunk_id for chunk_id in self.parked if not self.by_chunk.get(chunk_id))

    def spawn(self, coroutine: object, chunk_id: int) -> None:
        task = asyncio.create_task(coroutine)
        self.inflight.add(task)
        self.by_chunk.setdefault(chunk_id, set()).add(task)
        task.add_done_callback(functools.partial(self.collect, chunk_id=chunk_id))

    def collect(self, task: asyncio.Task, *, chunk_id: int) -> None:
        """Take what a finished task returned: an outcome, or a batch's outcomes and what to send again."""
        self.inflight.discard(task)
        self.by_chunk.get(chunk_id, set()).discard(task)
        if task.cancelled():
            return
        result = task.result()
        if isinstance(result, CallOutcome):
            self.buffer.append(result)
            if result.endpoint_broken and not self.worker.batch_mode:
                # The run fails with this error: send nothing more (the others' items stay pending).
                for other in list(self.inflight):
                    other.cancel()
        elif isinstance(result, BatchTaskResult):
            self._collect_batch(result, chunk_id)

    def _collect_batch(self, result: BatchTaskResult, chunk_id: int) -> None:
        worker = self.worker
        self.buffer.extend(result.outcomes)
        if result.finished:
            self.finished_batches.append(result.finished)
        if result.parked:
            self.parked.add(chunk_id)
        if not result.retry or worker.stopping:
            return
        if worker.batch_fallback == Run.Mode.LIVE or result.attempt >= MAX_BATCH_ATTEMPTS:
            worker._expect_live(result.lease, len(result.retry))
            for spec in result.retry:
                self.spawn(worker._send_live(self.executor, result.lease, spec), chunk_id)
        else:
            self.spawn(worker._batch_new(self.executor, result.lease, result.retry, result.attempt + 1), chunk_id)

    def start(self, lease: Lease, specs: list[CallSpec]) -> None:
        """Start a claimed chunk: send its requests, or follow its open batches and batch the rest."""
        worker, executor, chunk_id = self.worker, self.executor, lease.chunk_id
        if not worker.batch_mode:
            worker._expect_live(lease, len(specs))
            for spec in specs:
                self.spawn(worker._send_live(executor, lease, spec), chunk_id)
            return
        for row, group in lease.open_batches:
            self.spawn(worker._batch_follow(executor, lease, row, group), chunk_id)
        if not lease.unbatched:
            return
        if lease.batched_before and worker.batch_fallback == Run.Mode.LIVE:
            worker._expect_live(lease, len(lease.unbatched))
            for spec in lease.unbatched:
                self.spawn(worker._send_live(executor, lease, spec), chunk_id)
        else:
            self.spawn(worker._batch_new(executor, lease, lease.unbatched, lease.next_attempt), chunk_id)


def run_work(
    *,
    run_id: int,
    owner: str | None = None,
    continue_later: Callable[[int], object] | None = None,
    poll_later: Callable[[int, object], object] | None = None,
) -> str:
    """Work on a run until it is done, paused, cancelled or failed, or other workers hold the rest; return its status.

    ``continue_later(run_id)`` queues more work for a run this worker leaves unfinished because it was asked to
    stop (the ``run_work`` task passes its own ``enqueue``, so this module needs no import of the task); without
    it, a live worker's sweep queues the run again once it stalls. ``poll_later(run_id, when)`` queues work for a
    time: given it, a batch run's chunks whose batches are under way are given back until their next poll and the
    task ends, so that the worker serves other runs meanwhile; without it (commands working a run in their own
    process), the worker waits for the batches.

    Never raises for a provider's errors: they are recorded on the calls, items and run. Raises
    ``llm.worker.database.DatabaseUnavailable`` when the database stays out of reach, leaving the run running.
    """
    owner = owner or worker_identity()
    retry = functools.partial(database.retry_database, what=f"Run {run_id}")
    worker = _worker_for(run_id, owner, retry)
    if isinstance(worker, str):
        return worker
    worker.poll_later = poll_later
    worker.park = poll_later is not None
    interrupted = database_lost = False
    try:
        asyncio.run(worker.main())
    except (KeyboardInterrupt, SystemExit):
        interrupted = True
        raise
    except (database.DatabaseUnavailable, *database.DATABASE_ERRORS):
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
        _worker_end(worker, retry, release=not database_lost)
        if (interrupted or worker.stop_requested) and not database_lost and continue_later is not None:
            retry(lambda: _continue_later(run_id, continue_later))
    return retry(lambda: Run.objects.values_list("status", flat=True).get(pk=run_id))


def _worker_for(run_id: int, owner: str, retry: Callable) -> RunWorker | str:
    """Mark the run running and return its worker; or the run's status when there is nothing to work on (the run
    stopped, or failed now because its endpoint's key or its parser is unknown)."""

    def start() -> Run:
        now = timezone.now()
        started = Coalesce(F("started_at"), now)
        run_transition(run_id=run_id, to=Run.Status.RUNNING, started_at=started, heartbeat_at=now)
        return Run.objects.select_related("endpoint").get(pk=run_id)

    run = retry(start)
    if run.status in (Run.Status.CANCELLED, Run.Status.FAILED) and run.is_batch:
        retry(lambda: _batches_clean_up(run, owner))
    if run.status != Run.Status.RUNNING:
        return run.status
    try:
        config = endpoint_config(run.endpoint)
        parsers.get(run.parser)
    except (KeyProblem, KeyError) as exc:
        message = str(exc).strip('"')
        retry(lambda: run_transition(run_id=run_id, to=Run.Status.FAILED, error=message, finished_at=timezone.now()))
        return Run.Status.FAILED
    return RunWorker(run, config, owner)


def _worker_end(worker: RunWorker, retry: Callable, *, release: bool) -> None:
    """Put back the signal handlers, give back the worker's chunks (unless the database is lost) and close it."""
    for signum, handler in worker.previous_handlers.items():
        if threading.current_thread() is threading.main_thread() and handler is not None:
            signal.signal(signum, handler)
    try:
        if release:
            worker.db_thread.submit(retry, worker.release).result()
    finally:
        worker.close()


def _continue_later(run_id: int, enqueue: Callable[[int], object]) -> None:
    """Queue another task for a run this worker left unfinished because it was asked to stop."""
    if Run.objects.filter(pk=run_id, status=Run.Status.RUNNING).exists():
        enqueue(run_id)


def _batches_clean_up(run: Run, owner: str) -> None:
    """Cancel at the provider, and close here, the open batches of a run that was cancelled or failed meanwhile."""
    if not RunBatch.objects.filter(run=run, status__in=RunBatch.OPEN).exists():
        return
    try:
        config = endpoint_config(run.endpoint)
    except KeyProblem:
        # No key to ask the provider with: closed here (the admin site lists their provider ids).
        config = None
    worker = RunWorker(run, config or EndpointConfig(base_url=run.endpoint.base_url), owner)
    if config is None:
        worker.batches_cancelled([pk for pk, _batch_id, _key in worker.batches_open()])
        worker.close()
        return
    try:
        asyncio.run(worker.clean_up())
    finally:
        worker.close()
