"""Echoed tokens as real servers report them: leading-space words, CJK pairs, byte-fallback partial characters.

``text_offset`` must agree with the echoed text: each token's offset is the number of characters completed
before it, and decoding the tokens' bytes in order gives back the text.
"""

import codecs

import pytest

from llm import parsers, services
from llm.parsers import token_bytes
from llm.simulator import simulation


def assert_consistent(text: str, tokens: list[str], offsets: list[int]) -> None:
    assert b"".join(token_bytes(t) for t in tokens).decode("utf-8") == text
    decoder = codecs.getincrementaldecoder("utf-8")()
    completed = 0
    for token, offset in zip(tokens, offsets, strict=True):
        assert offset == completed, (token, offset, completed)
        completed += len(decoder.decode(token_bytes(token)))


def test_token_bytes_reads_escaped_partial_characters_and_plain_text():
    assert token_bytes("bytes:\\xe6\\x84") == b"\xe6\x84"
    assert token_bytes("bytes: \\xe5\\xbf") == b" \xe5\xbf"
    assert token_bytes(" happy") == b" happy"
    assert token_bytes("开心") == "开心".encode()


def test_english_words_carry_their_leading_space_and_long_ones_split_into_pieces():
    text = "Answer: Suggest counselling"
    tokens, offsets = simulation.logprob_tokens(text)
    assert tokens == ["Answer", ":", " Sugges", "t", " counse", "lling"]
    assert_consistent(text, tokens, offsets)


@pytest.mark.parametrize(
    "text",
    [
        "在这个场景中，莎拉最有效的行动是什么？\n答案： 建议她弟弟和老师或学校辅导员谈谈",
        "米娅最可能有什么感受？\n答案： 忐忑不安",
        "Hello,  world!  我今天很难过。 123456 don't  ",
    ],
)
def test_chinese_text_gives_multi_character_and_byte_fallback_tokens_with_consistent_offsets(text):
    tokens, offsets = simulation.logprob_tokens(text)
    assert_consistent(text, tokens, offsets)


def test_the_simulated_vocabulary_has_pairs_single_characters_and_byte_fallbacks():
    text = "在这个场景中，莎拉最有效的行动是什么？\n答案： 建议她弟弟和老师或学校辅导员谈谈"
    tokens, _offsets = simulation.logprob_tokens(text)
    cjk = [t for t in tokens if not t.startswith(parsers.BYTES_PREFIX) and simulation.is_chinese(t)]
    assert any(len(t.strip()) == 2 for t in cjk) and any(len(t.strip()) == 1 for t in cjk)
    partial = [t for t in tokens if t.startswith(parsers.BYTES_PREFIX)]
    assert partial and all(token_bytes(t) for t in partial)
    assert " 建议" in tokens  # the option's first token holds the separating space


def test_the_completions_server_echoes_offsets_that_match_the_text(make_endpoint):
    endpoint = make_endpoint("sim-base", api_style="completions")
    text = "米娅最可能有什么感受？\n答案： 忐忑不安"
    result = services.call_make(
        endpoint=endpoint, prompt=text, params={"echo": True, "logprobs": 1, "max_tokens": 0}, parser="logprobs"
    )
    assert result.ok, result.call.error
    assert result.call.response_text == text
    assert_consistent(text, result.result["tokens"], result.result["text_offset"])
    assert result.call.response_json["usage"]["prompt_tokens"] == len(result.result["tokens"])


def test_the_logprobs_parser_refuses_offsets_that_do_not_line_up_with_the_tokens():
    logprobs = {"tokens": ["a", " b"], "token_logprobs": [None, -1.5], "text_offset": [0]}
    with pytest.raises(parsers.ParseError, match="text offsets do not line up"):
        parsers.parse_logprobs("a b", {"choices": [{"text": "a b", "logprobs": logprobs}]})
    logprobs["text_offset"] = [0, 1]
    assert parsers.parse_logprobs("a b", {"choices": [{"logprobs": logprobs}]})["text_offset"] == [0, 1]
