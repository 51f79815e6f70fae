"""Item statuses: every change is a recorded decision, by a screening round, a lead expert or admin, or an import."""

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from annotation.items.models import Item, ItemRevision, StatusDecision
from core.errors import ServiceError

DECIDE_STATUS = "items.decide_status"
# What a lead expert or admin may decide by hand; only screening rounds put items in screening.
LEAD_DECISION_STATUSES = (Item.Status.DRAFT, Item.Status.ACCEPTED, Item.Status.REJECTED)


class StatusDecisionForbidden(ServiceError):
    """The user may not decide an item's status outside screening."""

    status_code = 403
    code = "permission_denied"


def user_may_decide_status(user: AbstractBaseUser | None) -> bool:
    """Return whether ``user`` may set an item's status outside screening (``None``: the operator's command line)."""
    return user is None or user.has_perm(DECIDE_STATUS)


@transaction.atomic
def item_status_decide(
    *,
    item: Item,
    status: str,
    user: AbstractBaseUser | None,
    reason: str = "",
    source: str,
    reference: dict | None = None,
) -> StatusDecision | None:
    """Move an item to another workflow status and record who decided it, how and why.

    This is the only writer of ``Item.status``. ``source`` says how the decision came about: a screening round's
    outcome (the screening services check who may close and adjudicate), a lead decision or an import; both of
    the latter need ``items.decide_status`` and a reason. ``reference`` holds structured pointers to the cause
    (a round and its outcome, an import line). Return None when the item already has the status.
    """
    if status not in Item.Status.values:
        raise ValidationError({"status": _("Unknown status %(status)s.") % {"status": status}})
    if source not in StatusDecision.Source.values or source == StatusDecision.Source.CREATED:
        raise ValidationError({"source": _("Unknown source of a status decision: %(source)s.") % {"source": source}})
    locked = Item.objects.select_for_update().get(pk=item.pk)
    reason = reason.strip()
    if source == StatusDecision.Source.LEAD_DECISION:
        _lead_decision_check(locked, status=status, user=user)
    elif source == StatusDecision.Source.IMPORT and not user_may_decide_status(user):
        raise StatusDecisionForbidden(_("Only a lead expert or an admin may change an item's status by import."))
    if source != StatusDecision.Source.SCREENING and not reason:
        raise ValidationError({"reason": _("Give the reason for this decision.")})
    if locked.status == status:
        return None
    reference = dict(reference or {})
    if status == Item.Status.ACCEPTED and "round_item" not in reference and locked.current_revision_id:
        # The revision accepted, so that a release checklist can tell a pinned revision that was accepted from a
        # newer one that was not (a screening decision names its round item, which names the revision reviewed).
        reference["revision"] = ItemRevision.objects.values_list("number", flat=True).get(pk=locked.current_revision_id)
    decision = StatusDecision(
        item=locked,
        from_status=locked.status,
        to_status=status,
        source=source,
        reason=reason,
        reference=reference,
        decided_by=user,
    )
    decision.full_clean()
    decision.save()
    locked.status = status
    locked.updated_by = user
    locked.full_clean()
    locked.save(update_fields=["status", "updated_by", "updated_at"])
    item.status, item.updated_by, item.updated_at = locked.status, locked.updated_by, locked.updated_at
    return decision


def _lead_decision_check(locked: Item, *, status: str, user: AbstractBaseUser | None) -> None:
    """Refuse a lead decision that the user may not take, that screening takes, or that changes nothing."""
    if user is None or not user.has_perm(DECIDE_STATUS):
        raise StatusDecisionForbidden(
            _("Only a lead expert or an admin may accept, reject or return an item to draft outside screening.")
        )
    if status not in LEAD_DECISION_STATUSES:
        raise ValidationError(
            {
                "status": _(
                    "A decision accepts, rejects or returns an item to draft; only screening rounds put items in "
                    "screening."
                )
            }
        )
    if locked.status == Item.Status.IN_SCREENING:
        raise ValidationError(
            {"status": _("This item is in screening: its round decides it when it closes, or by adjudication.")}
        )
    if locked.status == status:
        raise ValidationError({"status": _("The item is already %(status)s.") % {"status": Item.Status(status).label}})
