"""Per-expert statistics of a comparison set, for its builder (as Label Studio's per-annotator statistics): each
expert's progress, time per label, agreement with the other experts and accuracy on the attention checks.

Two queries whatever the size of the set: the stored progress of its experts, and its labels (comparison, expert,
score, seconds, the comparison's known answer). Agreement is counted on the side each label takes (A, B or a tie):
for each comparison an expert labelled with others, every pair of their label with another expert's agrees when
both take the same side; ``agreement`` is the share of such pairs that agree.
"""

import statistics
from collections import defaultdict
from dataclasses import asdict, dataclass

from annotation.labelling.models import ComparisonSet, ExpertLabel, ExpertProgress


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


def expert_statistics(*, comparison_set: ComparisonSet) -> list[ExpertStatistics]:
    """Return each assigned expert's statistics in the set, by username."""
    progress = list(
        ExpertProgress.objects.filter(comparison_set=comparison_set)
        .select_related("expert")
        .order_by("expert__username")
    )
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
    for comparison_id, expert_id, score, spent, gold in labels:
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
    rows = []
    for row in progress:
        expert = row.expert
        pk = expert.pk
        answered = len(checks[pk])
        rows.append(
            ExpertStatistics(
                expert_id=pk,
                username=expert.get_username(),
                name=expert.get_full_name() or expert.get_username(),
                labelled=row.labelled,
                assigned=row.assigned,
                skipped=row.skipped,
                median_seconds=float(statistics.median(seconds[pk])) if seconds[pk] else None,
                timed_labels=len(seconds[pk]),
                agreeing_pairs=agreeing[pk],
                shared_pairs=shared[pk],
                agreement=agreeing[pk] / shared[pk] if shared[pk] else None,
                checks_answered=answered,
                checks_correct=sum(checks[pk]),
                check_accuracy=sum(checks[pk]) / answered if answered else None,
            )
        )
    return rows
