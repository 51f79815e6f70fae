"""Query budgets of the item pages and the item API: at most MAX_QUERIES, and as many for 5 items as for 40."""

import itertools

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.items.content import cjk_search_form, searchable_text
from annotation.items.models import Benchmark, Dimension, EmotionCategory, Item, ItemRevision

MAX_QUERIES = 10
_serial = itertools.count()


def bulk_items(n: int, *, user: object = None, kind: str = "mcq", status: str = "draft") -> list[Item]:
    """Create ``n`` facet items with two revisions and two emotions each, in a few queries."""
    bench = Benchmark.objects.get(slug="facet")
    dims = list(Dimension.objects.filter(benchmark=bench, children__isnull=True).order_by("position")[:3])
    emotions = list(EmotionCategory.objects.order_by("code")[:4])
    batch = next(_serial)
    items = Item.objects.bulk_create(
        Item(
            uid=f"bulk-{batch}-{i:03d}",
            benchmark=bench,
            dimension=dims[i % len(dims)],
            kind=kind,
            status=status,
            difficulty=("", "easy", "hard")[i % 3],
            has_en=True,
            has_zh=i % 2 == 0,
            parity_ok=i % 3 != 0,
            created_by=user,
            updated_by=user,
        )
        for i in range(n)
    )
    revisions = []
    for item in items:
        for number in (1, 2):
            en = f"A birthday party for friend {item.uid}, revision {number}."
            content = (
                {"en": {"prompt": en}, "zh": {"prompt": "生日聚会"}}
                if kind == "open_prompt"
                else {
                    "en": {"context": en, "question": "How?", "options": ["a", "b"], "answer": 0},
                    "zh": {"context": "朋友的生日聚会", "question": "如何？", "options": ["甲", "乙"], "answer": 0},
                }
            )
            revisions.append(
                ItemRevision(
                    item=item, number=number, content=content, content_hash=f"{item.uid}-{number}", author=user
                )
            )
    ItemRevision.objects.bulk_create(revisions)
    for item, revision in zip(items, revisions[1::2], strict=True):
        item.current_revision = revision
        item.search_text = searchable_text(revision.content)
    Item.objects.bulk_update(items, ["current_revision", "search_text"])
    through = Item.emotions.through
    through.objects.bulk_create(
        through(item_id=item.pk, emotioncategory_id=emotion.pk)
        for i, item in enumerate(items)
        for emotion in (emotions[i % 4], emotions[(i + 1) % 4])
    )
    return items


def queries_for(client: object, url: str, expected_status: int = 200) -> list[str]:
    """Return the SQL of one GET of ``url`` (after a warm-up GET that fills caches and the session)."""
    client.get(url)
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == expected_status, url
    return [q["sql"] for q in captured.captured_queries]


def assert_same_queries_at_two_sizes(measure: object, grow: object, budget: int = MAX_QUERIES) -> None:
    """Measure, grow the database, measure again: the counts are equal and within the budget."""
    small = measure()
    grow()
    large = measure()
    assert len(small) <= budget, "\n".join(small)
    assert len(small) == len(large), "\n\n".join(["SMALL", *small, "LARGE", *large])


ITEM_PAGES = [
    "/",
    "/items/",
    "/items/?page=2",
    "/items/?page=last",
    "/items/?q=birthday",
    "/items/?q=%E7%94%9F%E6%97%A5",
    "/items/?valence=negative",
    "/items/?status=candidate&lang=zh&parity=problems",
    "/coverage/",
    "/api/items/",
    "/api/items/?status=accepted&q=birthday",
    "/api/revisions/",
]


@pytest.mark.parametrize("url", ITEM_PAGES)
def test_item_pages_run_the_same_few_queries_for_5_or_40_items(url, taxonomy, lead, login):
    client = login(lead)
    bulk_items(5, user=lead)
    bulk_items(3, user=lead, kind="open_prompt", status="accepted")

    def measure() -> list[str]:
        from django.core.cache import cache

        cache.clear()
        return queries_for(client, url)

    assert_same_queries_at_two_sizes(measure, lambda: bulk_items(40, user=lead))


def test_the_last_page_shows_the_last_items_in_uid_order(taxonomy, lead, login):
    client = login(lead)
    items = bulk_items(30, user=lead)
    response = client.get("/items/?page=2")
    uids = [i.uid for i in response.context["page"]]
    assert uids == [i.uid for i in items[25:]]
    assert response.context["page"].paginator.count == 30


def test_search_finds_english_and_chinese_of_any_length(taxonomy, lead, login):
    client = login(lead)
    [item] = bulk_items(1, user=lead)
    for query in ("BIRTHDAY", "生", "生日", "朋友的生日", item.uid.upper()):
        assert [i.uid for i in client.get("/items/", {"q": query}).context["page"]] == [item.uid], query
    assert list(client.get("/items/", {"q": "葬礼"}).context["page"]) == []


def test_the_cjk_search_form_spells_each_han_character_in_ascii():
    assert cjk_search_form("a生日b") == "az0751fz065e5b"
    assert searchable_text({"en": {"prompt": "Plain"}}) == "plain"  # case folded when stored
    assert searchable_text({"zh": {"prompt": "生日"}, "en": {"prompt": "Straße"}}) == "z0751fz065e5\nstrasse"


def test_search_ignores_case_and_folds_both_sides(taxonomy, lead, login):
    client = login(lead)
    [item] = bulk_items(1, user=lead)
    for query in ("birthday", "Birthday", "BiRtHdAy"):
        assert [i.uid for i in client.get("/items/", {"q": query}).context["page"]] == [item.uid], query


def test_the_api_names_who_created_and_updated_each_item(taxonomy, lead, login):
    client = login(lead)
    bulk_items(2, user=lead)
    rows = client.get("/api/items/").json()["results"]
    assert {(r["created_by"], r["updated_by"]) for r in rows} == {("lead1", "lead1")}


def test_the_item_page_runs_the_same_queries_whatever_the_bank_size(taxonomy, lead, login):
    client = login(lead)
    item = bulk_items(5, user=lead)[0]
    assert_same_queries_at_two_sizes(
        lambda: queries_for(client, f"/items/{item.uid}/"), lambda: bulk_items(40, user=lead), budget=MAX_QUERIES
    )
