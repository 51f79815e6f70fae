"""Query budgets of the labelling pages: as many queries for a set of 5 comparisons as for one of 40."""

import pytest

from annotation.items.models import Benchmark, Dimension
from annotation.labelling import services
from annotation.labelling.models import Comparison, ComparisonSet, ExpertLabel, LabelAssignment, ModelResponse
from annotation.labelling.selectors import label_next
from tests.items.test_queries import MAX_QUERIES, bulk_items, queries_for


def bulk_set(*, n: int, experts: list, name: str) -> ComparisonSet:
    """Build a set of ``n`` comparisons, each assigned to every expert; all but the last two are labelled."""
    items = bulk_items(n, kind="open_prompt", status="accepted")
    responses = ModelResponse.objects.bulk_create(
        ModelResponse(item=item, language="en", model_name=model, text=f"{model} on {item.uid}")
        for item in items
        for model in ("m-a", "m-b")
    )
    dimension = Dimension.objects.filter(benchmark__slug="facet", subjective=True).first()
    cs = ComparisonSet.objects.create(name=name, benchmark=Benchmark.objects.get(slug="facet"))
    cs.experts.set(experts)
    comparisons = Comparison.objects.bulk_create(
        Comparison(
            comparison_set=cs,
            item=item,
            language="en",
            dimension=dimension,
            response_a=responses[2 * i],
            response_b=responses[2 * i + 1],
        )
        for i, item in enumerate(items)
    )
    assignments = LabelAssignment.objects.bulk_create(
        LabelAssignment(comparison=c, comparison_set=cs, expert=expert, shown_order="AB", position=k)
        for k, c in enumerate(comparisons)
        for expert in experts
    )
    ExpertLabel.objects.bulk_create(
        ExpertLabel(assignment=a, score=1, shown_order="AB") for a in assignments if a.position < n - 2
    )
    services.comparison_set_recount(comparison_set=cs)
    return cs


@pytest.fixture
def experts(make_user):
    return [make_user("expert", username="q-exp0"), make_user("expert", username="q-exp1")]


def test_labelling_pages_run_the_same_queries_for_5_or_40_comparisons(taxonomy, experts, login):
    client = login(experts[0])
    measured = []
    for n, name in ((5, "small"), (40, "large")):
        cs = bulk_set(n=n, experts=experts, name=name)
        pending = label_next(comparison_set=cs, expert=experts[0])
        measured.append(
            [
                queries_for(client, f"/labelling/{cs.pk}/next/", expected_status=302),
                queries_for(client, f"/labelling/{cs.pk}/{pending.pk}/"),
            ]
        )
    measured.append([queries_for(client, "/labelling/")])
    bulk_set(n=12, experts=experts, name="third")
    measured.append([queries_for(client, "/labelling/")])
    for small, large in ((measured[0], measured[1]), (measured[2], measured[3])):
        for a, b in zip(small, large, strict=True):
            assert len(a) <= MAX_QUERIES, "\n".join(a)
            assert len(a) == len(b), "\n\n".join([*a, "LARGE", *b])


def test_the_next_comparison_is_the_first_unlabelled_one_in_queue_order(taxonomy, experts):
    cs = bulk_set(n=6, experts=experts, name="queue")
    queue = list(LabelAssignment.objects.filter(expert=experts[0]).order_by("position"))
    assert label_next(comparison_set=cs, expert=experts[0]) == queue[4]
    assert label_next(comparison_set=cs, expert=experts[0], after=queue[4].pk) == queue[5]
    ExpertLabel.objects.create(assignment=queue[4], score=0, shown_order="AB")
    ExpertLabel.objects.create(assignment=queue[5], score=0, shown_order="AB")
    services.comparison_set_recount(comparison_set=cs)
    assert label_next(comparison_set=cs, expert=experts[0]) is None
