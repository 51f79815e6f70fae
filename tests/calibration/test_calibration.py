"""Judge calibration end to end against simulated judges: runs, verdicts, report, suggestion, selection."""

import json

import numpy as np
import pytest
from django.core.exceptions import ValidationError

from calibration import prompts, services
from calibration.models import JudgeSelection, JudgeVerdict
from items.models import Benchmark
from labelling import services as comparisons
from labelling.models import Comparison, ExpertLabel, LabelAssignment
from labelling.pairwise import shown_choice
from llm import runner
from llm.simulation import quality_score
from tests.factories import make_item

REPLIES = {
    "concise": "Losing him after fourteen years leaves a real hole. What do you miss most in the evenings now?",
    "template": "I'm really sorry to hear that. It's completely understandable to feel this way. Remember, you are "
    "not alone. It's important to take care of yourself.",
    "list": "Here are some steps:\n1. Rest\n2. Talk to friends\n3. Exercise\n4. Eat well\n5. Consider therapy",
    "mixed": "That sounds hard. It's important to rest. Maybe call a friend tonight and tell them about him?",
}


def test_verdict_parsing_and_canonical_orientation():
    assert prompts.parse_verdict("Reasoning...\nVerdict: [[B]] ++++") == prompts.Verdict("B", 4)
    assert prompts.parse_verdict("结论：[[TIE]]") == prompts.Verdict("TIE", 0)
    for bad in ("Verdict: [[A]]", "Verdict: [[A]] ++++++", "The answer is A", "Verdict: [[TIE]] +"):
        with pytest.raises(prompts.VerdictError):
            prompts.parse_verdict(bad)
    assert prompts.canonical_from_order(prompts.Verdict("A", 3), "AB") == 3
    assert prompts.canonical_from_order(prompts.Verdict("A", 3), "BA") == -3
    assert prompts.canonical_from_order(prompts.Verdict("B", 2), "BA") == 2


@pytest.fixture
def labelled_set(taxonomy, lead, make_user):
    """Four open prompts x four reply styles, labelled by three experts who prefer by the hidden quality."""
    experts = [make_user("expert", username=f"x{i}") for i in range(3)]
    rows = []
    for n in range(4):
        item = make_item(uid=f"cal-{n}", kind="open_prompt", dimension="emotion_matching", user=lead, status="accepted")
        for style, text in REPLIES.items():
            rows.append({"item": item.uid, "language": "en", "model": f"m-{style}", "text": f"{text} ({n})"})
    comparisons.responses_import(data="".join(json.dumps(r) + "\n" for r in rows).encode(), user=lead)
    cs = comparisons.comparison_set_build(
        name="cal", benchmark=Benchmark.objects.get(slug="facet"), experts=experts, user=lead, languages=("en",), seed=3
    )
    rng = np.random.default_rng(0)
    for assignment in LabelAssignment.objects.filter(comparison__comparison_set=cs).select_related(
        "comparison__response_a", "comparison__response_b"
    ):
        c = assignment.comparison
        diff = quality_score(c.response_a.text) - quality_score(c.response_b.text) + rng.normal(0, 4)
        score = 0 if abs(diff) < 3 else int(np.sign(diff)) * min(5, 1 + int(abs(diff) // 10))
        winner, margin = shown_choice(shown_order=assignment.shown_order, score=score)
        comparisons.label_submit(comparison=c, expert=assignment.expert, winner=winner, margin=margin or None)
    return cs


def test_calibration_ranks_simulated_judges_and_records_the_selection(
    transactional_db, labelled_set, make_endpoint, researcher
):
    prompt_set = services.judge_prompts_load_defaults(benchmark=Benchmark.objects.get(slug="facet"))
    judges = [
        services.judge_create(name=name, endpoint=make_endpoint(model), prompt_set=prompt_set)
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
        runner.run_work(run_id=judge_run.llm_run_id)
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


def test_report_page_downloads_and_selection_through_the_ui(
    transactional_db, labelled_set, make_endpoint, researcher, login
):
    prompt_set = services.judge_prompts_load_defaults(benchmark=Benchmark.objects.get(slug="facet"))
    judge = services.judge_create(name="careful", endpoint=make_endpoint("sim-judge-noise2"), prompt_set=prompt_set)
    run = services.calibration_run_start(
        name="ui",
        comparison_set=labelled_set,
        judges=[judge],
        combine_rule="summed",
        user=researcher,
        bootstrap=50,
        start=False,
    )
    runner.run_work(run_id=run.judge_runs.get().llm_run_id)
    client = login(researcher)
    assert client.post(f"/calibration/runs/{run.pk}/report/").status_code == 302
    html = client.get(f"/calibration/runs/{run.pk}/").content.decode()
    assert "<svg" in html and "Suggested primary judge" in html and "careful" in html
    csv_text = client.get(f"/calibration/runs/{run.pk}/report.csv").content.decode()
    assert csv_text.splitlines()[0].startswith("stratum,rater,alpha")
    assert "\\begin{tabular}" in client.get(f"/calibration/runs/{run.pk}/report.tex").content.decode()
    assert json.loads(client.get(f"/calibration/runs/{run.pk}/report.json").content)["judges"] == ["careful"]
    client.post(f"/calibration/runs/{run.pk}/select/", {"judge": judge.pk, "reason": "only candidate"})
    assert JudgeSelection.objects.get().judge == judge


def test_a_judge_without_prompts_for_a_dimension_is_refused(taxonomy, labelled_set, researcher, db):
    from llm.models import Endpoint

    endpoint = Endpoint.objects.create(name="e", base_url="http://127.0.0.1:9/v1", model="sim-judge")
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
    prompt_set = services.judge_prompts_load_defaults(benchmark=Benchmark.objects.get(slug="facet"))
    judge = services.judge_create(name="mute", endpoint=make_endpoint("sim-judge-noise2"), prompt_set=prompt_set)
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
    runner.run_work(run_id=run.judge_runs.get().llm_run_id)
    report = services.calibration_report_compute(run=run)
    row = report["strata"][0]["judges"]["mute"]
    assert row["parse_failures"] == row["verdicts_attempted"] > 0
    assert row["alpha_with_judge"]["value"] is None and row["alpha_with_judge"]["undefined_reason"]
    assert report["suggestion"]["judge"] is None
    with pytest.raises(ValidationError, match="no parseable verdicts"):
        services.judge_select(run=run, judge=judge, user=researcher, reason="x", report_digest=run.report_digest)
