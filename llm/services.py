"""Every write on endpoints, calls and runs: called by views, the API, commands and other apps alike."""

import asyncio
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from llm import collection, lifecycle, parsers, planning, probe, selectors
from llm.bulk import insert_rows
from llm.calls import build_request, request_hash
from llm.executor import CallSpec, execute_all
from llm.models import BudgetPool, Endpoint, LLMCall, Run, RunBatch, RunChunk, RunItem
from llm.recording import CallState, KeyProblem, endpoint_config, merge_outcome, outcome_cost, parse_cached

# Starting or resuming a run queues its workers: the one import of the worker package from here (it never
# imports this module back; tests/llm/test_layers.py checks both).
from llm.worker import tasks as worker_tasks

ENDPOINT_FIELDS = (
    "name",
    "base_url",
    "model",
    "api_style",
    "api_key_env",
    "temperature",
    "max_tokens",
    "token_parameter",
    "seed",
    "reasoning_effort",
    "price_input_per_mtok",
    "price_output_per_mtok",
    "price_batch_input_per_mtok",
    "price_batch_output_per_mtok",
    "batch_default",
    "max_concurrency",
    "rpm_limit",
    "timeout_seconds",
    "max_retries",
    "is_simulator",
    "is_active",
    "for_drafting",
    "embedding_model",
    "embedding_dimensions",
    "price_embedding_per_mtok",
    "notes",
)

# The roles the simulator plays, registered by `make run` (see docs/llm.md).
SIMULATED_MODELS = (
    ("sim-mcq-acc90", "Simulator · MCQ 90%"),
    ("sim-mcq-acc70", "Simulator · MCQ 70%"),
    ("sim-mcq-acc40", "Simulator · MCQ 40%"),
    ("sim-style-template", "Simulator · template style"),
    ("sim-style-list", "Simulator · list style"),
    ("sim-style-concise", "Simulator · concise style"),
    ("sim-judge", "Simulator · judge (accurate)"),
    ("sim-judge-noise25-bias10", "Simulator · judge (noisy, biased to A)"),
    ("sim-drafter", "Simulator · item drafter"),
)
SIMULATED_EMBEDDER = "sim-style-concise"


# --- endpoints ------------------------------------------------------------------------------------------------


@transaction.atomic
def endpoint_create(*, data: dict) -> Endpoint:
    """Create an endpoint from field values (see ENDPOINT_FIELDS); the API key itself is never accepted."""
    endpoint = Endpoint(**{k: v for k, v in data.items() if k in ENDPOINT_FIELDS})
    endpoint.full_clean()
    endpoint.save()
    return endpoint


@transaction.atomic
def endpoint_update(*, endpoint: Endpoint, data: dict) -> Endpoint:
    """Change an endpoint's settings. Cached calls stay valid: the cache key holds the model and parameters."""
    for name, value in data.items():
        if name in ENDPOINT_FIELDS:
            setattr(endpoint, name, value)
    endpoint.full_clean()
    endpoint.save()
    return endpoint


@transaction.atomic
def simulator_endpoints_register(*, base_url: str) -> list[Endpoint]:
    """Create or refresh one endpoint per simulated role at ``base_url``; running it again changes nothing."""
    endpoints = []
    for model, name in SIMULATED_MODELS:
        endpoint = Endpoint.objects.filter(name=name).first() or Endpoint(name=name)
        endpoint.base_url = base_url
        endpoint.model = model
        endpoint.api_style = Endpoint.ApiStyle.CHAT
        endpoint.api_key_env = ""
        endpoint.is_simulator = True
        endpoint.max_concurrency = max(endpoint.max_concurrency, 32) if endpoint.pk else 32
        endpoint.price_input_per_mtok = Decimal("0.5")
        endpoint.price_output_per_mtok = Decimal("1.5")
        # Batch prices at half the live ones, as major providers charge.
        endpoint.price_batch_input_per_mtok = Decimal("0.25")
        endpoint.price_batch_output_per_mtok = Decimal("0.75")
        endpoint.notes = _("Local simulator: replies are synthetic and must not be reported as results.")
        endpoint.for_drafting = endpoint.for_drafting or model == "sim-drafter"
        if model == SIMULATED_EMBEDDER:  # the simulator's /v1/embeddings, for the contamination check
            endpoint.embedding_model, endpoint.price_embedding_per_mtok = "sim-embed", Decimal("0.02")
        endpoint.full_clean()
        endpoint.save()
        endpoints.append(endpoint)
    return endpoints


@dataclass
class ConnectionReport:
    ok: bool
    message: str
    latency_ms: int | None = None
    error_kind: str = ""
    reply: str = ""
    call_id: int | None = None
    capabilities: dict | None = None


# Failures that leave nothing else to probe: the server, or the key, is not there.
UNPROBED = {"connection", "timeout", "auth", "invalid_response", "missing_key", "key_not_allowed"}


def endpoint_probe(*, endpoint: Endpoint) -> ConnectionReport:
    """Test the connection, then probe what the endpoint supports (``llm.probe``) and store it on the endpoint with
    the date, and the token-limit parameter the model takes."""
    report = endpoint_test_connection(endpoint=endpoint)
    if report.error_kind in UNPROBED:
        return report
    config = endpoint_config(endpoint, timeout=min(endpoint.timeout_seconds, 30.0), max_retries=0)
    capabilities = probe.capabilities_probe(endpoint, config)
    parameter = capabilities["token_parameter"]
    with transaction.atomic():
        Endpoint.objects.filter(pk=endpoint.pk).update(
            capabilities=capabilities, probed_at=timezone.now(), token_parameter=parameter
        )
    changed = parameter != endpoint.token_parameter
    endpoint.refresh_from_db()
    report.capabilities = capabilities
    if changed and endpoint.api_style == Endpoint.ApiStyle.CHAT and capabilities["chat"]["ok"]:
        report.ok, report.error_kind = True, ""
        report.message = _(
            "Connected: the model takes %(parameter)s for the token limit; the endpoint sends it from now on."
        ) % {"parameter": parameter}
    return report


def endpoint_test_connection(*, endpoint: Endpoint) -> ConnectionReport:
    """Send one tiny request (no retries) and report the latency, or what is wrong, in plain words."""
    try:
        config = endpoint_config(endpoint, timeout=min(endpoint.timeout_seconds, 30.0), max_retries=0)
    except KeyProblem as exc:
        return ConnectionReport(ok=False, message=str(exc), error_kind=exc.error_kind)
    if endpoint.api_style == Endpoint.ApiStyle.CHAT:
        request = build_request(
            api_style=endpoint.api_style,
            model=endpoint.model,
            defaults=endpoint.default_params(),
            messages=[{"role": "user", "content": "Reply with the single word OK."}],
            params={endpoint.token_parameter: max(endpoint.max_tokens or 0, 16)},
        )
        parser = None
    else:
        request = build_request(
            api_style=endpoint.api_style, model=endpoint.model, defaults=endpoint.default_params(), prompt="Hello there"
        )
        parser = parsers.get("logprobs")
    spec = CallSpec(ident=0, request=request, call_hash="test-" + uuid.uuid4().hex, parser=parser)
    outcome = asyncio.run(execute_all(config, [spec]))[0]
    with transaction.atomic():
        call = LLMCall(endpoint=endpoint, request_hash=request_hash(request, fresh_nonce=spec.call_hash), fresh=True)
        call.request = request
        state = CallState(call_id=0, sends=0, retries=0, input_tokens=0, output_tokens=0, cost=Decimal(0), attempts=[])
        for name, value in merge_outcome(state, outcome, outcome_cost(outcome, endpoint)).items():
            setattr(call, name, value)
        call.save()
    if outcome.received and outcome.parsed is not False:
        message = _("Connected: the model answered in %(ms)s ms.") % {"ms": outcome.latency_ms}
        return ConnectionReport(True, message, outcome.latency_ms, reply=outcome.response_text[:200], call_id=call.pk)
    if outcome.received:
        message = _(
            "The server answered but sent no prompt log-probabilities, so it cannot score with echo and "
            "logprobs: %(error)s"
        ) % {"error": outcome.error}
    else:
        message = outcome.error
    return ConnectionReport(
        False, message, outcome.latency_ms, outcome.error_kind, outcome.response_text[:200], call.pk
    )


# --- single calls -----------------------------------------------------------------------------------------------


@dataclass
class CallResult:
    call: LLMCall
    result: object
    cached: bool

    @property
    def ok(self) -> bool:
        return self.call.status == LLMCall.Status.SUCCEEDED and self.call.parsed is not False


def call_make(
    *,
    endpoint: Endpoint,
    messages: list | None = None,
    prompt: str | None = None,
    params: dict | None = None,
    parser: str = "text",
    fresh: bool = False,
    hints: dict | None = None,
    max_parse_retries: int | None = None,
) -> CallResult:
    """Send one request now (or serve it from the cache) and return the recorded call with its parsed result.

    For a handful of calls from a page or a command; batches belong in a run (``run_create``).
    """
    parse = parsers.get(parser)
    retries = settings.LLM_MAX_PARSE_RETRIES if max_parse_retries is None else max_parse_retries
    request = build_request(
        api_style=endpoint.api_style,
        model=endpoint.model,
        defaults=endpoint.default_params(),
        messages=messages,
        prompt=prompt,
        params=params,
    )
    key = request_hash(request, fresh_nonce=uuid.uuid4().hex if fresh else "")
    with transaction.atomic():
        call, _created = LLMCall.objects.get_or_create(
            endpoint=endpoint, request_hash=key, defaults={"request": request, "fresh": fresh}
        )
    if call.status == LLMCall.Status.SUCCEEDED:
        try:
            return CallResult(call, parse(call.response_text, call.response_json or {}), cached=True)
        except Exception:  # noqa: BLE001 - the cached reply does not parse: send it again
            if retries == 0:
                return CallResult(call, None, cached=True)
            retries -= 1
    return _call_send(endpoint, call, request, key, hints=hints, parse=parse, retries=retries)


def _call_send(
    endpoint: Endpoint, call: LLMCall, request: dict, key: str, *, hints: dict | None, parse: object, retries: int
) -> CallResult:
    """Send the call's ``request`` (hashed ``key``) now, record the outcome on the call and return it with its
    parsed result."""
    try:
        config = endpoint_config(endpoint)
    except KeyProblem as exc:
        LLMCall.objects.filter(pk=call.pk).update(
            status=LLMCall.Status.FAILED, error_kind=exc.error_kind, error=str(exc)
        )
        call.refresh_from_db()
        return CallResult(call, None, cached=False)
    spec = CallSpec(
        ident=call.pk,
        request=request,
        call_hash=key,
        first_send=call.sends,
        hints=hints or {},
        parser=parse,
        max_parse_retries=retries,
    )
    outcome = asyncio.run(execute_all(config, [spec]))[0]
    state = CallState(
        call.pk, call.sends, call.retries, call.input_tokens, call.output_tokens, call.cost, call.attempts
    )
    with transaction.atomic():
        LLMCall.objects.filter(pk=call.pk).update(**merge_outcome(state, outcome, outcome_cost(outcome, endpoint)))
    call.refresh_from_db()
    return CallResult(call, outcome.result if outcome.parsed else None, cached=False)


# --- runs -------------------------------------------------------------------------------------------------------


@transaction.atomic
def run_create(
    *,
    endpoint: Endpoint,
    prompts: Iterable[dict],
    parser: str,
    name: str,
    user: AbstractBaseUser | None = None,
    fresh: bool = False,
    purpose: str = "",
    max_parse_retries: int | None = None,
    chunk_size: int | None = None,
    start: bool = True,
    batch: bool | None = None,
    batch_fallback: str = Run.Mode.LIVE,
    budget: Decimal | None = None,
    budget_pool: BudgetPool | None = None,
) -> Run:
    """Plan a run: one item per prompt, grouped into chunks, queued for the workers unless ``start`` is False.

    ``batch`` sends the requests as provider batches (None: the endpoint's default); requests that fail or expire
    in a batch are sent again live or in a new batch (``batch_fallback``). ``budget`` (in the endpoint's currency)
    pauses the run before a request, or a batch, that could exceed it; so does ``budget_pool``, a budget shared
    with other runs (``budget_pool_create``).

    A prompt is ``{"ref": {...}, "messages": [...]}`` (or ``"prompt": "text"``), with optional ``"params"``
    overriding the endpoint's defaults and ``"hints"`` for the simulator (``{"answer": "B"}``). ``ref`` is what
    the prompt is for, as structured data the purpose's collector reads back (``llm.collectors``); prompts
    uploaded by people carry a ``"key"`` instead (a unique label). All or nothing: one bad prompt refuses the
    whole run, naming the prompt at fault.
    """
    run = _run_new(
        endpoint=endpoint,
        parser=parser,
        name=name,
        user=user,
        fresh=fresh,
        purpose=purpose,
        max_parse_retries=max_parse_retries,
        chunk_size=chunk_size,
        batch=batch,
        batch_fallback=batch_fallback,
        budget=budget,
        budget_pool=budget_pool,
    )
    groups = planning.prompts_group(endpoint=endpoint, prompts=prompts, nonce_prefix=f"run:{run.pk}" if fresh else None)
    cached = {} if fresh else _cached_results(endpoint, list(groups), parsers.get(parser))
    now = timezone.now()
    open_chunks = _run_items_store(run, planning.chunks_cut(groups.values(), run.chunk_size), cached, now=now)
    run.estimated_cost, run.estimated_cost_batch = planning.cost_estimates(endpoint=endpoint, groups=groups.values())
    run.save(update_fields=["planned", "done", "cached", "estimated_cost", "estimated_cost_batch"])
    if not open_chunks:
        # Every answer came from the cache: the run is done as it is created, and queued to be collected.
        run.started_at = run.finished_at = now
        run = lifecycle.run_transition_locked(run=run, to=Run.Status.DONE, fields=("started_at",))
    elif start:
        _enqueue(run, n_chunks=open_chunks)
    return run


def _run_new(
    *,
    endpoint: Endpoint,
    parser: str,
    name: str,
    user: AbstractBaseUser | None,
    fresh: bool,
    purpose: str,
    max_parse_retries: int | None,
    chunk_size: int | None,
    batch: bool | None,
    batch_fallback: str,
    budget: Decimal | None,
    budget_pool: BudgetPool | None,
) -> Run:
    """Save a new run's row, with the settings' defaults for what the caller left out; refuse an unknown parser."""
    try:
        parsers.get(parser)
    except KeyError as exc:
        raise ValidationError({"parser": str(exc).strip('"')}) from exc
    if not endpoint.is_active:
        raise ValidationError({"endpoint": _("This endpoint is switched off.")})
    refusal = probe.run_refusal(endpoint, batch=endpoint.batch_default if batch is None else bool(batch), parser=parser)
    if refusal:
        raise ValidationError({"endpoint": refusal})
    run = Run(
        name=name,
        purpose=purpose,
        endpoint=endpoint,
        parser=parser,
        fresh=fresh,
        created_by=user,
        max_parse_retries=settings.LLM_MAX_PARSE_RETRIES if max_parse_retries is None else max_parse_retries,
        chunk_size=chunk_size or settings.LLM_CHUNK_SIZE,
        mode=Run.Mode.BATCH if (endpoint.batch_default if batch is None else batch) else Run.Mode.LIVE,
        batch_fallback=batch_fallback,
        budget=budget,
        budget_pool=budget_pool,
    )
    run.full_clean()
    run.save()
    return run


def _run_items_store(
    run: Run, chunk_rows: list[list[dict]], cached: dict[str, tuple[int, object]], *, now: object
) -> int:
    """Save the run's chunks and items, those answered from the cache done already; return how many chunks are open.

    Sets (without saving) the run's counts of planned, done and cached items.
    """
    _rows_answer_from_cache(chunk_rows, cached, now=now)
    chunks = RunChunk.objects.bulk_create(
        [
            RunChunk(run=run, number=number, status=RunChunk.Status.DONE, finished_at=now)
            if all(row.get("cached") for row in rows)
            else RunChunk(run=run, number=number)
            for number, rows in enumerate(chunk_rows, start=1)
        ]
    )
    defaults = {"call_id": None, "result": None, "status": RunItem.Status.PENDING, "cached": False, "finished_at": None}
    items = [
        defaults | row | {"run_id": run.pk, "chunk_id": chunk.pk, "cost": Decimal("0"), "error": ""}
        for chunk, rows in zip(chunks, chunk_rows, strict=True)
        for row in rows
    ]
    insert_rows(RunItem, items, [f.attname for f in RunItem._meta.concrete_fields if not f.primary_key])
    run.planned = len(items)
    run.done = run.cached = sum(1 for item in items if item["cached"])
    return sum(1 for chunk in chunks if chunk.status != RunChunk.Status.DONE)


def _rows_answer_from_cache(
    chunk_rows: list[list[dict]], cached: dict[str, tuple[int, object]], *, now: object
) -> None:
    for rows in chunk_rows:
        for row in rows:
            if row["request_hash"] in cached:
                call_id, result = cached[row["request_hash"]]
                row.update(call_id=call_id, result=result, status=RunItem.Status.DONE, cached=True, finished_at=now)


def _cached_results(endpoint: Endpoint, hashes: list[str], parse: parsers.Parser) -> dict[str, tuple[int, object]]:
    """Return {request hash: (call id, parsed result)} for the requests already answered and parseable."""
    found = {}
    for start in range(0, len(hashes), 500):
        calls = LLMCall.objects.filter(
            endpoint=endpoint, status=LLMCall.Status.SUCCEEDED, request_hash__in=hashes[start : start + 500]
        ).values_list("pk", "request_hash", "response_text", "response_json")
        for pk, digest, text, raw in calls:
            result, problem = parse_cached(parse, text, raw)
            if not problem:
                found[digest] = (pk, result)
    return found


def _enqueue(run: Run, *, n_chunks: int | None = None) -> None:
    if n_chunks is None:
        n_chunks = run.chunks.exclude(status=RunChunk.Status.DONE).count()
    n_tasks = max(1, min(n_chunks, settings.LLM_TASKS_PER_RUN))
    run_id = run.pk
    transaction.on_commit(lambda: [worker_tasks.run_work.enqueue(run_id) for _ in range(n_tasks)])


def _locked(run: Run) -> Run:
    return Run.objects.select_for_update().get(pk=run.pk)


@transaction.atomic
def run_pause(*, run: Run) -> Run:
    """Stop a queued or running run after the requests in flight; ``run_resume`` carries on where it stopped."""
    run = _locked(run)
    if not run.can_become(Run.Status.PAUSED):
        raise ValidationError(
            _("Only a queued or running run can be paused; this one is %(status)s.")
            % {"status": run.get_status_display()}
        )
    return lifecycle.run_transition_locked(run=run, to=Run.Status.PAUSED)


@transaction.atomic
def run_resume(*, run: Run) -> Run:
    """Queue a paused or failed run again (or a running one whose workers all died); done items are kept."""
    run = _locked(run)
    stalled = run.status == Run.Status.RUNNING and selectors.run_is_stalled(run=run)
    if run.status not in (Run.Status.PAUSED, Run.Status.FAILED) and not stalled:
        raise ValidationError(
            _("Only a paused, failed or stalled run can be resumed; this one is %(status)s.")
            % {"status": run.get_status_display()}
        )
    if not run.chunks.exclude(status=RunChunk.Status.DONE).exists():
        raise ValidationError(_("Nothing is left to do in this run."))
    run.error = ""
    run.finished_at = None
    run.heartbeat_at = timezone.now()
    run.pause_reason = Run.PauseReason.NONE
    # Chunks waiting for their batches are polled at once.
    run.chunks.filter(poll_after__isnull=False).update(poll_after=None)
    run = lifecycle.run_transition_locked(
        run=run, to=Run.Status.QUEUED, fields=("error", "finished_at", "heartbeat_at", "pause_reason")
    )
    _enqueue(run)
    return run


@transaction.atomic
def run_budget_set(*, run: Run, budget: Decimal | None) -> Run:
    """Set or remove a run's budget; a run paused by its budget resumes when the new one leaves room.

    Raise ``ValidationError`` for a negative budget or one below what the run has already spent and reserved.
    """
    run = _locked(run)
    if budget is not None:
        budget = Decimal(budget)
        if budget < 0:
            raise ValidationError({"budget": _("A budget cannot be negative.")})
        if budget < run.spent + run.reserved:
            raise ValidationError(
                {
                    "budget": _("The run has already spent %(spent)s (and %(reserved)s is in flight).")
                    % {"spent": run.spent, "reserved": run.reserved}
                }
            )
    raised = budget is None or (run.budget is not None and budget > run.budget)
    run.budget = budget
    run.full_clean()
    run.save(update_fields=["budget"])
    if raised and run.status == Run.Status.PAUSED and run.pause_reason == Run.PauseReason.BUDGET:
        run = run_resume(run=run)
    return run


@transaction.atomic
def run_cancel(*, run: Run) -> Run:
    """Stop a run for good; what is done stays, the rest is never sent."""
    run = _locked(run)
    if not run.can_become(Run.Status.CANCELLED):
        raise ValidationError(_("This run is already %(status)s.") % {"status": run.get_status_display()})
    run.finished_at = timezone.now()
    run = lifecycle.run_transition_locked(run=run, to=Run.Status.CANCELLED)
    if run.is_batch and run.batches.filter(status__in=RunBatch.OPEN).exists():
        # A worker cancels them at the provider and gives back what they reserved (none may be following them).
        run_id = run.pk
        transaction.on_commit(lambda: worker_tasks.run_work.enqueue(run_id))
    return run


def run_collect_again(*, run: Run) -> Run:
    """Collect a finished run whose collection failed (after fixing the cause); say why when there is nothing to do."""
    run.refresh_from_db()
    if run.status not in Run.FINISHED:
        raise ValidationError(
            _("Only a finished run can be collected; this one is %(status)s.") % {"status": run.get_status_display()}
        )
    if run.collected_at is not None:
        raise ValidationError(_("This run's results were already collected."))
    try:
        collection.run_collect(run_id=run.pk)
    except ValidationError:
        raise
    except Exception as exc:
        raise ValidationError(
            _("Collecting failed again: %(error)s") % {"error": f"{type(exc).__name__}: {exc}"}
        ) from exc
    run.refresh_from_db()
    return run


# --- shared budgets ---------------------------------------------------------------------------------------------


@transaction.atomic
def budget_pool_create(*, name: str, budget: Decimal | None) -> BudgetPool:
    """Create a budget that several runs share (pass it to ``run_create`` as ``budget_pool``)."""
    pool = BudgetPool(name=name[:200], budget=budget)
    pool.full_clean()
    pool.save()
    return pool


@transaction.atomic
def budget_pool_set(*, pool: BudgetPool, budget: Decimal | None) -> BudgetPool:
    """Change a shared budget; the runs it paused resume when it is raised (or removed).

    Raise ``ValidationError`` for a negative budget or one below what its runs have already spent and reserved.
    """
    pool = BudgetPool.objects.select_for_update().get(pk=pool.pk)
    if budget is not None:
        budget = Decimal(budget)
        if budget < 0:
            raise ValidationError({"budget": _("A budget cannot be negative.")})
        if budget < pool.spent + pool.reserved:
            raise ValidationError(
                {
                    "budget": _("The runs have already spent %(spent)s (and %(reserved)s is in flight).")
                    % {"spent": pool.spent, "reserved": pool.reserved}
                }
            )
    raised = budget is None or (pool.budget is not None and budget > pool.budget)
    pool.budget = budget
    pool.full_clean()
    pool.save(update_fields=["budget"])
    if raised:
        paused = Run.objects.filter(budget_pool=pool, status=Run.Status.PAUSED, pause_reason=Run.PauseReason.BUDGET)
        for run in paused:
            if run.budget is None or run.budget > run.spent:
                run_resume(run=run)
    return pool
