"""The database side of a worker's work on a run: lease chunks, reserve budget, record batches.

Storing the outcomes is ``llm.worker.outcomes.OutcomeStore``, which ``ChunkStore`` inherits.

``llm.worker.runner.RunWorker`` runs the event loop and sends the requests; every database step it takes is a
method of ``ChunkStore`` here, run in the worker's one database thread (see ``llm.worker.runner`` for leases,
fencing, exactly-once billing, batches and budgets).
"""

import asyncio
import functools
import logging
import signal
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from llm import parsers
from llm.bulk import update_rows
from llm.calls import request_max_cost
from llm.executor import CallSpec, EndpointConfig
from llm.lifecycle import run_transition
from llm.models import BudgetPool, LLMCall, Run, RunBatch, RunChunk, RunItem
from llm.recording import (
    CallState,
    parse_cached,
)
from llm.worker import batches, database, limits
from llm.worker.leases import Lease
from llm.worker.outcomes import OutcomeStore

logger = logging.getLogger("llm.worker.runner")

TICK_SECONDS = 0.05
# A request that failed in this many batches of a run set to re-batch failures is sent live instead.
MAX_BATCH_ATTEMPTS = 3
NOTHING = Decimal("0.00000001")


class ChunkStore(OutcomeStore):
    """The database steps of one task's work on one run (always run in the worker's database thread)."""

    def __init__(self, run: Run, config: EndpointConfig, owner: str) -> None:
        self.run_id = run.pk
        self.endpoint = run.endpoint
        self.parser_name = run.parser
        self.parser = parsers.get(run.parser)
        self.max_parse_retries = run.max_parse_retries
        self.batch_mode = run.mode == Run.Mode.BATCH
        self.batch_fallback = run.batch_fallback
        # A budget shared with other runs (an evaluation run's), reserved and spent along with the run's own.
        self.pool_id = run.budget_pool_id
        pool_budget = BudgetPool.objects.filter(pk=self.pool_id).values_list("budget", flat=True).first()
        self.budgeted = run.budget is not None or pool_budget is not None
        self.poll_seconds = settings.LLM_BATCH_POLL_SECONDS
        self.batch_api_attempts = settings.LLM_BATCH_API_ATTEMPTS
        # Set by ``run_work``: whether chunks waiting for their batches are given back (``park``), and how to queue
        # the task that polls them next.
        self.park = False
        self.poll_later = None
        # The most each live request in flight may cost, reserved on its chunk and the run: {(chunk, call): cost}.
        self.reservations: dict[tuple[int, int], Decimal] = {}
        self.reserve_lock = asyncio.Lock()
        # Budget reserved ahead for a chunk's next requests, not yet drawn by one: {(chunk, claim): amount} (the event
        # loop's), and how many of its live requests have still to draw: one write reserves for several requests.
        self.allowance: dict[tuple[int, int], Decimal] = {}
        self.undrawn: dict[tuple[int, int], int] = {}
        self.reserve_block = max(1, min(32, config.max_concurrency // 2))
        # When this worker's leases were last renewed (time.monotonic()): an allowance is drawn on only within half a
        # lease of it, so never on a chunk another worker may have taken over (and reserved for) meanwhile.
        self.renewed_at = 0.0
        self.stopping = False
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
        self.held: list = []
        self.refusal_blamed = ""
        self.usage_seen: dict[int, set[int]] = {}
        self.usage_warned = False
        self.warned: set[str] = set()
        self.gate = limits.SharedGate(
            limit=config.max_concurrency,
            rpm=config.rpm_limit,
            lease_seconds=self.lease_seconds,
            hold=self._hold_slots,
            reserve=self._reserve_starts,
        )

    # --- database side (always in the db thread) ------------------------------------------------------------

    def _claimable(self, now: object) -> Q:
        due = Q(poll_after__isnull=True) | Q(poll_after__lte=now)
        return (Q(status=RunChunk.Status.PENDING) & due) | Q(status=RunChunk.Status.LEASED, lease_expires_at__lt=now)

    def claim(self) -> tuple[Lease, list[CallSpec]] | None:
        """Lease the next available chunk and prepare it: cache hits are stored at once, the rest returned.

        If the database fails, the chunk is forgotten here; should its lease have been committed after all, the
        lease expires unrenewed and the chunk is claimed again.
        """
        before = set(self.leases)
        try:
            return self._claim()
        except database.DATABASE_ERRORS:
            for chunk_id in set(self.leases) - before:
                del self.leases[chunk_id]
            raise

    def _claim(self) -> tuple[Lease, list[CallSpec]] | None:
        with transaction.atomic():
            now = timezone.now()
            renewed = time.monotonic()
            if not Run.objects.filter(pk=self.run_id, status=Run.Status.RUNNING).exists():
                return None
            chunks = RunChunk.objects.filter(run_id=self.run_id).filter(self._claimable(now)).order_by("number")
            claimed = None
            reserved = Decimal("0")
            if connection.features.has_select_for_update_skip_locked:
                chunk = chunks.select_for_update(skip_locked=True).first()
                if chunk is not None:
                    RunChunk.objects.filter(pk=chunk.pk).update(
                        status=RunChunk.Status.LEASED,
                        lease_owner=self.owner,
                        lease_expires_at=now + timedelta(seconds=self.lease_seconds),
                        claims=F("claims") + 1,
                        reserved=Decimal("0"),
                    )
                    claimed, reserved = (chunk.pk, chunk.claims + 1), chunk.reserved
            else:
                for chunk_id, claims, held in chunks.values_list("pk", "claims", "reserved")[:8]:
                    updated = (
                        RunChunk.objects.filter(pk=chunk_id, claims=claims)
                        .filter(self._claimable(now))
                        .update(
                            status=RunChunk.Status.LEASED,
                            lease_owner=self.owner,
                            lease_expires_at=now + timedelta(seconds=self.lease_seconds),
                            claims=claims + 1,
                            reserved=Decimal("0"),
                        )
                    )
                    if updated:
                        claimed, reserved = (chunk_id, claims + 1), held
                        break
            if claimed is None:
                return None
            self.renewed_at = self.renewed_at or renewed  # the first lease; later ones are renewed by flushes
            if reserved:
                # The previous holder's live requests in flight are abandoned: their reservation goes with them.
                Run.objects.filter(pk=self.run_id).update(reserved=F("reserved") - reserved)
                self._pool_update(reserved=F("reserved") - reserved)
            return self._prepare(*claimed, now=now)

    def _prepare(self, chunk_id: int, token: int, *, now: object) -> tuple[Lease, list[CallSpec]]:
        """Serve the claimed chunk's items from the cache where a call has its reply, and return the lease with the
        requests left to send (one per distinct request)."""
        by_hash: dict[str, list[dict]] = {}
        for item in RunItem.objects.filter(chunk_id=chunk_id, status=RunItem.Status.PENDING).values(
            "pk", "request_hash", "hints", "call_id"
        ):
            by_hash.setdefault(item["request_hash"], []).append(item)
        calls = self._calls_of(chunk_id, list(by_hash))
        lease = Lease(chunk_id=chunk_id, token=token, pending=0)
        specs: list[CallSpec] = []
        updates: list[dict] = []
        n_cached = n_failed = 0
        for digest, group in by_hash.items():
            call = calls[digest]
            self.calls[call["pk"]] = _call_state(call)
            item_ids = [item["pk"] for item in group]
            parse_retries = self.max_parse_retries
            if call["status"] == LLMCall.Status.SUCCEEDED:
                result, problem = parse_cached(self.parser, call["response_text"], call["response_json"])
                if not problem or parse_retries == 0:
                    updates += _finished_rows(call, item_ids, result, problem, now)
                    n_failed += len(item_ids) if problem else 0
                    n_cached += 0 if problem else len(item_ids)
                    continue
                parse_retries -= 1
            updates += _pending_rows(call, group)
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
        self._prepared(lease, specs, n_cached=n_cached, n_failed=n_failed, now=now)
        return lease, specs

    def _calls_of(self, chunk_id: int, hashes: list[str]) -> dict[str, dict]:
        """Return the endpoint's calls for the chunk's requests by hash, creating those it has none for yet."""
        calls = {c["request_hash"]: c for c in self._calls(hashes)}
        missing = [h for h in hashes if h not in calls]
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
        return calls

    def _prepared(self, lease: Lease, specs: list[CallSpec], *, n_cached: int, n_failed: int, now: object) -> None:
        """Count the items served from the cache on the run; finish the chunk if nothing is left to send, else
        hold its lease (and, in batch mode, find the batches its requests are in)."""
        if n_cached or n_failed:
            Run.objects.filter(pk=self.run_id).update(
                done=F("done") + n_cached,
                cached=F("cached") + n_cached,
                failed=F("failed") + n_failed,
                heartbeat_at=now,
            )
        if lease.pending == 0:
            self._finish_chunk(lease.chunk_id, now)
        else:
            self.leases[lease.chunk_id] = lease
            if self.batch_mode:
                self._plan_batches(lease, specs)
            elif self.budgeted:
                lease.allowance = self._reserve_ahead(lease.chunk_id, specs)

    def live_cost(self, spec: CallSpec) -> Decimal:
        """Return the most a live request may cost, its re-sends of unparseable replies included."""
        price_input, price_output = self.endpoint.prices(batch=False)
        return request_max_cost(
            spec.request, price_input=price_input, price_output=price_output, sends=1 + spec.max_parse_retries
        )

    def _reserve_ahead(self, chunk_id: int, specs: list[CallSpec]) -> Decimal:
        """Reserve the most possible cost of all of a chunk's requests as it is claimed (in the claim's transaction),
        if the budget has room for them all; return the amount (0 if not: its requests then reserve as they go)."""
        total = sum((self.live_cost(spec) for spec in specs), Decimal("0"))
        with transaction.atomic():  # a savepoint: a shared budget without room rolls back only this
            fits = self._reserve_on_run(total)
        if not fits:
            return Decimal("0")
        RunChunk.objects.filter(pk=chunk_id).update(reserved=F("reserved") + total)
        return total

    def _plan_batches(self, lease: Lease, specs: list[CallSpec]) -> None:
        """Give each request to the latest open batch of its chunk that holds it; the rest need a batch (or live)."""
        rows = list(
            RunBatch.objects.filter(chunk_id=lease.chunk_id)
            .order_by("attempt")
            .values("pk", "attempt", "key", "status", "requests", "provider_batch_id")
        )
        lease.next_attempt = max((row["attempt"] for row in rows), default=0) + 1
        lease.batched_before = any(row["status"] not in RunBatch.OPEN for row in rows)
        by_call = {spec.ident[1]: spec for spec in specs}
        owner: dict[int, dict] = {}
        for row in rows:
            if row["status"] in RunBatch.OPEN:
                for call_id in row["requests"].values():
                    if call_id in by_call:
                        owner[call_id] = row
        groups: dict[int, tuple[dict, list[CallSpec]]] = {}
        for call_id, spec in by_call.items():
            row = owner.get(call_id)
            if row is None:
                lease.unbatched.append(spec)
            else:
                groups.setdefault(row["pk"], (row, []))[1].append(spec)
        lease.open_batches = list(groups.values())
        # An open batch none of whose requests is pending any more was stored already: nothing to follow.
        stale = [row["pk"] for row in rows if row["status"] in RunBatch.OPEN and row["pk"] not in groups]
        if stale:
            self._batches_close([(pk, RunBatch.Status.COMPLETED) for pk in stale], now=timezone.now())

    def _batches_close(self, finished: list[tuple[int, str]], *, now: object) -> None:
        """Mark batches finished and give back what they had reserved on the run."""
        pks = [pk for pk, _status in finished]
        open_rows = RunBatch.objects.filter(pk__in=pks, status__in=RunBatch.OPEN)
        released = sum(open_rows.values_list("reserved", flat=True), Decimal("0"))
        for pk, status in finished:
            RunBatch.objects.filter(pk=pk, status__in=RunBatch.OPEN).update(
                status=status, reserved=Decimal("0"), finished_at=now
            )
        if released:
            Run.objects.filter(pk=self.run_id).update(reserved=F("reserved") - released)
            self._pool_update(reserved=F("reserved") - released)

    def _pool_update(self, **values: object) -> None:
        if self.pool_id is not None:
            BudgetPool.objects.filter(pk=self.pool_id).update(**values)

    # --- budgets and batches (database side) --------------------------------------------------------------------

    def _lease_is_mine(self, chunk_id: int, token: int) -> bool:
        return RunChunk.objects.filter(
            pk=chunk_id, status=RunChunk.Status.LEASED, lease_owner=self.owner, claims=token
        ).exists()

    def _reserve_on_run(self, amount: Decimal) -> bool:
        """Reserve ``amount`` on the run and its shared budget if both have room (in the caller's transaction)."""
        fits = Q(budget__isnull=True) | Q(budget__gte=F("spent") + F("reserved") + amount)
        if (
            not Run.objects.filter(pk=self.run_id, status=Run.Status.RUNNING)
            .filter(fits)
            .update(reserved=F("reserved") + amount)
        ):
            return False
        if self.pool_id is not None and not BudgetPool.objects.filter(pk=self.pool_id).filter(fits).update(
            reserved=F("reserved") + amount
        ):
            transaction.set_rollback(True)
            return False
        return True

    def _budget_blocked(self) -> str:
        """Say why a reservation did not fit: "stopped", "wait" (others hold reservations) or "paused" (now)."""
        with transaction.atomic():
            run = Run.objects.select_for_update().only("status", "reserved").get(pk=self.run_id)
            if run.status != Run.Status.RUNNING:
                return "stopped"
            pool_reserved = (
                BudgetPool.objects.filter(pk=self.pool_id).values_list("reserved", flat=True).first()
                if self.pool_id is not None
                else None
            ) or Decimal("0")
            if run.reserved >= NOTHING or pool_reserved >= NOTHING:
                return "wait"
            run_transition(run_id=self.run_id, to=Run.Status.PAUSED, pause_reason=Run.PauseReason.BUDGET)
            logger.warning("Run %s: paused, the next request could exceed the budget", self.run_id)
            return "paused"

    def reserve(
        self, chunk_id: int, token: int, amount: Decimal, least: Decimal, returns: dict | None = None
    ) -> tuple[str, Decimal]:
        """Reserve ``amount`` (the most possible cost of a chunk's next few live requests) on the chunk and the run,
        or if that does not fit ``least`` (the next one's); return ("ok", what was reserved), or why not and 0.

        ``returns`` ({(chunk, claim): amount}) are allowances of this worker given back first, in the same
        transaction, so that a budget near its end is reserved request by request, as if nothing were held ahead.
        """
        with transaction.atomic():
            if returns:
                self._allowance_return(returns)
            if not self._lease_is_mine(chunk_id, token):
                return "lost", Decimal("0")
            for want in (amount, least) if amount > least else (least,):
                with transaction.atomic():  # a savepoint: a pool without room rolls back only this try
                    fits = self._reserve_on_run(want)
                if fits:
                    RunChunk.objects.filter(pk=chunk_id).update(reserved=F("reserved") + want)
                    return "ok", want
        return self._budget_blocked(), Decimal("0")

    def _allowance_return(self, returns: dict) -> None:
        """Give back what this worker had reserved ahead on its chunks (those it still holds) to the run and pool."""
        total = Decimal("0")
        for (chunk_id, token), amount in returns.items():
            if RunChunk.objects.filter(
                pk=chunk_id, status=RunChunk.Status.LEASED, lease_owner=self.owner, claims=token
            ).update(reserved=F("reserved") - amount):
                total += amount
        if total:
            Run.objects.filter(pk=self.run_id).update(reserved=F("reserved") - total)
            self._pool_update(reserved=F("reserved") - total)

    def batch_begin(self, chunk_id: int, token: int, specs: list[CallSpec], attempt: int) -> tuple[str, dict | None]:
        """Record a batch ("creating", with its requests) and reserve its estimated cost before the provider sees it."""
        price_input, price_output = self.endpoint.prices(batch=True)
        amount = sum(
            (request_max_cost(s.request, price_input=price_input, price_output=price_output) for s in specs),
            Decimal("0"),
        )
        row = None
        with transaction.atomic():
            if not self._lease_is_mine(chunk_id, token):
                return "lost", None
            if self._reserve_on_run(amount):
                row = RunBatch.objects.create(
                    run_id=self.run_id,
                    chunk_id=chunk_id,
                    attempt=attempt,
                    key=f"eistudio-{self.run_id}-{chunk_id}-{attempt}-{uuid.uuid4().hex[:12]}",
                    requests={batches.custom_id(spec): spec.ident[1] for spec in specs},
                    reserved=amount,
                )
        if row is None:
            return self._budget_blocked(), None
        return "ok", {"pk": row.pk, "attempt": attempt, "key": row.key, "provider_batch_id": ""}

    def batches_open(self) -> list[tuple[int, str, str]]:
        """Return (pk, provider batch id or "", key) of the run's batches still open."""
        return list(
            RunBatch.objects.filter(run_id=self.run_id, status__in=RunBatch.OPEN).values_list(
                "pk", "provider_batch_id", "key"
            )
        )

    def batch_gave_up(self, pk: int, chunk_id: int, token: int, message: str, live: bool) -> None:
        """Close a batch the provider's API failed for (recording why); warn that its requests go live, or fail the
        run (its items stay pending for Resume) when the run keeps failed requests in batches."""
        with transaction.atomic():
            if not self._lease_is_mine(chunk_id, token):
                return
            RunBatch.objects.filter(pk=pk).update(error=message[:2000])
            self._batches_close([(pk, RunBatch.Status.FAILED)], now=timezone.now())
            if live:
                self.warn("batch_api", f"{message} The requests of the batch were sent as live calls.")
                return
            error = f"{message} Resume the run to try again, or start it with failed batch requests sent as live calls."
            run_transition(run_id=self.run_id, to=Run.Status.FAILED, error=error, finished_at=timezone.now())
        logger.warning("Run %s: %s", self.run_id, message)

    def warn(self, code: str, message: str) -> None:
        """Add a warning to the run, once per code (in the caller's transaction)."""
        if code in self.warned:
            return
        self.warned.add(code)
        run = Run.objects.select_for_update().only("warnings").get(pk=self.run_id)
        if any(w.get("code") == code for w in run.warnings):
            return
        warning = {"code": code, "message": message[:2000], "at": timezone.now().isoformat()}
        Run.objects.filter(pk=self.run_id).update(warnings=[*run.warnings, warning])

    def batches_cancelled(self, pks: list[int]) -> None:
        """Mark batches cancelled and give back what they had reserved (the run no longer wants their results)."""
        self._batches_close([(pk, RunBatch.Status.CANCELLED) for pk in pks], now=timezone.now())

    def batch_submitted(self, pk: int, provider_batch_id: str, input_file_id: str) -> None:
        RunBatch.objects.filter(pk=pk).update(
            status=RunBatch.Status.SUBMITTED,
            provider_batch_id=provider_batch_id,
            input_file_id=input_file_id,
            submitted_at=timezone.now(),
        )

    def batch_progress(self, pk: int, batch: object) -> None:
        counts = getattr(batch, "request_counts", None)
        RunBatch.objects.filter(pk=pk).update(
            provider_status=str(batch.status)[:40],
            completed_requests=getattr(counts, "completed", 0) or 0,
            failed_requests=getattr(counts, "failed", 0) or 0,
            output_file_id=batch.output_file_id or "",
            error_file_id=batch.error_file_id or "",
        )

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

    def release(self) -> None:
        """Give back unfinished chunks and the endpoint's slots so that other workers can take them at once."""
        with transaction.atomic():
            for chunk_id, lease in self.leases.items():
                mine = RunChunk.objects.filter(pk=chunk_id, lease_owner=self.owner, claims=lease.token)
                held = mine.values_list("reserved", flat=True).first()
                released = mine.exclude(status=RunChunk.Status.DONE).update(
                    status=RunChunk.Status.PENDING, lease_owner="", lease_expires_at=None, reserved=Decimal("0")
                )
                if released and held:
                    # Requests cancelled in flight: what they had reserved goes back to the run.
                    Run.objects.filter(pk=self.run_id).update(reserved=F("reserved") - held)
                    self._pool_update(reserved=F("reserved") - held)
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

    def state(self) -> tuple[str, int, int, object]:
        """Return the run's status, how many of its chunks are not done, how many of those wait for a later poll of
        their batches, and the earliest such poll."""
        now = timezone.now()
        status = Run.objects.values_list("status", flat=True).get(pk=self.run_id)
        open_chunks = RunChunk.objects.filter(run_id=self.run_id).exclude(status=RunChunk.Status.DONE)
        unfinished = open_chunks.count()
        if unfinished == 0 and status == Run.Status.RUNNING:
            run_transition(run_id=self.run_id, to=Run.Status.DONE, finished_at=now)
            status = Run.Status.DONE
        waiting = open_chunks.filter(status=RunChunk.Status.PENDING, poll_after__gt=now)
        polls = list(waiting.values_list("poll_after", flat=True))
        return status, unfinished, len(polls), min(polls, default=now)


def _call_state(call: dict) -> CallState:
    """Return the worker's bookkeeping of a call from its stored row."""
    return CallState(
        call_id=call["pk"],
        sends=call["sends"],
        retries=call["retries"],
        input_tokens=call["input_tokens"],
        output_tokens=call["output_tokens"],
        cost=call["cost"],
        attempts=list(call["attempts"] or []),
    )


def _finished_rows(call: dict, item_ids: list[int], result: object, problem: str, now: object) -> list[dict]:
    """Return the rows of items answered from the call's stored reply: done (cached), or failed when it does not
    parse."""
    status = RunItem.Status.FAILED if problem else RunItem.Status.DONE
    return [
        {"pk": i, "call": call["pk"], "status": status, "cached": not problem, "result": result}
        | {"error": problem, "finished_at": now}
        for i in item_ids
    ]


def _pending_rows(call: dict, group: list[dict]) -> list[dict]:
    """Return the rows that point the items still to send at their call (those that pointed elsewhere)."""
    return [
        {"pk": item["pk"], "call": call["pk"], "status": RunItem.Status.PENDING, "cached": False}
        | {"result": None, "error": "", "finished_at": None}
        for item in group
        if item["call_id"] != call["pk"]
    ]
