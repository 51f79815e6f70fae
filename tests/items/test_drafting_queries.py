"""The drafting page reads its templates and drafting endpoints once each, however many there are."""

import pytest

from annotation.items.models import Dimension, ItemTemplate
from tests.items.test_queries import assert_same_queries_at_two_sizes, queries_for

pytestmark = pytest.mark.django_db


def test_the_drafting_page_runs_the_same_queries_for_few_or_many_templates_and_endpoints(
    taxonomy, lead, login, make_endpoint
):
    client = login(lead)
    dimensions = list(Dimension.objects.filter(benchmark__slug="facet", children__isnull=True).order_by("pk")[:6])

    def add(first: int, n: int) -> None:
        for k in range(first, first + n):
            ItemTemplate.objects.create(dimension=dimensions[k % 6], version=k + 1, instructions="x", created_by=lead)
            make_endpoint(f"drafter-{k}", for_drafting=True)

    add(0, 1)
    assert_same_queries_at_two_sizes(lambda: queries_for(client, "/drafting/"), lambda: add(1, 8))
    page = client.get("/drafting/").content.decode()
    # Every template and endpoint is offered in the form (and listed in the table), none twice in the form.
    assert page.count('<option value="') >= 18
    assert f"{dimensions[8 % 6].code} template v9" in page
