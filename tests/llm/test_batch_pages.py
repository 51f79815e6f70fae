"""Batch mode and budgets on the pages and the API: the create form's options, the run page's batch state and
budget pause, raising the budget by form and API; who may do it."""

import io
import json
from decimal import Decimal

import pytest
from django.urls import reverse

from llm import services
from llm.models import Endpoint, Run, RunBatch, RunChunk
from tests.factories import mcq_prompts


@pytest.fixture
def endpoint(make_endpoint) -> Endpoint:
    return make_endpoint(
        "sim-mcq-acc90", price_batch_input_per_mtok=Decimal("0.25"), price_batch_output_per_mtok=Decimal("0.75")
    )


@pytest.fixture
def run(endpoint) -> Run:
    return services.run_create(
        endpoint=endpoint, prompts=mcq_prompts(12), parser="mcq_letter", name="batched", start=False, batch=True,
        budget=Decimal("2"),
    )


def budget_paused(run: Run) -> Run:
    Run.objects.filter(pk=run.pk).update(
        status=Run.Status.PAUSED, pause_reason=Run.PauseReason.BUDGET, spent=Decimal("1.9")
    )
    run.refresh_from_db()
    return run


def test_the_create_form_starts_a_batch_run_with_a_budget(login, researcher, endpoint):
    upload = io.BytesIO("\n".join(json.dumps(p) for p in mcq_prompts(3)).encode())
    upload.name = "prompts.jsonl"
    response = login(researcher).post(
        reverse("llm:run-create"),
        {
            "name": "from form",
            "endpoint": endpoint.pk,
            "parser": "mcq_letter",
            "prompts": upload,
            "mode": "batch",
            "batch_fallback": "batch",
            "budget": "1.5",
            "max_parse_retries": 2,
        },
    )
    run = Run.objects.get(name="from form")
    assert response.status_code == 302
    assert (run.mode, run.batch_fallback, run.budget) == (Run.Mode.BATCH, Run.Mode.BATCH, Decimal("1.5"))


def test_the_endpoints_default_decides_when_the_form_leaves_the_mode_empty(login, researcher, endpoint):
    Endpoint.objects.filter(pk=endpoint.pk).update(batch_default=True)
    upload = io.BytesIO(json.dumps(mcq_prompts(1)[0]).encode())
    upload.name = "p.jsonl"
    login(researcher).post(
        reverse("llm:run-create"),
        {"name": "default", "endpoint": endpoint.pk, "parser": "mcq_letter", "prompts": upload, "mode": "",
         "batch_fallback": "live"},
    )
    assert Run.objects.get(name="default").mode == Run.Mode.BATCH


def test_the_run_page_shows_batch_state_both_prices_and_why_the_budget_paused_it(
    login, researcher, run, django_assert_max_num_queries
):
    chunk = RunChunk.objects.filter(run=run).first()
    RunBatch.objects.create(
        run=run, chunk=chunk, key="k1", status=RunBatch.Status.SUBMITTED, provider_batch_id="batch_x",
        completed_requests=4,
    )
    run = budget_paused(run)
    client = login(researcher)
    with django_assert_max_num_queries(20):
        html = client.get(reverse("llm:run-detail", args=[run.pk])).content.decode()
    assert "Paused because of the budget" in html and 'id="budget-paused"' in html
    assert 'id="batch-state"' in html and "submitted: 1" in html and "4 requests answered" in html
    assert "at live prices" in html and "at batch prices" in html
    assert "provider batches" in html
    partial = client.get(reverse("llm:run-progress", args=[run.pk]), HTTP_HX_REQUEST="true").content.decode()
    assert "Paused because of the budget" in partial


def test_raising_the_budget_on_the_page_resumes_a_run_the_budget_paused(login, researcher, run):
    run = budget_paused(run)
    client = login(researcher)
    response = client.post(reverse("llm:run-budget", args=[run.pk]), {"budget": "1"})
    assert response.status_code == 302
    run.refresh_from_db()
    assert run.status == Run.Status.PAUSED and run.budget == Decimal("2"), "below the spend: refused"
    client.post(reverse("llm:run-budget", args=[run.pk]), {"budget": "5"})
    run.refresh_from_db()
    assert (run.status, run.budget, run.pause_reason) == (Run.Status.QUEUED, Decimal("5"), "")


def test_only_those_who_run_llm_runs_may_set_a_budget(login, expert, researcher, run):
    assert login(expert).post(reverse("llm:run-budget", args=[run.pk]), {"budget": "9"}).status_code == 403
    run.refresh_from_db()
    assert run.budget == Decimal("2")


def test_the_api_starts_a_batch_run_with_a_budget_and_raises_it(client, researcher, endpoint):
    client.force_login(researcher)
    response = client.post(
        "/api/llm/runs/",
        {"name": "api batch", "endpoint": endpoint.pk, "parser": "mcq_letter", "prompts": mcq_prompts(4),
         "batch": True, "budget": "0.5"},
        content_type="application/json",
    )
    assert response.status_code == 201, response.json()
    data = response.json()
    assert data["mode"] == "batch" and Decimal(data["budget"]) == Decimal("0.5")
    assert Decimal(data["progress"]["estimated_cost_batch"]) < Decimal(data["progress"]["estimated_cost_live"])
    run = budget_paused(Run.objects.get(pk=data["id"]))
    Run.objects.filter(pk=run.pk).update(spent=Decimal("0.4"))
    response = client.post(f"/api/llm/runs/{run.pk}/budget/", {"budget": "-1"}, content_type="application/json")
    assert response.status_code == 400 and "budget" in response.json()
    response = client.post(f"/api/llm/runs/{run.pk}/budget/", {"budget": "0.3"}, content_type="application/json")
    assert response.status_code == 400 and "budget" in json.dumps(response.json())
    response = client.post(f"/api/llm/runs/{run.pk}/budget/", {"budget": "3"}, content_type="application/json")
    assert response.status_code == 200
    assert response.json()["status"] == "queued" and response.json()["pause_reason"] == ""


def test_experts_cannot_set_budgets_through_the_api(client, expert, run):
    client.force_login(expert)
    response = client.post(f"/api/llm/runs/{run.pk}/budget/", {"budget": "3"}, content_type="application/json")
    assert response.status_code == 403


def test_endpoints_take_batch_prices_and_a_batch_default_and_the_list_shows_them(
    client, admin_user, simulator, fast_retries, login, researcher
):
    client.force_login(admin_user)
    response = client.post(
        "/api/llm/endpoints/",
        {"name": "priced", "base_url": simulator.base_url, "model": "sim-echo", "is_simulator": True,
         "price_input_per_mtok": "2", "price_output_per_mtok": "8", "price_batch_input_per_mtok": "1",
         "price_batch_output_per_mtok": "4", "batch_default": True},
        content_type="application/json",
    )
    assert response.status_code == 201, response.json()
    assert response.json()["batch_default"] is True and response.json()["price_batch_output_per_mtok"] == "4.0000"
    response = client.patch(
        f"/api/llm/endpoints/{response.json()['id']}/", {"price_batch_input_per_mtok": "-1"},
        content_type="application/json",
    )
    assert response.status_code == 400 and "price_batch_input_per_mtok" in response.json()
    html = login(researcher).get(reverse("llm:endpoint-list")).content.decode()
    assert "batch 1.00 / 4.00" in html and "batch by default" in html


def test_costs_and_budgets_show_the_price_currency(settings, researcher, login, run):
    settings.PRICE_CURRENCY = "EUR"
    client = login(researcher)
    assert "EUR per million tokens" in client.get("/llm/endpoints/").content.decode()
    page = client.get(reverse("llm:run-detail", args=[run.pk])).content.decode()
    assert "2.0000 EUR" in page  # the budget
