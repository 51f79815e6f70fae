"""The near-duplicates page shows clusters a worker stored (annotation.items.near_duplicates): the request never
clusters the benchmark, a change in the bank marks the stored clusters out of date until the worker computes them
again, and the page polls meanwhile."""

from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.items import near_duplicates, services
from annotation.items.models import Benchmark, Item, NearDuplicateReport
from annotation.items.tasks import near_duplicates_compute
from tests.factories.llm import run_queued_tasks
from tests.items.test_near_duplicates import content, make_pair, revise

pytestmark = pytest.mark.django_db

TASK = "annotation.items.tasks.near_duplicates_compute"
URL = "/items/near-duplicates/?benchmark=facet&lang=en"


def test_the_page_queues_the_clusters_rather_than_computing_them_and_shows_them_once_stored(
    taxonomy, researcher, login
):
    make_pair("st")
    client = login(researcher)
    with CaptureQueriesContext(connection) as captured:
        html = client.get(URL).content.decode()
    # Nothing in the request reads the index's band keys, the items or their texts.
    assert not [q for q in captured.captured_queries if "signatureband" in q["sql"] or '"content"' in q["sql"]]
    assert 'id="compute-state"' in html and "part=state" in html and 'hx-trigger="every 2s"' in html
    assert "/items/st-copy/" not in html and "No near-duplicates at this threshold" not in html
    assert not NearDuplicateReport.objects.exists()
    client.get(URL)  # a second view queues nothing more
    polled = client.get(URL + "&part=state", headers={"HX-Request": "true"})
    assert polled.status_code == 200 and 'id="compute-state"' in polled.content.decode()
    assert run_queued_tasks(TASK) == 1
    assert client.get(URL + "&part=state", headers={"HX-Request": "true"}).headers.get("HX-Refresh") == "true"
    html = client.get(URL).content.decode()
    assert 'id="compute-state"' not in html and 'id="computed-at"' in html
    assert "/items/st/" in html and "/items/st-copy/" in html and "1 pair above the threshold" in html
    report = NearDuplicateReport.objects.get()
    assert (report.language, report.threshold, report.pairs, report.cluster_count) == ("en", Decimal("0.85"), 1, 1)


def test_a_revision_marks_the_stored_clusters_out_of_date_until_the_worker_computes_them_again(
    taxonomy, researcher, login
):
    original, _copy = make_pair("old")
    make_pair("keep", 1)
    client = login(researcher)
    client.get(URL)
    run_queued_tasks(TASK)
    assert "/items/old-copy/" in client.get(URL).content.decode()
    revise(original, content("A different story about a lost dog and a kind neighbour.", "邻居帮忙找狗的故事。"))
    html = client.get(URL).content.decode()
    # The previous clusters stay on the page, marked with when they were computed, while the worker works.
    assert 'id="compute-state"' in html and "Below: the clusters as of" in html and "/items/old-copy/" in html
    assert run_queued_tasks(TASK) == 1
    html = client.get(URL).content.decode()
    assert 'id="compute-state"' not in html and "/items/old-copy/" not in html and "/items/keep-copy/" in html


def test_rejecting_an_item_takes_it_out_of_the_next_computation(taxonomy, researcher, lead, login):
    _original, copy = make_pair("rj")
    client = login(researcher)
    client.get(URL)
    run_queued_tasks(TASK)
    services.item_status_decide(item=copy, status="rejected", user=lead, reason="duplicate", source="lead_decision")
    assert 'id="compute-state"' in client.get(URL).content.decode()
    run_queued_tasks(TASK)
    html = client.get(URL).content.decode()
    assert "/items/rj-copy/" not in html and "No near-duplicates at this threshold" in html


def test_each_threshold_is_stored_at_two_decimals_within_what_the_index_finds(taxonomy, researcher, login):
    make_pair("th")
    client = login(researcher)
    client.get(URL + "&threshold=0.853")
    client.get(URL + "&threshold=0.849")  # the same report, 0.85: queued once
    client.get(URL + "&threshold=0.2")  # below the index's lowest: 0.75
    assert run_queued_tasks(TASK) == 2
    assert sorted(NearDuplicateReport.objects.values_list("threshold", flat=True)) == [Decimal("0.75"), Decimal("0.85")]
    assert near_duplicates.threshold_rounded(7.0) == Decimal("1.00")


def test_the_task_stores_the_report_the_page_reads_and_refuses_what_does_not_exist(taxonomy):
    make_pair("tk")
    benchmark = Benchmark.objects.get(slug="facet")
    assert near_duplicates_compute.call(benchmark.pk, "zh", "0.85") is True
    report = NearDuplicateReport.objects.get(language="zh")
    stored = near_duplicates.clusters_stored(benchmark=benchmark, language="zh", threshold=Decimal("0.85"))
    assert stored.current and stored.report == report
    assert [[uid for uid, _score in group] for group in stored.stored[0:50]] == [["tk", "tk-copy"]]
    assert near_duplicates_compute.call(benchmark.pk + 100, "zh", "0.85") is False
    assert near_duplicates_compute.call(benchmark.pk, "fr", "0.85") is False
    assert Item.objects.count() == 2
