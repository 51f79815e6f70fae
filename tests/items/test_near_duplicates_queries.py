"""Query budgets of the pages reading the near-duplicate index: as many queries for a few items as for many."""

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.items.neighbours import CANDIDATES
from tests.factories import make_item
from tests.factories.llm import run_queued_tasks
from tests.items.test_near_duplicates import SCENARIOS, content, edited

pytestmark = pytest.mark.django_db

# The neighbour lookup's share of the item page: the indexes, then the candidates of every language with their texts.
NEIGHBOUR_QUERIES = 2


def grow(start: int, stop: int) -> None:
    """Add items ``start``..``stop``: each fourth a near-duplicate of the one before, the rest unrelated."""
    for i in range(start, stop):
        en, zh = SCENARIOS[i % len(SCENARIOS)]
        en, zh = f"{en} Item {i}, {i * 7919 % 1000} {'abcdefghij'[i % 10] * 3}.", f"{zh}第{i}项。"
        if i % 4 == 3:
            en, zh = edited(en), zh + "真的。"
        make_item(uid=f"q-{i:03d}", content=content(en, zh))


def queries(client: object, url: str) -> list[str]:
    """Return the SQL of one GET of ``url``, after a warm-up GET (session, cached n-gram weights) and the worker
    storing the near-duplicate clusters it queued."""
    cache.clear()
    client.get(url)
    run_queued_tasks("annotation.items.tasks.near_duplicates_compute")
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200
    return [q["sql"] for q in captured.captured_queries]


@pytest.mark.parametrize(
    "url", ["/items/q-003/", "/items/near-duplicates/?benchmark=facet", "/items/near-duplicates/?lang=zh&page=2"]
)
def test_the_pages_run_as_many_queries_for_8_items_as_for_60(url, taxonomy, researcher, login):
    client = login(researcher)
    grow(0, 8)
    small = queries(client, url)
    grow(8, 60)
    large = queries(client, url)
    assert len(small) == len(large), "\n\n".join(["SMALL", *small, "LARGE", *large])


def test_the_neighbour_lookup_costs_a_few_queries(taxonomy, researcher, login):
    client = login(researcher)
    grow(0, 8)
    with_neighbours = queries(client, "/items/q-003/")
    assert len([q for q in with_neighbours if "similarity" in q or "signature" in q]) <= NEIGHBOUR_QUERIES
    assert CANDIDATES <= 50


def test_the_near_duplicates_page_reads_stored_clusters_in_at_most_10_queries(taxonomy, researcher, login):
    client = login(researcher)
    grow(0, 60)
    url = "/items/near-duplicates/?benchmark=facet"
    found = queries(client, url)
    assert len(found) <= 10
    # Stored clusters are read a page at a time: nothing reads the index, the items or their texts.
    assert not [q for q in found if "signatureband" in q or '"content"' in q or "items_item\"" in q]
    html = client.get(url).content.decode()
    assert 'id="computed-at"' in html and "/items/q-003/" in html
