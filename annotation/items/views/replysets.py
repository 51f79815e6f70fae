"""Pages of the EiCAP reply-set audit: the list of reply sets to audit, one set's replies with their revisions and
audit forms, expansion into probes, and the probes on which the independent judge disagreed with the key.

No page here names the judge's endpoint or model: experts read these pages.
"""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.db.models import Subquery
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from annotation.items import selectors
from annotation.items.content import LANGUAGES
from annotation.items.forms import KeyReviewForm, ReplyAuditForm
from annotation.items.models import Dimension, Item, KeyJudgement, Reply, ReplySet
from annotation.items.services import expansion, replysets
from core.permissions import permission_required

LETTERS = "ABCDEFGHIJKL"


def _expansion_message(request: HttpRequest, report: expansion.ExpansionReport) -> None:
    summary = _("Probes: %(created)s created, %(revised)s revised, %(unchanged)s unchanged.") % {
        "created": len(report.created),
        "revised": len(report.revised),
        "unchanged": len(report.unchanged),
    }
    messages.success(request, summary)
    for problem in report.problems[:10]:
        messages.warning(request, f"{problem['reply_set']}: {problem['reason']}")
    if report.withdrawn:
        messages.warning(
            request,
            _("No longer backed by accepted replies (reject them): %(uids)s") % {"uids": ", ".join(report.withdrawn)},
        )


@permission_required("items.view_item")
def reply_set_list(request: HttpRequest) -> HttpResponse:
    dimension = request.GET.get("dimension", "")
    state = request.GET.get("state", "")
    state = state if state in selectors.REPLY_SET_STATES else ""
    page = Paginator(selectors.reply_set_list(dimension=dimension, state=state), 50).get_page(request.GET.get("page"))
    validation = selectors.key_validation_latest()
    open_disagreements = (
        selectors.key_disagreements(validation=validation, review=KeyJudgement.Review.OPEN).count() if validation else 0
    )
    return render(
        request,
        "items/replyset_list.html",
        {
            "page": page,
            "dimensions": Dimension.objects.filter(reply_sets__isnull=False).distinct().order_by("position", "code"),
            "dimension": dimension,
            "state": state,
            "states": [
                ("to_audit", _("to audit")),
                ("audited", _("audited, not expanded")),
                ("expanded", _("expanded")),
            ],
            "validation": validation,
            "open_disagreements": open_disagreements,
        },
    )


def _detail_context(reply_set: ReplySet) -> dict:
    probes = list(Item.objects.filter(uid__startswith=f"{reply_set.uid}-p").order_by("uid"))
    # The newest validation's disagreements on these probes in one query (the page does not show the validation).
    latest = Subquery(selectors.key_validation_latest_pk(benchmark=reply_set.benchmark))
    disagreements = list(selectors.key_disagreements(validation=latest, item_prefix=f"{reply_set.uid}-p"))
    for judgement in disagreements:
        _describe(judgement)
    turns = selectors.reply_set_turns(reply_set)
    return {
        "reply_set": reply_set,
        "turns": turns,
        "languages": [lang for lang in LANGUAGES if turns and lang in turns[0].user],
        "probes": probes,
        "disagreements": disagreements,
    }


@permission_required("items.view_item")
def reply_set_detail(request: HttpRequest, uid: str) -> HttpResponse:
    reply_set = get_object_or_404(ReplySet.objects.select_related("dimension", "benchmark"), uid=uid)
    return render(request, "items/replyset_detail.html", _detail_context(reply_set))


@require_POST
@permission_required("items.change_item")
def reply_audit(request: HttpRequest, pk: int) -> HttpResponse:
    """Accept, reject or edit one reply; an htmx request gets the reply's card back (with the reason of a refusal:
    htmx swaps only successful answers), others the set's page."""
    reply = get_object_or_404(Reply.objects.select_related("turn__reply_set", "current_revision"), pk=pk)
    reply_set = reply.turn.reply_set
    form = ReplyAuditForm(request.POST)
    error = ""
    if form.is_valid():
        data = form.cleaned_data
        languages = [lang for lang in LANGUAGES if lang in reply.current_revision.content]
        try:
            replysets.reply_audit(
                reply=reply,
                decision=data["decision"],
                user=request.user,
                reason=data["reason"],
                content=form.content(languages) if data["decision"] == "edit" else None,
                base_revision=data["base_revision"],
            )
        except ValidationError as exc:
            error = " ".join(exc.messages)
    else:
        error = " ".join(f"{field}: {' '.join(errors)}" for field, errors in form.errors.items())
    if not request.htmx:
        if error:
            messages.error(request, error)
        return redirect("items:replyset-detail", uid=reply_set.uid)
    turns = selectors.reply_set_turns(reply_set)
    card = next(r for turn in turns for r in turn.replies.all() if r.pk == reply.pk)
    languages = [lang for lang in LANGUAGES if lang in card.current_revision.content]
    return render(
        request,
        "items/replyset_detail.html#reply",
        {"reply": card, "error": error, "languages": languages, "reply_set": reply_set},
    )


@require_POST
@permission_required("items.add_item")
def reply_set_expand(request: HttpRequest, uid: str) -> HttpResponse:
    reply_set = get_object_or_404(ReplySet, uid=uid)
    try:
        report = expansion.reply_set_expand(
            reply_set=reply_set, user=request.user, accept=request.POST.get("accept") == "on"
        )
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        _expansion_message(request, report)
    return redirect("items:replyset-detail", uid=uid)


@require_POST
@permission_required("items.add_item")
def reply_sets_expand(request: HttpRequest) -> HttpResponse:
    """Expand every audited reply set not expanded yet (of a dimension, when the list was filtered by one)."""
    sets = list(selectors.reply_set_list(dimension=request.POST.get("dimension", ""), state="audited"))
    try:
        report = expansion.reply_sets_expand(
            reply_sets=sets, user=request.user, accept=request.POST.get("accept") == "on"
        )
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        _expansion_message(request, report)
    return redirect("items:replyset-list")


def _describe(judgement: KeyJudgement) -> None:
    """Attach the probe turn's text and options to a judgement, for the page."""
    version = judgement.revision.content.get(judgement.language) or {}
    turns = version.get("turns") or []
    spec = turns[judgement.turn] if judgement.turn < len(turns) else {"user": "", "options": []}
    judgement.user_text = spec.get("user", "")
    judgement.earlier = [t.get("user", "") for t in turns[: judgement.turn]]
    judgement.options = [
        {"letter": LETTERS[i], "text": text, "key": i == judgement.key, "chosen": i == judgement.chosen}
        for i, text in enumerate(spec.get("options") or [])
    ]
    judgement.key_letter = LETTERS[judgement.key]
    judgement.chosen_letter = LETTERS[judgement.chosen] if judgement.chosen is not None else ""


@permission_required("items.view_item")
def key_disagreements(request: HttpRequest) -> HttpResponse:
    """The probe turns on which the newest key validation's judge chose another option than the key."""
    validation = selectors.key_validation_latest()
    review = request.GET.get("review", KeyJudgement.Review.OPEN)
    review = review if review in KeyJudgement.Review.values else ""
    page = None
    if validation:
        page = Paginator(selectors.key_disagreements(validation=validation, review=review), 25).get_page(
            request.GET.get("page")
        )
        for judgement in page:
            _describe(judgement)
    return render(
        request,
        "items/key_disagreements.html",
        {
            "validation": validation,
            "page": page,
            "review": review,
            "review_param": review or "all",
            "reviews": KeyJudgement.Review.choices,
        },
    )


@require_POST
@permission_required("items.change_item")
def key_review(request: HttpRequest, pk: int) -> HttpResponse:
    judgement = get_object_or_404(KeyJudgement.objects.select_related("item"), pk=pk)
    form = KeyReviewForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("Choose whether the key stands or is wrong."))
    else:
        try:
            replysets.key_judgement_review(
                judgement=judgement,
                review=form.cleaned_data["review"],
                note=form.cleaned_data["note"],
                user=request.user,
            )
        except ValidationError as exc:
            messages.error(request, " ".join(exc.messages))
        else:
            messages.success(request, _("Review of %(uid)s saved.") % {"uid": judgement.item.uid})
    reply_set = (judgement.item.metadata.get("eicap") or {}).get("reply_set")
    if request.POST.get("back") == "set" and reply_set:
        return redirect("items:replyset-detail", uid=reply_set)
    return redirect("items:key-disagreements")
