"""Endpoint limits shared by every worker process and machine, coordinated through the database.

``max_concurrency``: an endpoint has that many slot rows (``EndpointSlot``). A worker takes free or expired slots
with one conditional UPDATE (on PostgreSQL it picks them with ``SELECT ... FOR UPDATE SKIP LOCKED``), renews them
like its chunk leases, gives back the ones it has not needed for a moment and releases them all when it stops;
a crashed worker's slots expire after ``LLM_LEASE_SECONDS``. A request is in flight only under a slot its worker
holds, and a worker starts new requests only within half a lease of its last successful renewal, so it never
uses a slot that another worker may have taken over after an expiry (a database outage, for instance).

``rpm_limit``: one row per endpoint (``EndpointPace``) holds the earliest time the next request may start. A
worker reserves a few starts at a time with a compare-and-set UPDATE; starts are spaced 60/rpm seconds apart
after every start reserved before, whichever worker reserved it, so at most ``rpm_limit`` requests (plus one)
start in any minute across all workers. Reservations reach about a second ahead, so that not every request costs
a round trip; a worker that stops wastes at most that second.

``SharedGate`` admits one run task's requests under both limits. It holds no ORM code: the runner hands it
functions that reach the database through its database thread.
"""

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta

from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from llm.models import EndpointPace, EndpointSlot

logger = logging.getLogger("llm.worker.limits")

RETRY_MIN_SECONDS = 0.1
RETRY_MAX_SECONDS = 1.0
RESERVE_AHEAD_SECONDS = 1.0


# --- the database side (called from the runner's database thread) ---------------------------------------------


def _free(now: object) -> Q:
    return Q(holder="") | Q(expires_at__lt=now)


def slots_hold(*, endpoint_id: int, owner: str, limit: int, want: int, lease_seconds: float) -> int:
    """Renew ``owner``'s slots of an endpoint, take up to ``want`` more, and return how many it now holds.

    Only slots numbered below ``limit`` (the endpoint's ``max_concurrency``) count. A negative ``want`` gives that
    many back. Free slots are those nobody holds or whose lease expired.
    """
    now = timezone.now()
    expires = now + timedelta(seconds=lease_seconds)
    slots = EndpointSlot.objects.filter(endpoint_id=endpoint_id, number__lt=limit)
    with transaction.atomic():
        if want < 0:
            back = list(slots.filter(holder=owner).order_by("-number").values_list("pk", flat=True)[:-want])
            EndpointSlot.objects.filter(pk__in=back, holder=owner).update(holder="", expires_at=None)
        held = slots.filter(holder=owner).update(expires_at=expires)
        if want > 0:
            if slots.count() < limit:
                EndpointSlot.objects.bulk_create(
                    [EndpointSlot(endpoint_id=endpoint_id, number=n) for n in range(limit)], ignore_conflicts=True
                )
            free = slots.filter(_free(now)).order_by("number")
            if connection.features.has_select_for_update_skip_locked:
                free = free.select_for_update(skip_locked=True)
            ids = list(free.values_list("pk", flat=True)[:want])
            if ids:
                held += (
                    EndpointSlot.objects.filter(pk__in=ids).filter(_free(now)).update(holder=owner, expires_at=expires)
                )
    return held


def slots_release(*, endpoint_id: int, owner: str) -> int:
    """Give back every slot ``owner`` holds on an endpoint; return how many."""
    return EndpointSlot.objects.filter(endpoint_id=endpoint_id, holder=owner).update(holder="", expires_at=None)


def starts_reserve(*, endpoint_id: int, rpm: int, count: int) -> float:
    """Reserve ``count`` request starts 60/rpm seconds apart; return the seconds from now until the first one."""
    interval = timedelta(seconds=60.0 / rpm)
    for _attempt in range(1000):
        now = timezone.now()
        current = EndpointPace.objects.filter(endpoint_id=endpoint_id).values_list("next_start_at", flat=True).first()
        if current is None:
            EndpointPace.objects.bulk_create(
                [EndpointPace(endpoint_id=endpoint_id, next_start_at=now)], ignore_conflicts=True
            )
            continue
        first = max(current, now)
        # Compare and set: another worker that reserved in between changed next_start_at, so try again.
        moved = EndpointPace.objects.filter(endpoint_id=endpoint_id, next_start_at=current).update(
            next_start_at=first + interval * count
        )
        if moved:
            return (first - timezone.now()).total_seconds()
    raise RuntimeError(f"Could not reserve request starts for endpoint {endpoint_id}: too much contention.")


# --- the event loop side ------------------------------------------------------------------------------------------


class SharedGate:
    """Admit requests while this worker holds a shared slot and, with an ``rpm`` limit, a reserved start time.

    ``hold(want)`` renews this worker's slots, takes ``want`` more (gives back when negative) and returns how many
    it holds; ``reserve(count)`` reserves ``count`` starts and returns the seconds until the first. Both may raise:
    the gate then waits and tries again, never admitting a request beyond what it knows it holds.
    """

    def __init__(
        self,
        *,
        limit: int,
        rpm: int,
        lease_seconds: float,
        hold: Callable[[int], Awaitable[int]],
        reserve: Callable[[int], Awaitable[float]],
    ) -> None:
        self.limit = limit
        self.interval = 60.0 / rpm if rpm else 0.0
        self.max_batch = max(1, min(100, round(RESERVE_AHEAD_SECONDS / self.interval))) if rpm else 1
        self.lease = lease_seconds
        self.surplus_seconds = min(0.5, lease_seconds / 4)
        self._hold = hold
        self._reserve = reserve
        self.held = 0
        self.in_use = 0
        self.usable_until = 0.0
        self.renewed_at = 0.0
        self.next_try = 0.0
        self.retry_wait = RETRY_MIN_SECONDS
        self.surplus_since: float | None = None
        self.waiters: deque[asyncio.Future] = deque()
        self.starts: deque[float] = deque()
        self.start_waiting = 0
        self.refreshing = asyncio.Lock()
        self.reserving = asyncio.Lock()

    @staticmethod
    def _now() -> float:
        return asyncio.get_running_loop().time()

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Wait for a slot (and a start time), hold it for the body, give it back after."""
        await self._take_slot()
        try:
            await self._take_start()
            yield
        finally:
            self.in_use -= 1
            self._wake(1)

    def _wake(self, n: int) -> None:
        for waiter in self.waiters:
            if n <= 0:
                break
            if not waiter.done():
                waiter.set_result(None)
                n -= 1

    async def _take_slot(self) -> None:
        while True:
            now = self._now()
            if self.in_use < self.held and now < self.usable_until:
                self.in_use += 1
                return
            lapsed = self.held > 0 and now >= self.usable_until
            short = self.held < self.limit and self.in_use >= self.held
            if (lapsed or short) and now >= self.next_try and not self.refreshing.locked():
                demand = min(self.limit, self.in_use + len(self.waiters) + 1)
                await self.refresh(max(demand - self.held, 0))
                continue
            # Woken by a request giving its slot back or by a refresh; otherwise look again when more slots may be
            # free elsewhere (all held: when the held ones need renewing).
            wake_at = self.next_try if self.held < self.limit else self.usable_until
            waiter = asyncio.get_running_loop().create_future()
            self.waiters.append(waiter)
            try:
                async with asyncio.timeout(min(max(wake_at - now, 0.05), 1.0)):
                    await waiter
            except TimeoutError:
                pass
            finally:
                self.waiters.remove(waiter)

    async def _take_start(self) -> None:
        if not self.interval:
            return
        self.start_waiting += 1
        try:
            async with self.reserving:
                # A reserved start that is already a whole interval late is dropped, never used in a burst.
                while self.starts and self.starts[0] < self._now() - self.interval:
                    self.starts.popleft()
                while not self.starts:
                    count = max(1, min(self.start_waiting, self.max_batch))
                    try:
                        offset = await self._reserve(count)
                    except Exception as exc:  # noqa: BLE001 - the database is retried by the caller's functions
                        logger.warning("Could not reserve request starts: %s", exc)
                        await asyncio.sleep(RETRY_MAX_SECONDS)
                        continue
                    first = self._now() + offset
                    self.starts.extend(first + k * self.interval for k in range(count))
                at = self.starts.popleft()
        finally:
            self.start_waiting -= 1
        delay = at - self._now()
        if delay > 0:
            await asyncio.sleep(delay)

    async def refresh(self, want: int) -> None:
        """Renew the held slots and take ``want`` more (give back when negative); wake the waiting requests."""
        async with self.refreshing:
            began = self._now()
            before = self.held
            try:
                held = await self._hold(want)
            except Exception as exc:  # noqa: BLE001 - keep what is known; try again later
                logger.warning("Could not renew or take endpoint slots: %s", exc)
                self.next_try = self._now() + self.retry_wait
                self.retry_wait = min(self.retry_wait * 2, RETRY_MAX_SECONDS)
                return
            self.held = held
            self.renewed_at = began
            self.usable_until = began + self.lease / 2
            if want > 0 and held < before + want:
                # Other workers hold the rest: ask again a little later rather than at every request.
                self.next_try = self._now() + self.retry_wait
                self.retry_wait = min(self.retry_wait * 2, RETRY_MAX_SECONDS)
            else:
                self.next_try = 0.0
                self.retry_wait = RETRY_MIN_SECONDS
            self._wake(len(self.waiters))

    async def maintain(self) -> None:
        """Renew the held slots in time and give back those that no request has needed for a moment."""
        if self.refreshing.locked():
            return
        now = self._now()
        needed = min(self.limit, self.in_use + len(self.waiters))
        if self.held > needed:
            if self.surplus_since is None:
                self.surplus_since = now
            if now - self.surplus_since >= self.surplus_seconds:
                self.surplus_since = None
                await self.refresh(needed - self.held)
                return
        else:
            self.surplus_since = None
        if self.held and now - self.renewed_at >= self.lease / 4:
            await self.refresh(0)

    async def close(self) -> None:
        """Give back every held slot."""
        if self.held:
            await self.refresh(-self.held)
