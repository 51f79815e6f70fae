"""Long item lists read ids first with a cached count (core.pagination). On PostgreSQL a long result
takes the planner's estimate instead of a count; an estimate that is short or long must never skip, repeat or
shift a row for a reader who follows the pages (the 100k benchmark asked for the last page of the exact count
and got 404: the estimate was about 350 rows short, and the rows between were never shown)."""

import pytest
from django.core.cache import cache
from django.core.paginator import EmptyPage, PageNotAnInteger

from annotation.items.models import Item
from core.pagination import IdsFirstPaginator
from tests.factories import make_item

ROWS = 23


@pytest.fixture
def items(taxonomy, lead):
    for n in range(ROWS):
        make_item(uid=f"page-{n:03d}", user=lead)
    return list(Item.objects.order_by("uid").values_list("uid", flat=True))


@pytest.fixture
def estimate(monkeypatch):
    """Make every count the planner's estimate of ``value`` rows, whatever the database."""

    def set_estimate(value: int) -> None:
        cache.clear()
        monkeypatch.setattr(IdsFirstPaginator, "_count", lambda self: (value, True))

    return set_estimate


def read_all(paginator_for) -> list[str]:
    """Follow has_next from page 1 as a reader would; return the uids in the order shown."""
    seen, number = [], 1
    while True:
        page = paginator_for().page(number)
        seen += [item.uid for item in page.object_list]
        if not page.has_next():
            return seen
        number += 1


@pytest.mark.parametrize("estimated", [5, 17, 23, 40, 400])
def test_pages_of_an_estimated_count_show_every_row_once_in_order(items, estimate, estimated):
    estimate(estimated)

    def paginator() -> IdsFirstPaginator:
        return IdsFirstPaginator(Item.objects.order_by("uid"), 5, count_key="count:test")

    assert read_all(paginator) == items
    last = paginator().page(5)
    # The true last page makes the count exact, whatever the estimate said.
    assert [i.uid for i in last.object_list] == items[20:] and last.paginator.count == ROWS
    assert not last.has_next() and last.paginator.num_pages == 5
    with pytest.raises(EmptyPage):
        paginator().page(6)
    with pytest.raises(EmptyPage):
        paginator().page(0)
    with pytest.raises(PageNotAnInteger):
        paginator().page("last")
    # The page list falls back as Django's does: a word shows the first page, a page past the rows the last.
    assert paginator().get_page("last").number == 1 and paginator().get_page(99).number == 5


def test_the_api_reader_following_next_gets_every_item_with_a_short_estimate(items, estimate, login, expert):
    estimate(10)
    client = login(expert)
    url, seen = "/api/items/?page_size=7", []
    while url:
        data = client.get(url).json()
        seen += [row["uid"] for row in data["results"]]
        url = data["next"]
    assert seen == items
    # Past the last row: 404 with the API's error body, however far an estimate reached.
    estimate(1000)
    assert client.get("/api/items/?page_size=7&page=5").status_code == 404


def test_the_page_list_past_a_short_estimate_still_shows_its_rows(items, estimate, login, expert):
    estimate(10)
    client = login(expert)
    html = client.get("/items/?page=1").content.decode()
    assert "≈" in html  # the estimate is marked as one
    assert all(uid in html for uid in items)  # 23 rows on a page of 25, though the estimate said 10


@pytest.mark.parametrize("page", [2, 5, 16, 99])
def test_a_page_past_the_rows_but_within_a_long_estimate_shows_the_last_page(items, estimate, login, expert, page):
    estimate(400)  # 16 pages of 25 by the estimate; 23 rows, one page, in truth
    client = login(expert)
    response = client.get(f"/items/?page={page}")
    assert response.status_code == 200
    html = response.content.decode()
    assert all(uid in html for uid in items)
