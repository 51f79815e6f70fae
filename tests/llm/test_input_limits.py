"""Untrusted JSON reaching the llm app: prompt files from users and replies from endpoints, too deep or holding NUL
characters (which PostgreSQL cannot store), are refused or cleaned with a clear reason, never a 500 or a crash."""

import httpx2
import pytest
from django import forms

from llm import parsers
from llm.executor import Failure, read_reply
from llm.forms import read_prompts

DEEP = "[" * 100_000 + "]" * 100_000


def test_a_prompt_file_nested_too_deep_names_the_line():
    data = ('{"messages": [{"role": "user", "content": "hi"}]}\n' + '{"x": ' + DEEP + "}\n").encode()
    with pytest.raises(forms.ValidationError) as refused:
        read_prompts(data)
    assert "Line 2 is not valid JSON" in str(refused.value)
    assert "nested more than 64 levels deep" in str(refused.value)


def test_a_prompt_file_with_a_nul_character_names_the_line_and_field():
    data = b'{"messages": [{"role": "user", "content": "bad \\u0000 text"}]}\n'
    with pytest.raises(forms.ValidationError) as refused:
        read_prompts(data)
    assert "Line 1" in str(refused.value) and "NUL" in str(refused.value)
    assert "messages[0].content" in str(refused.value)


@pytest.mark.parametrize("text", [DEEP, '{"a": "x\\u0000y"}'])
def test_the_json_parser_refuses_replies_too_deep_or_holding_nul(text):
    with pytest.raises(parsers.ParseError, match="no valid JSON"):
        parsers.get("json")(text, {})


def reply(body: str) -> httpx2.Response:
    return httpx2.Response(200, text=body, headers={"content-type": "application/json"})


def test_an_endpoint_reply_nested_too_deep_is_an_invalid_response_not_a_crash():
    outcome = read_reply(reply(DEEP), "chat")
    assert isinstance(outcome, Failure)
    assert outcome.kind == "invalid_response"
    assert "nested more than 512 levels deep" in outcome.message


def test_nul_characters_in_an_endpoint_reply_become_replacement_characters():
    body = '{"choices": [{"message": {"role": "assistant", "content": "a\\u0000b\x00c"}}]}'
    data, text = read_reply(reply(body), "chat")
    assert text == "a\ufffdb\ufffdc"
    assert "\x00" not in str(data)
