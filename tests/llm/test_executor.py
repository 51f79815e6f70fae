"""The executor against the simulator (a real HTTP server): concurrency, retries, fail-fast errors, parsing."""

import asyncio
import time

import pytest

from llm import parsers
from llm.executor import (
    CallSpec,
    EndpointConfig,
    RateLimiter,
    backoff_delay,
    execute_all,
    retry_after_seconds,
)


def config(simulator, **overrides: object) -> EndpointConfig:
    values = {
        "base_url": simulator.base_url,
        "max_concurrency": 8,
        "timeout": 5.0,
        "max_retries": 6,
        "backoff_base": 0.01,
        "backoff_max": 0.05,
        "is_simulator": True,
    }
    return EndpointConfig(**(values | overrides))


def spec(i: int = 0, *, model: str = "sim-mcq-acc90", content: str | None = None, **fields: object) -> CallSpec:
    text = content if content is not None else f"Item {i}\nA. Joy\nB. Sad"
    request = {"model": model, "messages": [{"role": "user", "content": text}]}
    return CallSpec(ident=i, request=request, call_hash=f"test-{i}-{model}-{hash(text)}", **fields)


def run(cfg: EndpointConfig, specs: list[CallSpec]) -> list:
    return asyncio.run(execute_all(cfg, specs))


@pytest.mark.usefixtures("simulator_idle")
def test_calls_run_concurrently_up_to_the_endpoint_limit(simulator):
    simulator.configure(latency_ms=100, jitter_ms=0)
    # Keep-alive connections another client of the session's simulator still holds (this stats request's own
    # included) are counted from where they stand.
    already_open = simulator.stats()["open_connections"]
    started = time.monotonic()
    outcomes = run(config(simulator, max_concurrency=8), [spec(i) for i in range(40)])
    elapsed = time.monotonic() - started
    assert all(o.received for o in outcomes)
    assert elapsed >= 0.45  # at most 8 at once: at least 5 waves of 100 ms
    # Concurrent, not one after another (counted at the server, not timed: a loaded machine is slow, not serial).
    assert 2 <= simulator.stats()["max_in_flight"] <= 8
    assert simulator.stats()["max_open_connections"] - already_open <= 8


def test_the_simulator_serves_hundreds_of_concurrent_connections(simulator):
    simulator.configure(latency_ms=300, jitter_ms=0)
    outcomes = run(config(simulator, max_concurrency=300), [spec(i) for i in range(300)])
    assert all(o.received for o in outcomes)
    # Answered as one wave, not 300 in a row: counted at the server rather than timed.
    assert simulator.stats()["max_in_flight"] >= 250
    assert simulator.stats()["max_open_connections"] >= 250


def test_replies_carry_text_usage_and_the_parsed_result(simulator):
    [outcome] = run(config(simulator), [spec(1, parser=parsers.get("mcq_letter"), hints={"answer": "B"})])
    assert outcome.parsed and outcome.result["letter"] in {"A", "B"}
    assert outcome.input_tokens > 0 and outcome.output_tokens > 0
    assert outcome.response_json["system_fingerprint"] == "eistudio-simulator"
    assert outcome.sends == 1 and outcome.retries == 0 and outcome.error_kind == ""


def test_a_429_is_retried_after_the_wait_the_provider_asks_for(simulator):
    simulator.configure(error_rate_429=1.0, retry_after_ms=150)
    started = time.monotonic()
    [outcome] = run(config(simulator, max_retries=2), [spec()])
    assert time.monotonic() - started >= 0.3
    assert not outcome.received
    assert outcome.error_kind == "rate_limited" and outcome.retries == 2
    assert "Rate limit reached" in outcome.error and "Gave up after 2 retries" in outcome.error


def test_server_errors_and_timeouts_are_retried_until_they_succeed(simulator):
    simulator.configure(error_rate_500=0.3, timeout_rate=0.2, hang_seconds=5)
    outcomes = run(config(simulator, timeout=0.5, max_retries=10), [spec(i) for i in range(20)])
    assert all(o.received for o in outcomes)
    kinds = {a.get("error_kind") for o in outcomes for a in o.attempts}
    assert {"server_error", "timeout"} <= kinds
    assert simulator.stats()["billable"] == 20


@pytest.mark.parametrize(
    ("path", "model", "content", "kind", "status", "message"),
    [
        ("/v1", "sim-echo", "", "bad_request", 400, "non-empty"),
        ("/unauthorized/v1", "sim-echo", "hi", "auth", 401, "Incorrect API key"),
        ("/v1", "gpt-5-turbo", "hi", "not_found", 404, "does not exist"),
        ("/html/v1", "sim-echo", "hi", "invalid_response", 200, "HTML page"),
        ("/badjson/v1", "sim-echo", "hi", "invalid_response", 200, "invalid JSON"),
    ],
)
def test_permanent_errors_fail_fast_with_the_providers_message(simulator, path, model, content, kind, status, message):
    cfg = config(simulator, base_url=simulator.root + path)
    request_spec = spec(model=model, content=content)
    if not content:
        request_spec.request["messages"] = []
    [outcome] = run(cfg, [request_spec])
    assert (outcome.error_kind, outcome.http_status, outcome.retries) == (kind, status, 0)
    assert message in outcome.error
    assert outcome.endpoint_broken == (kind != "bad_request")


def test_an_unreachable_server_is_retried_then_reported(simulator):
    [outcome] = run(config(simulator, base_url="http://127.0.0.1:9/v1", max_retries=1), [spec()])
    assert outcome.error_kind == "connection" and outcome.retries == 1
    assert "Could not connect to http://127.0.0.1:9/v1" in outcome.error


def test_an_unparseable_reply_is_sent_again_then_kept_raw_and_marked_unparsed(simulator):
    cfg = config(simulator)
    [outcome] = run(
        cfg, [spec(model="sim-echo", content="not json at all", parser=parsers.get("json"), max_parse_retries=2)]
    )
    assert outcome.received and outcome.parsed is False and outcome.error_kind == "unparsed"
    assert outcome.response_text == "not json at all"
    assert outcome.sends == 3 and outcome.retries == 2
    assert [a["send"] for a in outcome.attempts] == [0, 1, 2]
    assert all(a["raw"] == "not json at all" for a in outcome.attempts)
    stats = simulator.stats()
    assert stats["billable"] == 3 and stats["billed_keys"] == 3  # each re-send is a new billable request


def test_garbled_replies_are_retried_and_usually_recovered(simulator):
    simulator.configure(garbage_rate=0.5)
    specs = [spec(i, parser=parsers.get("mcq_letter"), max_parse_retries=4) for i in range(20)]
    outcomes = run(config(simulator), specs)
    assert sum(o.parsed for o in outcomes) >= 18
    assert any(o.retries for o in outcomes)


def test_repeating_an_idempotency_key_is_not_billed_twice(simulator):
    first, second = run(config(simulator), [spec(7)]), run(config(simulator), [spec(7)])
    assert first[0].response_text == second[0].response_text
    assert second[0].attempts[0]["replayed"] is True
    stats = simulator.stats()
    assert (stats["billable"], stats["replayed"]) == (1, 1)


def test_the_rpm_limit_spaces_request_starts(simulator):
    started = time.monotonic()
    run(config(simulator, rpm_limit=600), [spec(i) for i in range(5)])
    assert time.monotonic() - started >= 0.4  # 10 a second: the fifth starts after 0.4 s


def test_rate_limiter_reserves_evenly_spaced_slots():
    now = [100.0]
    limiter = RateLimiter(120, clock=lambda: now[0])
    assert [limiter.reserve() for _ in range(3)] == [0.0, 0.5, 1.0]
    assert RateLimiter(0).reserve() == 0.0


def test_backoff_grows_exponentially_with_jitter_and_a_cap():
    for retry in range(8):
        delay = backoff_delay(retry, base=0.5, cap=4.0)
        assert min(4.0, 0.5 * 2**retry) * 0.5 <= delay <= min(4.0, 0.5 * 2**retry)


def test_retry_after_accepts_milliseconds_seconds_and_dates():
    assert retry_after_seconds({"retry-after-ms": "250"}) == 0.25
    assert retry_after_seconds({"retry-after": "3"}) == 3.0
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert retry_after_seconds({}) is None
