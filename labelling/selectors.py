"""Reads of pairwise labelling shared by pages, the API and other apps: queues, progress, model names."""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.cache import cache
from django.db.models import Count, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce

from labelling.models import Comparison, ComparisonSet, LabelAssignment, ModelResponse


def comparison_set_overview(*, expert: AbstractBaseUser) -> list[tuple[ComparisonSet, int, int, int]]:
    """Return every comparison set as (set, comparisons, labelled by the expert, assigned to the expert)."""
    sizes = Comparison.objects.filter(comparison_set=OuterRef("pk")).order_by().values("comparison_set")
    sets = ComparisonSet.objects.select_related("benchmark").annotate(
        n_comparisons=Coalesce(Subquery(sizes.annotate(n=Count("id")).values("n")), 0)
    )
    progress = {
        set_id: (done, total)
        for set_id, done, total in LabelAssignment.objects.filter(expert=expert)
        .values_list("comparison__comparison_set_id")
        .annotate(done=Count("label"), total=Count("id"))
        .order_by()
    }
    return [(cs, cs.n_comparisons, *progress.get(cs.pk, (0, 0))) for cs in sets]


def label_assignment(*, comparison_set: ComparisonSet, pk: int) -> LabelAssignment | None:
    """Return an assignment of the set with the item, dimension, both responses it shows and its label, if any."""
    return (
        LabelAssignment.objects.select_related(
            "comparison__item__current_revision",
            "comparison__dimension",
            "comparison__response_a",
            "comparison__response_b",
            "label",
        )
        .filter(pk=pk, comparison__comparison_set=comparison_set)
        .first()
    )


def label_next(
    *, comparison_set: ComparisonSet, expert: AbstractBaseUser, after: int | None = None
) -> LabelAssignment | None:
    """Return the expert's first unlabelled assignment in queue order, other than ``after``."""
    pending = LabelAssignment.objects.filter(
        comparison__comparison_set=comparison_set, expert=expert, label__isnull=True
    ).order_by("position", "id")
    if after is not None:
        pending = pending.exclude(pk=after)
    return pending.first()


def label_progress(*, comparison_set: ComparisonSet, expert: AbstractBaseUser) -> tuple[int, int]:
    """Return (labelled, assigned) for the expert."""
    counts = LabelAssignment.objects.filter(comparison__comparison_set=comparison_set, expert=expert).aggregate(
        done=Count("label"), total=Count("id")
    )
    return counts["done"], counts["total"]


MODEL_NAMES_TTL_SECONDS = 300


def set_model_names(*, comparison_set: ComparisonSet) -> list[str]:
    """Return the names of every model whose responses appear in the set (to hide them from raters).

    A set's comparisons are fixed when it is built, so the names are cached for a few minutes.
    """
    return cache.get_or_set(
        f"labelling:set-model-names:{comparison_set.pk}",
        lambda: _set_model_names(comparison_set),
        MODEL_NAMES_TTL_SECONDS,
    )


def _set_model_names(comparison_set: ComparisonSet) -> list[str]:
    comparisons = Comparison.objects.filter(comparison_set=comparison_set)
    used = Q(pk__in=comparisons.values("response_a_id")) | Q(pk__in=comparisons.values("response_b_id"))
    return list(
        ModelResponse.objects.filter(used).order_by("model_name").values_list("model_name", flat=True).distinct()
    )


def eligible_labellers() -> list[AbstractBaseUser]:
    """Return the active users who may label comparisons (experts and lead experts), by username."""
    users = get_user_model().objects.filter(is_active=True).order_by("username")
    return [u for u in users if u.has_perm("labelling.label_comparisons")]
