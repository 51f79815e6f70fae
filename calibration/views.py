"""Calibration pages: judge prompts, judges, calibration runs, the agreement report and judge selection."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django_htmx.http import HttpResponseClientRefresh

from annotation.items.models import Benchmark, KeyValidation
from annotation.items.selectors import key_disagreements
from annotation.labelling.experts import expert_statistics
from annotation.releases.protocol import LETTERS
from calibration import exports, keys, selectors, services
from calibration.agreement.planning import plan
from calibration.charts import page_forest
from calibration.forms import (
    CalibrationRunForm,
    JudgeForm,
    JudgePromptForm,
    JuryForm,
    KeyValidationForm,
    PlanningForm,
)
from calibration.models import CalibrationRun, Judge
from calibration.report import report_file
from core.permissions import permission_required, require_permission
from core.rowfiles import FORMATS, pair_headers, table_response

BLIND = gettext_lazy(
    "Calibration runs show the responses experts label next to the runs, judges and endpoints behind them, so "
    "those who label do not see them."
)


@permission_required("calibration.run_judge", why=BLIND)
def overview(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "calibration/overview.html",
        {
            "runs": selectors.calibration_run_list(),
            "judges": selectors.judge_list(),
            "prompt_sets": selectors.prompt_set_list(),
            "selection": services.primary_judge(),
        },
    )


@permission_required("items.view_item")
def prompts(request: HttpRequest) -> HttpResponse:
    form = JudgePromptForm(request.POST or None)
    if request.method == "POST":
        require_permission(request.user, "calibration.author_judge_prompt")
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
        {"prompts": selectors.judge_prompt_list(), "form": form},
        status=400 if form.errors else 200,
    )


@permission_required("calibration.run_judge", why=BLIND)
def judge_create(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        # The forms' choices (endpoints, prompt sets, judges) are read here, not on every view of the overview.
        return render(request, "calibration/judge_create.html", {"judge_form": JudgeForm(), "jury_form": JuryForm()})
    if request.POST.get("kind") == "jury":
        return _jury_create(request)
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


def _jury_create(request: HttpRequest) -> HttpResponse:
    form = JuryForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        try:
            services.jury_create(name=data["name"], members=list(data["members"]), aggregation=data["aggregation"])
        except ValidationError as exc:
            messages.error(request, " ".join(exc.messages))
        else:
            messages.success(request, _("Jury added."))
    else:
        messages.error(request, " ".join(f"{k}: {' '.join(v)}" for k, v in form.errors.items()))
    return redirect("calibration:overview")


@permission_required("calibration.run_judge", why=BLIND)
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
    judge_runs = selectors.calibration_run_judges(run=run)
    status = services.calibration_run_status(run=run, judge_runs=judge_runs)
    return {
        "run": run,
        "judge_runs": judge_runs,
        "status": status,
        "juries": list(run.juries.all()),
        "row_formats": FORMATS,
        "report_busy": services.report_under_way(run),
    }


def _judge_choices(context: dict, report: dict) -> list[dict]:
    """Return the judges and juries of the run to choose from, each with the rule's reason if it excluded it."""
    judges = [jr.judge for jr in context["judge_runs"]] + context["juries"]
    return [
        {"pk": j.pk, "name": j.name, "excluded": selectors.judge_rule_exclusion(report=report, name=j.name)}
        for j in judges
    ]


@permission_required("calibration.run_judge", why=BLIND)
def run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    run = get_object_or_404(CalibrationRun.objects.select_related("comparison_set"), pk=pk)
    context = _run_context(run)
    if request.htmx and request.GET.get("part") == "progress":
        return render(request, "calibration/run.html#progress", context)
    if request.htmx and request.GET.get("part") == "report-state":
        if not context["report_busy"]:
            # Computed (or failed): the whole page changes, so the browser loads it again.
            return HttpResponseClientRefresh()
        return render(request, "calibration/run.html#report_state", context)
    report = run.report
    if report:
        overall = report["strata"][0] if report["strata"] else None
        choices = _judge_choices(context, report)
        context.update(
            {
                "report": report,
                "overall": overall,
                "forest": page_forest(run),
                "selection": selectors.calibration_run_selection(run=run),
                "can_select": request.user.has_perm("calibration.run_judge"),
                "choices": choices,
                "any_excluded": any(choice["excluded"] for choice in choices),
                # Each expert of the set, with their accuracy on its attention checks next to their agreement.
                "experts": expert_statistics(comparison_set=run.comparison_set),
                **_planning_context(request, report),
            }
        )
    return render(request, "calibration/run.html", context)


def _planning_context(request: HttpRequest, report: dict) -> dict:
    """Return the planning form and figures for the target the researcher set (the default until one is valid)."""
    form = PlanningForm(request.GET if "target" in request.GET else None)
    target = form.cleaned_data["target"] if form.is_valid() else PlanningForm.base_fields["target"].initial
    inputs = report.get("planning")
    return {"planning_form": form, "planning": plan(inputs, target_half_width=target) if inputs else None}


@permission_required("calibration.run_judge", why=BLIND)
def run_report(request: HttpRequest, pk: int) -> HttpResponse:
    run = get_object_or_404(CalibrationRun, pk=pk)
    if request.method == "POST":
        try:
            services.calibration_report_request(run=run)
        except ValidationError as exc:
            messages.error(request, " ".join(exc.messages))
        else:
            messages.success(
                request, _("The report is being computed in the background; this page shows it when it is ready.")
            )
    return redirect("calibration:run", pk=run.pk)


@permission_required("calibration.run_judge", why=BLIND)
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
            override_rule=request.POST.get("override_rule") == "on",
        )
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    except services.JudgeExcludedByRule as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, _("%(judge)s is now the primary judge.") % {"judge": judge.name})
    return redirect("calibration:run", pk=run.pk)


@permission_required("calibration.run_judge", why=BLIND)
def run_download(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    run = get_object_or_404(CalibrationRun, pk=pk)
    if not run.report:
        return HttpResponse(_("The report has not been computed yet."), status=409)
    file = report_file(run, fmt)
    if file is None:
        return HttpResponse(_("Unknown format."), status=404)
    content, content_type, filename = file
    response = HttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _run_table(request: HttpRequest, pk: int, fmt: str, *, pairs: bool) -> HttpResponse:
    run = get_object_or_404(CalibrationRun, pk=pk)
    language = request.GET.get("language") or None
    if fmt not in FORMATS or language not in (None, "en", "zh"):
        return HttpResponse(_("No such file."), status=404, content_type="text/plain; charset=utf-8")
    if not pairs:
        rows = exports.verdict_rows(run=run, language=language)
        return table_response(rows, exports.VERDICT_COLUMNS, fmt, filename=f"verdicts-calibration-{run.pk}")
    counts = exports.verdict_preference_counts(run=run, language=language)
    rows = exports.verdict_preference_rows(run=run, language=language)
    return table_response(
        rows, exports.PAIR_COLUMNS, fmt, filename=f"preference-pairs-calibration-{run.pk}", headers=pair_headers(counts)
    )


@permission_required("calibration.run_judge", why=BLIND)
def run_verdicts(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    """Download the run's verdicts, one row per judge and comparison with both orders and their combination."""
    return _run_table(request, pk, fmt, pairs=False)


@permission_required("calibration.run_judge", why=BLIND)
def run_pairs(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    """Download the preference pairs of the run's verdicts; the headers count the pairs left out."""
    return _run_table(request, pk, fmt, pairs=True)


@permission_required("calibration.run_judge", why=BLIND)
def key_validations(request: HttpRequest) -> HttpResponse:
    """Start a key validation of EiCAP probes; list the validations with their agreement figures."""
    form = KeyValidationForm(
        request.POST or None, initial={"benchmark": Benchmark.objects.filter(slug="eicap").first()}
    )
    if request.method == "POST" and form.is_valid():
        try:
            validation = keys.key_validation_start(user=request.user, **form.cleaned_data)
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            return redirect("calibration:key-validation", pk=validation.pk)
    return render(
        request,
        "calibration/key_validations.html",
        {"form": form, "validations": selectors.key_validation_list()},
        status=400 if form.errors else 200,
    )


@permission_required("calibration.run_judge", why=BLIND)
def key_validation_detail(request: HttpRequest, pk: int) -> HttpResponse:
    validation = get_object_or_404(
        KeyValidation.objects.select_related("benchmark", "endpoint", "llm_run", "created_by"), pk=pk
    )
    disagreements = []
    if validation.collected:
        disagreements = list(key_disagreements(validation=validation)[:200])
    for judgement in disagreements:
        judgement.key_letter = LETTERS[judgement.key]
        judgement.chosen_letter = LETTERS[judgement.chosen] if judgement.chosen is not None else ""
    context = {"validation": validation, "disagreements": disagreements}
    if request.htmx:
        return render(request, "calibration/key_validation.html#status", context)
    return render(request, "calibration/key_validation.html", context)
