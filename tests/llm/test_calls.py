"""Requests, cache keys and costs: pure functions, no database."""

from decimal import Decimal

import pytest

from llm.calls import (
    RequestError,
    build_request,
    call_cost,
    estimate_total,
    idempotency_key,
    request_hash,
    response_text,
    rough_request_cost,
    usage_tokens,
)

MESSAGES = [{"role": "user", "content": "Hello"}]


def chat(**params: object) -> dict:
    return build_request(
        api_style="chat", model="m", defaults={"temperature": 0, "seed": 1}, messages=MESSAGES, params=params
    )


def test_prompt_params_override_the_endpoint_defaults():
    assert chat(temperature=0.7) == {"model": "m", "temperature": 0.7, "seed": 1, "messages": MESSAGES}


def test_the_hash_ignores_key_order_but_not_content():
    a = {"model": "m", "messages": MESSAGES, "seed": 1}
    b = {"seed": 1, "messages": MESSAGES, "model": "m"}
    assert request_hash(a) == request_hash(b)
    assert request_hash(a) != request_hash({**a, "seed": 2})
    assert request_hash(a) != request_hash({**a, "model": "other"})


def test_a_fresh_nonce_gives_a_distinct_key():
    a = chat()
    assert request_hash(a, fresh_nonce="run:1:q1") != request_hash(a)
    assert request_hash(a, fresh_nonce="run:1:q1") != request_hash(a, fresh_nonce="run:2:q1")


def test_idempotency_keys_differ_per_billable_send():
    assert idempotency_key("abc", 0) == "abc"
    assert idempotency_key("abc", 2) == "abc:2"


def test_completions_requests_ask_for_echoed_log_probabilities_by_default():
    body = build_request(api_style="completions", model="m", defaults={"reasoning_effort": "low"}, prompt="Hi")
    assert body == {"model": "m", "prompt": "Hi", "echo": True, "logprobs": 1, "max_tokens": 0}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"messages": []}, "non-empty"),
        ({"messages": [{"content": "x"}]}, "role"),
        ({"messages": MESSAGES, "params": {"model": "x"}}, "may not set 'model'"),
    ],
)
def test_bad_prompts_are_refused_with_a_reason(kwargs, message):
    with pytest.raises(RequestError, match=message):
        build_request(api_style="chat", model="m", defaults={}, **kwargs)


def test_cost_is_priced_per_million_tokens():
    assert call_cost(
        input_tokens=1_000_000, output_tokens=500_000, price_input=Decimal("0.5"), price_output=Decimal("1.5")
    ) == Decimal("1.25")


def test_rough_cost_counts_four_characters_a_token_and_max_tokens_out():
    request = {"messages": [{"role": "user", "content": "x" * 399}], "max_tokens": 100}
    assert rough_request_cost(request, price_input=Decimal(1_000_000), price_output=Decimal(0)) == Decimal(100)


def test_estimate_uses_the_average_so_far_then_the_upfront_estimate():
    assert estimate_total(
        spent=Decimal("2"), billed_items=4, remaining=6, initial_estimate=Decimal("99"), planned=10
    ) == Decimal("5")
    assert estimate_total(
        spent=Decimal("0"), billed_items=0, remaining=5, initial_estimate=Decimal("10"), planned=10
    ) == Decimal("5")


def test_reply_text_and_usage_are_read_from_both_api_styles():
    assert response_text("chat", {"choices": [{"message": {"content": "hi"}}]}) == "hi"
    assert response_text("completions", {"choices": [{"text": "hi"}]}) == "hi"
    assert usage_tokens({"usage": {"prompt_tokens": 3, "completion_tokens": 4}}) == (3, 4)
    assert usage_tokens({}) == (0, 0)
    with pytest.raises(ValueError, match="no choices"):
        response_text("chat", {"error": "x"})
