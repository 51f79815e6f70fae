"""The admin's benchmark page reads its dimensions' parent choices once, not once per dimension row."""

import pytest

from annotation.items.models import Benchmark, Dimension
from tests.items.test_queries import assert_same_queries_at_two_sizes, queries_for

pytestmark = pytest.mark.django_db


def test_the_benchmark_change_page_runs_the_same_queries_for_few_or_many_dimensions(client, django_user_model):
    client.force_login(django_user_model.objects.create_superuser("root", password="x-2026-pass"))
    benchmark = Benchmark.objects.create(slug="b", name_en="B", name_zh="乙")
    root = Dimension.objects.create(benchmark=benchmark, code="root", name_en="Root", name_zh="根", level="module")
    url = f"/admin/items/benchmark/{benchmark.pk}/change/"

    def grow() -> None:
        for k in range(15):
            Dimension.objects.create(
                benchmark=benchmark, parent=root, code=f"d{k}", name_en=f"D{k}", name_zh="维", level="dimension"
            )

    assert_same_queries_at_two_sizes(lambda: queries_for(client, url), grow)
    page = client.get(url).content.decode()
    assert page.count('value="d14"') == 1 and page.count(f'<option value="{root.pk}" selected>') == 15


def test_the_item_changelist_searches_as_the_item_list_and_pages_ids_first(client, django_user_model, taxonomy, lead):
    from tests.factories import make_item, mcq_content

    client.force_login(django_user_model.objects.create_superuser("root", password="x-2026-pass"))
    content = mcq_content()
    content["en"]["context"] = "Her Colleague took credit for the report."
    content["zh"]["context"] = "她的同事抢了报告的功劳。"
    make_item(uid="admin-colleague", content=content, user=lead)
    make_item(uid="admin-other", user=lead)
    url = "/admin/items/item/"
    # The indexed search form (annotation.items.selectors.item_search): case folded, Chinese spelled in ASCII.
    for query in ("colleague", "COLL", "同事", "admin-coll"):
        page = client.get(url, {"q": query}).content.decode()
        assert "admin-colleague" in page and "admin-other" not in page, query
    assert "admin-other" in client.get(url, {"q": "admin-o"}).content.decode()

    def grow() -> None:
        for _ in range(6):
            make_item(user=lead)

    # No second count of the whole table, and the same queries whatever the table holds.
    assert_same_queries_at_two_sizes(lambda: queries_for(client, f"{url}?q=test"), grow)
