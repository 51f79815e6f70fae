"""Spending caps: a run pauses before a request (or a batch) that could exceed its budget, says why, and resumes
when the budget is raised. In this process against the simulator; the worker-process version with two workers
sharing one budget is in test_batch_workers.py.
"""

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError

from llm import services
from llm.calls import request_max_cost
from llm.models import Run, RunChunk, RunItem
from llm.worker import runner
from llm.worker.chunks import ChunkStore
from tests.factories import mcq_prompts


@pytest.fixture
def priced(make_endpoint, settings):
    settings.LLM_BATCH_POLL_SECONDS = 0.05

    def make(**fields: object):
        prices = {
            "price_input_per_mtok": Decimal("1000"),
            "price_output_per_mtok": Decimal("2000"),
            "price_batch_input_per_mtok": Decimal("500"),
            "price_batch_output_per_mtok": Decimal("1000"),
            "max_tokens": 40,
            "max_concurrency": 4,
        }
        return make_endpoint("sim-mcq-acc90", **{**prices, **fields})

    return make


def work(run: Run) -> Run:
    runner.run_work(run_id=run.pk)
    run.refresh_from_db()
    return run


def next_request_cost(run: Run, *, batch: bool = False) -> Decimal:
    price_input, price_output = run.endpoint.prices(batch=batch)
    pending = RunItem.objects.filter(run=run, status=RunItem.Status.PENDING).order_by("position").first()
    sends = 1 if batch else 1 + run.max_parse_retries
    return request_max_cost(pending.request, price_input=price_input, price_output=price_output, sends=sends)


def test_a_live_run_stops_within_one_requests_cost_of_its_budget_and_resumes_when_it_is_raised(
    transactional_db, priced, simulator
):
    endpoint = priced()
    run = services.run_create(
        endpoint=endpoint,
        prompts=mcq_prompts(60),
        parser="mcq_letter",
        name="capped",
        start=False,
        budget=Decimal("2.5"),
        max_parse_retries=0,
    )
    run = work(run)
    assert run.status == Run.Status.PAUSED
    assert run.pause_reason == Run.PauseReason.BUDGET
    assert 0 < run.done < 60
    assert run.spent <= run.budget, "never over the budget"
    assert run.budget - run.spent < next_request_cost(run), "stopped within one request's cost of the budget"
    assert run.reserved == 0
    assert simulator.stats()["billable"] == run.done
    with pytest.raises(ValidationError):
        services.run_budget_set(run=run, budget=run.spent - Decimal("0.01"))

    run = services.run_budget_set(run=run, budget=Decimal("100"))
    assert run.status == Run.Status.QUEUED and run.pause_reason == ""
    run = work(run)
    assert run.status == Run.Status.DONE, run.error
    assert run.done == 60 and run.spent <= run.budget
    stats = simulator.stats()
    assert (stats["billable"], stats["duplicate_billed_keys"]) == (60, 0)


def test_a_budget_counts_re_sends_of_unparseable_replies(transactional_db, priced, simulator):
    simulator.configure(garbage_rate=0.3)
    run = services.run_create(
        endpoint=priced(),
        prompts=mcq_prompts(40),
        parser="mcq_letter",
        name="resends",
        start=False,
        budget=Decimal("3"),
        max_parse_retries=2,
    )
    run = work(run)
    assert run.status == Run.Status.PAUSED and run.pause_reason == Run.PauseReason.BUDGET
    assert run.spent <= run.budget
    assert run.budget - run.spent < next_request_cost(run)


def test_a_batch_run_pauses_before_a_batch_that_could_exceed_its_budget(transactional_db, priced, simulator):
    simulator.configure(batch_delay_ms=50, batch_error_rate=0.0, batch_expire_rate=0.0)
    run = services.run_create(
        endpoint=priced(),
        prompts=mcq_prompts(50),
        parser="mcq_letter",
        name="capped batches",
        start=False,
        batch=True,
        budget=Decimal("1"),
    )
    run = work(run)
    assert run.status == Run.Status.PAUSED and run.pause_reason == Run.PauseReason.BUDGET
    assert run.spent <= run.budget
    batches = simulator.stats()["batches"]
    assert 0 < batches < 5
    assert run.done == 10 * batches
    assert run.reserved == 0
    services.run_budget_set(run=run, budget=None)
    run = work(run)
    assert run.status == Run.Status.DONE and run.done == 50
    assert simulator.stats()["batches"] == 5


def test_a_budget_below_what_was_spent_is_refused_and_lowering_does_not_resume(transactional_db, priced, simulator):
    run = services.run_create(
        endpoint=priced(), prompts=mcq_prompts(3), parser="mcq_letter", name="low", start=False, budget=Decimal("1")
    )
    with pytest.raises(ValidationError, match="negative"):
        services.run_budget_set(run=run, budget=Decimal("-1"))
    Run.objects.filter(pk=run.pk).update(status=Run.Status.PAUSED, pause_reason=Run.PauseReason.BUDGET)
    run = services.run_budget_set(run=run, budget=Decimal("0.5"))
    assert run.status == Run.Status.PAUSED, "a lower budget does not resume a run paused by its budget"
    run = services.run_budget_set(run=run, budget=Decimal("0.6"))
    assert run.status == Run.Status.QUEUED


def test_a_budget_with_room_is_reserved_once_per_chunk_not_once_per_request(
    transactional_db, priced, simulator, monkeypatch
):
    """Each chunk's claim reserves what all its requests may cost; they draw on it without a write of their own."""
    writes = []
    reserve = ChunkStore.reserve
    monkeypatch.setattr(ChunkStore, "reserve", lambda self, *args: writes.append(args) or reserve(self, *args))
    run = services.run_create(
        endpoint=priced(),
        prompts=mcq_prompts(30),
        parser="mcq_letter",
        name="roomy",
        start=False,
        budget=Decimal("100"),
        chunk_size=10,
        max_parse_retries=0,
    )
    run = work(run)
    assert run.status == Run.Status.DONE and run.done == 30
    assert writes == [], "no reservation per request"
    assert 0 < run.spent <= run.budget
    assert run.reserved == 0, "what the chunks reserved ahead and did not spend was given back"
    assert not RunChunk.objects.filter(run=run).exclude(reserved=0).exists()


def test_a_budget_without_room_for_a_chunk_is_reserved_in_blocks_and_still_stops_within_one_request(
    transactional_db, priced, simulator, monkeypatch
):
    writes = []
    reserve = ChunkStore.reserve
    monkeypatch.setattr(ChunkStore, "reserve", lambda self, *args: writes.append(args) or reserve(self, *args))
    endpoint = priced()
    run = services.run_create(
        endpoint=endpoint,
        prompts=mcq_prompts(60),
        parser="mcq_letter",
        name="tight",
        start=False,
        budget=Decimal("2.5"),
        max_parse_retries=0,
    )
    run = work(run)
    assert run.status == Run.Status.PAUSED and run.pause_reason == Run.PauseReason.BUDGET
    assert run.spent <= run.budget
    assert run.budget - run.spent < next_request_cost(run)
    assert run.reserved == 0
    assert 0 < len(writes) < run.done, "fewer reservation writes than requests sent"
