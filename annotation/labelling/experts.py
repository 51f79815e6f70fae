"""Per-expert statistics of a comparison set, for its builder (as Label Studio's per-annotator statistics): each
expert's progress, time per label, agreement with the other experts and accuracy on the attention checks.

Agreement is counted on the side each label takes (A, B or a tie): for each comparison an expert labelled with
others, every pair of their label with another expert's agrees when both take the same side; ``agreement`` is the
share of such pairs that agree.

What comes from the labels (times, agreement, checks) reads every label of the set (seconds for 180,000 labels),
so it is kept in the shared cache under a key of what it depends on: the newest label and label change anywhere
and the set's attention checks (their number and a sum of their ids and answers), read with the stored progress
of its experts. Two queries while kept (the progress with the key, the kept figures), whatever the size of the
set; one more, reading the labels, after any label, change or check.
"""

import hashlib
import statistics
from collections import defaultdict
from dataclasses import asdict, dataclass

from django.core.cache import cache
from django.db.models import Count, F, IntegerField, Subquery, Sum, Value
from django.db.models.functions import Coalesce

from annotation.labelling.models import Comparison, ComparisonSet, ExpertLabel, ExpertProgress, LabelChange

# How long kept figures stay usable (a label written around the services, e.g. in a shell, changes no key).
KEPT_SECONDS = 600


def side(score: int) -> int:
    """Return 1 when A is preferred, -1 for B, 0 for a tie (the sign of a canonical score)."""
    return (score > 0) - (score < 0)


@dataclass
class ExpertStatistics:
    expert_id: int
    username: str
    name: str
    labelled: int
    assigned: int
    skipped: int
    median_seconds: float | None
    timed_labels: int
    agreeing_pairs: int
    shared_pairs: int
    agreement: float | None
    checks_answered: int
    checks_correct: int
    check_accuracy: float | None

    def as_dict(self) -> dict:
        return asdict(self)


def _progress_with_key(comparison_set: ComparisonSet) -> list[ExpertProgress]:
    """The set's progress rows by username, each with the state the label figures depend on (one query)."""
    checks = (
        Comparison.objects.filter(comparison_set=comparison_set.pk, gold_winner__isnull=False)
        .order_by()
        .annotate(grouped=Value(1))
        .values("grouped")
    )
    return list(
        ExpertProgress.objects.filter(comparison_set=comparison_set)
        .select_related("expert")
        .annotate(
            newest_label=Subquery(ExpertLabel.objects.order_by("-pk").values("pk")[:1]),
            newest_change=Subquery(LabelChange.objects.order_by("-pk").values("pk")[:1]),
            check_count=Subquery(checks.annotate(n=Count("pk")).values("n")[:1]),
            check_sum=Subquery(
                checks.annotate(
                    n=Coalesce(Sum(F("pk") * (F("gold_winner") + 2)), 0, output_field=IntegerField())
                ).values("n")[:1]
            ),
        )
        .order_by("expert__username")
    )


def label_figures(*, comparison_set: ComparisonSet) -> dict[str, dict[int, object]]:
    """Return, per expert id, the seconds of their timed labels, their agreeing and shared pairs and their attention
    check answers (right or wrong), from every label of the set."""
    labels = ExpertLabel.objects.filter(assignment__comparison__comparison_set=comparison_set).values_list(
        "assignment__comparison_id",
        "assignment__expert_id",
        "score",
        "seconds_spent",
        "assignment__comparison__gold_winner",
    )
    by_comparison: dict[int, list[tuple[int, int]]] = defaultdict(list)
    seconds: dict[int, list[int]] = defaultdict(list)
    checks: dict[int, list[bool]] = defaultdict(list)
    for comparison_id, expert_id, score, spent, gold in labels.iterator(chunk_size=5000):
        by_comparison[comparison_id].append((expert_id, side(score)))
        if spent is not None:
            seconds[expert_id].append(spent)
        if gold is not None:
            checks[expert_id].append(side(score) == gold)
    agreeing: dict[int, int] = defaultdict(int)
    shared: dict[int, int] = defaultdict(int)
    for sides in by_comparison.values():
        for expert_id, mine in sides:
            for other_id, theirs in sides:
                if other_id != expert_id:
                    shared[expert_id] += 1
                    agreeing[expert_id] += mine == theirs
    return {
        "median_seconds": {pk: float(statistics.median(values)) for pk, values in seconds.items()},
        "timed": {pk: len(values) for pk, values in seconds.items()},
        "agreeing": dict(agreeing),
        "shared": dict(shared),
        "answered": {pk: len(values) for pk, values in checks.items()},
        "correct": {pk: sum(values) for pk, values in checks.items()},
    }


def expert_statistics(*, comparison_set: ComparisonSet) -> list[ExpertStatistics]:
    """Return each assigned expert's statistics in the set, by username (label figures kept, see the module)."""
    progress = _progress_with_key(comparison_set)
    state = (
        (progress[0].newest_label, progress[0].newest_change, progress[0].check_count, progress[0].check_sum)
        if progress
        else ()
    )
    key = f"expert-figures:{comparison_set.pk}:" + hashlib.sha256(repr(state).encode()).hexdigest()[:32]
    figures = cache.get(key) if progress else None
    if figures is None:
        figures = label_figures(comparison_set=comparison_set)
        if progress:
            cache.set(key, figures, KEPT_SECONDS)
    median_seconds, timed = figures["median_seconds"], figures["timed"]
    agreeing, shared = figures["agreeing"], figures["shared"]
    answered_by, correct_by = figures["answered"], figures["correct"]
    rows = []
    for row in progress:
        expert = row.expert
        pk = expert.pk
        answered, correct = answered_by.get(pk, 0), correct_by.get(pk, 0)
        rows.append(
            ExpertStatistics(
                expert_id=pk,
                username=expert.get_username(),
                name=expert.get_full_name() or expert.get_username(),
                labelled=row.labelled,
                assigned=row.assigned,
                skipped=row.skipped,
                median_seconds=median_seconds.get(pk),
                timed_labels=timed.get(pk, 0),
                agreeing_pairs=agreeing.get(pk, 0),
                shared_pairs=shared.get(pk, 0),
                agreement=agreeing.get(pk, 0) / shared[pk] if shared.get(pk) else None,
                checks_answered=answered,
                checks_correct=correct,
                check_accuracy=correct / answered if answered else None,
            )
        )
    return rows
