"""Send requests to an OpenAI-compatible endpoint concurrently, with retries, rate limiting and parsing.

No database here: the executor takes plain specs and returns plain outcomes; ``llm.worker.runner`` stores them.
It uses the ``openai`` async client with its own retries switched off, so that every retry is counted,
``retry-after`` is honoured and the idempotency key stays the same across retries of one send.
"""

import asyncio
import contextlib
import email.utils
import json
import random
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime

import httpx2
import openai

from core.inputs import json_too_deep_at
from llm.calls import CHAT, COMPLETIONS, EMBEDDINGS, idempotency_key, response_text, usage_tokens
from llm.parsers import REPLY_MAX_DEPTH, Parser

TRANSIENT = {"rate_limited", "server_error", "timeout", "connection", "other_transient"}
# An error status's failure kind and message (``_status_failure``); 5xx is a server error, any other status "other".
STATUS_FAILURES = {
    429: ("rate_limited", "Rate limited (429): {provider}"),
    408: ("other_transient", "HTTP {status}: {provider}"),
    409: ("other_transient", "HTTP {status}: {provider}"),
    401: ("auth", "Not authorised ({status}): {provider}"),
    403: ("auth", "Not authorised ({status}): {provider}"),
    404: ("not_found", "Not found (404): {provider} (check the model name and that the base URL ends in /v1)."),
    400: ("bad_request", "Bad request ({status}): {provider}"),
    413: ("bad_request", "Bad request ({status}): {provider}"),
    422: ("bad_request", "Bad request ({status}): {provider}"),
}
SERVER_FAILURE = ("server_error", "Server error ({status}): {provider}")
OTHER_FAILURE = ("other", "HTTP {status}: {provider}")
# Errors that say the endpoint itself is wrong, not this one request: a run stops at the first one.
ENDPOINT_ERRORS = {"auth", "not_found", "invalid_response", "missing_key", "key_not_allowed", "config"}
# Error codes of a 400 that are about the endpoint's settings (model, key, parameter names), never one prompt's content.
CONFIG_CODES = {
    "model_not_found",
    "invalid_model",
    "unknown_model",
    "invalid_api_key",
    "unsupported_parameter",
    "unsupported_value",
}
RAW_EXCERPT_CHARS = 2000
PATHS = {CHAT: "/chat/completions", COMPLETIONS: "/completions", EMBEDDINGS: "/embeddings"}


@dataclass(frozen=True)
class EndpointConfig:
    """What the executor needs to know about an endpoint (the key is kept out of ``repr``)."""

    base_url: str
    api_style: str = CHAT
    api_key: str = field(default="", repr=False)
    max_concurrency: int = 8
    rpm_limit: int = 0
    timeout: float = 120.0
    max_retries: int = 6
    backoff_base: float = 0.5
    backoff_max: float = 30.0
    retry_after_max: float = 120.0
    is_simulator: bool = False


@dataclass
class CallSpec:
    """One request to send: ``ident`` is the caller's handle, ``call_hash`` names it for idempotency."""

    ident: object
    request: dict
    call_hash: str
    first_send: int = 0
    hints: dict = field(default_factory=dict)
    parser: Parser | None = None
    max_parse_retries: int = 0


@dataclass
class CallOutcome:
    spec: CallSpec
    received: bool = False  # a reply arrived (parsed or not)
    parsed: bool | None = None
    result: object = None
    http_status: int | None = None
    error_kind: str = ""
    error: str = ""
    response_text: str = ""
    response_json: object = None
    input_tokens: int = 0
    output_tokens: int = 0
    sends: int = 0  # replies received, each billed once by the provider
    retries: int = 0
    latency_ms: int | None = None
    attempts: list = field(default_factory=list)
    started_at: datetime | None = None
    finished_at: datetime | None = None
    batch: bool = False  # answered in a provider batch (billed at the endpoint's batch prices)

    @property
    def next_send(self) -> int:
        return self.spec.first_send + self.sends

    @property
    def endpoint_broken(self) -> bool:
        return self.error_kind in ENDPOINT_ERRORS


@dataclass
class Failure:
    kind: str
    message: str
    http_status: int | None = None
    retry_after: float | None = None
    raw: str = ""

    @property
    def transient(self) -> bool:
        return self.kind in TRANSIENT


class RateLimiter:
    """Space request starts evenly so that no more than ``rpm`` start in any minute (0: no limit)."""

    def __init__(self, rpm: int, clock: object = time.monotonic) -> None:
        self.interval = 60.0 / rpm if rpm else 0.0
        self.clock = clock
        self.next_slot = 0.0

    def reserve(self) -> float:
        """Reserve the next start slot; return how long to wait for it."""
        if not self.interval:
            return 0.0
        now = self.clock()
        slot = max(now, self.next_slot)
        self.next_slot = slot + self.interval
        return slot - now

    async def wait(self) -> None:
        delay = self.reserve()
        if delay > 0:
            await asyncio.sleep(delay)


def backoff_delay(retry: int, *, base: float, cap: float, rng: random.Random | None = None) -> float:
    """Return the wait before retry number ``retry`` (0-based): exponential with jitter in [50%, 100%]."""
    delay = min(cap, base * (2**retry))
    return delay * (0.5 + 0.5 * (rng or random).random())


def retry_after_seconds(headers: object) -> float | None:
    """Read ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date) from response headers."""
    if headers is None:
        return None
    value = headers.get("retry-after-ms")
    if value:
        try:
            return max(float(value) / 1000.0, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        if parsed is None:
            return None
        return max((parsed - datetime.now(UTC)).total_seconds(), 0.0)


def _text_of(body: object, limit: int = 500) -> str:
    if isinstance(body, dict):
        message = body.get("message") or body.get("error") or body
        if isinstance(message, dict):
            message = message.get("message") or json.dumps(message)
        return str(message)[:limit]
    text = str(body or "")
    text = re.sub(r"<[^>]+>", " ", text)
    return " ".join(text.split())[:limit]


def error_code(body: object) -> str:
    """Return the ``code`` of an OpenAI-style error body (``{"error": {"code": ...}}``), "" if there is none."""
    error = body.get("error", body) if isinstance(body, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, str) else ""


def _causes(exc: BaseException) -> list[BaseException]:
    """Return the chain of exceptions behind ``exc`` (its cause, the cause's cause, ...)."""
    chain: list[BaseException] = []
    current = exc.__cause__ or exc.__context__
    while current is not None and current not in chain and len(chain) < 10:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def classify_exception(exc: BaseException, *, base_url: str) -> Failure:
    """Turn an exception from the client into a failure kind with a message a researcher can act on."""
    if isinstance(exc, openai.APIConnectionError):
        causes = _causes(exc)
        # The aiohttp transport reports a refused connection as a connect timeout: look at the root cause.
        refused = [c for c in causes if isinstance(c, OSError) and not isinstance(c, TimeoutError)]
        if isinstance(exc, openai.APITimeoutError) and not refused:
            return Failure("timeout", "The request timed out (no reply within the endpoint's timeout).")
        cause = refused[0] if refused else (causes[-1] if causes else exc)
        return Failure("connection", f"Could not connect to {base_url}: {str(cause) or type(cause).__name__}.")
    if isinstance(exc, openai.APIStatusError):
        return _status_failure(exc)
    return Failure("other", f"{type(exc).__name__}: {exc}")


def _status_failure(exc: openai.APIStatusError) -> Failure:
    """Turn an error status into its failure; a kind a retry may cure keeps the reply's Retry-After."""
    status = exc.status_code
    provider = _text_of(exc.body)
    if status in (400, 422) and error_code(exc.body) in CONFIG_CODES:
        return Failure(
            "config",
            f"The endpoint's settings are refused ({status} {error_code(exc.body)}): {provider} (check the model "
            f"name, the key and the parameters the endpoint sends).",
            status,
        )
    kind, message = STATUS_FAILURES.get(status, SERVER_FAILURE if status >= 500 else OTHER_FAILURE)
    retry_after = retry_after_seconds(getattr(exc.response, "headers", None)) if kind in TRANSIENT else None
    # A rate limit keeps the provider's words as its raw text too.
    raw = provider if kind == "rate_limited" else ""
    return Failure(kind, message.format(status=status, provider=provider), status, retry_after, raw)


def read_reply(response: httpx2.Response, api_style: str) -> tuple[dict, str] | Failure:
    """Decode a 2xx reply into (JSON, text), or explain why it is not an OpenAI-style reply."""
    content_type = response.headers.get("content-type", "")
    # PostgreSQL stores no NUL character: one in a reply (raw or escaped) becomes U+FFFD, the replacement character.
    raw = response.text.replace("\x00", "\ufffd").replace("\\u0000", "\\ufffd")
    if "html" in content_type or raw.lstrip()[:15].lower().startswith(("<!doctype", "<html")):
        return Failure(
            "invalid_response",
            f"The server answered with an HTML page, not JSON (HTTP {response.status_code}): check that the base "
            f"URL is the API root, usually ending in /v1. Page starts: {_text_of(raw, 120)!r}",
            response.status_code,
            raw=raw[:RAW_EXCERPT_CHARS],
        )
    if json_too_deep_at(raw, REPLY_MAX_DEPTH) is not None:
        return Failure(
            "invalid_response",
            f"The server answered with JSON nested more than {REPLY_MAX_DEPTH} levels deep "
            f"(HTTP {response.status_code}): {raw[:200]!r}",
            response.status_code,
            raw=raw[:RAW_EXCERPT_CHARS],
        )
    try:
        data = json.loads(raw)
    except ValueError:
        return Failure(
            "invalid_response",
            f"The server answered with invalid JSON (HTTP {response.status_code}): {raw[:200]!r}",
            response.status_code,
            raw=raw[:RAW_EXCERPT_CHARS],
        )
    try:
        text = response_text(api_style, data)
    except ValueError as exc:
        return Failure(
            "invalid_response",
            f"The reply is JSON but not a completion ({exc}): {raw[:200]!r}",
            response.status_code,
            raw=raw[:RAW_EXCERPT_CHARS],
        )
    return data, text


def http_client_class() -> type[httpx2.AsyncClient]:
    """Return the openai client's aiohttp transport when aiohttp is installed, else its default httpx2 one.

    Both speak the same API to the openai client; aiohttp costs a fraction of the CPU per request, which is what
    limits throughput at dozens of concurrent requests in one process.
    """
    try:
        # Only whether aiohttp can be imported matters here: the openai client imports it itself.
        import aiohttp  # noqa: F401
    except ImportError:
        return openai.DefaultAsyncHttpxClient
    return openai.DefaultAioHttpClient


class LocalGate:
    """The endpoint's limits within this process only: a semaphore and evenly spaced starts.

    For single calls (``call_make``, *Test connection*); runs pass the executor a
    ``llm.worker.limits.SharedGate``, which holds the limits across every worker.
    """

    def __init__(self, max_concurrency: int, rpm: int) -> None:
        self.semaphore = asyncio.Semaphore(max_concurrency)
        self.limiter = RateLimiter(rpm)

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        async with self.semaphore:
            await self.limiter.wait()
            yield


class Executor:
    """Send ``CallSpec``s to one endpoint, at most ``max_concurrency`` at a time and ``rpm_limit`` a minute.

    The limits are enforced by ``gate`` (anything with an async context manager ``slot()``): by default a
    ``LocalGate`` for this process alone.
    """

    def __init__(self, config: EndpointConfig, *, rng: random.Random | None = None, gate: object = None) -> None:
        self.config = config
        self.rng = rng or random.Random()
        self.gate = gate or LocalGate(config.max_concurrency, config.rpm_limit)
        self.path = PATHS.get(config.api_style, "/completions")
        self.client: openai.AsyncOpenAI | None = None

    async def __aenter__(self) -> "Executor":
        timeout = httpx2.Timeout(self.config.timeout, connect=min(self.config.timeout, 10.0))
        limits = httpx2.Limits(
            max_connections=self.config.max_concurrency, max_keepalive_connections=self.config.max_concurrency
        )
        self.client = openai.AsyncOpenAI(
            base_url=self.config.base_url,
            api_key=self.config.api_key or "no-key-needed",
            max_retries=0,
            timeout=timeout,
            http_client=http_client_class()(limits=limits, timeout=timeout),
        )
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self.client is not None:
            await self.client.close()

    def _headers(self, spec: CallSpec, send: int) -> dict:
        headers = {"Idempotency-Key": idempotency_key(spec.call_hash, send)}
        if self.config.is_simulator and spec.hints.get("answer"):
            headers["X-Sim-Answer"] = str(spec.hints["answer"])
        return headers

    async def _send_once(self, spec: CallSpec, send: int) -> tuple[httpx2.Response | None, Failure | None, float]:
        async with self.gate.slot():
            started = time.monotonic()
            try:
                response = await self.client.post(
                    self.path,
                    cast_to=httpx2.Response,
                    body=spec.request,
                    options={"headers": self._headers(spec, send), "max_retries": 0},
                )
            except Exception as exc:  # noqa: BLE001 - every failure is classified and recorded, never raised
                return None, classify_exception(exc, base_url=self.config.base_url), time.monotonic() - started
            return response, None, time.monotonic() - started

    async def call(self, spec: CallSpec) -> CallOutcome:
        """Send one request until it succeeds, fails for good, or its retries run out; never raise."""
        outcome = CallOutcome(spec=spec, started_at=datetime.now(UTC))
        send = spec.first_send
        transport_retries = 0
        parse_retries = 0
        while True:
            response, failure, elapsed = await self._send_once(spec, send)
            outcome.latency_ms = int(elapsed * 1000)
            attempt: dict = {"send": send, "latency_ms": outcome.latency_ms, "at": datetime.now(UTC).isoformat()}
            if response is not None:
                decoded = _read_attempt(response, attempt, self.config.api_style)
                if not isinstance(decoded, Failure):
                    final = _take_reply(outcome, attempt, decoded, spec.parser)
                    outcome.attempts.append(attempt)
                    if final or parse_retries >= spec.max_parse_retries:
                        break
                    parse_retries += 1
                    outcome.retries += 1
                    send += 1
                    continue
                failure = decoded
            _note_failure(attempt, failure)
            outcome.attempts.append(attempt)
            if failure.transient and transport_retries < self.config.max_retries:
                delay = self._retry_delay(failure, transport_retries)
                transport_retries += 1
                outcome.retries += 1
                await asyncio.sleep(delay)
                continue
            _give_up(outcome, failure, transport_retries)
            break
        outcome.finished_at = datetime.now(UTC)
        return outcome

    def _retry_delay(self, failure: Failure, retries: int) -> float:
        """Return how long to wait before the next try: the server's ``Retry-After`` (capped), else the backoff."""
        delay = backoff_delay(retries, base=self.config.backoff_base, cap=self.config.backoff_max)
        if failure.retry_after is not None:
            return min(max(failure.retry_after, 0.0), self.config.retry_after_max)
        return delay


def _read_attempt(response: object, attempt: dict, api_style: str) -> tuple[dict, str] | Failure:
    """Note the reply's status (and a replay) on ``attempt``; return its JSON and text, or why it is unusable."""
    attempt["http_status"] = response.status_code
    if response.headers.get("idempotent-replayed"):
        attempt["replayed"] = True
    return read_reply(response, api_style)


def _take_reply(outcome: CallOutcome, attempt: dict, decoded: tuple[dict, str], parser: Parser | None) -> bool:
    """Record a usable reply on ``outcome`` and ``attempt`` and parse it; return whether it is final (parsed, or
    nothing to parse), False when the parser refused it (the error is recorded; the caller may send again)."""
    data, text = decoded
    input_tokens, output_tokens = usage_tokens(data)
    outcome.received = True
    outcome.http_status = attempt["http_status"]
    outcome.sends += 1
    outcome.input_tokens += input_tokens
    outcome.output_tokens += output_tokens
    outcome.response_json = data
    outcome.response_text = text
    outcome.error_kind = outcome.error = ""
    attempt.update(input_tokens=input_tokens, output_tokens=output_tokens)
    if parser is None:
        return True
    try:
        outcome.result = parser(text, data)
    except Exception as exc:  # noqa: BLE001 - a parser's failure is the reply's problem
        outcome.parsed = False
        outcome.error_kind = "unparsed"
        outcome.error = f"Unparseable reply: {exc}"
        attempt.update(error_kind="unparsed", error=str(exc)[:500], raw=text[:RAW_EXCERPT_CHARS])
        return False
    outcome.parsed = True
    return True


def _note_failure(attempt: dict, failure: Failure) -> None:
    attempt.update(error_kind=failure.kind, error=failure.message[:500])
    if failure.http_status:
        attempt["http_status"] = failure.http_status
    if failure.raw:
        attempt["raw"] = failure.raw


def _give_up(outcome: CallOutcome, failure: Failure, retries: int) -> None:
    """Record on ``outcome`` the failure it ends with, after ``retries`` transport retries."""
    if outcome.received:
        # An earlier reply arrived but a later re-send for parsing failed: keep that reply, unparsed.
        outcome.error = f"{outcome.error} Re-sending failed: {failure.message}"
        return
    outcome.http_status = failure.http_status
    outcome.error_kind = "other" if failure.kind == "other_transient" else failure.kind
    prefix = f"Gave up after {retries} retries. " if failure.transient else ""
    outcome.error = prefix + failure.message
    if failure.raw:
        outcome.response_text = failure.raw


async def execute_all(config: EndpointConfig, specs: list[CallSpec]) -> list[CallOutcome]:
    """Send all specs concurrently (within the endpoint's limits) and return their outcomes in order."""
    async with Executor(config) as executor:
        return list(await asyncio.gather(*(executor.call(spec) for spec in specs)))
