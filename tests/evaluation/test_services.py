"""Evaluation runs end to end on the simulator: refusals, responses, judging, report, recomputation, adaptive
pairing, failures reported."""

import pytest
from django.core.exceptions import ValidationError

from annotation.releases import services as releases
from evaluation import services
from evaluation.models import Answer, EvaluationRun, OpenResponse, PairVerdict
from tests.factories import drive_evaluation_run


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
    drive_evaluation_run(run)
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
        drive_evaluation_run(run)
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
    drive_evaluation_run(run)
    run.refresh_from_db()
    report = run.report
    assert any("M02 responses ended failed" in note for note in report["notes"])
    assert not any(r["model"] == "M02" for r in report["objective"]["summary"])
    assert report["subjective"]["parsed"] == 0 and report["subjective"]["failed"] > 0
    assert report["subjective"]["ratings"] == []
    assert any("unparseable" in note for note in report["notes"])


def test_auto_pairing_is_the_default_and_first_judges_every_pair_once_where_that_costs_at_most_two_rounds(
    frozen_release, primary, make_endpoint, researcher
):
    from collections import defaultdict

    from evaluation.ratings import pairs_round_robin

    endpoints = [
        make_endpoint(m) for m in ("sim-mcq-acc90", "sim-style-template", "sim-style-list", "sim-style-concise")
    ]
    run = services.evaluation_run_create(
        name="auto", release=frozen_release, endpoints=endpoints, languages=["en"], user=researcher
    )
    assert run.pairing == EvaluationRun.Pairing.AUTO
    run.adaptive_rounds, run.adaptive_pairs_per_round = 2, 3
    run.save()
    services.evaluation_run_start(run=run, user=researcher, start=False)
    drive_evaluation_run(run)
    run.refresh_from_db()
    every_pair = {frozenset(p) for p in pairs_round_robin(sorted(m.code for m in run.models.all()))}
    first_round: dict[int, list[frozenset]] = defaultdict(list)
    second_round: dict[int, list[frozenset]] = defaultdict(list)
    items: dict[int, set[int]] = defaultdict(set)
    at_item: dict[int, list[frozenset]] = defaultdict(list)
    for v in PairVerdict.objects.filter(run=run, order="AB").select_related("item", "model_a", "model_b"):
        items[v.item.dimension_id].add(v.item_id)
        at_item[v.item_id].append(frozenset((v.model_a.code, v.model_b.code)))
        rounds = first_round if v.round == 1 else second_round
        rounds[v.item.dimension_id].append(frozenset((v.model_a.code, v.model_b.code)))
    # 6 pairs against 3 an item and round: one pass costs at most two rounds in every dimension, so round 1 judges
    # each pair exactly once there, spread over the dimension's items.
    assert items and all(len(every_pair) <= 2 * 3 * len(ids) for ids in items.values())
    for dimension in items:
        assert sorted(first_round[dimension], key=sorted) == sorted(every_pair, key=sorted)
        # Round 2 is the start of the second pass, not an adaptive round: no pair twice, none judged again at an item.
        assert len(second_round[dimension]) == len(set(second_round[dimension])) <= len(every_pair)
    assert all(len(pairs) == len(set(pairs)) for pairs in at_item.values())
    assert any(second_round.values())
    summary = run.report["subjective"]["pairing_summary"]
    assert summary["rule"] == "auto" and run.report["pairing"] == "auto"
