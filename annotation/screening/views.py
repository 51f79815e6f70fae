"""Screening pages: rounds, the reviewer's keyboard-driven queue, closing, adjudication, statistics."""

import contextlib

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from annotation.items import selectors as item_selectors
from annotation.items.models import Item
from annotation.items.selectors import item_languages
from annotation.queue.pages import is_prefetch
from annotation.queue.selectors import queue_place
from annotation.screening import selectors
from annotation.screening import services as screening
from annotation.screening.forms import RoundOpenForm
from annotation.screening.models import Review, ReviewAssignment, RoundItem, ScreeningRound
from core.forms import form_write
from core.list_filters import ListFilterForm
from core.pagination import IdsFirstPaginator
from core.permissions import permission_required

OUTCOMES_PAGE_SIZE = 50


@permission_required("screening.review_item")
def round_list(request: HttpRequest) -> HttpResponse:
    filters = ListFilterForm(
        request.GET, benchmarks=item_selectors.benchmark_choices(), statuses=ScreeningRound.Status.choices
    )
    chosen = filters.apply(ScreeningRound.objects.all(), search=("title",))
    rounds = selectors.round_overview(reviewer=request.user, rounds=chosen)
    return render(request, "screening/round_list.html", {"rounds": rounds, "filters": filters, "shown": len(rounds)})


@permission_required("screening.manage_round")
def round_open(request: HttpRequest) -> HttpResponse:
    """Open a round; from the item list's bulk action (``from_items``, the checked ``uids``) the form opens filled
    with those items and their benchmark, to be completed."""
    if request.method == "POST" and "from_items" in request.POST:
        uids = list(dict.fromkeys(request.POST.getlist("uids")))
        first = Item.objects.filter(uid__in=uids[:1]).select_related("benchmark").first()
        form = RoundOpenForm(initial={"items": " ".join(uids), "benchmark": first.benchmark if first else None})
        return render(request, "screening/round_open.html", {"form": form})
    form = RoundOpenForm(request.POST or None)
    round = form_write(form, lambda data: _round_open(data, form=form, user=request.user))
    if round is not None:
        messages.success(
            request,
            _("Round %(n)s opened with %(items)s items.") % {"n": round.number, "items": round.round_items.count()},
        )
        return redirect("screening:round-detail", pk=round.pk)
    return render(request, "screening/round_open.html", {"form": form}, status=400 if form.errors else 200)


def _round_open(data: dict, *, form: RoundOpenForm, user: object) -> ScreeningRound:
    return screening.round_open(
        benchmark=data["benchmark"],
        title=data["title"],
        user=user,
        reviewers=[form.eligible[pk] for pk in data["reviewers"]],
        reviewers_per_item=data["reviewers_per_item"],
        filters={k: data[k] for k in ("status", "dimension", "kind") if data.get(k)},
        criteria=list(data["criteria"]),
        deadline=data["deadline"],
        uids=data["items"] or None,
    )


@permission_required("screening.review_item")
def round_detail(request: HttpRequest, pk: int) -> HttpResponse:
    round = get_object_or_404(ScreeningRound.objects.select_related("benchmark", "opened_by", "closed_by"), pk=pk)
    can_manage = request.user.has_perm("screening.manage_round")
    # Blind review: outcomes and statistics appear once the round is closed.
    show_results = not round.is_open
    stats = selectors.round_statistics(round=round) if (show_results or can_manage) else None
    mine = [t for t in stats.throughput if t["reviewer"] == request.user.get_username()] if stats else None
    if mine is None:
        done, total = selectors.reviewer_progress(round=round, reviewer=request.user)
    else:
        done, total = (mine[0]["submitted"], mine[0]["assigned"]) if mine else (0, 0)
    page, conflict_count, first_conflict = None, 0, None
    if show_results:
        outcomes = selectors.round_outcome_counts(round=round)
        conflict_count, first_conflict = outcomes["conflicts"], outcomes["first_conflict"]
        paginator = IdsFirstPaginator(
            selectors.round_items(round=round), OUTCOMES_PAGE_SIZE, known_count=outcomes["items"]
        )
        page = paginator.get_page(request.GET.get("page"))
    return render(
        request,
        "screening/round_detail.html",
        {
            "round": round,
            "my_done": done,
            "my_total": total,
            "can_manage": can_manage,
            "show_results": show_results,
            "stats": stats,
            "page": page,
            "conflict_count": conflict_count,
            "first_conflict": first_conflict,
        },
    )


@permission_required("screening.review_item")
def review_next(request: HttpRequest, pk: int) -> HttpResponse:
    round = get_object_or_404(ScreeningRound, pk=pk)
    assignment = selectors.next_assignment(round=round, reviewer=request.user)
    if assignment is None:
        messages.success(request, _("Your queue for this round is done. Thank you!"))
        return redirect("screening:round-detail", pk=round.pk)
    return redirect("screening:review", pk=round.pk, assignment=assignment.pk)


def _posted_scores(request: HttpRequest) -> dict:
    return {key[len("score-") :]: value for key, value in request.POST.items() if key.startswith("score-")}


def _denied(request: HttpRequest, pk: int) -> HttpResponse:
    return render(
        request,
        "screening/review_denied.html",
        {
            "round": get_object_or_404(ScreeningRound.objects.select_related("benchmark"), pk=pk),
            "message": _("You are not assigned to review this item in this round."),
        },
        status=403,
    )


def _after(request: HttpRequest, round: ScreeningRound, assignment: int) -> HttpResponse:
    """Go on to the reviewer's next unsubmitted item, or to the round when the queue is done."""
    nxt = selectors.assignment_after(round=round, reviewer=request.user, after=assignment)
    if nxt is None:
        messages.success(request, _("Your queue for this round is done. Thank you!"))
        return redirect("screening:round-detail", pk=round.pk)
    return redirect("screening:review", pk=round.pk, assignment=nxt.pk)


@permission_required("screening.review_item")
def review(request: HttpRequest, pk: int, assignment: int) -> HttpResponse:
    assignment_obj = selectors.review_assignment(round_id=pk, pk=assignment)
    if assignment_obj is None or assignment_obj.reviewer_id != request.user.pk:
        return _denied(request, pk)
    round_item = assignment_obj.round_item
    existing = getattr(assignment_obj, "review", None)
    submitted = existing is not None and existing.status == Review.Status.SUBMITTED
    error, status = "", 200
    if request.method == "POST":
        error, status = _review_store(request, round_item, submitted)
        if not error:
            return _after(request, round_item.round, assignment_obj.pk)
    elif submitted and not is_prefetch(request):
        # Only a change of a submitted review is timed from the last view (a first review from its draft); a page
        # fetched ahead (app.js) is not yet seen.
        screening.review_mark_viewed(assignment=assignment_obj)
    context = {
        **_review_form(request, round_item, existing),
        **_review_queue(assignment_obj),
        "round": round_item.round,
        "assignment": assignment_obj,
        "submitted": submitted,
        "error": error,
    }
    return render(request, "screening/review.html", context, status=status)


def _review_store(request: HttpRequest, round_item: RoundItem, submitted: bool) -> tuple[str, int]:
    """Submit (or change) the posted review; return the error to show and the status, ("", 200) when stored:
    409 when the review was submitted meanwhile (another tab), 400 for any other refusal.

    A first review that cannot be submitted keeps what was typed as its draft (invalid scores stay unsaved).
    """
    changing = submitted and request.POST.get("change") == "1"
    values = {
        "round_item": round_item,
        "reviewer": request.user,
        "scores": _posted_scores(request),
        "decision": request.POST.get("decision", ""),
        "comment": request.POST.get("comment", ""),
    }
    try:
        (screening.review_change if changing else screening.review_submit)(**values)
    except screening.ReviewConflict as exc:
        return str(exc), 409
    except ValidationError as exc:
        if not changing:
            with contextlib.suppress(ValidationError):
                screening.review_save_draft(**values)
        return " ".join(exc.messages), 400
    if changing:
        messages.success(request, _("Your review was changed."))
    return "", 200


def _review_form(request: HttpRequest, round_item: RoundItem, existing: Review | None) -> dict:
    """Return the item under review and the form's values: what was posted, else the stored review."""
    item = round_item.item
    posting = request.method == "POST"
    values = dict(existing.scores) if existing else {}
    if posting:
        values.update({k: v for k, v in _posted_scores(request).items() if v})
    return {
        "item": item,
        "revision": round_item.revision,
        "classification": item_selectors.revision_classification(round_item.revision),
        "languages": item_languages(item, round_item.revision),
        "criteria": [(c, values.get(c.code, "")) for c in screening.criteria_for(round_item.round, item)],
        "review": existing,
        "decision": request.POST.get("decision") if posting else (existing.decision if existing else ""),
        "comment": request.POST.get("comment") if posting else (existing.comment if existing else ""),
    }


def _review_queue(assignment: ReviewAssignment) -> dict:
    """Return the reviewer's place in the round's queue: counts, the next and previous links, what was put aside."""
    return queue_place(
        assignment=assignment,
        link=lambda other: reverse("screening:review", args=[assignment.round_id, other.pk]),
        skipped_related=("round_item__item",),
    )


@permission_required("screening.review_item")
@require_POST
def review_skip(request: HttpRequest, pk: int, assignment: int) -> HttpResponse:
    assignment_obj = selectors.review_assignment(round_id=pk, pk=assignment)
    if assignment_obj is None or assignment_obj.reviewer_id != request.user.pk:
        return _denied(request, pk)
    try:
        screening.review_skip(round_item=assignment_obj.round_item, reviewer=request.user)
    except ValidationError as exc:
        for message in exc.messages:
            messages.error(request, message)
        return redirect("screening:review", pk=pk, assignment=assignment_obj.pk)
    messages.info(request, _("Put aside: this item comes back after the others."))
    return _after(request, assignment_obj.round_item.round, assignment_obj.pk)


@permission_required("screening.review_item")
@require_POST
def review_autosave(request: HttpRequest, pk: int, assignment: int) -> HttpResponse:
    assignment_obj = get_object_or_404(
        ReviewAssignment.objects.select_related("round_item__round", "round_item__item"),
        pk=assignment,
        round_item__round_id=pk,
    )
    try:
        screening.review_save_draft(
            round_item=assignment_obj.round_item,
            reviewer=request.user,
            scores=_posted_scores(request),
            decision=request.POST.get("decision", ""),
            comment=request.POST.get("comment", ""),
        )
    except ValidationError as exc:
        return HttpResponse(" ".join(exc.messages), status=400)
    return HttpResponse(_("Draft saved"))


@permission_required("screening.manage_round")
@require_POST
def round_close(request: HttpRequest, pk: int) -> HttpResponse:
    round = get_object_or_404(ScreeningRound, pk=pk)
    try:
        counts = screening.round_close(
            round=round,
            user=request.user,
            unreviewed=request.POST.get("unreviewed") or None,
            note=request.POST.get("note", ""),
        )
    except ValidationError as exc:
        for message in exc.messages:
            messages.error(request, message)
    else:
        messages.success(
            request,
            _("Round closed: %(summary)s.") % {"summary": ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))},
        )
    return redirect("screening:round-detail", pk=round.pk)


@permission_required("screening.adjudicate_item")
def adjudicate(request: HttpRequest, pk: int, round_item: int) -> HttpResponse:
    ri = get_object_or_404(
        RoundItem.objects.select_related("round__benchmark", "item__dimension", "revision"), pk=round_item, round_id=pk
    )
    if request.method == "POST":
        try:
            screening.round_item_adjudicate(
                round_item=ri,
                user=request.user,
                decision=request.POST.get("decision", ""),
                note=request.POST.get("note", ""),
            )
        except ValidationError as exc:
            for message in exc.messages:
                messages.error(request, message)
        else:
            messages.success(request, _("Decision recorded for %(uid)s.") % {"uid": ri.item.uid})
            remaining = selectors.next_conflict(round=ri.round)
            if remaining:
                return redirect("screening:adjudicate", pk=pk, round_item=remaining.pk)
            return redirect("screening:round-detail", pk=pk)
    if ri.round.is_open:
        messages.error(request, _("Conflicts are adjudicated after the round closes."))
        return redirect("screening:round-detail", pk=pk)
    reviews = selectors.round_item_reviews(round_item=ri)
    criteria = screening.criteria_for(ri.round, ri.item)
    return render(
        request,
        "screening/adjudicate.html",
        {
            "round": ri.round,
            "ri": ri,
            "item": ri.item,
            "languages": item_languages(ri.item, ri.revision),
            "reviews": [
                (reviewer, review, [(c, (review.scores.get(c.code) if review else None)) for c in criteria])
                for reviewer, review in reviews
            ],
        },
    )
