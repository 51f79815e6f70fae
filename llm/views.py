"""Pages for LLM runs (live progress, pause, resume, cancel), calls, and endpoints (managed by admins)."""

import json
import os

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods, require_POST

from core.permissions import permission_required
from llm import selectors, services
from llm.forms import EndpointForm, RunBudgetForm, RunCreateForm, RunFilterForm
from llm.keys import api_key_env_status
from llm.models import Endpoint, LLMCall, Run, RunItem

PAGE_SIZE = 50
BLIND = gettext_lazy(
    "LLM runs and calls show which endpoint wrote which reply, so those who label replies blind do not see them."
)
RUN_ACTIONS = {
    "pause": services.run_pause,
    "resume": services.run_resume,
    "cancel": services.run_cancel,
    "collect": services.run_collect_again,
}


def duration_text(seconds: int | None) -> str:
    """Return a short human duration such as "3 min 20 s"."""
    if seconds is None:
        return ""
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return _("%(h)s h %(m)s min") % {"h": hours, "m": minutes}
    if minutes:
        return _("%(m)s min %(s)s s") % {"m": minutes, "s": secs}
    return _("%(s)s s") % {"s": secs}


def _run_or_404(pk: int) -> Run:
    try:
        return selectors.run_detail(pk=pk)
    except Run.DoesNotExist as exc:
        raise Http404(_("No run with id %(id)s.") % {"id": pk}) from exc


def _progress_context(request: HttpRequest, run: Run) -> dict:
    progress = selectors.run_progress(run=run)
    progress["eta"] = duration_text(progress["eta_seconds"])
    can_run = request.user.has_perm("llm.run_llm")
    return {
        "run": run,
        "progress": progress,
        "can_pause": can_run and run.can_become(Run.Status.PAUSED),
        "can_resume": can_run
        and (run.status in (Run.Status.PAUSED, Run.Status.FAILED) or progress["stalled"])
        and run.remaining > 0,
        "can_cancel": can_run and run.can_become(Run.Status.CANCELLED),
        "can_collect": can_run and run.is_finished and run.collected_at is None and bool(run.collect_error),
        "polling": run.status in Run.ACTIVE,
        "batches": selectors.run_batches(run=run) if run.is_batch else None,
        "budget_form": RunBudgetForm(initial={"budget": run.budget}) if can_run and not run.is_finished else None,
    }


@permission_required("llm.view_run", why=BLIND)
def run_list(request: HttpRequest) -> HttpResponse:
    form = RunFilterForm(request.GET or None)
    status = form.cleaned_data.get("status", "") if form.is_valid() else ""
    page = Paginator(selectors.run_list(status=status), PAGE_SIZE).get_page(request.GET.get("page"))
    rows = [{"run": run, "progress": selectors.run_progress(run=run)} for run in page]
    context = {"form": form, "page": page, "rows": rows, "status": status}
    context["polling"] = any(row["run"].is_active for row in rows)
    return render(request, "llm/run_list.html#runs" if request.htmx else "llm/run_list.html", context)


@permission_required("llm.view_run", why=BLIND)
def run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    run = _run_or_404(pk)
    status = request.GET.get("items", "")
    if status not in {"", "cached", *RunItem.Status.values}:
        status = ""
    items = Paginator(selectors.run_items(run=run, status=status), PAGE_SIZE).get_page(request.GET.get("page"))
    rows = [
        (item, json.dumps(item.result, ensure_ascii=False)[:300] if item.result is not None else "") for item in items
    ]
    context = _progress_context(request, run) | {"items": items, "item_rows": rows, "item_status": status}
    context["item_filters"] = [
        ("", _("All")),
        (RunItem.Status.PENDING, _("Pending")),
        (RunItem.Status.DONE, _("Done")),
        ("cached", _("From cache")),
        (RunItem.Status.FAILED, _("Failed")),
    ]
    template = "llm/run_detail.html#items" if request.htmx and request.htmx.target == "items" else "llm/run_detail.html"
    return render(request, template, context)


@permission_required("llm.view_run", why=BLIND)
def run_progress(request: HttpRequest, pk: int) -> HttpResponse:
    run = _run_or_404(pk)
    return render(request, "llm/run_detail.html#progress", _progress_context(request, run))


@permission_required("llm.run_llm", why=BLIND)
@require_POST
def run_action(request: HttpRequest, pk: int, action: str) -> HttpResponse:
    run = _run_or_404(pk)
    service = RUN_ACTIONS.get(action)
    if service is None:
        raise Http404(_("Unknown action."))
    try:
        run = service(run=run)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        text = {
            "pause": _("Pausing: requests in flight finish first."),
            "resume": _("Resumed: the run is queued for the workers."),
            "cancel": _("Cancelled."),
            "collect": _("The results were collected."),
        }[action]
        messages.success(request, text)
    if request.htmx:
        return render(request, "llm/run_detail.html#progress", _progress_context(request, selectors.run_detail(pk=pk)))
    return redirect("llm:run-detail", pk=pk)


@permission_required("llm.run_llm", why=BLIND)
@require_POST
def run_budget(request: HttpRequest, pk: int) -> HttpResponse:
    run = _run_or_404(pk)
    form = RunBudgetForm(request.POST)
    if form.is_valid():
        try:
            run = services.run_budget_set(run=run, budget=form.cleaned_data["budget"])
        except ValidationError as exc:
            messages.error(request, " ".join(exc.messages))
        else:
            if run.budget is None:
                messages.success(request, _("The run has no budget now."))
            else:
                messages.success(request, _("Budget set to %(budget)s.") % {"budget": run.budget})
    else:
        messages.error(request, " ".join(str(e) for errors in form.errors.values() for e in errors))
    return redirect("llm:run-detail", pk=pk)


@permission_required("llm.run_llm", why=BLIND)
@require_http_methods(["GET", "POST"])
def run_create(request: HttpRequest) -> HttpResponse:
    form = RunCreateForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            run = services.run_create(
                endpoint=data["endpoint"],
                prompts=data["prompts"],
                parser=data["parser"],
                name=data["name"],
                user=request.user,
                fresh=data["fresh"],
                max_parse_retries=data["max_parse_retries"],
                batch=None if not data["mode"] else data["mode"] == Run.Mode.BATCH,
                batch_fallback=data["batch_fallback"] or Run.Mode.LIVE,
                budget=data["budget"],
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, _("Run created with %(n)s prompts.") % {"n": run.planned})
            return redirect("llm:run-detail", pk=run.pk)
    return render(request, "llm/run_create.html", {"form": form}, status=400 if form.errors else 200)


@permission_required("llm.view_run", why=BLIND)
def run_export(request: HttpRequest, pk: int) -> StreamingHttpResponse:
    """Download a run's items with their requests, replies and parsed results as JSONL (never any key)."""
    run = _run_or_404(pk)

    def lines() -> object:
        for item in selectors.run_items(run=run).iterator(chunk_size=500):
            call = item.call
            record = {
                "key": item.key,
                "ref": item.ref,
                "status": item.status,
                "cached": item.cached,
                "result": item.result,
                "error": item.error,
                "cost": str(item.cost),
                "request": item.request,
                "call_id": item.call_id,
                "response_text": call.response_text if call else None,
                "endpoint": run.endpoint.name,
                "model": run.endpoint.model,
                "simulator": run.endpoint.is_simulator,
            }
            yield json.dumps(record, ensure_ascii=False) + "\n"

    response = StreamingHttpResponse(lines(), content_type="application/x-ndjson; charset=utf-8")
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    response["Content-Disposition"] = f'attachment; filename="run-{run.pk}-{stamp}.jsonl"'
    return response


@permission_required("llm.view_llmcall", why=BLIND)
def call_detail(request: HttpRequest, pk: int) -> HttpResponse:
    try:
        call = selectors.call_detail(pk=pk)
    except LLMCall.DoesNotExist as exc:
        raise Http404(_("No call with id %(id)s.") % {"id": pk}) from exc
    return render(
        request,
        "llm/call_detail.html",
        {
            "call": call,
            "request_json": json.dumps(call.request, ensure_ascii=False, indent=2),
            "response_json": json.dumps(call.response_json, ensure_ascii=False, indent=2) if call.response_json else "",
        },
    )


@permission_required("llm.view_endpoint")
def endpoint_list(request: HttpRequest) -> HttpResponse:
    endpoints = [
        {"endpoint": e, "key_status": api_key_env_status(e.api_key_env, os.environ)}
        for e in selectors.endpoint_list()
    ]
    return render(
        request,
        "llm/endpoint_list.html",
        {"endpoints": endpoints, "can_manage": request.user.has_perm("llm.manage_endpoint")},
    )


@permission_required("llm.manage_endpoint")
@require_http_methods(["GET", "POST"])
def endpoint_edit(request: HttpRequest, pk: int | None = None) -> HttpResponse:
    endpoint = get_object_or_404(Endpoint, pk=pk) if pk else None
    form = EndpointForm(request.POST or None, instance=endpoint)
    if request.method == "POST" and form.is_valid():
        data = {name: form.cleaned_data[name] for name in form.fields}
        try:
            if endpoint is None:
                endpoint = services.endpoint_create(data=data)
            else:
                endpoint = services.endpoint_update(endpoint=endpoint, data=data)
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, _("Saved endpoint %(name)s.") % {"name": endpoint.name})
            return redirect("llm:endpoint-list")
    return render(
        request, "llm/endpoint_form.html", {"form": form, "endpoint": endpoint}, status=400 if form.errors else 200
    )


@permission_required("llm.manage_endpoint")
@require_POST
def endpoint_test(request: HttpRequest, pk: int) -> HttpResponse:
    endpoint = get_object_or_404(Endpoint, pk=pk)
    report = services.endpoint_probe(endpoint=endpoint)
    context = {"endpoint": endpoint, "report": report}
    if request.htmx:
        return render(request, "llm/endpoint_list.html#test-result", context)
    if report.ok:
        messages.success(request, f"{endpoint.name}: {report.message}")
    else:
        messages.error(request, f"{endpoint.name}: {report.message}")
    return redirect("llm:endpoint-list")
