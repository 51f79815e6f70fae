"""Which endpoints experts may draft items with: only those an admin marked for drafting, minus the ones an app
above this one knows experts must not read.

Drafting shows an expert a model's own writing. An expert who has read it would recognise the same model's responses
in a comparison set, so the apps that hold responses register an exclusion here (``annotation.labelling``: a model
that answered in an open comparison set). Each exclusion narrows a queryset of endpoints and says why one endpoint is
left out; a second exclusion under a name already taken raises ``AlreadyRegistered``.
"""

from collections.abc import Callable
from dataclasses import dataclass

from django.db.models import QuerySet
from django.utils.translation import gettext as _

from core.home import AlreadyRegistered
from llm.models import Endpoint


@dataclass(frozen=True)
class Exclusion:
    narrow: Callable[[QuerySet[Endpoint]], QuerySet[Endpoint]]
    reason: Callable[[Endpoint], str]


EXCLUSIONS: dict[str, Exclusion] = {}


def register_exclusion(
    name: str, *, narrow: Callable[[QuerySet[Endpoint]], QuerySet[Endpoint]], reason: Callable[[Endpoint], str]
) -> None:
    """Register a rule that keeps endpoints out of drafting: ``narrow`` filters a queryset (one query, however
    many endpoints), ``reason`` says why one endpoint is left out ("" when it is not)."""
    if name in EXCLUSIONS:
        raise AlreadyRegistered(f"a drafting exclusion named {name!r} is already registered")
    EXCLUSIONS[name] = Exclusion(narrow, reason)


def drafting_endpoints() -> QuerySet[Endpoint]:
    """The endpoints experts may draft with: active, marked for drafting, and left out by no exclusion."""
    endpoints = Endpoint.objects.filter(is_active=True, for_drafting=True).order_by("pk")
    for exclusion in EXCLUSIONS.values():
        endpoints = exclusion.narrow(endpoints)
    return endpoints


def drafting_refusal(endpoint: Endpoint) -> str:
    """Say why ``endpoint`` may not be used for drafting, or return ""."""
    if not endpoint.is_active:
        return _("This endpoint is not active.")
    if not endpoint.for_drafting:
        return _(
            "This endpoint is not marked for drafting. An admin marks the endpoints experts may draft with "
            "(never one whose model answers in comparison sets)."
        )
    for exclusion in EXCLUSIONS.values():
        reason = exclusion.reason(endpoint)
        if reason:
            return reason
    return ""
