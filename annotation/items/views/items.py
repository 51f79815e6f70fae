"""Pages of the item bank: list, detail, editor, history with diffs, taxonomy, import and export."""

import re
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop
from django.views.decorators.http import require_http_methods, require_POST

from annotation.items import selectors, services
from annotation.items.content import LANGUAGES
from annotation.items.diff import diff_versions
from annotation.items.forms import (
    ItemCreateForm,
    ItemFilterForm,
    ItemMetaForm,
    StatusDecisionForm,
    content_from_post,
    editor_rows,
)
from annotation.items.interchange import dump_jsonl
from annotation.items.models import Benchmark, EmotionCategory, Item, ItemDraft, ItemRevision, StatusDecision
from annotation.items.neighbours import item_neighbours
from annotation.items.schema import item_schema_text
from annotation.items.services import import_jobs
from core import home
from core.pagination import IdsFirstPaginator, count_cache_key
from core.permissions import permission_required

PAGE_SIZE = 25


def field_label(label: str) -> str:
    """Translate a diff field label such as ``turn 2 option B``."""
    if m := re.fullmatch(r"turn (\d+) (user|answer|option ([A-L]))", label):
        turn, part, letter = m.group(1), m.group(2), m.group(3)
        if letter:
            return _("Turn %(turn)s · option %(letter)s") % {"turn": turn, "letter": letter}
        if part == "user":
            return _("Turn %(turn)s · user message") % {"turn": turn}
        return _("Turn %(turn)s · answer") % {"turn": turn}
    if m := re.fullmatch(r"option ([A-L])", label):
        return _("Option %(letter)s") % {"letter": m.group(1)}
    names = {
        "context": _("Context"),
        "question": _("Question"),
        "prompt": _("User message"),
        "answer": _("Answer"),
        "options": _("Options"),
        "turns": _("Turns"),
        "user": _("User message"),
    }
    return names.get(label, label)


def _language_name(code: str | None) -> str:
    return {"en": _("English"), "zh": _("Chinese")}.get(code or "", code or "")


# A parity issue's message by its code (``annotation.items.content.check_parity``), and the variant naming its turn
# where the issue has one; every message reads the same parameters (``_parity_params``).
PARITY_MESSAGES = {
    "missing_language": (gettext_noop("The %(language)s version is missing."), None),
    "kind_mismatch": (
        gettext_noop("The %(language)s version is shaped like %(shape)s, but the item is %(kind)s."),
        None,
    ),
    "turn_count_mismatch": (gettext_noop("The languages have different numbers of turns: %(counts)s."), None),
    "option_count_mismatch": (
        gettext_noop("The languages have different numbers of options: %(counts)s."),
        gettext_noop("The languages have different numbers of options in turn %(turn)s: %(counts)s."),
    ),
    "missing_field": (
        gettext_noop("The %(language)s version has no %(field)s."),
        gettext_noop("The %(language)s turn %(turn)s has no %(field)s."),
    ),
    "missing_answer": (gettext_noop("The %(language)s answer key is missing (%(where)s)."), None),
    "answer_out_of_range": (
        gettext_noop("The %(language)s answer key %(answer)s is out of range (0 to %(max)s) (%(where)s)."),
        None,
    ),
}


def _parity_params(issue: dict) -> dict:
    params = issue.get("params") or {}
    return {
        "language": _language_name(issue.get("language")),
        "shape": params.get("shape") or "?",
        "kind": params.get("kind"),
        "counts": ", ".join(f"{_language_name(k)} {v}" for k, v in (params.get("counts") or {}).items()),
        "turn": params.get("turn"),
        "field": field_label(params.get("field", "")),
        "answer": params.get("answer"),
        "max": params.get("max"),
        "where": field_label(params.get("label", "answer")),
    }


def _parity_message(issue: dict) -> str:
    """Return a stored parity issue's message in the UI language (the stored English one for an unknown code)."""
    if issue.get("code") not in PARITY_MESSAGES:
        return issue.get("message", "")
    plain, in_turn = PARITY_MESSAGES[issue["code"]]
    params = _parity_params(issue)
    return _(in_turn if in_turn and params["turn"] else plain) % params


def parity_messages(issues: list[dict]) -> list[dict]:
    """Return stored parity issues with their message in the UI language."""
    return [
        {"code": issue.get("code"), "language": issue.get("language"), "message": _parity_message(issue)}
        for issue in issues
    ]


def _list_filters(request: HttpRequest) -> dict[str, str]:
    """Return the list filters as given: an unknown value matches nothing rather than being silently dropped."""
    return {name: request.GET[name] for name in selectors.ITEM_FILTERS if request.GET.get(name)}


@permission_required("items.view_item")
def item_list(request: HttpRequest) -> HttpResponse:
    form = ItemFilterForm(request.GET or None)
    filters = _list_filters(request)
    paginator = IdsFirstPaginator(
        selectors.item_list(filters=filters), PAGE_SIZE, count_key=count_cache_key("items", filters)
    )
    page = paginator.get_page(request.GET.get("page"))
    query = {k: v for k, v in request.GET.items() if k != "page" and v}
    context = {
        "form": form,
        "page": page,
        "query": urlencode(query),
        "export_url": reverse("items:item-export") + ("?" + urlencode(query) if query else ""),
        "bulk_actions": home.item_list_actions(user=request.user),
    }
    template = "items/item_list.html#results" if request.htmx else "items/item_list.html"
    return render(request, template, context)


def _detail_context(request: HttpRequest, item: Item, status_form: StatusDecisionForm | None = None) -> dict:
    revision = item.current_revision
    neighbours = item_neighbours(item=item, threshold=settings.NEAR_DUPLICATE_THRESHOLD)
    similar = [{"lang": n.language, "uid": n.uid, "score": n.score, "warn": n.warn} for n in neighbours.nearest]
    may_decide = request.user.has_perm(services.DECIDE_STATUS) and item.status != Item.Status.IN_SCREENING
    return {
        "item": item,
        "similar": similar,
        "duplicate_warning": any(s["warn"] for s in similar),
        "similarity_unindexed": neighbours.unindexed,
        "revision": revision,
        "languages": selectors.item_languages(item, revision),
        "parity_issues": parity_messages(revision.parity_issues) if revision else [],
        "can_edit": request.user.has_perm("items.change_item"),
        "status_decisions": selectors.item_status_decisions(item=item),
        **home.item_context(item=item),
        "status_form": status_form or (StatusDecisionForm(item=item) if may_decide else None),
    }


def _item_or_404(uid: str) -> Item:
    try:
        return selectors.item_detail(uid=uid)
    except Item.DoesNotExist as exc:
        raise Http404(_("No item with uid %(uid)s.") % {"uid": uid}) from exc


@permission_required("items.view_item")
def item_detail(request: HttpRequest, uid: str) -> HttpResponse:
    item = _item_or_404(uid)
    return render(request, "items/item_detail.html", _detail_context(request, item))


@permission_required(services.DECIDE_STATUS)
@require_POST
def item_status_decide(request: HttpRequest, uid: str) -> HttpResponse:
    """Record a lead expert's or admin's decision to accept, reject or return the item to draft."""
    item = _item_or_404(uid)
    form = StatusDecisionForm(request.POST, item=item)
    if form.is_valid():
        try:
            services.item_status_decide(
                item=item,
                status=form.cleaned_data["status"],
                user=request.user,
                reason=form.cleaned_data["reason"],
                source=StatusDecision.Source.LEAD_DECISION,
            )
        except ValidationError as exc:
            form.add_error(None, exc.messages)
        else:
            done = _("The item is now %(status)s; your reason is recorded.")
            messages.success(request, done % {"status": item.get_status_display()})
            return redirect(f"{reverse('items:item-detail', args=[item.uid])}#status-history")
    return render(request, "items/item_detail.html", _detail_context(request, item, status_form=form), status=400)


def _state_from_form(item_or_benchmark_kind: str, meta: ItemMetaForm, data: dict) -> services.ItemState:
    cleaned = meta.cleaned_data
    return services.ItemState(
        dimension=cleaned["dimension"],
        content=content_from_post(item_or_benchmark_kind, data),
        scenario=cleaned.get("scenario"),
        emotions=list(cleaned.get("emotions") or []),
        crisis_level=cleaned.get("crisis_level"),
        difficulty=cleaned.get("difficulty") or "",
    )


def _editor_context(item: Item, meta: ItemMetaForm, content: dict, error: str = "") -> dict:
    return {
        "item": item,
        "meta": meta,
        "editors": [
            {
                "code": lang,
                "label": _("English") if lang == "en" else _("Chinese"),
                "rows": editor_rows(item.kind, content.get(lang), lang),
            }
            for lang in LANGUAGES
        ],
        "error": error,
    }


@permission_required("items.change_item")
@require_http_methods(["GET", "POST"])
def item_edit(request: HttpRequest, uid: str) -> HttpResponse:
    item = get_object_or_404(Item.objects.select_related("benchmark", "current_revision", "dimension"), uid=uid)
    if request.method == "POST":
        return _item_save(request, item)
    draft = ItemDraft.objects.filter(item=item, user=request.user).first()
    if draft is not None and request.GET.get("draft") != "discard":
        return _item_draft_resume(request, item, draft)
    if draft is not None:
        services.item_draft_discard(item=item, user=request.user)
    revision = item.current_revision
    meta = _editor_form(item)
    return render(request, "items/item_edit.html", _editor_context(item, meta, revision.content if revision else {}))


def _item_save(request: HttpRequest, item: Item) -> HttpResponse:
    """Save the editor's POST as a new revision, or show the editor again with what was wrong."""
    meta = ItemMetaForm(request.POST, benchmark=item.benchmark)
    if not meta.is_valid():
        context = _editor_context(item, meta, content_from_post(item.kind, request.POST))
        return render(request, "items/item_edit.html", context, status=400)
    state = _state_from_form(item.kind, meta, request.POST)
    # An expert saving the item has revised every language, so nothing stays marked as machine-drafted.
    state.metadata = {k: v for k, v in item.metadata.items() if k != "machine_drafted_languages"}
    was_accepted = item.status == Item.Status.ACCEPTED
    try:
        new = services.item_revise(
            item=item,
            state=state,
            user=request.user,
            message=meta.cleaned_data.get("message") or "",
            base_revision=meta.cleaned_data.get("base_revision"),
        )
    except services.RevisionConflict as exc:
        context = _editor_context(item, meta, state.content, error=str(exc))
        return render(request, "items/item_edit.html", context, status=409)
    except ValidationError as exc:
        context = _editor_context(item, meta, state.content, error=" ".join(exc.messages))
        return render(request, "items/item_edit.html", context, status=400)
    services.item_draft_discard(item=item, user=request.user)
    if new is None:
        messages.info(request, _("Nothing changed, so no revision was saved."))
        return redirect("items:item-detail", uid=item.uid)
    messages.success(request, _("Saved revision %(number)s.") % {"number": new.number})
    if was_accepted:
        messages.warning(request, services.unaccepted_reason(new.number))
    url = reverse("items:item-history", args=[item.uid])
    return redirect(f"{url}?a={new.number - 1}&b={new.number}")


def _item_draft_resume(request: HttpRequest, item: Item, draft: ItemDraft) -> HttpResponse:
    """Show the editor with the user's autosaved draft, marked stale when a newer revision was saved since."""
    data = QueryDict(mutable=True)
    for key, values in draft.data.items():
        data.setlist(key, values)
    meta = ItemMetaForm(data, benchmark=item.benchmark)
    meta.is_valid()
    context = _editor_context(item, meta, content_from_post(item.kind, data))
    context["draft"] = draft
    revision = item.current_revision
    context["stale_draft"] = revision is not None and draft.base_revision != revision.number
    return render(request, "items/item_edit.html", context)


def _editor_form(item: Item) -> ItemMetaForm:
    """The editor's classification form, filled from the current revision."""
    revision = item.current_revision
    attrs = revision.attributes if revision else {}
    # The emotion choices are read once, for the options and for the revision's emotions (its attributes name
    # their codes, as the item's emotions are set from them).
    emotions = list(EmotionCategory.objects.all())
    chosen = set(attrs.get("emotions", [])) if revision else {e.code for e in item.emotions.all()}
    meta = ItemMetaForm(
        initial={
            "dimension": item.dimension_id,
            "scenario": item.scenario_id,
            "emotions": [emotion.pk for emotion in emotions if emotion.code in chosen],
            "crisis_level": item.crisis_level_id,
            "difficulty": attrs.get("difficulty", item.difficulty),
            "base_revision": revision.number if revision else None,
        },
        benchmark=item.benchmark,
    )
    meta.fields["emotions"].listed = emotions
    return meta


@permission_required("items.change_item")
@require_POST
def item_autosave(request: HttpRequest, uid: str) -> HttpResponse:
    item = get_object_or_404(Item, uid=uid)
    data = {key: request.POST.getlist(key) for key in request.POST if key != "csrfmiddlewaretoken"}
    try:
        base = int(request.POST.get("base_revision") or 0) or None
        services.item_draft_save(item=item, user=request.user, data=data, base_revision=base)
    except (ValidationError, ValueError) as exc:
        return HttpResponse(" ".join(getattr(exc, "messages", [str(exc)])), status=400)
    return HttpResponse(_("Draft autosaved at %(time)s") % {"time": timezone.localtime().strftime("%H:%M:%S")})


@permission_required("items.add_item")
@require_http_methods(["GET", "POST"])
def item_create(request: HttpRequest) -> HttpResponse:
    form = ItemCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        benchmark = form.cleaned_data["benchmark"]
        dimension = benchmark.dimensions.filter(children__isnull=True).order_by("position").first()
        if dimension is None:
            form.add_error("benchmark", _("This benchmark has no dimensions yet."))
        else:
            try:
                item = services.item_create(
                    benchmark=benchmark,
                    uid=form.cleaned_data["uid"],
                    kind=form.cleaned_data["kind"],
                    state=services.ItemState(dimension=dimension, content={}),
                    user=request.user,
                    message=_("Created"),
                )
            except ValidationError as exc:
                # The uid was free when the form was checked but taken by someone else's save since.
                taken = exc.message_dict.get("uid") if hasattr(exc, "error_dict") else None
                form.add_error("uid" if taken else None, taken or exc.messages)
            else:
                return redirect("items:item-edit", uid=item.uid)
    return render(request, "items/item_create.html", {"form": form}, status=400 if form.errors else 200)


@permission_required("items.view_item")
def item_history(request: HttpRequest, uid: str) -> HttpResponse:
    item = get_object_or_404(Item.objects.select_related("benchmark"), uid=uid)
    revisions = list(selectors.item_revisions(item=item))
    by_number = {r.number: r for r in revisions}
    a, b = _compared_numbers(request, newest=revisions[0].number if revisions else 0)
    feedback = home.item_context(item=item).get("feedback", [])
    for entry in feedback:
        revision = by_number.get(entry.round_item.revision.number)
        if revision is not None:
            revision.feedback = [*getattr(revision, "feedback", []), entry]
    old, new = by_number.get(a), by_number.get(b)
    if old is not None and old == new:
        old = None
    compared = old and new
    return render(
        request,
        "items/item_history.html",
        {
            "item": item,
            "revisions": revisions,
            "old": old,
            "new": new,
            "diffs": _revision_diffs(item.kind, old, new) if compared else [],
            "attr_changes": _attribute_changes(old.attributes, new.attributes) if compared else [],
            "feedback": feedback,
        },
    )


def _compared_numbers(request: HttpRequest, *, newest: int) -> tuple[int, int]:
    """Return the numbers of the two revisions compared: ``?a=`` and ``?b=``, by default the newest and the one
    before it (also when either is not a number)."""
    try:
        b = int(request.GET.get("b", newest))
        return int(request.GET.get("a", max(b - 1, 1))), b
    except ValueError:
        return max(newest - 1, 1), newest


def _revision_diffs(kind: str, old: ItemRevision, new: ItemRevision) -> list[dict]:
    """Return the field-by-field differences of two revisions, one table per language."""
    diffs = []
    for lang in LANGUAGES:
        rows = diff_versions(kind, old.content.get(lang), new.content.get(lang), lang)
        for row in rows:
            row["label"] = field_label(row["field"])
        diffs.append({"code": lang, "label": _("English") if lang == "en" else _("Chinese"), "rows": rows})
    return diffs


def _attribute_changes(old: dict, new: dict) -> list[tuple]:
    """Return (attribute, old value, new value) for every attribute that differs, by name."""
    return [(key, old.get(key), new.get(key)) for key in sorted(set(old) | set(new)) if old.get(key) != new.get(key)]


@permission_required("items.view_item")
def taxonomy(request: HttpRequest) -> HttpResponse:
    return render(request, "items/taxonomy.html", selectors.taxonomy_tree())


@permission_required("items.view_item")
def item_export(request: HttpRequest) -> HttpResponse:
    filters = _list_filters(request)
    body = dump_jsonl(selectors.item_export_records(items=selectors.item_list(filters=filters)))
    response = HttpResponse(body.encode("utf-8"), content_type="application/x-ndjson; charset=utf-8")
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    response["Content-Disposition"] = f'attachment; filename="items-{stamp}.jsonl"'
    return response


@permission_required("items.add_item")
@require_http_methods(["GET", "POST"])
def item_import(request: HttpRequest) -> HttpResponse:
    """Import a JSONL file: at once up to ``IMPORT_SYNC_MAX_BYTES``, else as a job a worker runs (its own page)."""
    context: dict = {
        "formats": services.IMPORT_FORMATS,
        "benchmarks": Benchmark.objects.all(),
        "jobs": list(selectors.item_import_jobs(user=request.user).filter(created_by=request.user)[:10]),
        "sync_max_bytes": settings.IMPORT_SYNC_MAX_BYTES,
    }
    if request.method == "POST":
        upload = request.FILES.get("file")
        fmt = request.POST.get("format", "eistudio")
        dry_run = request.POST.get("dry_run") == "on"
        context.update({"chosen_format": fmt, "dry_run": dry_run})
        if upload is None:
            context["errors"] = [_("Choose a JSONL file to import.")]
            return render(request, "items/item_import.html", context, status=400)
        options = {"format": fmt, "benchmark": request.POST.get("benchmark") or None, "dry_run": dry_run}
        try:
            if import_jobs.item_import_runs_in_worker(size=upload.size):
                job = import_jobs.item_import_job_start(
                    data=upload.read(), user=request.user, filename=upload.name or "", **options
                )
                return redirect("items:item-import-job", pk=job.pk)
            report = services.items_import(data=upload.read(), user=request.user, **options)
        except services.ImportFailed as exc:
            context["errors"] = [str(e) for e in exc.errors]
            return render(request, "items/item_import.html", context, status=400)
        context["report"] = report
    return render(request, "items/item_import.html", context)


def item_schema(request: HttpRequest) -> HttpResponse:
    """The published item schema with this instance's text limit (``ITEM_MAX_TEXT_CHARS``), as imports apply it."""
    text = item_schema_text(settings.ITEM_MAX_TEXT_CHARS)
    return HttpResponse(text.encode("utf-8"), content_type="application/schema+json")
