"""Parity and shape checks of bilingual content (pure functions, no database)."""

from annotation.items.content import check_parity, content_hash, normalise_content, validate_content
from tests.factories import mcq_content


def codes(issues):
    return sorted(issue.code for issue in issues)


def test_consistent_mcq_has_no_parity_issues():
    assert check_parity("mcq", mcq_content()) == []


def test_missing_language_is_named():
    content = mcq_content()
    del content["zh"]
    issues = check_parity("mcq", content)
    assert [(i.code, i.language) for i in issues] == [("missing_language", "zh")]
    assert issues[0].message == "The Chinese version is missing."


def test_different_option_counts_are_reported_with_both_counts():
    content = mcq_content()
    content["zh"]["options"].append("惊讶")
    issues = check_parity("mcq", content)
    assert codes(issues) == ["option_count_mismatch"]
    assert issues[0].message == "The languages have different numbers of options: English 4, Chinese 5."


def test_answer_out_of_range_and_missing_answer_are_per_language():
    content = mcq_content(en_answer=7)
    content["zh"]["answer"] = None
    issues = check_parity("mcq", content)
    assert {(i.code, i.language) for i in issues} == {("answer_out_of_range", "en"), ("missing_answer", "zh")}
    out_of_range = next(i for i in issues if i.code == "answer_out_of_range")
    assert "key 7 is out of range (0 to 3)" in out_of_range.message


def test_language_shaped_like_another_kind_is_a_kind_mismatch():
    content = mcq_content()
    content["zh"] = {"turns": [{"user": "你好", "options": ["a", "b"], "answer": 0}]}
    issues = check_parity("mcq", content)
    assert codes(issues) == ["kind_mismatch"]
    assert issues[0].language == "zh"
    assert "multi_turn_choice" in issues[0].message


def multi_turn(n_turns_zh=2, zh_options=2):
    turn = {"user": "I'm fine, really.", "options": ["A", "B"], "answer": 0}
    zh_turn = {"user": "我真的没事。", "options": ["甲", "乙", "丙"][:zh_options], "answer": 1}
    return {"en": {"turns": [turn, turn]}, "zh": {"turns": [zh_turn] * n_turns_zh}}


def test_multi_turn_with_equal_structure_passes():
    assert check_parity("multi_turn_choice", multi_turn()) == []


def test_multi_turn_with_different_turn_counts_is_reported():
    issues = check_parity("multi_turn_choice", multi_turn(n_turns_zh=3))
    assert codes(issues) == ["turn_count_mismatch"]
    assert issues[0].message == "The languages have different numbers of turns: English 2, Chinese 3."


def test_multi_turn_with_different_options_in_a_turn_is_reported_per_turn():
    issues = check_parity("multi_turn_choice", multi_turn(zh_options=3))
    assert codes(issues) == ["option_count_mismatch", "option_count_mismatch"]
    assert "options in turn 1" in issues[0].message and "options in turn 2" in issues[1].message


def test_open_prompt_missing_prompt_text_is_reported():
    content = {"en": {"prompt": "I can't sleep."}, "zh": {"context": "深夜"}}
    issues = check_parity("open_prompt", content)
    assert ("kind_mismatch", "zh") in {(i.code, i.language) for i in issues}


def test_shape_errors_name_the_field():
    content = mcq_content()
    content["en"]["options"] = "Joy, Fear"
    content["zh"]["answer"] = "B"
    content["fr"] = {}
    errors = {e.field: e.message for e in validate_content("mcq", content, max_chars=1000)}
    assert errors["content.en.options"] == "must be a list of option texts"
    assert errors["content.zh.answer"].startswith("must be a 0-based option index")
    assert errors["content.fr"] == "unknown language; expected en or zh"


def test_oversize_text_is_refused_with_its_length():
    content = mcq_content()
    content["en"]["context"] = "x" * 101
    errors = validate_content("mcq", content, max_chars=100)
    assert [str(e) for e in errors] == ["content.en.context: text too long: 101 characters (limit 100)"]


def test_wrong_number_of_options_is_refused():
    content = mcq_content()
    content["en"]["options"] = ["only one"]
    errors = validate_content("mcq", content, max_chars=1000)
    assert [e.field for e in errors] == ["content.en.options"]
    assert "needs 2 to 12 options, got 1" in errors[0].message


def test_hash_ignores_key_order_and_defaults_but_not_text():
    a = normalise_content("mcq", mcq_content())
    reordered = {"zh": dict(reversed(list(a["zh"].items()))), "en": a["en"]}
    assert content_hash(a, {}) == content_hash(normalise_content("mcq", reordered), {})
    changed = mcq_content()
    changed["zh"]["question"] += "？"
    assert content_hash(a, {}) != content_hash(normalise_content("mcq", changed), {})
