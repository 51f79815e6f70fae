"""Keep models that answer in open comparison sets out of drafting (registered with annotation.items.blinding).

An expert who drafted items with a model has read its writing; if the same model answered in a set that expert
labels, the labels would no longer be blind. So while a comparison set is open, no endpoint of a model with
responses in it is offered for drafting, and the service refuses it.
"""

from django.db.models import Q, QuerySet
from django.utils.translation import gettext as _

from annotation.items.blinding import register_exclusion
from annotation.labelling.models import Comparison, ModelResponse
from llm.models import Endpoint


def models_in_open_sets() -> QuerySet:
    """The model names of every response compared in an open set, as a subquery."""
    open_comparisons = Comparison.objects.filter(comparison_set__closed_at__isnull=True)
    return (
        ModelResponse.objects.filter(
            Q(pk__in=open_comparisons.values("response_a")) | Q(pk__in=open_comparisons.values("response_b"))
        )
        .values("model_name")
        .distinct()
    )


def _narrow(endpoints: QuerySet[Endpoint]) -> QuerySet[Endpoint]:
    return endpoints.exclude(model__in=models_in_open_sets())


def _reason(endpoint: Endpoint) -> str:
    if models_in_open_sets().filter(model_name=endpoint.model).exists():
        return _(
            "This endpoint's model answers in an open comparison set: experts who read its drafts would recognise "
            "its responses. Draft with another endpoint, or after the set is closed."
        )
    return ""


register_exclusion("labelling:open-sets", narrow=_narrow, reason=_reason)
