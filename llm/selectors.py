"""Reads shared by the pages, the API, the commands and other apps."""

from datetime import timedelta

from django.conf import settings
from django.db.models import Count, QuerySet, Sum
from django.utils import timezone

from llm.calls import estimate_total
from llm.models import Endpoint, LLMCall, Run, RunBatch, RunItem


def endpoint_list(*, active_only: bool = False) -> QuerySet[Endpoint]:
    """Return endpoints by name."""
    qs = Endpoint.objects.all()
    if active_only:
        qs = qs.filter(is_active=True)
    return qs.order_by("name")


def run_list(*, status: str = "", endpoint: int | str | None = None, purpose: str = "") -> QuerySet[Run]:
    """Return runs, newest first, with their endpoint and author."""
    qs = Run.objects.select_related("endpoint", "created_by")
    if status:
        qs = qs.filter(status=status)
    if endpoint:
        qs = qs.filter(endpoint_id=endpoint)
    if purpose:
        qs = qs.filter(purpose=purpose)
    return qs.order_by("-id")


def run_detail(*, pk: int) -> Run:
    return Run.objects.select_related("endpoint", "created_by").get(pk=pk)


def run_items(*, run: Run, status: str = "") -> QuerySet[RunItem]:
    """Return a run's items in prompt order, with their calls."""
    qs = RunItem.objects.filter(run=run).select_related("call")
    if status == "cached":
        qs = qs.filter(cached=True)
    elif status:
        qs = qs.filter(status=status)
    return qs.order_by("position")


def run_results(*, run: Run) -> list[dict]:
    """Return every item of a run as ``{key, ref, status, cached, result, error, call_id, cost}``, in prompt order."""
    return list(
        RunItem.objects.filter(run=run)
        .order_by("position")
        .values("key", "ref", "status", "cached", "result", "error", "call_id", "cost")
    )


def run_is_stalled(*, run: Run, now: object = None) -> bool:
    """Return whether a running run has shown no sign of a live worker for ``LLM_STALL_SECONDS``.

    Workers queue such runs again on their own (``llm.worker.recovery``); Resume does the same by hand.
    """
    if run.status != Run.Status.RUNNING:
        return False
    now = now or timezone.now()
    last = run.heartbeat_at or run.started_at or run.created_at
    return last is not None and now - last > timedelta(seconds=settings.LLM_STALL_SECONDS)


def run_progress(*, run: Run) -> dict:
    """Return counts, spend, the cost estimate and the expected time left for the progress bar and the API."""
    processed = run.done + run.failed
    billed_items = run.done - run.cached + run.failed
    percent = 100.0 * processed / run.planned if run.planned else 0.0
    eta_seconds = None
    if run.status == Run.Status.RUNNING and run.started_at and processed and run.remaining:
        elapsed = (timezone.now() - run.started_at).total_seconds()
        if elapsed > 0:
            eta_seconds = int(run.remaining * elapsed / processed)
    return {
        "id": run.pk,
        "status": run.status,
        "planned": run.planned,
        "done": run.done,
        "cached": run.cached,
        "failed": run.failed,
        "remaining": run.remaining,
        "percent": round(percent, 1),
        "spent": run.spent,
        "estimated_total": estimate_total(
            spent=run.spent,
            billed_items=billed_items,
            remaining=run.remaining,
            initial_estimate=run.estimated_cost_batch if run.is_batch else run.estimated_cost,
            planned=run.planned,
        ),
        "eta_seconds": eta_seconds,
        "stalled": run_is_stalled(run=run),
        "error": run.error,
        "is_simulator": run.endpoint.is_simulator,
        "mode": run.mode,
        "budget": run.budget,
        "reserved": run.reserved,
        "pause_reason": run.pause_reason,
        "estimated_cost_live": run.estimated_cost,
        "estimated_cost_batch": run.estimated_cost_batch,
        "spent_at_live_prices": run.spend_at(batch=False),
        "spent_at_batch_prices": run.spend_at(batch=True),
    }


def run_batches(*, run: Run) -> dict:
    """Return a batch run's provider batches: how many in each state, requests answered and failed, newest first."""
    qs = RunBatch.objects.filter(run=run)
    counts = dict(qs.values_list("status").annotate(n=Count("id")).values_list("status", "n"))
    totals = qs.aggregate(completed=Sum("completed_requests"), failed=Sum("failed_requests"))
    return {
        "by_status": [(status, label, counts.get(status, 0)) for status, label in RunBatch.Status.choices],
        "total": sum(counts.values()),
        "completed_requests": totals["completed"] or 0,
        "failed_requests": totals["failed"] or 0,
        "recent": list(
            qs.order_by("-id").values(
                "attempt", "chunk__number", "status", "provider_status", "provider_batch_id", "created_at"
            )[:10]
        ),
    }


def call_list(*, endpoint: int | str | None = None, status: str = "", error_kind: str = "") -> QuerySet[LLMCall]:
    """Return calls, newest first, without their bulky request and response columns."""
    qs = LLMCall.objects.select_related("endpoint").defer("response_json", "attempts")
    if endpoint:
        qs = qs.filter(endpoint_id=endpoint)
    if status:
        qs = qs.filter(status=status)
    if error_kind:
        qs = qs.filter(error_kind=error_kind)
    return qs.order_by("-id")


def call_detail(*, pk: int) -> LLMCall:
    return LLMCall.objects.select_related("endpoint").get(pk=pk)
