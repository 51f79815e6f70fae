"""An endpoint's limits hold across worker processes: three real ``db_worker`` processes on one run, measured by
the simulator itself (the most requests in flight at once, the most started in a window)."""

import pytest

from llm import services
from llm.models import Run, RunChunk
from tests.factories import mcq_prompts
from tests.workers import wait_for_workers_ready, wait_until

pytestmark = pytest.mark.worker


def refreshed(run: Run) -> Run:
    run.refresh_from_db()
    return run


def finish(run: Run) -> Run:
    wait_until(lambda: refreshed(run).status not in Run.ACTIVE, 90, "the run to finish")
    assert run.status == Run.Status.DONE, run.error
    assert (run.done, run.failed) == (run.planned, 0)
    return run


def worker_processes(run: Run) -> set[str]:
    owners = RunChunk.objects.filter(run=run).values_list("lease_owner", flat=True)
    return {owner.rsplit(":", 1)[0] for owner in owners if owner}


def test_three_workers_keep_the_endpoints_concurrency_limit_together(
    transactional_db, make_endpoint, simulator_idle, simulator, workers
):
    simulator.configure(latency_ms=150, jitter_ms=0)
    for _ in range(3):
        workers.start()
    wait_for_workers_ready(workers)
    endpoint = make_endpoint("sim-mcq-acc90", max_concurrency=4)
    run = services.run_create(endpoint=endpoint, prompts=mcq_prompts(120), parser="mcq_letter", name="concurrency")
    finish(run)
    stats = simulator.stats()
    print(f"\nshared concurrency: max in flight {stats['max_in_flight']} (limit 4), {stats['requests']} requests")
    assert stats["max_in_flight"] <= 4, "the limit held across the three workers"
    assert stats["max_in_flight"] == 4, "and was reached, so this test can fail"
    assert len(worker_processes(run)) >= 2, "several workers took part"
    assert (stats["billable"], stats["duplicate_billed_keys"]) == (120, 0)


def test_three_workers_keep_the_endpoints_rate_limit_together(
    transactional_db, make_endpoint, simulator_idle, simulator, workers
):
    simulator.configure(latency_ms=20, jitter_ms=0)
    for _ in range(3):
        workers.start()
    wait_for_workers_ready(workers)
    endpoint = make_endpoint("sim-mcq-acc90", max_concurrency=8, rpm_limit=600)  # a start every 0.1 s
    run = services.run_create(endpoint=endpoint, prompts=mcq_prompts(60), parser="mcq_letter", name="rate")
    finish(run)
    stats = simulator._request("/_sim/stats?window=3")
    in_window = stats["max_requests_in_window"]["requests"]
    print(
        f"\nshared rate: at most {in_window} requests in any 3 s (limit 600/min = 30 per 3 s), "
        f"{stats['max_requests_per_minute']} in any minute"
    )
    # 30 allowed, one more at the window's edge, two for arrival jitter on a loaded machine; three workers each
    # keeping the limit on their own would start about 90.
    assert in_window <= 33, "no more than the limit started in any window, across the three workers"
    assert in_window >= 20, "and the rate was approached, so this test can fail"
    assert stats["max_requests_per_minute"] <= 600
    assert len(worker_processes(run)) >= 2
    assert (stats["billable"], stats["duplicate_billed_keys"]) == (60, 0)
