"""Provider batches (OpenAI's Batch API shape): the JSONL sent, and turning the output lines into call outcomes.

No database here: ``llm.worker.runner`` records the batches and stores the outcomes as ordinary calls. A request's
``custom_id`` is its idempotency key (the call's request hash, ``:n`` for the n-th re-send), so the provider bills
each key once whether it comes in a batch or live.
"""

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime

from llm.calls import CHAT, idempotency_key, response_text, usage_tokens
from llm.executor import RAW_EXCERPT_CHARS, CallOutcome, CallSpec, classify_exception

# What the provider says about a finished batch; anything else is still under way.
FINISHED = {"completed", "expired", "failed", "cancelled"}
# Request errors that sending the request again (live or in another batch) may cure.
RETRYABLE_STATUS = {408, 409, 429, 500, 502, 503, 504}
ENDPOINT_STATUS = {401: "auth", 403: "auth", 404: "not_found"}


def batch_url(api_style: str) -> str:
    return "/v1/chat/completions" if api_style == CHAT else "/v1/completions"


def custom_id(spec: CallSpec) -> str:
    return idempotency_key(spec.call_hash, spec.first_send)


def input_jsonl(specs: list[CallSpec], *, api_style: str, simulator: bool) -> bytes:
    """Return the batch input file: one ``{custom_id, method, url, body}`` line per request."""
    url = batch_url(api_style)
    lines = []
    for spec in specs:
        line: dict = {"custom_id": custom_id(spec), "method": "POST", "url": url, "body": spec.request}
        if simulator and spec.hints.get("answer"):
            # The simulator's answer key, which live requests carry in a header (never sent to real providers).
            line["sim_answer"] = str(spec.hints["answer"])
        lines.append(json.dumps(line, ensure_ascii=False, separators=(",", ":")))
    return ("\n".join(lines) + "\n").encode("utf-8")


def read_lines(content: bytes | str) -> dict[str, dict]:
    """Return {custom_id: line} of an output or error file; lines that are not JSON objects are skipped."""
    text = content.decode("utf-8", "replace") if isinstance(content, bytes) else content
    lines = {}
    for raw in text.splitlines():
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if isinstance(line, dict) and line.get("custom_id") is not None:
            lines[str(line["custom_id"])] = line
    return lines


@dataclass
class BatchResults:
    """What a finished batch gave: outcomes to store, and the requests to send again (live or in a new batch)."""

    outcomes: list[CallOutcome] = field(default_factory=list)
    retry: list[CallSpec] = field(default_factory=list)


def _error_message(line: dict) -> str:
    error = line.get("error")
    response = line.get("response")
    if isinstance(error, dict):
        return f"{error.get('code') or 'error'}: {error.get('message') or ''}".strip()
    if isinstance(response, dict) and isinstance(response.get("body"), dict):
        body_error = response["body"].get("error")
        if isinstance(body_error, dict):
            return str(body_error.get("message") or body_error)[:500]
    return "the batch gave no reply for this request"


def outcomes_from_lines(
    specs: list[CallSpec], lines: dict[str, dict], *, api_style: str, provider_batch_id: str, status: str
) -> BatchResults:
    """Turn a finished batch's output and error lines into outcomes (parsed as live replies are) and retries."""
    results = BatchResults()
    now = datetime.now(UTC)
    for spec in specs:
        line = lines.get(custom_id(spec))
        attempt: dict = {"send": spec.first_send, "batch": provider_batch_id, "at": now.isoformat()}
        response = line.get("response") if line else None
        code = response.get("status_code") if isinstance(response, dict) else None
        body = response.get("body") if isinstance(response, dict) else None
        if code == 200 and isinstance(body, dict):
            outcome = CallOutcome(spec=spec, started_at=now, finished_at=now, batch=True, http_status=200)
            try:
                text = response_text(api_style, body)
            except ValueError as exc:
                outcome.error_kind = "invalid_response"
                outcome.error = f"The batch reply is JSON but not a completion ({exc})."
                outcome.response_text = json.dumps(body)[:RAW_EXCERPT_CHARS]
                attempt.update(http_status=200, error_kind="invalid_response")
                outcome.attempts.append(attempt)
                results.outcomes.append(outcome)
                continue
            input_tokens, output_tokens = usage_tokens(body)
            outcome.received = True
            outcome.sends = 1
            outcome.input_tokens, outcome.output_tokens = input_tokens, output_tokens
            outcome.response_json, outcome.response_text = body, text
            attempt.update(http_status=200, input_tokens=input_tokens, output_tokens=output_tokens)
            if spec.parser is not None:
                try:
                    outcome.result = spec.parser(text, body)
                    outcome.parsed = True
                except Exception as exc:  # noqa: BLE001 - a parser's failure is the reply's problem
                    outcome.parsed = False
                    outcome.error_kind = "unparsed"
                    outcome.error = f"Unparseable reply: {exc}"
                    attempt.update(error_kind="unparsed", error=str(exc)[:500], raw=text[:RAW_EXCERPT_CHARS])
            outcome.attempts.append(attempt)
            results.outcomes.append(outcome)
            continue
        if isinstance(code, int) and code not in RETRYABLE_STATUS and code < 500:
            kind = ENDPOINT_STATUS.get(code, "bad_request")
            message = _error_message(line)
            outcome = CallOutcome(spec=spec, started_at=now, finished_at=now, batch=True, http_status=code)
            outcome.error_kind, outcome.error = kind, f"HTTP {code} in batch {provider_batch_id}: {message}"
            attempt.update(http_status=code, error_kind=kind, error=message[:500])
            outcome.attempts.append(attempt)
            results.outcomes.append(outcome)
            continue
        results.retry.append(spec)
    return results


def failure_of(exc: BaseException, *, base_url: str) -> tuple[str, str, bool]:
    """Classify an error of the Files or Batches API: (kind, message, whether trying again may help)."""
    failure = classify_exception(exc, base_url=base_url)
    return failure.kind, failure.message, failure.transient
