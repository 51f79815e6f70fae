"""A budget shared by several runs (an evaluation run's): reserved and spent together, paused together, resumed
together when it is raised; the evaluation run page says why its LLM runs stopped."""

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from evaluation import services as evaluation_services
from evaluation.services.runs import evaluation_budget_set
from llm import services
from llm.calls import request_max_cost
from llm.models import BudgetPool, Run, RunItem
from llm.worker import runner
from tests.evaluation.conftest import frozen_release  # noqa: F401 - a fixture
from tests.factories import mcq_prompts, work_llm_run

PRICES = {"price_input_per_mtok": Decimal("1000"), "price_output_per_mtok": Decimal("2000"), "max_tokens": 40}


def work(run: Run) -> Run:
    runner.run_work(run_id=run.pk)
    run.refresh_from_db()
    return run


def test_two_runs_sharing_a_budget_stop_together_within_one_requests_cost_and_resume_together(
    transactional_db, make_endpoint, simulator
):
    endpoint = make_endpoint("sim-mcq-acc90", **PRICES)
    pool = services.budget_pool_create(name="study", budget=Decimal("3"))
    runs = [
        services.run_create(
            endpoint=endpoint, prompts=mcq_prompts(40, prefix=prefix), parser="mcq_letter", name=prefix,
            start=False, budget_pool=pool, max_parse_retries=0,
        )
        for prefix in ("a", "b")
    ]
    runs = [work(run) for run in runs]
    pool.refresh_from_db()
    assert [run.status for run in runs] == [Run.Status.DONE, Run.Status.PAUSED] or all(
        run.status == Run.Status.PAUSED for run in runs
    )
    assert runs[1].pause_reason == Run.PauseReason.BUDGET and pool.paused_by_budget
    assert pool.spent == sum(run.spent for run in runs) <= pool.budget
    pending = RunItem.objects.filter(run=runs[1], status=RunItem.Status.PENDING).first()
    one = request_max_cost(pending.request, price_input=Decimal("1000"), price_output=Decimal("2000"))
    assert pool.budget - pool.spent < one
    assert pool.reserved == 0
    with pytest.raises(ValidationError):
        services.budget_pool_set(pool=pool, budget=Decimal("0.1"))

    services.budget_pool_set(pool=pool, budget=Decimal("100"))
    for run in runs:
        run.refresh_from_db()
        if run.status != Run.Status.DONE:
            assert run.status == Run.Status.QUEUED
            work(run)
    assert Run.objects.filter(budget_pool=pool, status=Run.Status.DONE).count() == 2
    assert simulator.stats()["duplicate_billed_keys"] == 0


def test_an_evaluation_runs_budget_pauses_its_llm_runs_and_raising_it_resumes_them(
    frozen_release, make_endpoint, researcher, login  # noqa: F811 - the fixture imported above
):
    endpoints = [make_endpoint("sim-mcq-acc90", **PRICES), make_endpoint("sim-mcq-acc40", **PRICES)]
    run = evaluation_services.evaluation_run_create(
        name="capped", release=frozen_release, endpoints=endpoints, languages=["en"], user=researcher,
        judge_override_reason="objective items only", budget=Decimal("2"),
    )
    estimate = evaluation_services.evaluation_estimate(run=run)
    assert estimate["budget"] == Decimal("2") and estimate["total_cost_batch"] == estimate["total_cost"]
    evaluation_services.evaluation_run_start(run=run, user=researcher, start=False)
    links = list(run.llm_runs.select_related("llm_run"))
    assert {link.llm_run.budget_pool_id for link in links} == {run.budget_pool_id}
    for link in links:
        work_llm_run(link.llm_run_id)
    pool = BudgetPool.objects.get(pk=run.budget_pool_id)
    assert pool.paused_by_budget and pool.spent <= pool.budget
    html = login(researcher).get(reverse("evaluation:run", args=[run.pk])).content.decode()
    assert 'id="evaluation-budget-paused"' in html and "Paused because of the budget" in html

    with pytest.raises(ValidationError):
        evaluation_budget_set(run=run, budget=Decimal("-1"))
    run = evaluation_budget_set(run=run, budget=None)
    assert run.budget_pool.budget is None
    assert not Run.objects.filter(budget_pool=pool, status=Run.Status.PAUSED).exists()
    for link in run.llm_runs.all():
        work_llm_run(link.llm_run_id)
    assert evaluation_services.evaluation_run_advance(run=run, start=False) == run.Phase.DONE
