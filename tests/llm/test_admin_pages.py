"""The admin shows provider batches and budget pools for inspection, read-only."""

import pytest

from llm.models import BudgetPool

pytestmark = pytest.mark.django_db


def test_batches_and_budget_pools_are_listed_read_only(admin_user, client):
    client.force_login(admin_user)
    pool = BudgetPool.objects.create(name="evaluation 1", budget="5.00")
    for url in ("/admin/llm/runbatch/", "/admin/llm/budgetpool/", f"/admin/llm/budgetpool/{pool.pk}/change/"):
        assert client.get(url).status_code == 200, url
    page = client.get(f"/admin/llm/budgetpool/{pool.pk}/change/").content.decode()
    assert 'name="budget"' not in page  # shown, not editable: raising a budget goes through the run's page or API
    assert client.get("/admin/llm/budgetpool/add/").status_code == 403
    assert client.post(f"/admin/llm/budgetpool/{pool.pk}/delete/", {"post": "yes"}).status_code == 403
