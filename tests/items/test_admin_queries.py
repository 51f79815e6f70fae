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
