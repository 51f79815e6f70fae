"""The run state machine and collection: every status change is an allowed move, a finished run is collected once.

A finished run is collected by a worker running the ``run_collect`` task its finish queued after commit
(``run_queued_collections`` runs them here, as a ``db_worker`` would). These tests commit, so they use
``transactional_db``.
"""

import pytest
from django.core.exceptions import ValidationError
from django.db import transaction
from django_tasks_db.compat import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from llm import collection, collectors, lifecycle, services, tasks
from llm.models import Run
from llm.worker import runner
from tests.factories import mcq_prompts, run_queued_collections, work_llm_run

PURPOSE = "tests.lifecycle"
SEEN: list[tuple[int, list[dict]]] = []
FAIL: dict[str, bool] = {"now": False}


@collectors.register(PURPOSE)
def _collect(run: Run) -> None:
    SEEN.append((run.pk, [item.ref for item in run.items.order_by("position")]))
    Run.objects.filter(pk=run.pk).update(name="renamed by the collector")
    if FAIL["now"]:
        raise RuntimeError("the consumer is broken")


@pytest.fixture(autouse=True)
def fresh_collector_state():
    SEEN.clear()
    FAIL["now"] = False
    yield
    FAIL["now"] = False


def plan(endpoint, n: int = 3, **kwargs: object) -> Run:
    prompts = [{**p, "ref": {"n": i}} for i, p in enumerate(mcq_prompts(n))]
    for p in prompts:
        del p["key"]
    return services.run_create(
        endpoint=endpoint, prompts=prompts, parser="mcq_letter", name="t", purpose=PURPOSE, start=False, **kwargs
    )


def test_the_state_machine_allows_only_its_moves():
    assert Run.sources_of(Run.Status.DONE) == [Run.Status.QUEUED, Run.Status.RUNNING, Run.Status.PAUSED]
    assert not Run(status=Run.Status.DONE).can_become(Run.Status.QUEUED)
    assert not Run(status=Run.Status.CANCELLED).can_become(Run.Status.RUNNING)
    assert Run(status=Run.Status.FAILED).can_become(Run.Status.QUEUED)
    assert set(Run.TRANSITIONS) == set(Run.Status.values)
    assert all(set(targets) <= set(Run.Status.values) for targets in Run.TRANSITIONS.values())


def queued_collections() -> list[list]:
    queued = DBTaskResult.objects.filter(status=TaskResultStatus.READY, task_path=tasks.run_collect.module_path)
    return [row["args"] for row in queued.values_list("args_kwargs", flat=True)]


def test_a_finished_run_is_collected_once_by_a_worker_after_commit(transactional_db, make_endpoint):
    run = plan(make_endpoint("sim-mcq-acc70"))
    runner.run_work(run_id=run.pk)
    run.refresh_from_db()
    # The worker that finished the run only queued its collection.
    assert run.status == Run.Status.DONE and run.collected_at is None and SEEN == []
    assert queued_collections() == [[run.pk]]
    assert run_queued_collections() == 1
    run.refresh_from_db()
    assert run.collected_at is not None and run.collect_error == ""
    assert [(run.pk, [{"n": 0}, {"n": 1}, {"n": 2}])] == SEEN
    assert run.name == "renamed by the collector"
    assert [item.key for item in run.items.order_by("position")] == ['{"n":0}', '{"n":1}', '{"n":2}']
    # Finishing moves are conditional: a second attempt neither moves the run nor collects it again.
    assert not lifecycle.run_transition(run_id=run.pk, to=Run.Status.DONE)
    assert queued_collections() == []
    assert collection.run_collect(run_id=run.pk) is False
    assert len(SEEN) == 1


def test_a_collector_is_not_called_inside_the_transaction_that_finishes_the_run(transactional_db, make_endpoint):
    run = plan(make_endpoint("sim-mcq-acc70"))
    with transaction.atomic():
        assert lifecycle.run_transition(run_id=run.pk, to=Run.Status.CANCELLED)
        assert SEEN == [] and queued_collections() == []
    assert SEEN == [] and queued_collections() == [[run.pk]]
    run_queued_collections()
    assert [pk for pk, _refs in SEEN] == [run.pk]


def test_a_failing_collector_keeps_nothing_and_can_be_retried(transactional_db, make_endpoint):
    FAIL["now"] = True
    run = plan(make_endpoint("sim-mcq-acc70"))
    work_llm_run(run.pk)
    run.refresh_from_db()
    assert run.status == Run.Status.DONE and run.collected_at is None
    assert "the consumer is broken" in run.collect_error
    assert run.name == "t"  # the collector's write was rolled back with it
    task = DBTaskResult.objects.get(task_path=tasks.run_collect.module_path)
    assert task.status == TaskResultStatus.FAILED and "the consumer is broken" in task.traceback
    with pytest.raises(ValidationError, match="Collecting failed again"):
        services.run_collect_again(run=run)
    FAIL["now"] = False
    run = services.run_collect_again(run=run)
    assert run.collected_at is not None and run.collect_error == "" and run.name == "renamed by the collector"
    with pytest.raises(ValidationError, match="already collected"):
        services.run_collect_again(run=run)


def test_a_fully_cached_run_is_done_as_it_is_created_and_then_collected_by_a_worker(transactional_db, make_endpoint):
    endpoint = make_endpoint("sim-mcq-acc70")
    work_llm_run(plan(endpoint).pk)
    again = plan(endpoint)
    assert queued_collections() == [[again.pk]]
    run_queued_collections()
    again.refresh_from_db()
    assert again.status == Run.Status.DONE and again.cached == 3 and again.collected_at is not None
    assert [pk for pk, _refs in SEEN] == [SEEN[0][0], again.pk]


def test_a_run_without_a_collector_is_marked_collected(transactional_db, make_endpoint):
    run = services.run_create(
        endpoint=make_endpoint("sim-mcq-acc70"), prompts=mcq_prompts(2), parser="mcq_letter", name="t", start=False
    )
    work_llm_run(run.pk)
    run.refresh_from_db()
    assert run.collected_at is not None and SEEN == []


def test_pause_resume_and_cancel_go_through_the_state_machine(transactional_db, make_endpoint):
    run = plan(make_endpoint("sim-mcq-acc70"))
    run = services.run_pause(run=run)
    assert run.status == Run.Status.PAUSED
    with pytest.raises(ValidationError, match="Only a queued or running run can be paused"):
        services.run_pause(run=run)
    run = services.run_resume(run=run)
    assert run.status == Run.Status.QUEUED
    run = services.run_cancel(run=run)
    run.refresh_from_db()
    assert run.status == Run.Status.CANCELLED and run.finished_at is not None and run.collected_at is None
    run_queued_collections()
    run.refresh_from_db()
    assert run.collected_at is not None
    with pytest.raises(ValidationError, match="already"):
        services.run_cancel(run=run)
    with pytest.raises(ValidationError):
        lifecycle.run_transition_locked(run=run, to=Run.Status.QUEUED)


def test_a_prompt_needs_a_key_or_a_reference(transactional_db, make_endpoint):
    endpoint = make_endpoint("sim-mcq-acc70")
    with pytest.raises(ValidationError, match="reference must be an object"):
        services.run_create(endpoint=endpoint, prompts=[{"ref": [1], "prompt": "x"}], parser="text", name="t")
    with pytest.raises(ValidationError, match="needs a key"):
        services.run_create(endpoint=endpoint, prompts=[{"prompt": "x"}], parser="text", name="t")
    long_ref = {"uid": "x:" * 150}
    run = services.run_create(
        endpoint=endpoint, prompts=[{"ref": long_ref, "prompt": "x"}], parser="text", name="t", start=False
    )
    item = run.items.get()
    assert item.ref == long_ref and item.key.startswith("ref-") and len(item.key) <= 200
