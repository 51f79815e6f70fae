"""Reads of pairwise labelling shared by pages, the API and other apps: queues, progress, model names."""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser

from labelling.models import ComparisonSet, ExpertLabel, LabelAssignment, ModelResponse


def comparison_set_overview(*, expert: AbstractBaseUser) -> list[tuple[ComparisonSet, int, int, int]]:
    """Return every comparison set as (set, comparisons, labelled by the expert, assigned to the expert)."""
    sets = []
    for cs in ComparisonSet.objects.select_related("benchmark"):
        done, total = label_progress(comparison_set=cs, expert=expert)
        sets.append((cs, cs.comparisons.count(), done, total))
    return sets


def label_assignment(*, comparison_set: ComparisonSet, pk: int) -> LabelAssignment | None:
    """Return an assignment of the set with the item, dimension and both responses it shows; None if none."""
    return (
        LabelAssignment.objects.select_related(
            "comparison__item__current_revision",
            "comparison__dimension",
            "comparison__response_a",
            "comparison__response_b",
        )
        .filter(pk=pk, comparison__comparison_set=comparison_set)
        .first()
    )


def label_queue(*, comparison_set: ComparisonSet, expert: AbstractBaseUser) -> list[LabelAssignment]:
    """Return the expert's assignments in queue order."""
    return list(
        LabelAssignment.objects.filter(comparison__comparison_set=comparison_set, expert=expert)
        .select_related("comparison__item", "comparison__dimension", "comparison__response_a", "comparison__response_b")
        .order_by("position", "id")
    )


def label_next(
    *, comparison_set: ComparisonSet, expert: AbstractBaseUser, after: int | None = None
) -> LabelAssignment | None:
    """Return the next unlabelled assignment of the expert."""
    labelled = set(
        ExpertLabel.objects.filter(
            assignment__comparison__comparison_set=comparison_set, assignment__expert=expert
        ).values_list("assignment_id", flat=True)
    )
    pending = [
        a for a in label_queue(comparison_set=comparison_set, expert=expert) if a.pk not in labelled and a.pk != after
    ]
    return pending[0] if pending else None


def label_progress(*, comparison_set: ComparisonSet, expert: AbstractBaseUser) -> tuple[int, int]:
    """Return (labelled, assigned) for the expert."""
    assigned = LabelAssignment.objects.filter(comparison__comparison_set=comparison_set, expert=expert)
    return ExpertLabel.objects.filter(assignment__in=assigned).count(), assigned.count()


def set_model_names(*, comparison_set: ComparisonSet) -> list[str]:
    """Return the names of every model whose responses appear in the set (to hide them from raters)."""
    ids = set()
    for a, b in comparison_set.comparisons.values_list("response_a_id", "response_b_id"):
        ids.update((a, b))
    return sorted(set(ModelResponse.objects.filter(pk__in=ids).values_list("model_name", flat=True)))


def eligible_labellers() -> list[AbstractBaseUser]:
    """Return the active users who may label comparisons (experts and lead experts), by username."""
    users = get_user_model().objects.filter(is_active=True).order_by("username")
    return [u for u in users if u.has_perm("labelling.label_comparisons")]
