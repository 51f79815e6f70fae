"""Judge calibration end to end against simulated judges: runs, verdicts, report, suggestion, selection."""

import json

import pytest
from django.core.exceptions import ValidationError

from annotation.labelling.models import Comparison, ExpertLabel
from calibration import services
from calibration.models import JudgeVerdict
from tests.factories import make_judge, make_llm_endpoint, work_llm_run


def test_calibration_ranks_simulated_judges_and_records_the_selection(
    transactional_db, labelled_set, make_endpoint, researcher
):
    judges = [
        make_judge(name=name, endpoint=make_endpoint(model))
        for name, model in [
            ("careful", "sim-judge-noise2"),
            ("noisy", "sim-judge-noise40"),
            ("biased", "sim-judge-noise2-bias25"),
        ]
    ]
    run = services.calibration_run_start(
        name="first",
        comparison_set=labelled_set,
        judges=judges,
        combine_rule="facet_tie",
        user=researcher,
        bootstrap=200,
        start=False,
    )
    for judge_run in run.judge_runs.all():
        work_llm_run(judge_run.llm_run_id)
    n = Comparison.objects.filter(comparison_set=labelled_set).count()
    # Each judge's verdicts were stored by the calibration collector as its run finished, exactly once.
    assert run.verdicts.filter(parsed=True).count() == 6 * n and not run.verdicts.filter(parsed=False).exists()
    assert services.calibration_run_status(run=run) == "finished"
    first = run.judge_runs.first()
    assert services.calibration_verdicts_collect(llm_run=first.llm_run) == {"parsed": 0, "failed": 0}
    assert JudgeVerdict.objects.filter(calibration_run=run).count() == 6 * n
    # The judge saw anonymised responses: no model name reached any prompt.
    for verdict in JudgeVerdict.objects.filter(calibration_run=run).select_related("call")[:10]:
        assert "m-concise" not in json.dumps(verdict.call.request)

    report = services.calibration_report_compute(run=run)
    overall = report["strata"][0]
    alpha = {name: row["alpha_with_judge"]["value"] for name, row in overall["judges"].items()}
    assert alpha["careful"] > alpha["noisy"]
    flips = {name: row["position_bias"]["flip_rate"]["value"] for name, row in overall["judges"].items()}
    assert flips["biased"] > flips["careful"]
    assert report["suggestion"]["judge"] == "careful"
    assert [s["key"] for s in report["strata"]] == ["overall", "dimension:emotion_matching", "language:en"]
    assert overall["baseline"]["n_labels"] == 3 * n

    careful = judges[0]
    with pytest.raises(ValidationError, match="Say why"):
        services.judge_select(run=run, judge=careful, user=researcher, reason=" ", report_digest=run.report_digest)
    selection = services.judge_select(
        run=run, judge=careful, user=researcher, reason="best lower bound", report_digest=run.report_digest
    )
    assert services.primary_judge() == selection and selection.report_digest == run.report_digest


def test_a_judge_without_prompts_for_a_dimension_is_refused(taxonomy, labelled_set, researcher, db):
    endpoint = make_llm_endpoint(name="e", base_url="http://127.0.0.1:9/v1", model="sim-judge")
    other = services.judge_prompt_create(
        dimension=labelled_set.benchmark.dimensions.get(code="emotion_deepening"),
        criteria="c",
        analysis_steps="a",
        length_penalty="l",
        user=None,
    )
    prompt_set = services.prompt_set_create(name="partial", judge_prompts=[other], user=None)
    judge = services.judge_create(name="partial", endpoint=endpoint, prompt_set=prompt_set)
    with pytest.raises(ValidationError, match="has no prompt for: emotion_matching"):
        services.calibration_run_start(
            name="x", comparison_set=labelled_set, judges=[judge], combine_rule="facet_tie", user=researcher
        )
    assert not ExpertLabel.objects.filter(assignment__comparison__comparison_set=None).exists()


def test_a_judge_with_no_parseable_verdict_is_reported_and_cannot_be_selected(
    transactional_db, labelled_set, make_endpoint, researcher, simulator
):
    judge = make_judge(name="mute", endpoint=make_endpoint("sim-judge-noise2"))
    run = services.calibration_run_start(
        name="mute",
        comparison_set=labelled_set,
        judges=[judge],
        combine_rule="facet_tie",
        user=researcher,
        bootstrap=20,
        start=False,
    )
    simulator.configure(garbage_rate=1.0)
    work_llm_run(run.judge_runs.get().llm_run_id)
    report = services.calibration_report_compute(run=run)
    row = report["strata"][0]["judges"]["mute"]
    assert row["parse_failures"] == row["verdicts_attempted"] > 0
    assert row["alpha_with_judge"]["value"] is None and row["alpha_with_judge"]["undefined_reason"]
    assert report["suggestion"]["judge"] is None
    with pytest.raises(ValidationError, match="no parseable verdicts"):
        services.judge_select(run=run, judge=judge, user=researcher, reason="x", report_digest=run.report_digest)
