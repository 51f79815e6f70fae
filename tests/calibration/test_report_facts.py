"""The calibration report built from plain facts (labels, verdicts, costs, served draws); no database."""

from decimal import Decimal

import pytest

from calibration.report import report_from_facts
from calibration.report_facts import CalibrationFacts, ComparisonFacts, LabelFacts, VerdictFacts

# Four comparisons in two dimensions and two languages; the experts prefer A on the first two and B on the others.
COMPARISONS = [
    ComparisonFacts(id=11, item_id=1, dimension="emotion_matching", language="en", text_a="a b c", text_b="a"),
    ComparisonFacts(id=12, item_id=1, dimension="emotion_matching", language="zh", text_a="很好很好", text_b="好"),
    ComparisonFacts(id=13, item_id=2, dimension="support", language="en", text_a="a", text_b="a b c d"),
    ComparisonFacts(id=14, item_id=2, dimension="support", language="zh", text_a="好", text_b="很好很好很好"),
]
EXPERT_SCORES = {"x1": [3, 2, -2, -3], "x2": [2, 2, -1, -2]}


def labels() -> list[LabelFacts]:
    return [
        LabelFacts(comparison_id=c.id, expert=expert, score=score, seconds_spent=seconds)
        for expert, scores in EXPERT_SCORES.items()
        for c, score, seconds in zip(COMPARISONS, scores, (30, 40, None, 50), strict=True)
    ]


def verdicts(judge: str, scores: list[int | None]) -> list[VerdictFacts]:
    """Verdicts in both orders, the same score in each (canonical orientation); None: an unparsed reply."""
    return [
        VerdictFacts(judge=judge, comparison_id=c.id, order=order, parsed=score is not None, score=score)
        for c, score in zip(COMPARISONS, scores, strict=True)
        for order in ("AB", "BA")
    ]


def facts(**changes: object) -> CalibrationFacts:
    values = {
        "name": "hand",
        "comparison_set": "set",
        "combine_rule": "facet_tie",
        "seed": 3,
        "bootstrap": 20,
        "comparisons": COMPARISONS,
        "labels": labels(),
        "judges": ["careful", "contrary", "panel"],
        "verdicts": verdicts("careful", [2, 2, -2, None]) + verdicts("contrary", [-2, -2, 2, 2]),
        "spent": {"careful": Decimal("0.010"), "contrary": Decimal("0.002")},
        "juries": {"panel": ["careful", "contrary", "absent"]},
    }
    return CalibrationFacts(**(values | changes))


def test_the_report_names_experts_judges_and_costs_a_jury_by_its_members():
    report = report_from_facts(facts())
    assert report["experts"] == ["x1", "x2"] and report["judges"] == ["careful", "contrary", "panel"]
    # The member without a run of its own costs nothing.
    assert report["costs"] == {"careful": "0.010", "contrary": "0.002", "panel": "0.012"}
    assert (report["run"], report["comparison_set"], report["seed"], report["n_boot"]) == ("hand", "set", 3, 20)
    assert report["design"] is None


def test_strata_are_overall_then_each_dimension_then_each_language():
    strata = report_from_facts(facts())["strata"]
    assert [(s["key"], s["label"]) for s in strata] == [
        ("overall", "overall"),
        ("dimension:emotion_matching", "emotion_matching"),
        ("dimension:support", "support"),
        ("language:en", "en"),
        ("language:zh", "zh"),
    ]
    overall = strata[0]
    assert overall["baseline"]["n_comparisons"] == 4 and overall["baseline"]["n_labels"] == 8
    assert [s["baseline"]["n_comparisons"] for s in strata[1:]] == [2, 2, 2, 2]


def test_verdicts_count_attempts_failures_and_agreement_with_the_majority():
    judges = report_from_facts(facts())["strata"][0]["judges"]
    careful, contrary, panel = judges["careful"], judges["contrary"], judges["panel"]
    assert (careful["verdicts_attempted"], careful["parse_failures"]) == (8, 2)
    assert careful["parse_failure_rate"] == 0.25
    assert careful["confusion_vs_majority"] == [[1, 0, 0], [0, 0, 0], [0, 0, 2]]
    assert careful["agreement"]["value"] == 1.0 and contrary["agreement"]["value"] == 0.0
    # The jury gave no verdict: nothing attempted, nothing failed.
    assert (panel["verdicts_attempted"], panel["parse_failures"], panel["parse_failure_rate"]) == (0, 0, None)


def test_the_suggestion_excludes_the_judge_significantly_worse_than_the_experts():
    suggestion = report_from_facts(facts())["suggestion"]
    assert suggestion["judge"] == "careful"
    assert [line.split(":")[0] for line in suggestion["reasoning"]] == [
        "careful",
        "contrary",
        "panel",
        "Highest lower bound",
    ]
    assert "significantly worse, excluded" in suggestion["reasoning"][1]


def test_planning_reads_labels_per_comparison_and_the_median_time_per_label():
    planning = report_from_facts(facts())["planning"]
    assert planning["labels_per_comparison"] == 2.0 and planning["seconds_per_label"] == 40.0
    # Agreement with the experts' majority where the combined verdict is defined (one pair of careful's is not).
    assert {name: (j["value"], j["n"]) for name, j in planning["judges"].items()} == {
        "careful": (1.0, 3),
        "contrary": (0.0, 4),
        "panel": (None, 0),
    }
    untimed = [LabelFacts(label.comparison_id, label.expert, label.score) for label in labels()]
    assert report_from_facts(facts(labels=untimed))["planning"]["seconds_per_label"] is None


def test_an_active_set_uses_each_stratum_s_draws_up_to_its_first_unlabelled_one():
    served = [(11, 0.5), (13, 0.25), (12, 1.0), (14, 0.5)]
    design = report_from_facts(facts(served=served))["design"]
    assert design["n_served_used"] == 4 and design["n_strata"] == 4 and design["strata_served"] == 4
    assert set(design["judges"]) == {"careful", "contrary", "panel"}
    assert design["judges"]["contrary"]["value"] == pytest.approx(0.0) and design["choice"] == "careful"
    unlabelled = [label for label in labels() if label.comparison_id != 11]
    partial = report_from_facts(facts(served=served, labels=unlabelled))["design"]
    assert partial["n_served_used"] == 3 and partial["strata_served"] == 3
