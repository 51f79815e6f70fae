"""Reads of pairwise labelling shared by pages, the API and other apps: queues, progress, model names."""

from django.contrib.auth.models import AbstractBaseUser
from django.core.cache import cache
from django.db.models import Count, F, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from annotation.labelling import serving
from annotation.labelling.models import (
    Comparison,
    ComparisonSet,
    ExpertLabel,
    ExpertProgress,
    LabelAssignment,
    ModelResponse,
)
from annotation.labelling.pairwise import anonymise, shown_choice
from annotation.queue.selectors import queue_counts, queue_next, queue_of, worker_assignments


def comparison_set_overview(
    *, expert: AbstractBaseUser, sets: QuerySet[ComparisonSet] | None = None
) -> list[tuple[ComparisonSet, int, int, int]]:
    """Return every comparison set (or those of ``sets``, a filtered query set) as (set, comparisons, labelled by the
    expert, assigned to the expert)."""
    sets = (ComparisonSet.objects.all() if sets is None else sets).select_related("benchmark")
    progress = {
        set_id: (done, total)
        for set_id, done, total in ExpertProgress.objects.filter(expert=expert).values_list(
            "comparison_set_id", "labelled", "assigned"
        )
    }
    return [(cs, cs.size, *progress.get(cs.pk, (0, 0))) for cs in sets]


def label_assignment(*, comparison_set: ComparisonSet | int, pk: int) -> LabelAssignment | None:
    """Return an assignment of the set (or set id) with its set, item, dimension, both responses it shows and its
    label, if any: one query."""
    return (
        LabelAssignment.objects.select_related(
            "comparison__comparison_set",
            "comparison__item__current_revision",
            "comparison__dimension",
            "comparison__response_a",
            "comparison__response_b",
            "label",
        )
        .filter(pk=pk, comparison__comparison_set=comparison_set)
        .first()
    )


def expert_queue(*, comparison_set: ComparisonSet, expert: AbstractBaseUser) -> QuerySet[LabelAssignment]:
    """Return the expert's assignments in the set, in queue order: their queue for ``annotation.queue``'s reads
    (next, previous, put aside)."""
    return queue_of(model=LabelAssignment, owner=comparison_set, worker=expert)


def label_next(
    *, comparison_set: ComparisonSet, expert: AbstractBaseUser, after: int | LabelAssignment | None = None
) -> LabelAssignment | None:
    """Return the expert's next unlabelled assignment in queue order after ``after``, wrapping around
    (``annotation.queue.selectors.queue_next``).

    A set in another order (active: ``calibration.allocation``, which records each draw) is served by the server
    registered for it with ``annotation.labelling.serving``, which serves any unlabelled assignment but ``after``.
    """
    serve = serving.server(comparison_set.order)
    if serve is not None:
        return serve(comparison_set=comparison_set, expert=expert, after=getattr(after, "pk", after))
    return queue_next(queue=expert_queue(comparison_set=comparison_set, expert=expert), after=after)


def label_after(*, comparison_set: ComparisonSet, expert: AbstractBaseUser, after: int) -> LabelAssignment | None:
    """Return where the expert goes on after ``after``: the next unlabelled assignment, or ``after`` itself when it
    is the only one left (just put aside, it comes back now); None when their queue is done."""
    return label_next(comparison_set=comparison_set, expert=expert, after=after) or label_next(
        comparison_set=comparison_set, expert=expert
    )


def label_counts(*, comparison_set: ComparisonSet, expert: AbstractBaseUser) -> dict[str, int]:
    """Return the expert's labelled (``done``), assigned (``total``) and put-aside unlabelled (``skipped``) ones."""
    return queue_counts(model=LabelAssignment, owner=comparison_set, worker=expert)


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


def expert_labels(*, comparison_set: ComparisonSet, expert: AbstractBaseUser) -> QuerySet[ExpertLabel]:
    """Return the expert's labels in the set, in the order given, with their comparisons and number of changes."""
    return (
        ExpertLabel.objects.filter(assignment__comparison__comparison_set=comparison_set, assignment__expert=expert)
        .select_related("assignment__comparison__item", "assignment__comparison__dimension")
        .annotate(n_changes=Count("changes"))
        .order_by("created_at", "id")
    )


def set_progress(*, comparison_set: ComparisonSet) -> list[dict]:
    """Return each assigned expert's progress in the set: username, assigned, labelled, skipped, changed labels."""
    rows = (
        ExpertProgress.objects.filter(comparison_set=comparison_set, assigned__gt=0)
        .values("expert__username", "assigned", "labelled", "skipped", "changed")
        .order_by("expert__username")
    )
    return [{"expert": row.pop("expert__username"), **row} for row in rows]


def comparison_sets(*, user: AbstractBaseUser) -> QuerySet[ComparisonSet]:
    """Return every set, newest first, with its size and the user's own (labelled, assigned) from their progress."""
    mine = ExpertProgress.objects.filter(comparison_set=OuterRef("pk"), expert=user.pk)
    return (
        ComparisonSet.objects.select_related("benchmark", "created_by")
        .annotate(
            n_comparisons=F("size"),
            my_assigned=Coalesce(Subquery(mine.values("assigned")[:1]), 0),
            my_labelled=Coalesce(Subquery(mine.values("labelled")[:1]), 0),
        )
        .order_by("-created_at", "-id")
    )


def expert_progress(*, comparison_set: ComparisonSet, expert: AbstractBaseUser) -> dict:
    """Return the expert's labelled, assigned and skipped (not yet labelled) counts in the set (stored, not counted)."""
    row = (
        ExpertProgress.objects.filter(comparison_set=comparison_set, expert=expert)
        .values("labelled", "assigned", "skipped")
        .first()
    )
    return row or {"labelled": 0, "assigned": 0, "skipped": 0}


def expert_assignments(*, expert: AbstractBaseUser, comparison_set: int | None = None, state: str = "") -> QuerySet:
    """Return the expert's assignments in queue order; ``state`` is pending, labelled or skipped."""
    mine = worker_assignments(model=LabelAssignment, worker=expert, owner=comparison_set, state=state)
    return mine.select_related("comparison__item", "comparison__dimension")


def blind_texts(*, assignment: LabelAssignment) -> dict[str, str]:
    """Return what the expert reads of an assignment: the prompt's context and the prompt, and the anonymised
    responses left and right in the expert's order."""
    comparison = assignment.comparison
    left, right = (
        (comparison.response_a, comparison.response_b)
        if assignment.shown_order == "AB"
        else (comparison.response_b, comparison.response_a)
    )
    revision = comparison.item.current_revision
    content = revision.content.get(comparison.language, {}) if revision else {}
    names = set_model_names(comparison_set=comparison.comparison_set)
    return {
        "context": content.get("context", "") or "",
        "prompt": content.get("prompt", "") or "",
        "left": anonymise(left.text, names),
        "right": anonymise(right.text, names),
    }


def blind_comparison(*, assignment: LabelAssignment) -> dict:
    """Return what the expert sees of an assignment: prompt, anonymised texts left and right, their verdict."""
    comparison = assignment.comparison
    label = getattr(assignment, "label", None)
    verdict = None
    if label is not None:
        winner, margin = shown_choice(shown_order=label.shown_order, score=label.score)
        verdict = {"winner": winner, "margin": margin or None, "rationale": label.rationale}
    return {
        "assignment": assignment.pk,
        "comparison_set": comparison.comparison_set_id,
        "item": comparison.item.uid,
        "language": comparison.language,
        "dimension": comparison.dimension.code,
        "dimension_name": comparison.dimension.name,
        "dimension_definition": comparison.dimension.definition,
        **blind_texts(assignment=assignment),
        "skipped": assignment.skipped_at is not None,
        "label": verdict,
    }


ATTENTION_CHECKS_SHOWN = 200


def attention_checks(*, comparison_set: ComparisonSet) -> list[Comparison]:
    """Return the set's attention checks (comparisons with a known answer) with their items and dimensions, by id
    (at most ``ATTENTION_CHECKS_SHOWN``)."""
    return list(
        Comparison.objects.filter(comparison_set=comparison_set, gold_winner__isnull=False)
        .select_related("item", "dimension")
        .order_by("id")[:ATTENTION_CHECKS_SHOWN]
    )
