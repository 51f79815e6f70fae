"""Release pages: list, create, detail with checklist, edit while draft, freeze, download, compare."""

from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRefresh

from annotation.items.selectors import benchmark_choices
from annotation.releases import comparisons, drafts, selectors
from annotation.releases import services as releases
from annotation.releases.checks import checklist_display
from annotation.releases.export import MANIFEST
from annotation.releases.forms import ReleaseCreateForm, ReleaseEditForm
from annotation.releases.models import Release
from core.inputs import whole_number
from core.list_filters import ListFilterForm
from core.permissions import permission_required

ENTRIES_PER_PAGE = 100


def _get(slug: str, version: str) -> Release:
    release = selectors.release_by_version(slug=slug, version=version)
    if release is None:
        raise Http404(_("No such release."))
    return release


def _detail_url(release: Release) -> str:
    return reverse("releases:release-detail", args=[release.benchmark.slug, release.version])


@permission_required("items.view_item")
def release_list(request: HttpRequest) -> HttpResponse:
    filters = ListFilterForm(request.GET, benchmarks=benchmark_choices(), statuses=Release.Status.choices)
    chosen = list(filters.apply(selectors.release_list(), search=("title", "version", "description")))
    return render(request, "releases/release_list.html", {"releases": chosen, "filters": filters, "shown": len(chosen)})


@permission_required("releases.manage_release")
def release_create(request: HttpRequest) -> HttpResponse:
    form = ReleaseCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            release = releases.release_create(
                benchmark=data["benchmark"],
                version=data["version"],
                title=data["title"],
                description=data["description"],
                licence=data["licence"],
                citation=data["citation"],
                filters=form.filters(),
                user=request.user,
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, form.success_message(release))
            return redirect(_detail_url(release))
    return render(request, "releases/release_create.html", {"form": form}, status=400 if form.errors else 200)


@permission_required("items.view_item")
def release_detail(request: HttpRequest, slug: str, version: str) -> HttpResponse:
    release = _get(slug, version)
    draft = None if release.is_frozen else drafts.draft_checks(release)
    if request.htmx and request.GET.get("part") == "checks":
        if draft is None or draft.current:
            return HttpResponseClientRefresh()  # checked: the checklist and card change, so the page loads again
        return render(request, "releases/release_detail.html#draft_state", {"release": release, "draft": draft})
    if release.is_frozen:
        # Everything shown was recorded at freeze (files, digests, card, checklist): read it, never write it again,
        # and list one page of the pinned items.
        paginator = Paginator(selectors.release_entry_order(release=release), ENTRIES_PER_PAGE)
        checksums, card = selectors.release_frozen_files(release=release)
    else:
        # A draft's checklist and card are kept for the record they were computed from (drafts.draft_checks); the
        # table reads one page of entries.
        paginator = Paginator(selectors.release_page_entries(release=release), ENTRIES_PER_PAGE)
        paginator.count = draft.entries  # counted with the checklist's key: not counted again
        checksums, card = [], draft.card
    page = paginator.get_page(request.GET.get("page"))
    if release.is_frozen:
        # The page holds ids in order; read their rows (one query).
        rows = selectors.release_page_entries(release=release).in_bulk(list(page.object_list))
        page.object_list = [rows[pk] for pk in page.object_list if pk in rows]
    others = selectors.release_others(release=release)
    return render(
        request,
        "releases/release_detail.html",
        {
            "release": release,
            "page": page,
            "draft": draft,
            "checks": checklist_display(draft.checks) if draft is not None and draft.checks is not None else None,
            "frozen_checks": checklist_display(release.validation.get("checks", [])) if release.is_frozen else [],
            "checksums": checksums,
            "manifest_sha256": next((digest for name, _size, digest in checksums if name == MANIFEST), ""),
            "card": card,
            "others": others,
            "edit_form": ReleaseEditForm(instance_release=release) if not release.is_frozen else None,
            "can_manage": request.user.has_perm("releases.manage_release"),
        },
    )


@permission_required("releases.manage_release")
@require_POST
def release_add_items(request: HttpRequest) -> HttpResponse:
    """The item list's bulk action: pin the checked items (``uids``) in a draft release; those already in it are
    left as they are. Back to the list the items were checked on."""
    uids = list(dict.fromkeys(request.POST.getlist("uids")))
    back = request.POST.get("next") or reverse("releases:release-list")
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
        back = reverse("releases:release-list")
    chosen = request.POST.get("release", "")
    release = (
        Release.objects.select_related("benchmark").filter(pk=int(chosen), status=Release.Status.DRAFT).first()
        if chosen.isdigit() and len(chosen) < 12
        else None
    )
    if release is None:
        messages.error(request, _("Choose a draft release to add the items to."))
        return redirect(back)
    if not uids:
        messages.error(request, _("Check at least one item to add."))
        return redirect(back)
    present = set(release.entries.filter(item__uid__in=uids).values_list("item__uid", flat=True))
    new = [uid for uid in uids if uid not in present]
    try:
        if new:
            releases.release_items_change(release=release, user=request.user, add=new)
    except ValidationError as exc:
        for message in exc.messages:
            messages.error(request, message)
        return redirect(back)
    messages.success(
        request,
        _("%(added)s items added to %(release)s (%(present)s already in it).")
        % {"added": len(new), "release": f"{release.benchmark.slug} {release.version}", "present": len(present)},
    )
    return redirect(back)


@permission_required("releases.manage_release")
@require_POST
def release_edit(request: HttpRequest, slug: str, version: str) -> HttpResponse:
    release = _get(slug, version)
    form = ReleaseEditForm(request.POST, instance_release=release)
    try:
        if not form.is_valid():
            raise ValidationError(form.error_list())
        data = form.cleaned_data
        releases.release_update(
            release=release,
            user=request.user,
            **{k: data[k] for k in ("title", "description", "licence", "citation")},
        )
        if data["add"] or data["remove"]:
            releases.release_items_change(release=release, user=request.user, add=data["add"], remove=data["remove"])
        if data["rebuild"]:
            releases.release_rebuild(release=release, user=request.user)
    except ValidationError as exc:
        for message in exc.messages:
            messages.error(request, message)
    else:
        messages.success(request, form.saved_message())
    return redirect(_detail_url(release))


@permission_required("releases.manage_release")
@require_POST
def release_freeze(request: HttpRequest, slug: str, version: str) -> HttpResponse:
    release = _get(slug, version)
    if request.POST.get("confirm") != "on":
        messages.error(request, ReleaseEditForm.confirm_message())
        return redirect(_detail_url(release))
    try:
        releases.release_freeze(
            release=release, user=request.user, override_reason=request.POST.get("override_reason", "")
        )
    except ValidationError as exc:
        for message in exc.messages:
            messages.error(request, message)
    else:
        messages.success(request, ReleaseEditForm.frozen_message(release))
    return redirect(_detail_url(release))


@permission_required("items.view_item")
def release_download(request: HttpRequest, slug: str, version: str) -> HttpResponse:
    release = _get(slug, version)
    try:
        content, content_type, filename = selectors.release_export_download(release=release)
    except ValidationError as exc:
        return HttpResponse(" ".join(exc.messages), status=409, content_type="text/plain; charset=utf-8")
    response = HttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@permission_required("items.view_item")
def release_compare(request: HttpRequest, slug: str) -> HttpResponse:
    """Compare two releases of a benchmark from their stored comparison, a page of each list at a time
    (``annotation.releases.comparisons``); ``part=state`` is the poll while a worker compares large ones."""
    all_releases = list(selectors.benchmark_releases(slug=slug))
    if not all_releases:
        raise Http404(_("No releases of this benchmark."))
    by_version = {r.version: r for r in all_releases}
    old, new = by_version.get(request.GET.get("old", "")), by_version.get(request.GET.get("new", ""))
    page = whole_number(request.GET.get("page", "1")) or 1
    comparison = comparisons.comparison_page(old=old, new=new, page=page) if old and new else None
    context = {
        "comparison": comparison,
        "query": urlencode({"old": old.version, "new": new.version}) if old and new else "",
    }
    if request.htmx and request.GET.get("part") == "state":
        if comparison is None or comparison.current:
            return HttpResponseClientRefresh()  # compared: the lists change, so the page loads again
        return render(request, "releases/release_compare.html#compare_state", context)
    context.update(
        {"benchmark": all_releases[0].benchmark, "releases": all_releases, "old": old, "new": new}
    )
    return render(request, "releases/release_compare.html", context)
