"""Evaluation pages: runs, a run's progress and report, figures and downloads, drill-down to the evidence."""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import permission_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from calibration.services import primary_judge
from evaluation import selectors, services
from evaluation.models import Answer, EvaluationRun, OpenResponse, PairVerdict
from evaluation.report import report_files
from labelling.models import LANGUAGE_CHOICES
from llm.models import Endpoint
from releases.models import Release


class EvaluationRunForm(forms.Form):
    name = forms.CharField(label=gettext_lazy("Name"), max_length=200)
    release = forms.ModelChoiceField(
        label=gettext_lazy("Frozen release"), queryset=Release.objects.filter(status=Release.Status.FROZEN)
    )
    endpoints = forms.ModelMultipleChoiceField(
        label=gettext_lazy("Models under test"),
        queryset=Endpoint.objects.filter(is_active=True),
        widget=forms.CheckboxSelectMultiple,
    )
    languages = forms.MultipleChoiceField(
        label=gettext_lazy("Languages"),
        choices=LANGUAGE_CHOICES,
        initial=["en", "zh"],
        widget=forms.CheckboxSelectMultiple,
    )
    protocol = forms.ChoiceField(label=gettext_lazy("Objective protocol"), choices=EvaluationRun.Protocol.choices)
    pairing = forms.ChoiceField(label=gettext_lazy("Pairing"), choices=EvaluationRun.Pairing.choices)
    seed = forms.IntegerField(label=gettext_lazy("Seed"), initial=0, min_value=0)
    judge_override_reason = forms.CharField(
        label=gettext_lazy("Reason to run without the selected primary judge (only if none is selected)"),
        required=False,
    )


@permission_required("items.view_item", raise_exception=True)
def run_list(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "evaluation/run_list.html",
        {"runs": EvaluationRun.objects.select_related("release__benchmark", "judge"), "selection": primary_judge()},
    )


@permission_required("evaluation.run_evaluation", raise_exception=True)
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
                pairing=data["pairing"],
                seed=data["seed"],
                judge_override_reason=data["judge_override_reason"],
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


@permission_required("items.view_item", raise_exception=True)
def run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    run = get_object_or_404(EvaluationRun.objects.select_related("release__benchmark", "judge"), pk=pk)
    links = list(run.llm_runs.select_related("llm_run", "model").order_by("id"))
    context = {"run": run, "links": links, "models": list(run.models.select_related("endpoint"))}
    if run.phase == EvaluationRun.Phase.DRAFT:
        context["estimate"] = services.evaluation_estimate(run=run)
    if request.htmx and request.GET.get("part") == "progress":
        return render(request, "evaluation/run.html#progress", context)
    if run.report:
        from evaluation.charts import figures

        context["report"] = run.report
        context["figures"] = figures(run.report)
        context["pairing_comparison"] = selectors.pairing_comparison(run=run)
    return render(request, "evaluation/run.html", context)


@permission_required("evaluation.run_evaluation", raise_exception=True)
@require_POST
def run_action(request: HttpRequest, pk: int, action: str) -> HttpResponse:
    run = get_object_or_404(EvaluationRun, pk=pk)
    try:
        if action == "start":
            services.evaluation_run_start(run=run, user=request.user)
            messages.success(request, _("The run has started."))
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


@permission_required("items.view_item", raise_exception=True)
def run_download(request: HttpRequest, pk: int, name: str) -> HttpResponse:
    run = get_object_or_404(EvaluationRun, pk=pk)
    if not run.report:
        return HttpResponse(_("The report is not ready yet."), status=409)
    files = report_files(run.report, with_raster=name.endswith((".png", ".pdf")))
    if name not in files:
        return HttpResponse(_("No such file."), status=404)
    types = {
        "csv": "text/csv",
        "json": "application/json",
        "tex": "application/x-tex",
        "svg": "image/svg+xml",
        "png": "image/png",
        "pdf": "application/pdf",
    }
    response = HttpResponse(files[name], content_type=types.get(name.rsplit(".", 1)[-1], "application/octet-stream"))
    response["Content-Disposition"] = f'attachment; filename="{run.pk}-{name}"'
    return response


@permission_required("items.view_item", raise_exception=True)
def drill(request: HttpRequest, pk: int) -> HttpResponse:
    """The items, responses, verdicts and raw judge outputs behind a cell of the report."""
    run = get_object_or_404(EvaluationRun, pk=pk)
    model, dimension, language = request.GET.get("model"), request.GET.get("dimension"), request.GET.get("language")
    answers = Answer.objects.filter(run=run).select_related("model", "item__dimension", "call")
    opens = OpenResponse.objects.filter(run=run).select_related("model", "item__dimension")
    verdicts = PairVerdict.objects.filter(run=run).select_related("model_a", "model_b", "item__dimension", "call")
    if model:
        answers, opens = answers.filter(model__code=model), opens.filter(model__code=model)
        verdicts = verdicts.filter(model_a__code=model) | verdicts.filter(model_b__code=model)
    if dimension:
        answers = answers.filter(item__dimension__code=dimension)
        opens = opens.filter(item__dimension__code=dimension)
        verdicts = verdicts.filter(item__dimension__code=dimension)
    if language:
        answers, opens, verdicts = (
            answers.filter(language=language),
            opens.filter(language=language),
            verdicts.filter(language=language),
        )
    return render(
        request,
        "evaluation/drill.html",
        {
            "run": run,
            "answers": answers.order_by("item__uid", "language", "turn")[:500],
            "opens": opens.order_by("item__uid", "language")[:200],
            "verdicts": verdicts.order_by("item__uid", "language", "model_a__code", "model_b__code", "order")[:500],
            "filters": {"model": model, "dimension": dimension, "language": language},
        },
    )
