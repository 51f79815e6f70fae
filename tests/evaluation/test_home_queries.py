"""The researcher's part of the home page and the taxonomy page run as many queries for few rows as for many.

Found by ``scripts/bench_pages.py`` (every route): the admin's home ran 14 queries (two per list of evaluation and
calibration runs) and the taxonomy page one query of dimensions per benchmark.
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.items.models import Benchmark, Dimension
from annotation.labelling.models import ComparisonSet
from calibration.models import CalibrationRun
from evaluation.home import RUNS_LIMIT, researcher_overview
from evaluation.models import EvaluationRun
from tests.factories import make_frozen_release
from tests.items.test_queries import assert_same_queries_at_two_sizes, bulk_items, queries_for

pytestmark = pytest.mark.django_db


def add_runs(n: int, *, release: object, comparison_set: object, user: object) -> None:
    """Add ``n`` running and ``n`` finished evaluation and calibration runs, each newer than the last."""
    now = timezone.now()
    start = EvaluationRun.objects.count()
    for k in range(start, start + n):
        at = now + timedelta(minutes=k)
        EvaluationRun.objects.create(
            name=f"running {k}", release=release, languages=["en"], phase=EvaluationRun.Phase.JUDGING, created_by=user
        )
        EvaluationRun.objects.create(
            name=f"done {k}",
            release=release,
            languages=["en"],
            phase=EvaluationRun.Phase.DONE,
            finished_at=at,
            created_by=user,
        )
        CalibrationRun.objects.create(
            name=f"cal running {k}", comparison_set=comparison_set, combine_rule="facet_tie", created_by=user
        )
        CalibrationRun.objects.create(
            name=f"cal done {k}",
            combine_rule="facet_tie",
            comparison_set=comparison_set,
            created_by=user,
            collected_at=at,
            report={"judges": []},
            reported_at=at,
            report_digest="0" * 64,
        )


# The admin's home has every panel (review queue, lead overview, items, runs): 12 queries, down from 13 (two lists
# of runs in one query each), plus the item bank's version that keeps the status counts current on every write;
# still over 10, listed in docs/performance.md as left to do.
@pytest.mark.parametrize(("role", "budget"), [("researcher", 10), ("admin", 12)])
def test_home_runs_the_same_queries_for_2_or_40_runs_and_lists_the_newest(role, budget, taxonomy, make_user, login):
    user = make_user(role, username=f"{role}-home")
    client = login(user)
    bulk_items(3, user=user, status="accepted")
    release = make_frozen_release(user=user)
    comparison_set = ComparisonSet.objects.create(name="set", benchmark=Benchmark.objects.get(slug="facet"))

    def measure() -> list[str]:
        from django.core.cache import cache

        cache.clear()
        return queries_for(client, "/")

    add_runs(1, release=release, comparison_set=comparison_set, user=user)
    assert_same_queries_at_two_sizes(
        measure, lambda: add_runs(20, release=release, comparison_set=comparison_set, user=user), budget=budget
    )
    overview = researcher_overview(user=user)
    names = {key: [run.name for run in runs] for key, runs in overview.items() if key != "llm_running"}
    # The same lists as the two queries per kind the page ran before (newest first).
    done = EvaluationRun.objects.filter(phase="done").order_by("-finished_at", "-id")[:RUNS_LIMIT]
    assert names["evaluation_done"] == [run.name for run in done] == [f"done {k}" for k in range(21, 13, -1)]
    reported = CalibrationRun.objects.filter(report__isnull=False).order_by("-reported_at", "-id")[:RUNS_LIMIT]
    assert names["calibration_done"] == [run.name for run in reported]
    running = CalibrationRun.objects.filter(collected_at__isnull=True).order_by("-created_at")[:RUNS_LIMIT]
    assert names["calibration_running"] == [run.name for run in running]
    assert len(names["evaluation_running"]) == RUNS_LIMIT
    assert all(name.startswith("running") for name in names["evaluation_running"])


def test_the_taxonomy_page_runs_the_same_queries_for_one_or_four_benchmarks(taxonomy, lead, login):
    client = login(lead)

    def grow() -> None:
        for k in range(2):
            benchmark = Benchmark.objects.create(slug=f"extra-{k}", name_en=f"Extra {k}", name_zh=f"额外{k}")
            root = Dimension.objects.create(
                benchmark=benchmark, code=f"x{k}", name_en="Root", name_zh="根", level="module"
            )
            Dimension.objects.create(
                benchmark=benchmark, parent=root, code=f"x{k}-a", name_en="Leaf", name_zh="叶", level="dimension"
            )

    assert_same_queries_at_two_sizes(lambda: queries_for(client, "/taxonomy/"), grow)
    page = client.get("/taxonomy/").content.decode()
    assert "Extra 1" in page and "x1-a" in page
