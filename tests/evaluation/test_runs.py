"""An evaluation run end to end on the simulator: responses, judging, report, recomputation, pages."""

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command

from calibration import services as calibration_services
from calibration.models import CalibrationRun, JudgeSelection
from evaluation import prompts, services
from evaluation.models import Answer, EvaluationRun, OpenResponse, PairVerdict
from items import services as item_services
from items.models import Benchmark
from llm import runner
from releases import services as releases
from tests.factories import make_item, mcq_content

ROOT_FIXTURE = "fixtures/demo_items.jsonl"


def numbered_mcq(n: int) -> dict:
    content = mcq_content()
    content["en"]["context"] = f"Scenario {n}: a friend cancels plans for the {n}th time."
    content["zh"]["context"] = f"情境{n}：朋友第{n}次取消了约定。"
    return content


@pytest.fixture
def frozen_release(transactional_db, taxonomy, lead):
    from django.conf import settings

    data = (settings.BASE_DIR / ROOT_FIXTURE).read_bytes()
    item_services.items_import(data=data, user=lead)
    # Forty more simple items, so that accuracy differences between simulated models are not down to luck.
    for n in range(40):
        make_item(uid=f"extra-{n:02d}", user=lead, status="accepted", content=numbered_mcq(n))
    release = releases.release_create(
        benchmark=Benchmark.objects.get(slug="facet"), version="0.9.0", title="t", user=lead
    )
    return releases.release_freeze(release=release, user=lead, override_reason="test sample")


@pytest.fixture
def primary(transactional_db, taxonomy, make_endpoint, researcher):
    prompt_set = calibration_services.judge_prompts_load_defaults(benchmark=Benchmark.objects.get(slug="facet"))
    judge = calibration_services.judge_create(
        name="judge", endpoint=make_endpoint("sim-judge-noise2"), prompt_set=prompt_set
    )
    from labelling.models import ComparisonSet

    run = CalibrationRun.objects.create(
        name="c",
        comparison_set=ComparisonSet.objects.create(name="s", benchmark=Benchmark.objects.get(slug="facet")),
        combine_rule="facet_tie",
        report_digest="0" * 64,
    )
    run.judge_runs.model  # noqa: B018  (a selection needs a run; verdict checks are bypassed below)
    JudgeSelection.objects.create(
        judge=judge, calibration_run=run, reason="test", selected_by=researcher, report_digest="0" * 64
    )
    return judge


def drive(run):
    """Work every queued LLM run in this process and advance the evaluation until it is done."""
    for _ in range(10):
        for link in run.llm_runs.filter(collected=False):
            runner.run_work(run_id=link.llm_run_id)
        if services.evaluation_run_advance(run=run, start=False) == EvaluationRun.Phase.DONE:
            return
        run.refresh_from_db()
    raise AssertionError("the run did not finish")


def test_option_order_is_stored_reproducible_and_differs_between_models():
    a = prompts.option_order(uid="x", model_code="M01", language="en", turn=0, seed=1, n=4)
    assert a == prompts.option_order(uid="x", model_code="M01", language="en", turn=0, seed=1, n=4)
    assert sorted(a) == [0, 1, 2, 3]
    orders = {
        tuple(prompts.option_order(uid="x", model_code=f"M{i}", language="en", turn=0, seed=1, n=4)) for i in range(8)
    }
    assert len(orders) > 1


def test_a_draft_release_and_a_missing_judge_are_refused(frozen_release, make_endpoint, lead):
    draft = releases.release_create(benchmark=frozen_release.benchmark, version="2.0.0", title="d", user=lead)
    endpoint = make_endpoint("sim-mcq-acc90")
    with pytest.raises(ValidationError) as exc:
        services.evaluation_run_create(name="r", release=draft, endpoints=[endpoint], languages=["en"], user=lead)
    assert any("draft" in m for m in exc.value.messages)
    assert any("No primary judge is selected" in m for m in exc.value.messages)
    assert not EvaluationRun.objects.exists()


def test_full_run_scores_models_judges_pairs_and_recomputes_identically(
    frozen_release, primary, make_endpoint, researcher
):
    endpoints = [make_endpoint("sim-mcq-acc90"), make_endpoint("sim-mcq-acc40"), make_endpoint("sim-style-list")]
    run = services.evaluation_run_create(
        name="full", release=frozen_release, endpoints=endpoints, languages=["en", "zh"], user=researcher, seed=3
    )
    estimate = services.evaluation_estimate(run=run)
    assert estimate["response_calls"] > 0 and estimate["judge_calls_round_robin"] > 0
    services.evaluation_run_start(run=run, user=researcher, start=False)
    drive(run)
    run.refresh_from_db()
    report = run.report
    summary = {(r["model"], r["language"]): r["micro"] for r in report["objective"]["summary"]}
    assert summary[("M01", "en")] > summary[("M02", "en")]  # 90% vs 40% accurate simulated models
    assert summary[("M03", "en")] == 0.0  # replies in list style never name an option
    assert any(u["model"] == "M03" for u in report["objective"]["unparsed"])
    overall = {
        (r["model"], r["language"]): r["mu"] for r in report["subjective"]["ratings"] if r["dimension"] == "overall"
    }
    assert overall[("M01", "en")] > overall[("M03", "en")]  # concise replies beat bullet lists for the judge
    assert report["subjective"]["judge_calls"] == PairVerdict.objects.filter(run=run).count() > 0
    assert {r["type"] for r in report["analysis"]["standing"]} <= {
        "cognition-dominant",
        "interaction-dominant",
        "context-dependent",
        "balanced",
        None,
    }
    digest = run.report_digest
    services.evaluation_report_compute(run=run)
    run.refresh_from_db()
    assert run.report_digest == digest
    assert Answer.objects.filter(run=run).exclude(option_order=[]).exists()
    assert OpenResponse.objects.filter(run=run, ok=True).count() == 3 * 2 * 8  # eight accepted open prompts
    assert any(r["significant"] for r in report["objective"]["paired"] if {r["a"], r["b"]} == {"M01", "M02"})
    gaps = {r["dimension"]: r for r in report["analysis"]["cross_lingual"]}
    assert "hidden_emotion_recognition" in gaps and gaps["hidden_emotion_recognition"]["mean_gap"] is not None


def test_report_page_drill_down_and_command(frozen_release, primary, make_endpoint, researcher, login, tmp_path):
    endpoints = [make_endpoint("sim-mcq-acc90"), make_endpoint("sim-style-concise")]
    run = services.evaluation_run_create(
        name="page", release=frozen_release, endpoints=endpoints, languages=["en"], user=researcher
    )
    services.evaluation_run_start(run=run, user=researcher, start=False)
    drive(run)
    client = login(researcher)
    html = client.get(f"/evaluation/{run.pk}/").content.decode()
    assert "<svg" in html and "Leaderboard" in html and "M01" in html
    assert client.get(f"/evaluation/{run.pk}/files/scatter.svg").content.startswith(b"<svg")
    assert b"\\begin{tabular}" in client.get(f"/evaluation/{run.pk}/files/leaderboard.tex").content
    assert client.get(f"/evaluation/{run.pk}/files/scatter.png").content.startswith(b"\x89PNG")
    assert client.get(f"/evaluation/{run.pk}/files/ratings.pdf").content.startswith(b"%PDF")
    drill = client.get(f"/evaluation/{run.pk}/drill/?model=M01&language=en").content.decode()
    assert "Objective answers" in drill and "Judge verdicts" in drill
    call_command("evaluation_report", str(run.pk), "--out", str(tmp_path / "out"), "--recompute")
    assert (tmp_path / "out" / "accuracy.csv").read_text().startswith("model,dimension,language")


def test_adaptive_pairing_uses_fewer_judge_calls_and_is_compared_with_round_robin(
    frozen_release, primary, make_endpoint, researcher
):
    endpoints = [
        make_endpoint(m) for m in ("sim-mcq-acc90", "sim-style-template", "sim-style-list", "sim-style-concise")
    ]
    runs = {}
    for pairing in ("round_robin", "adaptive"):
        run = services.evaluation_run_create(
            name=pairing,
            release=frozen_release,
            endpoints=endpoints,
            languages=["en"],
            user=researcher,
            pairing=pairing,
        )
        if pairing == "adaptive":
            run.adaptive_rounds, run.adaptive_pairs_per_round = 2, 2
            run.save()
        services.evaluation_run_start(run=run, user=researcher, start=False)
        drive(run)
        run.refresh_from_db()
        runs[pairing] = run
    full, adaptive = runs["round_robin"], runs["adaptive"]
    assert adaptive.report["subjective"]["judge_calls"] < full.report["subjective"]["judge_calls"]
    assert adaptive.report["subjective"]["rounds"] == 2
    from evaluation.selectors import pairing_comparison

    (row,) = pairing_comparison(run=adaptive)
    assert row["other"] == full and row["calls_other"] == full.report["subjective"]["judge_calls"]
    assert row["tau"] is not None and row["tau"] > 0


def test_a_failing_model_and_an_unparseable_judge_are_reported_not_averaged_over(
    frozen_release, primary, make_endpoint, researcher, simulator
):
    broken = make_endpoint("sim-mcq-acc90", base_url="http://127.0.0.1:9/v1")
    run = services.evaluation_run_create(
        name="faults",
        release=frozen_release,
        endpoints=[make_endpoint("sim-mcq-acc90"), broken, make_endpoint("sim-style-list")],
        languages=["en"],
        user=researcher,
    )
    services.evaluation_run_start(run=run, user=researcher, start=False)
    simulator.configure(garbage_rate=1.0)  # every reply, including the judge's, is unreadable from here on
    drive(run)
    run.refresh_from_db()
    report = run.report
    assert any("M02 responses ended failed" in note for note in report["notes"])
    assert not any(r["model"] == "M02" for r in report["objective"]["summary"])
    assert report["subjective"]["parsed"] == 0 and report["subjective"]["failed"] > 0
    assert report["subjective"]["ratings"] == []
    assert any("unparseable" in note for note in report["notes"])
