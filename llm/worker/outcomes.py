"""Storing what came back for a run's requests: the outcome of each call, its items, the chunk's lease and budget.

Part of ``llm.worker.chunks.ChunkStore`` (which inherits it), always run in the worker's database thread. Every
write is fenced by the lease the chunk was claimed with: a worker whose lease was taken over stores nothing.
"""

import dataclasses
import logging
import time
from datetime import datetime, timedelta
from decimal import Decimal

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from llm.bulk import update_rows
from llm.executor import CallOutcome
from llm.lifecycle import run_transition
from llm.models import LLMCall, Run, RunChunk, RunItem
from llm.recording import CALL_OUTCOME_FIELDS, CallState, json_safe, merge_outcome, outcome_cost
from llm.worker import database
from llm.worker.leases import FlushResult, Lease

logger = logging.getLogger("llm.worker.runner")

# While nothing in a run has been answered, this many different requests refused with the same 400 message mean
# the endpoint's settings are wrong (a model name a server answers 400 for, a parameter it does not take), not the
# prompts: the run stops with the provider's message and the items stay pending for Resume.
SAME_REFUSALS = 3


def same_refusals(held: list[CallOutcome]) -> list[CallOutcome]:
    """Return the held refusals that share one message with at least ``SAME_REFUSALS`` others' (or [])."""
    by_message: dict[str, list[CallOutcome]] = {}
    for outcome in held:
        by_message.setdefault(outcome.error, []).append(outcome)
    group = max(by_message.values(), key=len, default=[])
    return group if len(group) >= SAME_REFUSALS else []


def _is_refusal(outcome: CallOutcome) -> bool:
    """Whether the provider refused the request (400) without a reply."""
    return outcome.error_kind == "bad_request" and not outcome.received


@dataclasses.dataclass
class _Tally:
    """What one flush stores: the rows of calls and items, the run's counts, reservations given back by chunk, the
    error of an endpoint found broken and the chunks with nothing pending any more."""

    calls: list[dict] = dataclasses.field(default_factory=list)
    items: list[dict] = dataclasses.field(default_factory=list)
    done: int = 0
    failed: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    spent: Decimal = Decimal("0")
    released: dict[int, Decimal] = dataclasses.field(default_factory=dict)
    broken: str = ""
    finished_chunks: list[int] = dataclasses.field(default_factory=list)

    def add_items(self, outcome: CallOutcome, item_ids: list[int], cost: Decimal, now: datetime) -> None:
        """Add the rows of the items a call answered: done with its result, or failed with its error; the call's
        cost goes to its first item."""
        if outcome.received and outcome.parsed is not False:
            result, problem = json_safe(outcome.result)
        else:
            result, problem = None, outcome.error or "failed"
        if item_ids:
            self.input_tokens += outcome.input_tokens
            self.output_tokens += outcome.output_tokens
        for index, item_id in enumerate(item_ids):
            item_cost = cost if index == 0 else Decimal("0")
            self.spent += item_cost
            if problem:
                self.failed += 1
            else:
                self.done += 1
            status = RunItem.Status.FAILED if problem else RunItem.Status.DONE
            self.items.append(
                {
                    "pk": item_id,
                    "status": status,
                    "result": result,
                    "error": problem,
                    "cost": item_cost,
                    "finished_at": now,
                }
            )


class OutcomeStore:
    """Store outcomes, renew leases and finish chunks; the database half of ``ChunkStore``.

    Reads the state ``ChunkStore`` keeps: ``run_id``, ``endpoint``, ``owner``, ``lease_seconds``, ``leases``,
    ``lost``, ``calls``, ``reservations``, ``succeeded_here``, ``verify_next_flush``, and calls its
    ``_pool_update`` and ``_batches_close``.
    """

    run_id: int
    owner: str
    lease_seconds: float
    poll_seconds: float
    leases: dict[int, Lease]
    lost: set[int]
    calls: dict[int, CallState]
    reservations: dict[tuple[int, int], Decimal]
    succeeded_here: int
    verify_next_flush: bool
    renewed_at: float
    # Refusals (400) held back while nothing in the run has been answered yet (see ``SAME_REFUSALS``).
    held: list[CallOutcome]
    refusal_blamed: str
    # {prompt tokens reported: prompt lengths (in steps of 200 characters) seen with that count}
    usage_seen: dict[int, set[int]]
    usage_warned: bool

    def _finish_chunk(self, chunk_id: int, now: object) -> None:
        # What is still reserved on a finished chunk was reserved ahead for requests it no longer needs: given back.
        left = RunChunk.objects.filter(pk=chunk_id).values_list("reserved", flat=True).first()
        RunChunk.objects.filter(pk=chunk_id).update(
            status=RunChunk.Status.DONE, finished_at=now, lease_expires_at=None, reserved=Decimal("0")
        )
        if left:
            Run.objects.filter(pk=self.run_id).update(reserved=F("reserved") - left)
            self._pool_update(reserved=F("reserved") - left)
        if not RunChunk.objects.filter(run_id=self.run_id).exclude(status=RunChunk.Status.DONE).exists():
            run_transition(run_id=self.run_id, to=Run.Status.DONE, finished_at=now)

    def _hold_refusals(self, outcomes: list[CallOutcome], *, settle: bool) -> list[CallOutcome]:
        """Hold back 400 refusals until the run has an answer (then store them) or enough agree to blame the endpoint.

        ``settle`` (nothing is in flight any more) stores what is held. Returns the outcomes to store now.
        """
        refused = [o for o in outcomes if _is_refusal(o)]
        for outcome in refused:
            if self.refusal_blamed and outcome.error == self.refusal_blamed:
                self._blame_endpoint(outcome, SAME_REFUSALS)
        refused = [o for o in refused if o.error_kind == "bad_request"]
        if not refused and not self.held:
            return outcomes
        # A reply from the cache counts too: this endpoint's settings were answered before.
        answered = self.succeeded_here > 0 or any(o.received for o in outcomes) or self._run_has_done()
        if answered:
            outcomes, self.held = [*self.held, *outcomes], []
            return outcomes
        return self._hold(refused, outcomes, settle=settle)

    def _hold(self, refused: list[CallOutcome], outcomes: list[CallOutcome], *, settle: bool) -> list[CallOutcome]:
        """Hold back the refusals while nothing is answered; blame the endpoint once enough agree (then, or when
        ``settle``, store everything held). Returns the outcomes to store now."""
        self.held = [*self.held, *refused]
        outcomes = [o for o in outcomes if not _is_refusal(o)]
        group = same_refusals(self.held)
        if group:
            self.refusal_blamed = group[0].error
            for outcome in group:
                self._blame_endpoint(outcome, len(group))
        if group or settle:
            outcomes, self.held = [*self.held, *outcomes], []
        return outcomes

    @staticmethod
    def _blame_endpoint(outcome: CallOutcome, count: int) -> None:
        outcome.error_kind = "config"
        outcome.error = (
            f"The first {count} different requests of this run were all refused with the same error, so the "
            f"endpoint's settings (model name, key or parameters) are wrong, not the prompts: {outcome.error}"
        )

    def flush(
        self, outcomes: list[CallOutcome], finished_batches: tuple = (), settle: bool = True, parking: tuple = ()
    ) -> FlushResult:
        """Store outcomes and renew leases in one transaction; report the run's status and any lost leases.

        If the database fails, this worker's bookkeeping is put back as it was, so that the same flush can run
        again after reconnecting; that next flush first looks up which outcomes the failed one stored after all
        (its commit may have succeeded unseen), so nothing is counted twice.
        """
        leases = {chunk_id: lease.copy() for chunk_id, lease in self.leases.items()}
        began = time.monotonic()
        calls = {cid: dataclasses.replace(self.calls[cid]) for cid in {o.spec.ident[1] for o in outcomes}}
        lost, succeeded, held = set(self.lost), self.succeeded_here, list(self.held)
        try:
            outcomes = self._hold_refusals(outcomes, settle=settle)
            result = self._flush(outcomes, finished_batches, parking)
        except database.DATABASE_ERRORS:
            self.leases, self.lost, self.succeeded_here, self.held = leases, lost, succeeded, held
            self.calls.update(calls)
            self.verify_next_flush = True
            raise
        self.verify_next_flush = False
        self.renewed_at = began  # every lease still held was renewed from this moment
        for outcome in outcomes:
            self.reservations.pop(outcome.spec.ident, None)
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

    def _flush(self, outcomes: list[CallOutcome], finished_batches: tuple = (), parking: tuple = ()) -> FlushResult:
        with transaction.atomic():
            now = timezone.now()
            self._leases_renew(now)
            stored = self._stored_already(outcomes) if self.verify_next_flush else set()
            tally = _Tally()
            for outcome in outcomes:
                self._tally_outcome(tally, outcome, stored, now)
            self._check_usage(outcomes)
            self._tally_store(tally, now)
            # A batch is marked finished in the transaction that stores its results, and only by its chunk's holder.
            mine = [(pk, status) for pk, chunk_id, status in finished_batches if chunk_id in self.leases]
            if mine:
                self._batches_close(mine, now=now)
            if tally.broken:
                run_transition(run_id=self.run_id, to=Run.Status.FAILED, error=tally.broken, finished_at=now)
            for chunk_id in tally.finished_chunks:
                if not self.leases[chunk_id].items_left_pending:
                    del self.leases[chunk_id]
                    self._finish_chunk(chunk_id, now)
            for chunk_id in parking:
                self._park(chunk_id, now)
            status, budget, pool_budget = Run.objects.values_list("status", "budget", "budget_pool__budget").get(
                pk=self.run_id
            )
            self.budgeted = budget is not None or pool_budget is not None
            return FlushResult(status=status, lost=set(self.lost))

    def _leases_renew(self, now: datetime) -> None:
        """Renew this worker's leases; a lease taken over is dropped, with its chunk's results, as lost."""
        expires = now + timedelta(seconds=self.lease_seconds)
        for chunk_id, lease in list(self.leases.items()):
            renewed = RunChunk.objects.filter(
                pk=chunk_id, status=RunChunk.Status.LEASED, lease_owner=self.owner, claims=lease.token
            ).update(lease_expires_at=expires)
            if not renewed:
                logger.warning("Run %s: lease on chunk %s was taken over; dropping its results", self.run_id, chunk_id)
                self.lost.add(chunk_id)
                del self.leases[chunk_id]

    def _tally_outcome(self, tally: "_Tally", outcome: CallOutcome, stored: set[int], now: datetime) -> None:
        """Add an outcome to the flush: its call's row, its items' rows, the reservation it gives back."""
        chunk_id, call_id = outcome.spec.ident
        lease = self.leases.get(chunk_id)
        if lease is None:
            return
        cost = outcome_cost(outcome, self.endpoint)
        values = merge_outcome(self.calls[call_id], outcome, cost)
        item_ids = lease.items_by_call.pop(call_id, [])
        lease.pending -= 1
        if lease.pending == 0:
            tally.finished_chunks.append(chunk_id)
        if outcome.received:
            self.succeeded_here += 1
        if call_id in stored:
            # The unseen commit stored it, and gave its reservation back.
            return
        if outcome.spec.ident in self.reservations:
            released = tally.released.get(chunk_id, Decimal("0"))
            tally.released[chunk_id] = released + self.reservations[outcome.spec.ident]
        tally.calls.append({"pk": call_id, **values})
        if self._endpoint_broken(outcome):
            # The items stay pending: once the endpoint is fixed, resuming the run sends them again.
            tally.broken = tally.broken or outcome.error
            lease.items_left_pending = True
            return
        tally.add_items(outcome, item_ids, cost, now)

    def _tally_store(self, tally: "_Tally", now: datetime) -> None:
        """Store the flush's calls and items, and add its counts and spending to the run, its chunks and its pool."""
        update_rows(LLMCall, tally.calls, CALL_OUTCOME_FIELDS)
        update_rows(RunItem, tally.items, ["status", "result", "error", "cost", "finished_at"])
        for chunk_id, amount in tally.released.items():
            RunChunk.objects.filter(pk=chunk_id).update(reserved=F("reserved") - amount)
        released = sum(tally.released.values(), Decimal("0"))
        Run.objects.filter(pk=self.run_id).update(
            done=F("done") + tally.done,
            failed=F("failed") + tally.failed,
            spent=F("spent") + tally.spent,
            reserved=F("reserved") - released,
            input_tokens=F("input_tokens") + tally.input_tokens,
            output_tokens=F("output_tokens") + tally.output_tokens,
            heartbeat_at=now,
        )
        if tally.spent or tally.released:
            self._pool_update(spent=F("spent") + tally.spent, reserved=F("reserved") - released)

    def _check_usage(self, outcomes: list[CallOutcome]) -> None:
        """Warn on the run, once, when the provider's usage counts cannot be what it bills: 0 prompt tokens, or the
        same count for prompts of very different lengths (costs are computed from them, so they are not trusted)."""
        for outcome in outcomes:
            if not outcome.received:
                continue
            if outcome.input_tokens == 0:
                self.warn(
                    "usage_zero",
                    "The provider reported 0 prompt tokens for a reply: the costs shown come from its usage counts "
                    "and are too low. Check the spend at the provider.",
                )
                continue
            length = len(str(outcome.spec.request.get("messages") or outcome.spec.request.get("prompt") or ""))
            self.usage_seen.setdefault(outcome.input_tokens, set()).add(length // 200)
        constant = len(self.usage_seen) == 1 and len(next(iter(self.usage_seen.values()))) >= 3
        if constant and not self.usage_warned:
            self.usage_warned = True
            self.warn(
                "usage_constant",
                f"The provider reports {next(iter(self.usage_seen))} prompt tokens for prompts of very different "
                f"lengths: its usage counts look constant, so the costs shown are not to be trusted.",
            )

    def _park(self, chunk_id: int, now: object) -> None:
        """Give back a chunk whose batches are under way at the provider until its next poll."""
        lease = self.leases.pop(chunk_id, None)
        if lease is None:
            return
        RunChunk.objects.filter(
            pk=chunk_id, status=RunChunk.Status.LEASED, lease_owner=self.owner, claims=lease.token
        ).update(
            status=RunChunk.Status.PENDING,
            lease_owner="",
            lease_expires_at=None,
            poll_after=now + timedelta(seconds=self.poll_seconds),
        )

    def _endpoint_broken(self, outcome: CallOutcome) -> bool:
        if outcome.endpoint_broken:
            return True
        # Unreachable before anything ever came back: the base URL is wrong, not this one request.
        return outcome.error_kind == "connection" and self.succeeded_here == 0 and not self._run_has_replies()

    def _run_has_done(self) -> bool:
        return Run.objects.filter(pk=self.run_id, done__gt=0).exists()

    def _run_has_replies(self) -> bool:
        run = Run.objects.only("done", "cached").get(pk=self.run_id)
        return run.done > run.cached
