"""Evaluation pages: runs, a run's progress and report, figures and downloads, drill-down to the evidence."""

from datetime import timedelta
from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.db.models import Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from annotation.items.selectors import benchmark_choices
from calibration.services import primary_judge
from core.inputs import page_number
from core.list_filters import ListFilterForm
from core.permissions import permission_required
from core.rowfiles import FORMATS, pair_headers, table_response
from evaluation import exports, selectors, services
from evaluation.forms import ContaminationCheckForm, EvaluationBudgetForm, EvaluationRunForm
from evaluation.models import ContaminationCheck, EvaluationRun
from evaluation.progress import run_progress, runs_progress
from evaluation.report import report_file
from evaluation.report.files import dimension_names, figures_cache_shared, page_figures, table_file_names
from evaluation.services.runs import evaluation_budget_set
from llm.models import Run
from llm.views import duration_text

RUNS_PER_PAGE = 50
# How long after a run finished its page waits for the worker's figures before drawing them itself.
FIGURES_WAIT = timedelta(minutes=2)

BLIND = gettext_lazy(
    "Evaluation runs, reports, drill-downs and files show responses under model codes next to the endpoints "
    "behind them, so those who label responses do not see them."
)


@permission_required("evaluation.run_evaluation", why=BLIND)
def run_list(request: HttpRequest) -> HttpResponse:
    """Evaluation runs, newest first, 50 a page, each with its phase and, while it runs, its percentage and time left
    (polled every 2 seconds while any on the page runs)."""
    filters = ListFilterForm(request.GET, benchmarks=benchmark_choices(), statuses=EvaluationRun.Phase.choices)
    chosen = filters.apply(
        selectors.evaluation_run_list(),
        search=("name", "release__version", "release__title", "judge__name"),
        benchmark="release__benchmark__slug",
        status={value: Q(phase=value) for value in EvaluationRun.Phase.values},
    )
    page = Paginator(chosen, RUNS_PER_PAGE).get_page(request.GET.get("page"))
    progress = runs_progress(list(page))
    rows = []
    for run in page:
        run_state = progress[run.pk]
        run_state["eta"] = duration_text(run_state["eta_seconds"])
        rows.append({"run": run, "progress": run_state})
    context = {
        "page": page,
        "rows": rows,
        "selection": primary_judge(),
        "polling": any(row["progress"]["running"] for row in rows),
        "filters": filters,
        "shown": page.paginator.count,
        "filter_query": urlencode([(k, v) for k, v in request.GET.items() if k != "page" and v]),
    }
    return render(request, "evaluation/run_list.html#runs" if request.htmx else "evaluation/run_list.html", context)


@permission_required("evaluation.run_evaluation", why=BLIND)
def run_create(request: HttpRequest) -> HttpResponse:
    form = EvaluationRunForm(request.POST or None)
    estimate = None
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            run = services.evaluation_run_create(
                name=data["name"],
                release=data["release"],
                endpoints=list(data["endpoints"]),
                languages=data["languages"],
                protocol=data["protocol"],
                held_out_release=data.get("held_out_release"),
                pairing=data["pairing"],
                seed=data["seed"],
                judge_override_reason=data["judge_override_reason"],
                budget=data.get("budget"),
                user=request.user,
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            return redirect("evaluation:run", pk=run.pk)
    return render(
        request,
        "evaluation/run_create.html",
        {"form": form, "estimate": estimate, "selection": primary_judge()},
        status=400 if form.errors else 200,
    )


@permission_required("evaluation.run_evaluation", why=BLIND)
def run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """The run page; with ``?part=live`` (htmx polling) only its header, actions, progress and, once done, report."""
    run = get_object_or_404(
        EvaluationRun.objects.select_related("release__benchmark", "judge", "judge_selection", "budget_pool"), pk=pk
    )
    models = selectors.evaluation_run_models(run=run)
    links = selectors.evaluation_run_llm_runs(run=run)
    progress = run_progress(run, models=len(models), llm_runs=links)
    progress["eta"] = duration_text(progress["eta_seconds"])
    context = {
        "run": run,
        "progress": progress,
        "links": links,
        "models": models,
        "may_see_llm_runs": request.user.has_perm("llm.view_run"),
        "may_pause": progress["running"] and any(link.llm_run.can_become(Run.Status.PAUSED) for link in links),
        "may_resume": progress["running"] and any(link.llm_run.status == Run.Status.PAUSED for link in links),
        "budget_form": EvaluationBudgetForm(initial={"budget": run.budget_pool.budget if run.budget_pool else None}),
    }
    if run.report:
        names = dimension_names(run, run.report)
        context["report"] = run.report
        # The worker that stored the report draws its figures next (services.figures_draw): for a while, the page
        # shows the report without them and polls, rather than drawing them again in the request (seconds).
        wait = figures_cache_shared() and run.finished_at and timezone.now() - run.finished_at < FIGURES_WAIT
        figures = page_figures(run, names, draw=not wait)
        context["figures"], context["figures_pending"] = figures or [], figures is None
        context["table_files"] = table_file_names(
            eicap=bool(run.report.get("eicap")), held_out=bool(run.report.get("held_out"))
        )
        context["row_formats"] = FORMATS
        context["dimension_names"] = names
        context["pairing_comparison"] = selectors.pairing_comparison(run=run, models=models)
    # Everything the live part shows (header, actions, budget, progress, report) must be in the context above:
    # polling re-renders that part alone.
    if request.htmx and request.GET.get("part") in {"live", "progress"}:
        return render(request, "evaluation/run.html#live", context)
    if run.phase == EvaluationRun.Phase.DRAFT:
        context["estimate"] = services.evaluation_estimate(run=run)
    return render(request, "evaluation/run.html", context)


@permission_required("evaluation.run_evaluation", why=BLIND)
@require_POST
def run_action(request: HttpRequest, pk: int, action: str) -> HttpResponse:
    """Start, pause, resume or cancel the run, or recompute its report, then go back to the run page."""
    run = get_object_or_404(EvaluationRun, pk=pk)
    try:
        if action == "start":
            services.evaluation_run_start(run=run, user=request.user)
            messages.success(request, _("The run has started."))
        elif action == "pause":
            services.evaluation_run_pause(run=run)
            messages.info(request, _("The run is paused; requests in flight finish."))
        elif action == "resume":
            services.evaluation_run_resume(run=run)
            messages.success(request, _("The run is queued again."))
        elif action == "cancel":
            services.evaluation_run_cancel(run=run)
            messages.info(request, _("The run was cancelled; collected results are kept."))
        elif action == "recompute":
            before = run.report_digest
            services.evaluation_report_compute(run=run)
            same = before == EvaluationRun.objects.get(pk=pk).report_digest
            messages.info(request, _("Report recomputed: identical.") if same else _("Report recomputed."))
        else:
            return HttpResponse(_("Unknown action."), status=404)
    except ValidationError as exc:
        for message in exc.messages:
            messages.error(request, message)
    return redirect("evaluation:run", pk=run.pk)


@permission_required("evaluation.run_evaluation", why=BLIND)
def run_download(request: HttpRequest, pk: int, name: str) -> HttpResponse:
    run = get_object_or_404(EvaluationRun, pk=pk)
    if not run.report:
        return HttpResponse(_("The report is not ready yet."), status=409)
    file = report_file(run, name)
    if file is None:
        return HttpResponse(_("No such file."), status=404)
    content, content_type, filename = file
    response = HttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@permission_required("evaluation.run_evaluation", why=BLIND)
def drill(request: HttpRequest, pk: int) -> HttpResponse:
    """The items, responses, verdicts and raw judge outputs behind a cell of the report."""
    run = get_object_or_404(EvaluationRun, pk=pk)
    model, dimension, language = request.GET.get("model"), request.GET.get("dimension"), request.GET.get("language")
    filters = {"model": model, "dimension": dimension, "language": language}
    page = page_number(request.GET.get("page")) or 1
    evidence = selectors.evaluation_run_evidence(
        run=run,
        model=model,
        dimension=dimension,
        language=language,
        page=page,
        sizes=selectors.EVIDENCE_PAGE_HTML,
    )
    return render(
        request,
        "evaluation/drill.html",
        {
            "run": run,
            **evidence,
            "filters": filters,
            "query": urlencode({key: value for key, value in filters.items() if value}),
        },
    )


@permission_required("evaluation.run_evaluation", why=BLIND)
@require_POST
def run_budget(request: HttpRequest, pk: int) -> HttpResponse:
    """Set, raise or remove the run's budget; LLM runs the budget paused resume when it is raised."""
    run = get_object_or_404(EvaluationRun, pk=pk)
    form = EvaluationBudgetForm(request.POST)
    if not form.is_valid():
        messages.error(request, " ".join(" ".join(errors) for errors in form.errors.values()))
        return redirect("evaluation:run", pk=pk)
    try:
        evaluation_budget_set(run=run, budget=form.cleaned_data["budget"])
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, _("Budget saved."))
    return redirect("evaluation:run", pk=pk)


def _run_table(request: HttpRequest, pk: int, fmt: str, *, pairs: bool) -> HttpResponse:
    run = get_object_or_404(EvaluationRun.objects.select_related("judge"), pk=pk)
    language = request.GET.get("language") or None
    if fmt not in FORMATS or language not in (None, "en", "zh"):
        return HttpResponse(_("No such file."), status=404, content_type="text/plain; charset=utf-8")
    if not pairs:
        rows = exports.verdict_rows(run=run, language=language)
        return table_response(rows, exports.VERDICT_COLUMNS, fmt, filename=f"verdicts-evaluation-{run.pk}")
    counts = exports.verdict_preference_counts(run=run, language=language)
    rows = exports.verdict_preference_rows(run=run, language=language)
    return table_response(
        rows, exports.PAIR_COLUMNS, fmt, filename=f"preference-pairs-evaluation-{run.pk}", headers=pair_headers(counts)
    )


@permission_required("evaluation.run_evaluation", why=BLIND)
def run_verdicts(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    """Download the judge's pair verdicts, one row per item, language and pair with both orders combined."""
    return _run_table(request, pk, fmt, pairs=False)


@permission_required("evaluation.run_evaluation", why=BLIND)
def run_answers(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    """Download the run's raw objective answers, one row per model, item, language and turn."""
    run = get_object_or_404(EvaluationRun, pk=pk)
    language = request.GET.get("language") or None
    if fmt not in FORMATS or language not in (None, "en", "zh"):
        return HttpResponse(_("No such file."), status=404, content_type="text/plain; charset=utf-8")
    rows = exports.answer_rows(run=run, language=language)
    return table_response(rows, exports.ANSWER_COLUMNS, fmt, filename=f"answers-evaluation-{run.pk}")


@permission_required("evaluation.run_evaluation", why=BLIND)
def run_pairs(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    """Download the preference pairs of the judge's verdicts; the headers count the pairs left out."""
    return _run_table(request, pk, fmt, pairs=True)


@permission_required("evaluation.run_evaluation", why=BLIND)
def contamination_list(request: HttpRequest) -> HttpResponse:
    """Contamination checks, newest first, and the form that starts one (a release against an uploaded corpus)."""
    form = ContaminationCheckForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        from evaluation.services.contamination import contamination_check_create  # deferred: loads scikit-learn

        try:
            check = contamination_check_create(
                release=form.cleaned_data["release"],
                name=form.cleaned_data["name"],
                data=form.cleaned_data["corpus"].read(),
                user=request.user,
                embedding_endpoint=form.cleaned_data["embedding_endpoint"],
            )
        except ValidationError as exc:
            form.add_error(None if hasattr(exc, "error_dict") else "corpus", exc)
        else:
            return redirect("evaluation:contamination", pk=check.pk)
    checks = ContaminationCheck.objects.select_related("release__benchmark").defer("corpus", "result")[:100]
    return render(
        request,
        "evaluation/contamination_list.html",
        {"form": form, "checks": checks},
        status=400 if form.errors else 200,
    )


@permission_required("evaluation.run_evaluation", why=BLIND)
def contamination_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """One contamination check: per language the cosine distribution and the closest pairs."""
    checks = ContaminationCheck.objects.select_related("release__benchmark", "embedding_endpoint").defer("corpus")
    check = get_object_or_404(checks, pk=pk)
    return render(request, "evaluation/contamination.html", {"check": check})
