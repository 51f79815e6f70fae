"""Stored progress (``ExpertProgress``, each assignment's set and labelling time) follows every labelling service.

Pages and the API read progress from these rows instead of counting assignments; the counts must equal a recount
from the assignments and labels after any sequence of labels, skips and changes, and the queue must serve the
same order as before the rows existed.
"""

import random

import pytest

from annotation.items.models import Benchmark
from annotation.labelling import selectors
from annotation.labelling import services as comparisons
from annotation.labelling.models import ComparisonSet, ExpertLabel, ExpertProgress, LabelAssignment
from annotation.queue.selectors import queue_previous, queue_skipped

pytestmark = pytest.mark.django_db


def stored(cs: ComparisonSet) -> dict:
    return {
        p.expert_id: (p.assigned, p.labelled, p.skipped, p.changed)
        for p in ExpertProgress.objects.filter(comparison_set=cs)
    }


def counted(cs: ComparisonSet) -> dict:
    out = {}
    for a in LabelAssignment.objects.filter(comparison__comparison_set=cs).select_related("label"):
        label = getattr(a, "label", None)
        assigned, labelled, skipped, changed = out.get(a.expert_id, (0, 0, 0, 0))
        out[a.expert_id] = (
            assigned + 1,
            labelled + (label is not None),
            skipped + (label is None and a.skipped_at is not None),
            changed + (label is not None and label.changed_at is not None),
        )
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_progress_equals_a_recount_after_any_sequence_of_labels_skips_and_changes(seed, prompts, make_user):
    rng = random.Random(seed)
    experts = [make_user("expert", username=f"p{seed}-{i}") for i in range(3)]
    cs = comparisons.comparison_set_build(
        name=f"progress {seed}",
        benchmark=Benchmark.objects.get(slug="facet"),
        experts=experts,
        user=None,
        experts_per_comparison=2,
        seed=seed,
    )
    assert cs.size == cs.comparisons.count() > 0
    assert stored(cs) == counted(cs)
    for _ in range(40):
        expert = rng.choice(experts)
        nxt = selectors.label_next(comparison_set=cs, expert=expert)
        labelled = LabelAssignment.objects.filter(comparison_set=cs, expert=expert, labelled_at__isnull=False)
        action = rng.choice(["label", "label", "skip", "change"])
        if action == "change" and labelled.exists():
            a = rng.choice(list(labelled))
            comparisons.label_change(
                comparison=a.comparison, expert=expert, winner=rng.choice(["left", "right"]), margin=rng.randint(1, 5)
            )
        elif nxt is not None and action == "skip":
            comparisons.label_skip(comparison=nxt.comparison, expert=expert)
        elif nxt is not None:
            comparisons.label_submit(comparison=nxt.comparison, expert=expert, winner="tie", margin=None)
        assert stored(cs) == counted(cs)
    # Each labelled assignment carries its label's time; open ones carry none.
    for a in LabelAssignment.objects.filter(comparison_set=cs).select_related("label"):
        assert a.labelled_at == (a.label.created_at if hasattr(a, "label") else None)
    # A recount (for data written without the services) gives the same rows.
    before = stored(cs)
    comparisons.comparison_set_recount(comparison_set=cs)
    assert stored(cs) == before


def test_queue_serves_in_position_order_then_put_aside_ones_and_previous_goes_back_in_label_order(pair_set):
    cs, expert = pair_set
    queue = list(LabelAssignment.objects.filter(comparison_set=cs, expert=expert).order_by("position", "id"))
    first, second, third = queue[:3]
    assert selectors.label_next(comparison_set=cs, expert=expert) == first
    comparisons.label_skip(comparison=first.comparison, expert=expert)
    assert selectors.label_next(comparison_set=cs, expert=expert) == second
    comparisons.label_submit(comparison=third.comparison, expert=expert, winner="tie", margin=None)
    comparisons.label_submit(comparison=second.comparison, expert=expert, winner="left", margin=1)
    # Previous follows the order the labels were given (second after third), not the queue.
    second.refresh_from_db()
    assert queue_previous(queue=selectors.expert_queue(comparison_set=cs, expert=expert)) == second
    assert queue_previous(queue=selectors.expert_queue(comparison_set=cs, expert=expert), before=second).pk == third.pk
    rest = queue[3:]
    for a in rest:
        assert selectors.label_next(comparison_set=cs, expert=expert) == a
        comparisons.label_submit(comparison=a.comparison, expert=expert, winner="tie", margin=None)
    # The comparison put aside comes last.
    assert selectors.label_next(comparison_set=cs, expert=expert) == first
    assert list(queue_skipped(queue=selectors.expert_queue(comparison_set=cs, expert=expert))) == [first]
    assert selectors.label_counts(comparison_set=cs, expert=expert) == {
        "done": len(queue) - 1,
        "total": len(queue),
        "skipped": 1,
    }
    assert ExpertLabel.objects.filter(assignment__expert=expert).count() == len(queue) - 1


@pytest.fixture
def pair_set(prompts, make_user):
    expert = make_user("expert", username="queue-1")
    cs = comparisons.comparison_set_build(
        name="queue", benchmark=Benchmark.objects.get(slug="facet"), experts=[expert], user=None
    )
    assert cs.size >= 4
    return cs, expert
