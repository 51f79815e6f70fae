"""Evaluation pages: the report with its charts and files, the drill-down, and the report command."""

import pytest
from django.core.management import call_command

from evaluation import selectors
from tests.factories import make_evaluation_run


def test_report_page_drill_down_and_command(
    frozen_release, primary, make_endpoint, researcher, login, tmp_path, monkeypatch
):
    endpoints = [make_endpoint("sim-mcq-acc90"), make_endpoint("sim-style-concise")]
    run = make_evaluation_run(
        name="page", release=frozen_release, endpoints=endpoints, languages=["en"], user=researcher
    )
    client = login(researcher)
    html = client.get(f"/evaluation/{run.pk}/").content.decode()
    assert 'src="data:image/svg+xml;base64,' in html and "Leaderboard" in html and "M01" in html
    # Judged in rounds (auto, the default): the report sets the run beside round-robin stopped early at its cost.
    assert run.pairing == "auto" and "Round-robin stopped early at the same cost would judge every pair" in html
    chinese = client.get(f"/evaluation/{run.pk}/", headers={"accept-language": "zh-hans"}).content.decode()
    assert "在相同成本下提前停止的循环赛" in chinese
    assert b"<svg" in client.get(f"/evaluation/{run.pk}/files/scatter.svg").content
    assert b"\\begin{tabular}" in client.get(f"/evaluation/{run.pk}/files/leaderboard.tex").content
    assert client.get(f"/evaluation/{run.pk}/files/scatter.png").content.startswith(b"\x89PNG")
    assert client.get(f"/evaluation/{run.pk}/files/ratings.pdf").content.startswith(b"%PDF")
    drill = client.get(f"/evaluation/{run.pk}/drill/?model=M01&language=en").content.decode()
    assert "Objective answers" in drill and "Judge verdicts" in drill
    # The page shows a page of each list at a time, with links to the next and previous pages that keep the filters.
    monkeypatch.setattr(selectors, "EVIDENCE_PAGE_HTML", {"answers": 1, "opens": 1, "verdicts": 1})
    first = client.get(f"/evaluation/{run.pk}/drill/?model=M01&language=en").content.decode()
    assert first.count("/llm/calls/") <= 1 and "model=M01&amp;language=en&amp;page=2" in first and "page=0" not in first
    second = client.get(f"/evaluation/{run.pk}/drill/?model=M01&language=en&page=2").content.decode()
    assert "model=M01&amp;language=en&amp;page=1" in second
    call_command("evaluation_report", str(run.pk), "--out", str(tmp_path / "out"), "--recompute")
    assert (tmp_path / "out" / "accuracy.csv").read_text().startswith("model,dimension,language")


def test_the_run_page_sets_and_raises_the_budget(frozen_release, primary, make_endpoint, researcher, login):
    from decimal import Decimal

    from evaluation import services

    run = services.evaluation_run_create(
        name="budgeted",
        release=frozen_release,
        endpoints=[make_endpoint("sim-mcq-acc90")],
        languages=["en"],
        user=researcher,
    )
    client = login(researcher)
    page = client.get(f"/evaluation/{run.pk}/").content.decode()
    assert f'action="/evaluation/{run.pk}/budget/"' in page
    client.post(f"/evaluation/{run.pk}/budget/", {"budget": "2.5"})
    run.refresh_from_db()
    assert run.budget_pool.budget == Decimal("2.5")
    refused = client.post(f"/evaluation/{run.pk}/budget/", {"budget": "-1"}, follow=True)
    run.budget_pool.refresh_from_db()
    assert run.budget_pool.budget == Decimal("2.5")
    assert [str(m) for m in refused.context["messages"]]


def test_the_run_that_finishes_draws_its_page_figures_for_the_first_reader(
    frozen_release, primary, make_endpoint, researcher, login, monkeypatch, django_capture_on_commit_callbacks
):
    from evaluation import services
    from evaluation.report import files
    from tests.factories import drive_evaluation_run

    endpoints = [make_endpoint("sim-mcq-acc90"), make_endpoint("sim-style-concise")]
    run = services.evaluation_run_create(
        name="drawn", release=frozen_release, endpoints=endpoints, languages=["en"], user=researcher
    )
    services.evaluation_run_start(run=run, user=researcher, start=False)
    with django_capture_on_commit_callbacks(execute=True):
        drive_evaluation_run(run)
    # Drawn in both interface languages when the report was stored: the page only reads them.
    monkeypatch.setattr(files, "figures", lambda *args, **kwargs: pytest.fail("the page drew a figure"))
    client = login(researcher)
    assert 'src="data:image/svg+xml;base64,' in client.get(f"/evaluation/{run.pk}/").content.decode()
    client.cookies["django_language"] = "zh-hans"
    chinese = client.get(f"/evaluation/{run.pk}/").content.decode()
    assert 'lang="zh-hans"' in chinese and 'src="data:image/svg+xml;base64,' in chinese


def test_the_run_page_pauses_and_resumes_a_running_evaluation(
    frozen_release, primary, make_endpoint, researcher, login, make_user
):
    from evaluation import services
    from llm.models import Run

    run = services.evaluation_run_create(
        name="pausable",
        release=frozen_release,
        endpoints=[make_endpoint("sim-mcq-acc90")],
        languages=["en"],
        user=researcher,
    )
    services.evaluation_run_start(run=run, user=researcher)
    client = login(researcher)
    page = client.get(f"/evaluation/{run.pk}/").content.decode()
    assert f'action="/evaluation/{run.pk}/pause/"' in page and 'id="resume-run"' not in page

    paused = client.post(f"/evaluation/{run.pk}/pause/", follow=True)
    assert run.llm_runs.filter(llm_run__status=Run.Status.PAUSED).count() == run.llm_runs.count() > 0
    page = paused.content.decode()
    assert f'action="/evaluation/{run.pk}/resume/"' in page and 'id="pause-run"' not in page
    refused = client.post(f"/evaluation/{run.pk}/pause/", follow=True)
    assert "there is nothing to pause" in " ".join(str(m) for m in refused.context["messages"])

    client.post(f"/evaluation/{run.pk}/resume/")
    assert not run.llm_runs.filter(llm_run__status=Run.Status.PAUSED).exists()

    # The view checks the permission itself: a user without run_evaluation gets the 403 page, and nothing changes.
    assert login(make_user()).post(f"/evaluation/{run.pk}/pause/").status_code == 403
    assert not run.llm_runs.filter(llm_run__status=Run.Status.PAUSED).exists()


def test_cancelling_an_evaluations_llm_run_on_its_page_leaves_the_report_to_a_worker(
    frozen_release, primary, make_endpoint, researcher, login, monkeypatch
):
    from django_tasks_db.compat import TaskResultStatus
    from django_tasks_db.models import DBTaskResult

    from evaluation import services
    from evaluation.models import EvaluationRun
    from evaluation.report import files
    from llm import collection, tasks
    from llm.models import Run
    from tests.factories import run_queued_collections

    run = services.evaluation_run_create(
        name="cancelled",
        release=frozen_release,
        endpoints=[make_endpoint("sim-mcq-acc90")],
        languages=["en"],
        user=researcher,
    )
    services.evaluation_run_start(run=run, user=researcher, start=False)
    llm_run = run.llm_runs.get().llm_run
    client = login(researcher)
    with monkeypatch.context() as patched:
        # Neither a collector nor a figure may run while the request is answered.
        patched.setattr(files, "figures", lambda *args, **kwargs: pytest.fail("the request drew a figure"))
        patched.setattr(collection, "run_collect", lambda **kwargs: pytest.fail("the request collected"))
        response = client.post(f"/llm/runs/{llm_run.pk}/cancel/")
    assert response.status_code == 302
    llm_run.refresh_from_db()
    run.refresh_from_db()
    assert llm_run.status == Run.Status.CANCELLED and llm_run.collected_at is None
    assert run.report is None and run.phase == EvaluationRun.Phase.RESPONSES
    queued = DBTaskResult.objects.get(task_path=tasks.run_collect.module_path, status=TaskResultStatus.READY)
    assert queued.args_kwargs["args"] == [llm_run.pk]
    # A worker collects the run: the evaluation stores its report (with what the cancelled run left, nothing).
    assert run_queued_collections() == 1
    llm_run.refresh_from_db()
    run.refresh_from_db()
    assert llm_run.collected_at is not None and llm_run.collect_error == ""
    assert run.phase == EvaluationRun.Phase.DONE and run.report is not None and run.report_digest
    queued.refresh_from_db()
    assert queued.status == TaskResultStatus.SUCCESSFUL


def test_the_drill_down_shows_each_answer_in_the_letters_the_model_saw(
    frozen_release, primary, make_endpoint, researcher, login
):
    import re

    from evaluation.models import Answer

    run = make_evaluation_run(
        name="letters",
        release=frozen_release,
        endpoints=[make_endpoint("sim-mcq-acc90")],
        languages=["en"],
        user=researcher,
    )
    answer = (
        Answer.objects.filter(run=run, parsed=True)
        .exclude(option_order=[0, 1, 2, 3])
        .select_related("revision")
        .first()
    )
    assert answer is not None, "some answer saw its options shuffled"
    shown = selectors.answer_options_shown(answer)
    options = (
        answer.revision.content["en"].get("options") or answer.revision.content["en"]["turns"][answer.turn]["options"]
    )
    assert [o["text"] for o in shown] == [options[i] for i in answer.option_order]
    chosen = next(o for o in shown if o["chosen"])
    # The letter the model saw is the position of the item's option in the order it was shown.
    assert chosen["seen_as"] == chr(ord("A") + answer.option_order.index(answer.chosen_index))
    assert chosen["letter"] == chr(ord("A") + answer.chosen_index)
    assert sum(o["key"] for o in shown) == 1
    page = login(researcher).get(f"/evaluation/{run.pk}/drill/?model=M01&language=en").content.decode()
    assert "Options as the model saw them" in page
    assert f"{chosen['letter']} (shown as {chosen['seen_as']})" in page
    assert re.search(r"A=[A-D] B=[A-D]", page)


def test_the_report_names_its_settings_and_reasons_in_the_readers_language(
    frozen_release, primary, make_endpoint, researcher, login
):
    run = make_evaluation_run(
        name="named",
        release=frozen_release,
        endpoints=[make_endpoint("sim-mcq-acc90"), make_endpoint("sim-style-concise")],
        languages=["en"],
        user=researcher,
    )
    client = login(researcher)
    english = client.get(f"/evaluation/{run.pk}/").content.decode()
    assert "square root, f(k) = √k" in english and "an inconsistent pair counts as a tie" in english
    client.cookies["django_language"] = "zh-hans"
    chinese = client.get(f"/evaluation/{run.pk}/").content.decode()
    for code in ("“sqrt”", "“facet_tie”", "a variable is constant", "needs at least three paired values"):
        assert code not in chinese, code
    assert "平方根" in chinese


def test_a_run_just_finished_shows_its_report_while_the_worker_draws_its_figures(
    frozen_release, primary, make_endpoint, researcher, login, monkeypatch
):
    """The poll that finds the report right after the worker stored it does not draw the figures again (seconds
    of matplotlib on the request): it shows the report, says the figures are coming and keeps polling; once the
    worker has drawn them they are read; if it never does, the page draws them itself after a while."""
    from datetime import timedelta

    from django.core.cache import cache
    from django.utils import timezone

    from evaluation import views
    from evaluation.models import EvaluationRun
    from evaluation.report import files
    from evaluation.services.runs import figures_draw

    endpoints = [make_endpoint("sim-mcq-acc90"), make_endpoint("sim-style-concise")]
    run = make_evaluation_run(name="fresh", release=frozen_release, endpoints=endpoints, user=researcher)
    cache.clear()  # as if the worker had not drawn them yet
    monkeypatch.setattr(views, "figures_cache_shared", lambda: True)
    client = login(researcher)
    live = {"HTTP_HX_REQUEST": "true"}
    with monkeypatch.context() as patched:
        patched.setattr(files, "figures", lambda *args, **kwargs: pytest.fail("the request drew a figure"))
        pending = client.get(f"/evaluation/{run.pk}/?part=live", **live).content.decode()
        full = client.get(f"/evaluation/{run.pk}/").content.decode()
    for html in (pending, full):
        assert 'id="figures-pending"' in html and 'hx-get="?part=live"' in html and "M01" in html
        assert "data:image/svg+xml" not in html
    figures_draw(run_id=run.pk)
    drawn = client.get(f"/evaluation/{run.pk}/?part=live", **live).content.decode()
    assert "data:image/svg+xml" in drawn and 'id="figures-pending"' not in drawn and "hx-get" not in drawn
    cache.clear()
    EvaluationRun.objects.filter(pk=run.pk).update(finished_at=timezone.now() - views.FIGURES_WAIT - timedelta(1))
    late = client.get(f"/evaluation/{run.pk}/").content.decode()
    assert "data:image/svg+xml" in late and 'id="figures-pending"' not in late
