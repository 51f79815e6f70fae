"""Calibration pages: judge prompts, judges, calibration runs, the agreement report and judge selection."""

import csv
import io
import json

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import permission_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from calibration import services
from calibration.charts import forest_plot_svg
from calibration.models import CalibrationRun, CombineRule, Judge, JudgePrompt, JudgeSelection, PromptSet
from items.models import Dimension
from labelling.models import ComparisonSet
from llm.models import Endpoint


class JudgePromptForm(forms.Form):
    dimension = forms.ModelChoiceField(
        label=gettext_lazy("Dimension"), queryset=Dimension.objects.filter(subjective=True)
    )
    criteria = forms.CharField(
        label=gettext_lazy("Criteria, in priority order"), widget=forms.Textarea(attrs={"rows": 6})
    )
    analysis_steps = forms.CharField(
        label=gettext_lazy("Required analysis before the verdict"), widget=forms.Textarea(attrs={"rows": 4})
    )
    length_penalty = forms.CharField(label=gettext_lazy("Length penalty"), widget=forms.Textarea(attrs={"rows": 2}))
    few_shot = forms.CharField(
        label=gettext_lazy("Few-shot pairs (JSON list)"), widget=forms.Textarea(attrs={"rows": 6}), required=False
    )
    notes = forms.CharField(label=gettext_lazy("What changed"), required=False)

    def clean_few_shot(self) -> list:
        raw = self.cleaned_data.get("few_shot") or "[]"
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(_("Not valid JSON: %(error)s") % {"error": exc.msg}) from exc
        return value


class CalibrationRunForm(forms.Form):
    name = forms.CharField(label=gettext_lazy("Name"), max_length=200)
    comparison_set = forms.ModelChoiceField(label=gettext_lazy("Comparison set"), queryset=ComparisonSet.objects.all())
    judges = forms.ModelMultipleChoiceField(
        label=gettext_lazy("Candidate judges"), queryset=Judge.objects.all(), widget=forms.CheckboxSelectMultiple
    )
    combine_rule = forms.ChoiceField(label=gettext_lazy("Order combination"), choices=CombineRule.choices)
    seed = forms.IntegerField(label=gettext_lazy("Seed"), initial=0, min_value=0)
    bootstrap = forms.IntegerField(
        label=gettext_lazy("Bootstrap resamples"), initial=1000, min_value=0, max_value=20000
    )


class JudgeForm(forms.Form):
    name = forms.CharField(label=gettext_lazy("Name"), max_length=100)
    endpoint = forms.ModelChoiceField(label=gettext_lazy("Endpoint"), queryset=Endpoint.objects.filter(is_active=True))
    prompt_set = forms.ModelChoiceField(label=gettext_lazy("Prompt set"), queryset=PromptSet.objects.all())


@permission_required("items.view_item", raise_exception=True)
def overview(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "calibration/overview.html",
        {
            "runs": CalibrationRun.objects.select_related("comparison_set"),
            "judges": Judge.objects.select_related("endpoint", "prompt_set"),
            "prompt_sets": PromptSet.objects.prefetch_related("prompts__dimension"),
            "selection": services.primary_judge(),
            "judge_form": JudgeForm() if request.user.has_perm("calibration.run_judge") else None,
        },
    )


@permission_required("items.view_item", raise_exception=True)
def prompts(request: HttpRequest) -> HttpResponse:
    form = JudgePromptForm(request.POST or None)
    if request.method == "POST":
        if not request.user.has_perm("calibration.author_judge_prompt"):
            return HttpResponse(_("You may not write judge prompts."), status=403)
        if form.is_valid():
            data = form.cleaned_data
            try:
                prompt = services.judge_prompt_create(
                    dimension=data["dimension"],
                    criteria=data["criteria"],
                    analysis_steps=data["analysis_steps"],
                    length_penalty=data["length_penalty"],
                    few_shot=data["few_shot"],
                    notes=data["notes"],
                    user=request.user,
                )
            except ValidationError as exc:
                form.add_error(None, exc)
            else:
                messages.success(request, _("Saved %(prompt)s.") % {"prompt": prompt})
                return redirect("calibration:prompts")
    return render(
        request,
        "calibration/prompts.html",
        {"prompts": JudgePrompt.objects.select_related("dimension", "created_by"), "form": form},
        status=400 if form.errors else 200,
    )


@permission_required("calibration.run_judge", raise_exception=True)
def judge_create(request: HttpRequest) -> HttpResponse:
    form = JudgeForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            services.judge_create(**form.cleaned_data)
        except ValidationError as exc:
            messages.error(request, " ".join(exc.messages))
        else:
            messages.success(request, _("Judge added."))
    elif request.method == "POST":
        messages.error(request, " ".join(f"{k}: {' '.join(v)}" for k, v in form.errors.items()))
    return redirect("calibration:overview")


@permission_required("calibration.run_judge", raise_exception=True)
def run_start(request: HttpRequest) -> HttpResponse:
    form = CalibrationRunForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            run = services.calibration_run_start(
                name=data["name"],
                comparison_set=data["comparison_set"],
                judges=list(data["judges"]),
                combine_rule=data["combine_rule"],
                seed=data["seed"],
                bootstrap=data["bootstrap"],
                user=request.user,
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            return redirect("calibration:run", pk=run.pk)
    return render(request, "calibration/run_start.html", {"form": form}, status=400 if form.errors else 200)


def _run_context(run: CalibrationRun) -> dict:
    judge_runs = list(run.judge_runs.select_related("judge", "llm_run"))
    status = services.calibration_run_status(run=run)
    return {"run": run, "judge_runs": judge_runs, "status": status}


@permission_required("items.view_item", raise_exception=True)
def run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    run = get_object_or_404(CalibrationRun.objects.select_related("comparison_set"), pk=pk)
    context = _run_context(run)
    if request.htmx and request.GET.get("part") == "progress":
        return render(request, "calibration/run.html#progress", context)
    report = run.report
    if report:
        overall = report["strata"][0] if report["strata"] else None
        context.update(
            {
                "report": report,
                "overall": overall,
                "forest": forest_plot_svg(report),
                "selection": JudgeSelection.objects.filter(calibration_run=run).first(),
                "can_select": request.user.has_perm("calibration.run_judge"),
            }
        )
    return render(request, "calibration/run.html", context)


@permission_required("calibration.run_judge", raise_exception=True)
def run_report(request: HttpRequest, pk: int) -> HttpResponse:
    run = get_object_or_404(CalibrationRun, pk=pk)
    if request.method == "POST":
        try:
            services.calibration_report_compute(run=run)
        except ValidationError as exc:
            messages.error(request, " ".join(exc.messages))
        else:
            messages.success(request, _("Report computed."))
    return redirect("calibration:run", pk=run.pk)


@permission_required("calibration.run_judge", raise_exception=True)
def run_select(request: HttpRequest, pk: int) -> HttpResponse:
    run = get_object_or_404(CalibrationRun, pk=pk)
    judge = Judge.objects.filter(pk=request.POST.get("judge") or 0).first()
    if request.method != "POST" or judge is None or not run.report_digest:
        messages.error(request, _("Choose a judge from a computed report."))
        return redirect("calibration:run", pk=run.pk)
    try:
        services.judge_select(
            run=run,
            judge=judge,
            user=request.user,
            reason=request.POST.get("reason", ""),
            report_digest=run.report_digest,
        )
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, _("%(judge)s is now the primary judge.") % {"judge": judge.name})
    return redirect("calibration:run", pk=run.pk)


def _rows(report: dict) -> list[dict]:
    rows = []
    for stratum in report["strata"]:
        base = stratum["baseline"]
        rows.append(
            {
                "stratum": stratum["key"],
                "rater": "experts",
                "alpha": base["alpha_ordinal"]["value"],
                "alpha_low": base["alpha_ordinal"]["ci_low"],
                "alpha_high": base["alpha_ordinal"]["ci_high"],
                "kappa": None,
                "agreement": None,
                "agreement_without_ties": None,
                "flip_rate": None,
                "length_bias": None,
                "parse_failure_rate": None,
            }
        )
        for name, row in stratum["judges"].items():
            rows.append(
                {
                    "stratum": stratum["key"],
                    "rater": name,
                    "alpha": row["alpha_with_judge"]["value"],
                    "alpha_low": row["alpha_with_judge"]["ci_low"],
                    "alpha_high": row["alpha_with_judge"]["ci_high"],
                    "kappa": row["kappa_majority"]["value"],
                    "agreement": row["agreement"]["value"],
                    "agreement_without_ties": row["agreement_without_ties"]["value"],
                    "flip_rate": row["position_bias"]["flip_rate"]["value"],
                    "length_bias": row["length_bias"]["value"],
                    "parse_failure_rate": row["parse_failure_rate"],
                }
            )
    return rows


def _fmt(value: object) -> str:
    return "" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


@permission_required("items.view_item", raise_exception=True)
def run_download(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    run = get_object_or_404(CalibrationRun, pk=pk)
    if not run.report:
        return HttpResponse(_("The report has not been computed yet."), status=409)
    name = f"calibration-{run.pk}"
    if fmt == "json":
        response = HttpResponse(json.dumps(run.report, ensure_ascii=False, indent=2), content_type="application/json")
    elif fmt == "csv":
        buffer = io.StringIO()
        rows = _rows(run.report)
        writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: _fmt(v) for k, v in r.items()} for r in rows)
        response = HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8")
    elif fmt == "tex":
        response = HttpResponse(latex_table(run.report), content_type="application/x-tex; charset=utf-8")
    else:
        return HttpResponse(_("Unknown format."), status=404)
    response["Content-Disposition"] = f'attachment; filename="{name}.{fmt}"'
    return response


def latex_table(report: dict) -> str:
    """Return the overall comparison of judges and experts as a LaTeX table (booktabs)."""
    lines = [
        r"\begin{tabular}{lrrrrr}",
        r"\toprule",
        r"Rater & $\alpha$ [95\% CI] & $\kappa$ & Agr. & Agr. w/o ties & Flip rate \\",
        r"\midrule",
    ]
    for row in _rows(report):
        if row["stratum"] != "overall":
            continue

        def cell(v: object) -> str:
            return "--" if v is None else f"{v:.3f}"

        alpha = (
            "--"
            if row["alpha"] is None
            else (f"{row['alpha']:.3f} [{cell(row['alpha_low'])}, {cell(row['alpha_high'])}]")
        )
        rater = row["rater"].replace("_", r"\_").replace("&", r"\&")
        lines.append(
            f"{rater} & {alpha} & {cell(row['kappa'])} & {cell(row['agreement'])} & "
            f"{cell(row['agreement_without_ties'])} & {cell(row['flip_rate'])} \\\\"
        )
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    return "\n".join(lines)
