"""Query budgets of the screening pages: as many queries for a round of 5 items as for one of 40."""

import pytest
from django.utils import timezone

from annotation.items.models import Benchmark
from annotation.screening import services
from annotation.screening.models import Criterion, Review, ReviewAssignment, RoundItem, ScreeningRound
from tests.items.test_queries import assert_same_queries_at_two_sizes, bulk_items, queries_for

SCORES = {"linguistic_clarity": 4, "answer_key_correctness": "pass"}


def bulk_round(*, n: int, lead: object, reviewers: list, number: int) -> ScreeningRound:
    """Open a round on ``n`` new items with two reviewers each; the first reviewer submits every review."""
    items = bulk_items(n, user=lead)
    round = ScreeningRound.objects.create(
        benchmark=Benchmark.objects.get(slug="facet"), number=number, title=f"bulk {number}", opened_by=lead
    )
    round.criteria.set(Criterion.objects.filter(code__in=SCORES, dimension=None))
    round.reviewers.set(reviewers)
    round_items = RoundItem.objects.bulk_create(
        RoundItem(round=round, item=item, revision=item.current_revision) for item in items
    )
    assignments = ReviewAssignment.objects.bulk_create(
        ReviewAssignment(round_item=ri, round=round, reviewer=reviewer, position=k)
        for k, ri in enumerate(round_items)
        for reviewer in (reviewers[k % 2], reviewers[2])
    )
    Review.objects.bulk_create(
        Review(
            assignment=a,
            status=Review.Status.SUBMITTED,
            decision=("accept", "reject")[a.position % 2],
            scores=SCORES,
            submitted_at=timezone.now(),
        )
        for a in assignments
        if a.reviewer_id != reviewers[2].pk
    )
    services.round_recount(round=round)
    return round


@pytest.fixture
def team(make_user, lead):
    return [make_user("expert", username="q-rev0"), make_user("expert", username="q-rev1"), lead]


def test_the_round_list_runs_the_same_queries_for_1_or_3_rounds(taxonomy, lead, team, login):
    client = login(lead)
    bulk_round(n=5, lead=lead, reviewers=team, number=1)

    def grow() -> None:
        bulk_round(n=40, lead=lead, reviewers=team, number=2)
        bulk_round(n=3, lead=lead, reviewers=team, number=3)

    assert_same_queries_at_two_sizes(lambda: queries_for(client, "/screening/"), grow)


@pytest.mark.parametrize("closed", [False, True], ids=["open", "closed"])
def test_the_round_page_runs_the_same_queries_for_5_or_40_items(taxonomy, lead, team, login, closed):
    client = login(lead)
    small = bulk_round(n=5, lead=lead, reviewers=team, number=1)
    large = bulk_round(n=40, lead=lead, reviewers=team, number=2)
    if closed:
        for round in (small, large):
            services.round_close(round=round, user=lead, unreviewed="decide_on_submitted")
    counts = [queries_for(client, f"/screening/{r.pk}/") for r in (small, large)]
    assert len(counts[0]) <= 10, "\n".join(counts[0])
    assert len(counts[0]) == len(counts[1]), "\n\n".join(counts[0] + ["LARGE"] + counts[1])


def test_a_closed_round_keeps_the_statistics_counted_when_it_closed(taxonomy, lead, team, login):
    round = bulk_round(n=6, lead=lead, reviewers=team, number=1)
    services.round_close(round=round, user=lead, unreviewed="decide_on_submitted")
    round.refresh_from_db()
    assert round.statistics["decisions"] == {"accept": 3, "reject": 3}
    assert round.statistics["progress"] == [6, 12]
    page = login(lead).get(f"/screening/{round.pk}/")
    assert page.context["stats"].decisions == {"accept": 3, "reject": 3}
    assert page.context["page"].paginator.count == 6


def test_the_review_page_runs_the_same_queries_for_5_or_40_items(taxonomy, lead, team, login):
    client = login(lead)
    small = bulk_round(n=5, lead=lead, reviewers=team, number=1)
    large = bulk_round(n=40, lead=lead, reviewers=team, number=2)
    counts = []
    for round in (small, large):
        last = ReviewAssignment.objects.filter(round_item__round=round, reviewer=lead).order_by("-position").first()
        counts.append(queries_for(client, f"/screening/{round.pk}/review/{last.pk}/"))
        counts.append(queries_for(client, f"/screening/{round.pk}/review/", expected_status=302))
    # Besides the queue and progress, the page reads the previous review (Back), and the items put aside (Skip)
    # only when the progress counted some: a fixed number of queries however long the round.
    assert max(len(c) for c in counts) <= 10, "\n".join(counts[0])
    assert len(counts[0]) == len(counts[2]) and len(counts[1]) == len(counts[3])


def test_the_next_review_follows_the_queue_and_wraps_around(taxonomy, lead, team):
    from annotation.screening.selectors import next_assignment

    round = bulk_round(n=4, lead=lead, reviewers=team, number=1)
    queue = list(ReviewAssignment.objects.filter(round_item__round=round, reviewer=lead).order_by("position"))
    assert next_assignment(round=round, reviewer=lead) == queue[0]
    assert next_assignment(round=round, reviewer=lead, after=queue[1].pk) == queue[2]
    assert next_assignment(round=round, reviewer=lead, after=queue[3].pk) == queue[0]
    Review.objects.create(assignment=queue[0], status="submitted", decision="accept", submitted_at=timezone.now())
    services.round_recount(round=round)
    assert next_assignment(round=round, reviewer=lead, after=queue[0].pk) == queue[1]


def test_the_review_page_shows_the_reviewed_revisions_classification(taxonomy, lead, expert, login):
    from django.utils.html import escape

    from annotation.items.models import Benchmark, CrisisLevel, Dimension, EmotionCategory, Scenario
    from annotation.items.services.items import ItemState, item_create
    from tests.factories import mcq_content

    benchmark = Benchmark.objects.get(slug="facet")
    scenario = Scenario.objects.select_related("domain").first()
    emotions = list(EmotionCategory.objects.order_by("code")[:2])
    crisis = CrisisLevel.objects.order_by("level").last()
    item_create(
        benchmark=benchmark,
        uid="classified-1",
        kind="mcq",
        user=lead,
        state=ItemState(
            dimension=Dimension.objects.get(benchmark=benchmark, code="hidden_emotion_recognition"),
            content=mcq_content(),
            scenario=scenario,
            emotions=emotions,
            crisis_level=crisis,
            difficulty="hard",
        ),
    )
    round = services.round_open(
        benchmark=benchmark, title="Classified", user=lead, reviewers=[expert], reviewers_per_item=1
    )
    assignment = ReviewAssignment.objects.get(round_item__round=round, reviewer=expert)
    page = login(expert).get(f"/screening/{round.pk}/review/{assignment.pk}/")
    block = page.content.decode().split('id="review-classification"')[1].split("</dl>")[0]
    assert "hard" in block and escape(scenario.name) in block and escape(scenario.domain.name) in block
    assert all(escape(e.name) in block for e in emotions)
    assert escape(f"{crisis.level} · {crisis.name}") in block
