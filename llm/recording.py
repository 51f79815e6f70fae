"""Turning an executor outcome into what a call row holds, and reading endpoints' settings and keys."""

import json
import os
from dataclasses import dataclass
from decimal import Decimal

from django.conf import settings

from llm import parsers
from llm.calls import call_cost
from llm.executor import CallOutcome, EndpointConfig
from llm.keys import api_key_env_problem
from llm.models import Endpoint, LLMCall


class KeyProblem(Exception):
    """The endpoint's key cannot be used: ``error_kind`` says why (recorded on calls and reports)."""

    error_kind = "missing_key"


class MissingKey(KeyProblem):
    """The environment variable an endpoint names is not set in this process."""


class KeyNotAllowed(KeyProblem):
    """The endpoint names a variable no endpoint may use (``llm.keys``): it is never read, nothing is sent."""

    error_kind = "key_not_allowed"


def endpoint_config(
    endpoint: Endpoint, *, timeout: float | None = None, max_retries: int | None = None
) -> EndpointConfig:
    """Return the executor settings of an endpoint, reading its key from the environment of this process.

    Raise ``KeyNotAllowed`` for a variable the rule of ``llm.keys`` refuses (a row stored before the rule, or
    edited in the database), before reading it.
    """
    problem = api_key_env_problem(endpoint.api_key_env)
    if problem:
        raise KeyNotAllowed(problem)
    api_key = ""
    if endpoint.api_key_env:
        api_key = os.environ.get(endpoint.api_key_env, "")
        if not api_key:
            raise MissingKey(
                f"The environment variable {endpoint.api_key_env} is not set (or empty) in the process that sends "
                f"the requests; set it for the worker (db_worker) and the web server, then resume."
            )
    return EndpointConfig(
        base_url=endpoint.base_url,
        api_style=endpoint.api_style,
        api_key=api_key,
        max_concurrency=endpoint.max_concurrency,
        rpm_limit=endpoint.rpm_limit,
        timeout=timeout if timeout is not None else endpoint.timeout_seconds,
        max_retries=max_retries if max_retries is not None else endpoint.max_retries,
        backoff_base=settings.LLM_RETRY_BACKOFF_SECONDS,
        backoff_max=settings.LLM_RETRY_BACKOFF_MAX_SECONDS,
        is_simulator=endpoint.is_simulator,
    )


def outcome_cost(outcome: CallOutcome, endpoint: Endpoint) -> Decimal:
    """Return what an outcome's replies cost: at the endpoint's batch prices if a batch answered it."""
    price_input, price_output = endpoint.prices(batch=outcome.batch)
    return call_cost(
        input_tokens=outcome.input_tokens,
        output_tokens=outcome.output_tokens,
        price_input=price_input,
        price_output=price_output,
    )


def parse_cached(parser: parsers.Parser, text: str, response: dict | None) -> tuple[object, str]:
    """Parse a stored reply; return (result, "") or (None, why it does not parse)."""
    try:
        return json_safe(parser(text, response or {}))
    except Exception as exc:  # noqa: BLE001 - any parser failure means "send it again"
        return None, f"Unparseable reply: {exc}"


def json_safe(value: object) -> tuple[object, str]:
    """Return (value, "") if it can be stored as JSON, else (None, the reason)."""
    try:
        json.dumps(value)
    except (TypeError, ValueError) as exc:
        return None, f"The parser returned a value that is not JSON: {exc}"
    return value, ""


@dataclass
class CallState:
    """What a call row held when its chunk was claimed: outcomes add to it."""

    call_id: int
    sends: int
    retries: int
    input_tokens: int
    output_tokens: int
    cost: Decimal
    attempts: list


CALL_OUTCOME_FIELDS = [
    "status",
    "http_status",
    "error_kind",
    "error",
    "response_text",
    "response_json",
    "parsed",
    "input_tokens",
    "output_tokens",
    "cost",
    "latency_ms",
    "retries",
    "sends",
    "attempts",
    "started_at",
    "finished_at",
]


def merge_outcome(state: CallState, outcome: CallOutcome, cost: Decimal) -> dict:
    """Add an outcome to what a call held and return the call's new field values (see CALL_OUTCOME_FIELDS)."""
    state.sends += outcome.sends
    state.retries += outcome.retries
    state.input_tokens += outcome.input_tokens
    state.output_tokens += outcome.output_tokens
    state.cost += cost
    state.attempts = (state.attempts + outcome.attempts)[-50:]
    return {
        "status": LLMCall.Status.SUCCEEDED if outcome.received else LLMCall.Status.FAILED,
        "http_status": outcome.http_status,
        "error_kind": outcome.error_kind,
        "error": outcome.error,
        "response_text": outcome.response_text,
        "response_json": outcome.response_json if isinstance(outcome.response_json, dict) else None,
        "parsed": outcome.parsed,
        "input_tokens": state.input_tokens,
        "output_tokens": state.output_tokens,
        "cost": state.cost,
        "latency_ms": outcome.latency_ms,
        "retries": state.retries,
        "sends": state.sends,
        "attempts": state.attempts,
        "started_at": outcome.started_at,
        "finished_at": outcome.finished_at,
    }
