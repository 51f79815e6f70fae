"""Limits shared by every worker through the database (``llm.worker.limits``): concurrency slots with expiring leases,
evenly spaced request starts for ``rpm_limit``, the gate that admits requests under them, and the simulator's own
count of requests in flight and per minute, which the worker tests check the limits against."""

import asyncio
from datetime import timedelta

import pytest
from django.utils import timezone

from llm.executor import CallSpec, EndpointConfig, execute_all
from llm.models import EndpointPace, EndpointSlot
from llm.worker import limits


@pytest.fixture
def endpoint(make_endpoint):
    return make_endpoint("sim-echo", max_concurrency=4)


def hold(endpoint, owner: str, want: int, limit: int = 4) -> int:
    return limits.slots_hold(endpoint_id=endpoint.pk, owner=owner, limit=limit, want=want, lease_seconds=30)


def test_slots_are_shared_up_to_the_limit(endpoint):
    assert hold(endpoint, "a", 3) == 3
    assert hold(endpoint, "b", 4) == 1
    assert hold(endpoint, "c", 2) == 0
    assert hold(endpoint, "a", 0) == 3, "asking for nothing renews what is held"
    assert EndpointSlot.objects.filter(endpoint=endpoint).exclude(holder="").count() == 4


def test_a_crashed_workers_slots_expire_and_are_taken_over(endpoint):
    assert hold(endpoint, "dead", 4) == 4
    assert hold(endpoint, "live", 4) == 0
    EndpointSlot.objects.filter(holder="dead").update(expires_at=timezone.now() - timedelta(seconds=1))
    assert hold(endpoint, "live", 4) == 4
    assert hold(endpoint, "dead", 0) == 0, "a worker learns on renewal that its slots were taken"


def test_slots_are_given_back_and_released(endpoint):
    assert hold(endpoint, "a", 4) == 4
    assert hold(endpoint, "a", -3) == 1
    assert hold(endpoint, "b", 4) == 3
    limits.slots_release(endpoint_id=endpoint.pk, owner="b")
    assert hold(endpoint, "a", 4) == 4


def test_a_lowered_limit_counts_only_the_slots_below_it(endpoint):
    assert hold(endpoint, "a", 4) == 4
    assert hold(endpoint, "a", 0, limit=2) == 2
    assert hold(endpoint, "b", 2, limit=2) == 0


def test_request_starts_are_reserved_evenly_spaced_across_workers(endpoint):
    first = limits.starts_reserve(endpoint_id=endpoint.pk, rpm=600, count=5)
    second = limits.starts_reserve(endpoint_id=endpoint.pk, rpm=600, count=5)
    third = limits.starts_reserve(endpoint_id=endpoint.pk, rpm=600, count=1)
    assert first == pytest.approx(0, abs=0.05)
    assert second == pytest.approx(0.5, abs=0.05)
    assert third == pytest.approx(1.0, abs=0.05)
    EndpointPace.objects.filter(endpoint=endpoint).update(next_start_at=timezone.now() - timedelta(hours=1))
    assert limits.starts_reserve(endpoint_id=endpoint.pk, rpm=600, count=1) == pytest.approx(0, abs=0.05)


class SharedPool:
    """Stands in for the slot table and the pace row, shared by several gates as by several workers."""

    def __init__(self, limit: int, rpm: int = 0) -> None:
        self.limit = limit
        self.held: dict[str, int] = {}
        self.interval = 60 / rpm if rpm else 0
        self.next_start = 0.0
        self.fail = False

    def gate(self, owner: str, lease: float = 5.0) -> limits.SharedGate:
        async def hold(want: int) -> int:
            await asyncio.sleep(0.001)
            if self.fail:
                raise ConnectionError("database down")
            mine = self.held.get(owner, 0)
            free = self.limit - sum(self.held.values())
            self.held[owner] = max(mine + min(want, free), 0)
            return self.held[owner]

        async def reserve(count: int) -> float:
            now = asyncio.get_running_loop().time()
            first = max(self.next_start, now)
            self.next_start = first + count * self.interval
            return first - now

        rpm = round(60 / self.interval) if self.interval else 0
        return limits.SharedGate(limit=self.limit, rpm=rpm, lease_seconds=lease, hold=hold, reserve=reserve)


def test_gates_sharing_a_pool_never_exceed_its_limit_and_reach_it():
    pool = SharedPool(limit=3)
    gates = [pool.gate(f"w{n}") for n in range(3)]
    in_flight = peak = done = 0

    async def request(gate: limits.SharedGate) -> None:
        nonlocal in_flight, peak, done
        async with gate.slot():
            in_flight += 1
            peak = max(peak, in_flight)
            await asyncio.sleep(0.01)
            in_flight -= 1
            done += 1

    async def worker(gate: limits.SharedGate) -> None:
        tasks = [asyncio.create_task(request(gate)) for _ in range(20)]
        while not all(t.done() for t in tasks):
            await gate.maintain()
            await asyncio.sleep(0.005)
        await gate.close()

    async def main() -> None:
        await asyncio.gather(*(worker(g) for g in gates))

    asyncio.run(main())
    assert done == 60 and peak == 3
    assert sum(pool.held.values()) == 0, "every slot was given back"


def test_a_gate_that_cannot_renew_stops_starting_requests():
    pool = SharedPool(limit=2)
    gate = pool.gate("w", lease=0.2)
    started = []

    async def main() -> None:
        async with gate.slot():
            started.append(1)
        pool.fail = True
        await asyncio.sleep(0.15)  # past half the lease: the held slots may have been taken over by now
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.3):
                async with gate.slot():
                    started.append(2)

    asyncio.run(main())
    assert started == [1]


def test_gates_sharing_a_pace_space_their_starts():
    pool = SharedPool(limit=10, rpm=1200)  # one start every 50 ms
    gates = [pool.gate(f"w{n}") for n in range(3)]
    starts: list[float] = []

    async def request(gate: limits.SharedGate) -> None:
        async with gate.slot():
            starts.append(asyncio.get_running_loop().time())

    async def main() -> None:
        await asyncio.gather(*(request(g) for g in gates for _ in range(6)))

    asyncio.run(main())
    starts.sort()
    assert len(starts) == 18
    assert starts[-1] - starts[0] >= 17 * 0.05 * 0.9
    window = [b - a for a, b in zip(starts, starts[5:], strict=False)]
    assert min(window) >= 5 * 0.05 * 0.8, "no burst: any six consecutive starts span five intervals"


def test_the_simulator_counts_requests_in_flight_and_per_minute(simulator_idle, simulator):
    simulator.configure(latency_ms=100, jitter_ms=0)
    config = EndpointConfig(base_url=simulator.base_url, max_concurrency=5, max_retries=0)
    specs = [
        CallSpec(
            ident=n,
            request={"model": "sim-echo", "messages": [{"role": "user", "content": f"m{n}"}]},
            call_hash=f"h{n}",
        )
        for n in range(20)
    ]
    outcomes = asyncio.run(execute_all(config, specs))
    assert all(o.received for o in outcomes)
    stats = simulator._request("/_sim/stats?window=0.05")
    assert stats["max_in_flight"] == 5 and stats["in_flight"] == 0
    assert stats["max_requests_per_minute"] == 20
    assert 1 <= stats["max_requests_in_window"]["requests"] <= 6
