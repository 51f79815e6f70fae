"""The named parsers that turn replies into results."""

import pytest

from llm import parsers
from llm.parsers import ParseError


def parse(name: str, text: str, response: dict | None = None) -> object:
    return parsers.get(name)(text, response or {})


@pytest.mark.parametrize(
    ("text", "letter"),
    [("Answer: B\nReason: ...", "B"), ("答案：C", "C"), ("d", "D"), ("The answer is (A).", "A"), ("[B]", "B")],
)
def test_mcq_letter_reads_the_chosen_option(text, letter):
    assert parse("mcq_letter", text) == {"letter": letter}


def test_mcq_letter_refuses_a_reply_without_a_letter():
    with pytest.raises(ParseError):
        parse("mcq_letter", "I think she feels sad.")


def test_judge_verdict_reads_winner_and_margin_from_the_last_verdict():
    text = "Reasoning: A is warmer. An example: [[B]] +\nVerdict: [[A]] +++"
    assert parse("judge_verdict", text) == {
        "winner": "A",
        "margin": 3,
        "reasoning": text[: text.rindex("[[A]]")].strip(),
    }
    assert parse("judge_verdict", "Verdict: [[TIE]]")["winner"] == "tie"


def test_judge_verdict_needs_a_margin():
    with pytest.raises(ParseError, match="margin"):
        parse("judge_verdict", "[[A]]")


def test_json_parser_accepts_code_fences_and_prose():
    assert parse("json", 'Here you go:\n```json\n{"items": [1]}\n```') == {"items": [1]}
    assert parse("json", 'Sure! {"a": 1} Hope that helps.') == {"a": 1}
    with pytest.raises(ParseError):
        parse("json", '{"a": ')


def test_logprobs_parser_reads_token_log_probabilities():
    response = {"choices": [{"text": "a b", "logprobs": {"tokens": ["a", " b"], "token_logprobs": [None, -1.5]}}]}
    result = parse("logprobs", "a b", response)
    assert result["mean"] == -1.5 and result["tokens"] == ["a", " b"]
    with pytest.raises(ParseError, match="echo"):
        parse("logprobs", "a", {"choices": [{"text": "a"}]})


def test_unknown_parsers_name_the_known_ones():
    with pytest.raises(KeyError, match="mcq_letter"):
        parsers.get("nope")


def test_a_name_cannot_be_registered_twice_for_different_functions():
    with pytest.raises(ValueError, match="already registered"):
        parsers.register("text")(lambda text, response: text)
