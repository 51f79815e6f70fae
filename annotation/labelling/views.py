"""Pages for pairwise expert labelling: comparison sets, the keyboard-driven labelling queue, response import."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db.models import Q
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from annotation.items.selectors import benchmark_choices
from annotation.items.services import ImportFailed
from annotation.labelling import attention, exports, selectors
from annotation.labelling import services as comparisons
from annotation.labelling.experts import expert_statistics
from annotation.labelling.forms import ComparisonSetForm, GenerateForm
from annotation.labelling.label_studio import exporting as label_studio_exporting
from annotation.labelling.label_studio import importing as label_studio_importing
from annotation.labelling.models import ComparisonSet, ExpertLabel, LabelAssignment
from annotation.labelling.pairwise import plus_string, shown_choice
from annotation.queue.pages import is_prefetch
from annotation.queue.selectors import queue_place, queue_previous
from core.forms import form_write
from core.list_filters import ListFilterForm
from core.permissions import permission_required
from core.rowfiles import FORMATS, pair_headers, table_response
from llm.models import Run

BUILDERS = gettext_lazy(
    "Importing or generating responses and building comparison sets shows which model wrote which response, so "
    "it is left to those who do not label."
)
LABELLERS = gettext_lazy(
    "Comparisons are labelled blind by the experts they are assigned to; whoever builds sets or imports responses "
    "has seen the model names and does not label."
)
SET_STATUSES = (("open", gettext_lazy("open")), ("closed", gettext_lazy("closed")))


@permission_required("items.view_item")
def set_list(request: HttpRequest) -> HttpResponse:
    filters = ListFilterForm(request.GET, benchmarks=benchmark_choices(), statuses=SET_STATUSES)
    chosen = filters.apply(
        ComparisonSet.objects.all(),
        search=("name", "description"),
        status={"open": Q(closed_at__isnull=True), "closed": Q(closed_at__isnull=False)},
    )
    sets = selectors.comparison_set_overview(expert=request.user, sets=chosen)
    return render(request, "labelling/labelling_list.html", {"sets": sets, "filters": filters, "shown": len(sets)})


@permission_required("labelling.manage_comparisons", why=BUILDERS)
def set_create(request: HttpRequest) -> HttpResponse:
    form = ComparisonSetForm(request.POST or None)
    cs = form_write(form, lambda data: _set_build(data, form=form, user=request.user))
    if cs is not None:
        messages.success(request, _("Comparison set created with %(n)s comparisons.") % {"n": cs.comparisons.count()})
        return redirect("labelling:set-list")
    return render(request, "labelling/labelling_create.html", {"form": form}, status=400 if form.errors else 200)


def _set_build(data: dict, *, form: ComparisonSetForm, user: object) -> ComparisonSet:
    """Build the set the form describes, in the order it names (random unless another is chosen)."""
    cs = comparisons.comparison_set_build(
        name=data["name"],
        benchmark=data["benchmark"],
        experts=[form.eligible[pk] for pk in data["experts"]],
        user=user,
        seed=data["seed"],
        per_stratum=data["per_stratum"],
        experts_per_comparison=data["experts_per_comparison"],
    )
    comparisons.comparison_set_order_set(comparison_set=cs, order=data.get("order") or "random")
    return cs


@permission_required("labelling.manage_comparisons", why=BUILDERS)
def responses_import(request: HttpRequest) -> HttpResponse:
    context: dict = {"generate_form": GenerateForm(request.POST if request.POST.get("form") == "generate" else None)}
    if request.method == "POST" and request.POST.get("form") == "generate":
        form = context["generate_form"]
        if form.is_valid():
            try:
                run = comparisons.responses_generate(
                    benchmark=form.cleaned_data["benchmark"],
                    endpoint=form.cleaned_data["endpoint"],
                    languages=tuple(form.cleaned_data["languages"]),
                    user=request.user,
                )
            except ValidationError as exc:
                context["errors"] = exc.messages
            else:
                messages.success(request, _("Generating responses in the background (run %(id)s).") % {"id": run.pk})
                return redirect("labelling:responses-import")
    elif request.method == "POST":
        upload = request.FILES.get("file")
        if upload is None:
            context["errors"] = [_("Choose a JSONL file to import.")]
        else:
            try:
                context["result"] = comparisons.responses_import(data=upload.read(), user=request.user)
            except ImportFailed as exc:
                context["errors"] = [str(e) for e in exc.errors]
    context["runs"] = Run.objects.filter(purpose=comparisons.RESPONSES_PURPOSE).select_related("endpoint")[:20]
    status = 400 if context.get("errors") else 200
    return render(request, "labelling/responses_import.html", context, status=status)


@permission_required("labelling.label_comparisons", why=LABELLERS)
def label_next(request: HttpRequest, pk: int) -> HttpResponse:
    cs = get_object_or_404(ComparisonSet, pk=pk)
    if request.GET.get("last"):
        # Back to the label given last, to change it (the list offers this once the queue is done).
        assignment = queue_previous(queue=selectors.expert_queue(comparison_set=cs, expert=request.user))
    else:
        assignment = selectors.label_next(comparison_set=cs, expert=request.user)
    if assignment is None:
        messages.success(request, _("You have labelled every comparison assigned to you in this set."))
        return redirect("labelling:set-list")
    return redirect("labelling:label", pk=cs.pk, assignment=assignment.pk)


def _not_assigned(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "screening/review_denied.html",
        {"round": None, "message": _("This comparison is not assigned to you.")},
        status=403,
    )


def _after(request: HttpRequest, cs: ComparisonSet, assignment: int) -> HttpResponse:
    """Go on to the expert's next unlabelled comparison, or back to the sets when none is left."""
    nxt = selectors.label_after(comparison_set=cs, expert=request.user, after=assignment)
    if nxt is None:
        messages.success(request, _("You have labelled every comparison assigned to you in this set."))
        return redirect("labelling:set-list")
    # The browser may show the next page from its prefetch: the expert starts on it now.
    comparisons.assignment_mark_viewed(assignment=nxt)
    return redirect("labelling:label", pk=cs.pk, assignment=nxt.pk)


@permission_required("labelling.label_comparisons", why=LABELLERS)
def label(request: HttpRequest, pk: int, assignment: int) -> HttpResponse:
    # The assignment comes with its set (one query); a set that does not exist is still a 404.
    assignment_obj = selectors.label_assignment(comparison_set=pk, pk=assignment)
    if assignment_obj is None or assignment_obj.expert_id != request.user.pk:
        get_object_or_404(ComparisonSet, pk=pk)
        return _not_assigned(request)
    existing = getattr(assignment_obj, "label", None)
    error, status = "", 200
    if request.method == "POST":
        error, status = _label_store(request, assignment_obj, existing)
        if not error:
            return _after(request, assignment_obj.comparison.comparison_set, assignment_obj.pk)
    if not is_prefetch(request):
        # A page fetched ahead of time (<link rel="prefetch">) is not yet seen: timing starts when it is.
        comparisons.assignment_mark_viewed(assignment=assignment_obj)
    context = {
        **_label_comparison(assignment_obj),
        **_label_queue(request, assignment_obj),
        "existing": existing,
        "error": error,
        "posted": _label_posted(request, existing),
        "margins": [(m, plus_string(m)) for m in range(1, 6)],
    }
    return render(request, "labelling/label.html", context, status=status)


def _label_store(request: HttpRequest, assignment: LabelAssignment, existing: ExpertLabel | None) -> tuple[str, int]:
    """Submit (or change) the posted label; return the error to show and the status, ("", 200) when stored."""
    margin_raw = request.POST.get("margin") or ""
    changing = existing is not None and request.POST.get("change") == "1"
    service = comparisons.label_change if changing else comparisons.label_submit
    try:
        margin = int(margin_raw) if margin_raw else None
        service(
            comparison=assignment.comparison,
            expert=request.user,
            winner=request.POST.get("winner", ""),
            margin=margin,
            rationale=request.POST.get("rationale", ""),
        )
    except ValueError:
        return _("Choose a margin from + to +++++."), 400
    except comparisons.LabelConflict as exc:
        return str(exc), 409
    except ValidationError as exc:
        return " ".join(exc.messages), 400
    if changing:
        messages.success(request, _("Your label was changed."))
    return "", 200


def _label_comparison(assignment: LabelAssignment) -> dict:
    """Return what the page shows of the comparison: the prompt, and the responses blind in the expert's order."""
    comparison = assignment.comparison
    texts = selectors.blind_texts(assignment=assignment)
    return {
        "cs": comparison.comparison_set,
        "assignment": assignment,
        "comparison": comparison,
        "dimension": comparison.dimension,
        "prompt": texts["prompt"],
        "context_text": texts["context"],
        "left": texts["left"],
        "right": texts["right"],
        "language": comparison.language,
    }


def _label_queue(request: HttpRequest, assignment: LabelAssignment) -> dict:
    """Return the expert's place in the set's queue: counts, the next and previous links, what was put aside."""
    cs = assignment.comparison.comparison_set
    return queue_place(
        assignment=assignment,
        # A set in another order than the queue's serves its own next (``annotation.labelling.serving``).
        next_of=lambda current: selectors.label_next(comparison_set=cs, expert=request.user, after=current),
        link=lambda other: reverse("labelling:label", args=[cs.pk, other.pk]),
        skipped_related=("comparison__item", "comparison__dimension"),
    )


def _label_posted(request: HttpRequest, existing: ExpertLabel | None) -> dict:
    """Return the form's values: what was posted, else the stored label as the expert saw it."""
    posted = request.POST if request.method == "POST" else {}
    if existing is not None and not posted:
        winner, margin = shown_choice(shown_order=existing.shown_order, score=existing.score)
        posted = {"winner": winner, "margin": str(margin) if margin else "", "rationale": existing.rationale}
    return posted


@permission_required("labelling.manage_comparisons", why=BUILDERS)
@require_POST
def set_close(request: HttpRequest, pk: int) -> HttpResponse:
    cs = get_object_or_404(ComparisonSet, pk=pk)
    if request.POST.get("confirm") != "1":
        messages.error(request, _("Tick the box to confirm: closing a set makes its labels final."))
        return redirect("labelling:set-list")
    try:
        comparisons.comparison_set_close(comparison_set=cs, user=request.user)
    except ValidationError as exc:
        for message in exc.messages:
            messages.error(request, message)
    else:
        messages.success(request, _("%(name)s is closed: its labels are final.") % {"name": cs.name})
    return redirect("labelling:set-list")


@permission_required("labelling.label_comparisons", why=LABELLERS)
@require_POST
def label_skip(request: HttpRequest, pk: int, assignment: int) -> HttpResponse:
    cs = get_object_or_404(ComparisonSet, pk=pk)
    assignment_obj = selectors.label_assignment(comparison_set=cs, pk=assignment)
    if assignment_obj is None or assignment_obj.expert_id != request.user.pk:
        return _not_assigned(request)
    try:
        comparisons.label_skip(comparison=assignment_obj.comparison, expert=request.user)
    except ValidationError as exc:
        for message in exc.messages:
            messages.error(request, message)
        return redirect("labelling:label", pk=cs.pk, assignment=assignment_obj.pk)
    messages.info(request, _("Put aside: this comparison comes back after the others."))
    return _after(request, cs, assignment_obj.pk)


DATA_WHY = gettext_lazy(
    "The raw labels, preference pairs and Label Studio files name the models behind the responses (or let labels "
    "in), so they are for those who build sets, never for the experts who label them blind."
)
LABEL_STUDIO_FILES = {"tasks.json": "application/json; charset=utf-8", "config.xml": "application/xml; charset=utf-8"}


def _language(request: HttpRequest) -> str | None:
    language = request.GET.get("language") or None
    return language if language in (None, "en", "zh") else ""


@permission_required("labelling.manage_comparisons", why=DATA_WHY)
def set_data(request: HttpRequest, pk: int) -> HttpResponse:
    """The set's data: downloads of its raw labels and preference pairs (once closed), Label Studio in and out."""
    cs = get_object_or_404(ComparisonSet.objects.select_related("benchmark"), pk=pk)
    context: dict = {"cs": cs, "formats": FORMATS, "mapping": "", "checks_text": ""}
    status = 200
    if request.method == "POST" and "attention_checks" in request.POST:
        context["checks_text"] = request.POST.get("attention_checks", "")
        try:
            answers = parse_attention_checks(context["checks_text"])
            changed = attention.attention_checks_set(comparison_set=cs, answers=answers, user=request.user)
        except ValidationError as exc:
            context["check_errors"], status = exc.messages, 400
        else:
            messages.success(request, _("Attention checks saved: %(n)s changed.") % {"n": changed})
            return redirect("labelling:set-data", pk=cs.pk)
    elif request.method == "POST":
        upload = request.FILES.get("file")
        context["mapping"] = request.POST.get("mapping", "")
        try:
            mapping = label_studio_importing.mapping_parse(context["mapping"])
            if upload is None:
                raise ValueError(_("Choose a Label Studio JSON export to import."))
            context["result"] = label_studio_importing.label_studio_import(
                comparison_set=cs, data=upload.read(), user=request.user, mapping=mapping
            )
        except ValueError as exc:
            context["errors"], status = [str(exc)], 400
        except ImportFailed as exc:
            context["errors"], status = [str(e) for e in exc.errors], 400
        except label_studio_importing.SetClosed as exc:
            context["errors"], status = [str(exc)], 409
        cs.refresh_from_db()
    if not cs.is_open:
        context["pair_counts"] = exports.label_preference_counts(comparison_set=cs)
    context["experts"] = expert_statistics(comparison_set=cs)
    context["checks"] = selectors.attention_checks(comparison_set=cs)
    return render(request, "labelling/set_data.html", context, status=status)


def parse_attention_checks(text: str) -> dict[int, str]:
    """Read one attention check a line, ``COMPARISON_ID ANSWER`` (A, B or tie; no answer clears the check)."""
    answers, errors = {}, []
    for number, line in enumerate(text.splitlines(), start=1):
        parts = line.replace(",", " ").split()
        if not parts:
            continue
        if not parts[0].isdigit() or len(parts) > 2 or len(parts[0]) > 12:
            errors.append(_("Line %(n)s: write a comparison id and A, B or tie.") % {"n": number})
            continue
        answers[int(parts[0])] = parts[1] if len(parts) == 2 else ""
    if errors:
        raise ValidationError(errors)
    if not answers:
        raise ValidationError(_("Write at least one line: a comparison id and A, B or tie."))
    return answers


@permission_required("labelling.manage_comparisons", why=DATA_WHY)
def set_labels(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    """Download the closed set's labels, one row per expert label (409 while the set is open)."""
    cs = get_object_or_404(ComparisonSet, pk=pk)
    language = _language(request)
    if fmt not in FORMATS or language == "":
        return HttpResponse(_("No such file."), status=404, content_type="text/plain; charset=utf-8")
    try:
        rows = exports.label_rows(comparison_set=cs, language=language)
    except exports.ExportRefused as exc:
        return HttpResponse(str(exc), status=409, content_type="text/plain; charset=utf-8")
    return table_response(rows, exports.LABEL_COLUMNS, fmt, filename=f"labels-set-{cs.pk}")


@permission_required("labelling.manage_comparisons", why=DATA_WHY)
def set_pairs(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    """Download the closed set's preference pairs; the headers count the ties and inconsistent comparisons."""
    cs = get_object_or_404(ComparisonSet, pk=pk)
    language = _language(request)
    if fmt not in FORMATS or language == "":
        return HttpResponse(_("No such file."), status=404, content_type="text/plain; charset=utf-8")
    try:
        counts = exports.label_preference_counts(comparison_set=cs, language=language)
        rows = exports.label_preference_rows(comparison_set=cs, language=language)
    except exports.ExportRefused as exc:
        return HttpResponse(str(exc), status=409, content_type="text/plain; charset=utf-8")
    return table_response(
        rows, exports.PAIR_COLUMNS, fmt, filename=f"preference-pairs-set-{cs.pk}", headers=pair_headers(counts)
    )


@permission_required("labelling.manage_comparisons", why=DATA_WHY)
def set_label_studio(request: HttpRequest, pk: int, name: str) -> HttpResponse:
    """Download the set as Label Studio tasks (``tasks.json``) or the labelling config (``config.xml``)."""
    cs = get_object_or_404(ComparisonSet, pk=pk)
    if name not in LABEL_STUDIO_FILES:
        return HttpResponse(_("No such file."), status=404, content_type="text/plain; charset=utf-8")
    if name == "config.xml":
        config = label_studio_exporting.set_config()
        response: HttpResponse = HttpResponse(config, content_type=LABEL_STUDIO_FILES[name])
    else:
        response = StreamingHttpResponse(
            label_studio_exporting.task_chunks(comparison_set=cs), content_type=LABEL_STUDIO_FILES[name]
        )
    response["Content-Disposition"] = f'attachment; filename="label-studio-set-{cs.pk}-{name}"'
    return response
