"""The evaluation report's tables built from plain facts, by hand-checked examples; no database."""

import pytest

from evaluation.report.facts import AnswerFacts, ModelFacts, ReportFacts, ResponseFacts, RunFacts, VerdictFacts
from evaluation.report.files import report_files_names
from evaluation.report.objective import level
from evaluation.report.tables import report_tables

CRISIS_OPTIONS = ["Level 1: no risk", "Level 3: passive ideation", "Level 5: imminent danger"]


def run_facts(**changes: object) -> RunFacts:
    values = {
        "name": "hand",
        "release": "facet 1.0.0",
        "judge": "careful",
        "protocol": "facet",
        "pairing": "round_robin",
        "adaptive": False,
        "combine_rule": "facet_tie",
        "margin_mapping": "linear",
        "seed": 7,
        "languages": ["en"],
        "notes": ["a note of the run"],
    }
    return RunFacts(**(values | changes))


def answer(model: str, item: str, chosen: int | None, *, turn: int = 0, **changes: object) -> AnswerFacts:
    """An answer to a four-option item whose first option is right, shown in the original order."""
    values = {
        "model": model,
        "item": item,
        "dimension": "emotion_understanding",
        "kind": "mcq",
        "crisis": False,
        "language": "en",
        "turn": turn,
        "option_order": [0, 1, 2, 3],
        "correct_index": 0,
        "chosen_index": chosen,
        "parsed": chosen is not None,
        "correct": chosen == 0,
    }
    return AnswerFacts(**(values | changes))


def crisis_answer(model: str, chosen: int) -> AnswerFacts:
    return answer(
        model,
        "cr",
        chosen,
        dimension="crisis_recognition",
        crisis=True,
        option_order=[0, 1, 2],
        correct_index=1,
        correct=chosen == 1,
        options=CRISIS_OPTIONS,
    )


def verdict(item_id: int, order: str, score: int | None, **changes: object) -> VerdictFacts:
    values = {
        "item_id": item_id,
        "item": f"open-{item_id}",
        "dimension": "emotion_matching",
        "language": "en",
        "model_a": "M01",
        "model_b": "M02",
        "order": order,
        "round": 0,
        "parsed": score is not None,
        "score": score,
    }
    return VerdictFacts(**(values | changes))


def facts(**run_changes: object) -> ReportFacts:
    # M01: a1-a3 right, the two-turn item right then wrong, the crisis level right. M02: a1 right, a2 wrong, a3
    # unparsed, both turns right, the crisis level overestimated.
    answers = [
        answer("M01", "a1", 0),
        answer("M01", "a2", 0),
        answer("M01", "a3", 0),
        answer("M01", "mt", 0, kind="multi_turn_choice"),
        answer("M01", "mt", 2, turn=1, kind="multi_turn_choice"),
        crisis_answer("M01", 1),
        answer("M02", "a1", 0),
        answer("M02", "a2", 1),
        answer("M02", "a3", None),
        answer("M02", "mt", 0, kind="multi_turn_choice"),
        answer("M02", "mt", 0, turn=1, kind="multi_turn_choice"),
        crisis_answer("M02", 2),
    ]
    verdicts = [verdict(10, "AB", 3), verdict(10, "BA", 2, round=1), verdict(11, "AB", None)]
    responses = [
        ResponseFacts(model=model, item_id=item_id, language="en", text=f"{model} answers prompt {item_id}.")
        for item_id in (10, 11)
        for model in ("M01", "M02")
    ]
    return ReportFacts(
        run=run_facts(**run_changes),
        models=[ModelFacts(code="M01", label="first"), ModelFacts(code="M02", label="second")],
        answers=answers,
        verdicts=verdicts,
        responses=responses,
    )


def rows(table: list[dict], **match: object) -> list[dict]:
    return [r for r in table if all(r[k] == v for k, v in match.items())]


def test_an_item_counts_as_correct_only_if_every_turn_is():
    objective = report_tables(facts())["objective"]
    (first,) = rows(objective["accuracy"], model="M01", dimension="emotion_understanding")
    (second,) = rows(objective["accuracy"], model="M02", dimension="emotion_understanding")
    assert (first["n"], first["correct"], first["accuracy"]) == (4, 3, 0.75)
    assert (second["n"], second["correct"], second["accuracy"]) == (4, 2, 0.5)
    assert first["ci_low"] < 0.75 < first["ci_high"]
    (summary,) = rows(objective["summary"], model="M01")
    assert summary["n"] == 5 and summary["micro"] == pytest.approx(0.8)
    assert summary["macro"] == pytest.approx((0.75 + 1.0) / 2)


def test_unparsed_answers_are_listed_and_noted():
    report = report_tables(facts())
    assert report["objective"]["unparsed"] == [{"model": "M02", "item": "a3", "language": "en", "turn": 0}]
    assert report["notes"][:2] == ["a note of the run", "1 objective answers could not be parsed and count as wrong."]


def test_two_turn_items_are_split_by_which_turn_was_right():
    multi_turn = report_tables(facts())["objective"]["multi_turn"]
    (first,) = rows(multi_turn, model="M01")
    (second,) = rows(multi_turn, model="M02")
    assert (first["n"], first["only_first"], first["both_right"]) == (1, 1, 0)
    assert (second["n"], second["both_right"], second["only_first"]) == (1, 1, 0)


def test_crisis_levels_are_read_from_the_options_chosen():
    crisis = report_tables(facts())["objective"]["crisis"]
    (first,) = rows(crisis, model="M01")
    (second,) = rows(crisis, model="M02")
    assert first["levels"] == [1, 2, 3, 4, 5]
    assert first["matrix"][2][2] == 1 and first["exact"]["successes"] == 1
    assert second["matrix"][2][4] == 1 and second["overestimated"]["successes"] == 1
    assert second["mean_signed_error"] == 2


def test_crisis_level_is_named_in_english_or_chinese():
    assert [level("Level 4: plan"), level("风险等级 2"), level("3级"), level("第5"), level("no level")] == [
        4,
        2,
        3,
        5,
        None,
    ]


def test_chance_is_one_over_the_options_shown_and_paired_differences_use_shared_items():
    objective = report_tables(facts())["objective"]
    chance = {r["dimension"]: r["chance"] for r in objective["discriminability"]}
    assert chance == {"crisis_recognition": pytest.approx(1 / 3), "emotion_understanding": 0.25}
    (pair,) = objective["paired"]
    assert (pair["a"], pair["b"], pair["n"]) == ("M01", "M02", 5)
    assert pair["diff"] == pytest.approx(0.8 - 0.4)
    assert 0 <= pair["p"] <= pair["p_adjusted"] <= 1


def test_position_bias_is_counted_per_number_of_options():
    position = report_tables(facts())["objective"]["position_bias"]
    assert sorted((r["model"], r["options"]) for r in position) == [
        ("M01", 3),
        ("M01", 4),
        ("M02", 3),
        ("M02", 4),
    ]


def test_both_orders_make_one_pair_and_an_unparsed_reply_drops_its_pair():
    report = report_tables(facts())
    subjective = report["subjective"]
    assert subjective["combined_pairs"] == {"emotion_matching|en": 1, "overall|en": 1}
    assert (subjective["judge_calls"], subjective["parsed"], subjective["failed"], subjective["rounds"]) == (3, 2, 1, 1)
    assert {(r["model"], r["dimension"]) for r in subjective["ratings"]} == {
        (m, d) for m in ("M01", "M02") for d in ("emotion_matching", "overall")
    }
    (cell,) = subjective["win_rates"]
    assert (cell["a"], cell["b"], cell["wins"], cell["losses"]) == ("M01", "M02", 1, 0)
    assert "1 judge replies were unparseable; their pairs are left out, not guessed." in report["notes"]
    assert subjective["pairing_summary"] is None


def test_an_adaptive_run_counts_the_calls_a_round_robin_would_make():
    summary = report_tables(facts(pairing="adaptive", adaptive=True))["subjective"]["pairing_summary"]
    # Two prompts judged, two models answering each: round-robin asks one pair in two orders on each.
    assert summary["round_robin_calls"] == 4 and summary["judge_calls"] == 3 and summary["calls_saved"] == 1
    assert summary["share_of_round_robin"] == 0.75
    assert summary["rule"] == "adaptive"
    auto = report_tables(facts(pairing="auto", adaptive=True))["subjective"]["pairing_summary"]
    assert auto["rule"] == "auto" and auto["judge_calls"] == 3
    # The baseline beside it: round-robin stopped early at 3 calls finishes one of the two prompts (2 calls each);
    # the run judged its one pair on both.
    assert (summary["strata"], summary["stopped_early_strata"]) == (2, 1)
    assert (summary["pairs"], summary["fewest_strata_per_pair"], summary["most_strata_per_pair"]) == (1, 2, 2)


def test_the_stopped_early_baseline_counts_strata_per_pair_of_models():
    # Three models on three prompts: round-robin needs 6 calls a prompt. The run judged M01-M02 on all three
    # prompts (one order each) and M02-M03 on one: 4 calls, less than one prompt of round-robin.
    verdicts = [verdict(i, "AB", 1) for i in (10, 11, 12)] + [verdict(10, "BA", -1, model_a="M03", model_b="M02")]
    responses = [
        ResponseFacts(model=m, item_id=i, language="en", text="a reply")
        for i in (10, 11, 12)
        for m in ("M01", "M02", "M03")
    ]
    report = report_tables(
        ReportFacts(
            run=run_facts(pairing="adaptive", adaptive=True),
            models=[ModelFacts(code=c, label=c) for c in ("M01", "M02", "M03")],
            answers=[],
            verdicts=verdicts,
            responses=responses,
        )
    )
    summary = report["subjective"]["pairing_summary"]
    assert (summary["round_robin_calls"], summary["strata"], summary["stopped_early_strata"]) == (18, 3, 0)
    assert (summary["pairs"], summary["fewest_strata_per_pair"], summary["most_strata_per_pair"]) == (2, 1, 3)


def test_standing_names_every_model_and_the_report_states_the_run():
    report = report_tables(facts())
    standing = report["analysis"]["standing"]
    assert [(r["model"], r["label"], r["accuracy"]) for r in standing] == [
        ("M01", "first", pytest.approx(0.8)),
        ("M02", "second", pytest.approx(0.4)),
    ]
    assert all(r["rating"] is not None for r in standing)
    assert [r["n"] for r in report["analysis"]["style"]] == [2, 2]
    assert report["analysis"]["cross_lingual"] == []
    assert (report["run"], report["release"], report["judge"], report["seed"]) == ("hand", "facet 1.0.0", "careful", 7)
    assert report["models"] == [{"code": "M01", "label": "first"}, {"code": "M02", "label": "second"}]
    # The two-turn item "mt" is a multi-turn choice probe: the report has the EiCAP analyses and their files.
    assert report["files"] == report_files_names(["en"], eicap_languages=["en"])


def test_the_same_facts_give_the_same_report():
    assert report_tables(facts()) == report_tables(facts())
