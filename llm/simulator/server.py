"""A local OpenAI-compatible HTTP server that plays the models the app needs, with injected faults.

A plain asyncio server (HTTP/1.1, keep-alive, a large listen backlog) so that hundreds of concurrent
connections cost one process and no dependency. Replies come from ``llm.simulator.simulation`` and are deterministic per
(seed, model, request); latency and faults are drawn per attempt.

Billing is simulated honestly: every 200 reply is one billable request, counted per ``Idempotency-Key`` (or per
request body when the client sends none). A request repeating a key that already has a reply gets the stored
reply again, marked ``Idempotent-Replayed: true``, and is not billed again. ``GET /_sim/stats`` shows the counts.

It also counts requests in flight (the most at once: ``max_in_flight``) and requests per minute (the most in
any 60-second window; ``?window=S`` adds the most in any window of S seconds), so that tests can check the
endpoint limits that workers share.

Paths: ``/v1/chat/completions``, ``/v1/completions``, ``/v1/embeddings``, ``/v1/models``; the same under ``/html/``,
``/badjson/`` or ``/unauthorized/`` for a server that answers with an HTML page, broken JSON or 401. Admin:
``GET /_sim/stats``, ``POST /_sim/reset``, ``GET|POST /_sim/config`` (JSON with the fault and latency settings).

The Batch API as OpenAI has it: ``POST /v1/files`` (multipart, ``purpose=batch``, a JSONL of ``{custom_id, method,
url, body}``), ``GET /v1/files/{id}[/content]``, ``POST /v1/batches``, ``GET /v1/batches[/{id}]`` and
``POST /v1/batches/{id}/cancel``. A batch completes ``batch_delay_ms`` after its creation (answered when it is
next read); ``batch_error_rate`` of its requests fail (in the error file) and ``batch_expire_rate`` of batches
expire with only the first half of their requests answered. A batch request is billed under its ``custom_id``,
the same key space as live ``Idempotency-Key``s, and its reply is stored under that key, so a live re-send of an
answered request is replayed, not billed.
"""

import asyncio
import contextlib
import hashlib
import json
import logging
import random
import time
from collections import Counter, OrderedDict
from dataclasses import asdict, dataclass, fields
from urllib.parse import parse_qs, urlsplit

from llm.simulator import embeddings, refusals, simulation
from llm.simulator.batches import BatchAPI, Reply, error_reply, json_reply

logger = logging.getLogger("llm.simulator")

FINGERPRINT = "eistudio-simulator"
MAX_BODY_BYTES = 20 * 1024 * 1024
MAX_STORED_REPLIES = 500_000
MAX_ARRIVALS = 1_000_000
KNOWN_MODELS = (
    "sim-mcq-acc90",
    "sim-mcq-acc70",
    "sim-mcq-acc40",
    "sim-style-template",
    "sim-style-list",
    "sim-style-concise",
    "sim-judge",
    "sim-judge-noise25-bias10",
    "sim-drafter",
    "sim-echo",
    "sim-embed",
)
REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    405: "Method Not Allowed",
    413: "Payload Too Large",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
}


@dataclass
class SimulatorConfig:
    host: str = "127.0.0.1"
    port: int = 8765
    latency_ms: float = 300.0
    jitter_ms: float = 100.0
    error_rate_429: float = 0.0
    error_rate_500: float = 0.0
    timeout_rate: float = 0.0
    garbage_rate: float = 0.0
    seed: int = 0
    retry_after_ms: int = 1000
    hang_seconds: float = 300.0
    batch_delay_ms: float = 1000.0
    batch_error_rate: float = 0.0
    batch_expire_rate: float = 0.0
    # Faults of other servers: the status an unknown model gets (404 as OpenAI, 400 as LiteLLM, without a code),
    # refusing ``max_tokens`` as OpenAI's reasoning models do (400 unsupported_parameter), the status the Files and
    # Batches API answers with (0: normally; 500: an outage; 404: a server without it), and usage reported as 0.
    unknown_model_status: int = 404
    reject_max_tokens: int = 0
    batch_api_status: int = 0
    zero_usage: int = 0
    backlog: int = 2048

    TUNABLE = (
        "latency_ms",
        "jitter_ms",
        "error_rate_429",
        "error_rate_500",
        "timeout_rate",
        "garbage_rate",
        "seed",
        "retry_after_ms",
        "hang_seconds",
        "batch_delay_ms",
        "batch_error_rate",
        "batch_expire_rate",
        "unknown_model_status",
        "reject_max_tokens",
        "batch_api_status",
        "zero_usage",
    )
    CHOICES = {
        "unknown_model_status": (400, 404),
        "reject_max_tokens": (0, 1),
        "batch_api_status": (0, 404, 500, 502, 503),
        "zero_usage": (0, 1),
    }

    def update(self, values: dict) -> None:
        """Change the tunable settings named in ``values``; raise ``ValueError`` on an unknown or bad one."""
        types = {f.name: f.type for f in fields(self)}
        for name, value in values.items():
            if name not in self.TUNABLE:
                raise ValueError(f"unknown or fixed setting {name!r}")
            number = float(value)
            if number < 0 or (name.endswith("_rate") and number > 1):
                raise ValueError(f"{name} out of range")
            if name in self.CHOICES and number not in self.CHOICES[name]:
                raise ValueError(f"{name} must be one of {self.CHOICES[name]}")
            setattr(self, name, int(number) if types[name] in (int, "int") else number)


def max_in_window(times: list[float], seconds: float) -> int:
    """Return the largest number of ``times`` (ascending) that fall within any window of ``seconds``."""
    best = start = 0
    for end, moment in enumerate(times):
        while moment - times[start] >= seconds:
            start += 1
        best = max(best, end - start + 1)
    return best


class Simulator(BatchAPI):
    """The server's state: settings, stored replies by idempotency key, and billing statistics."""

    def __init__(self, config: SimulatorConfig) -> None:
        self.config = config
        self.jitter = random.Random(config.seed)
        self.reset()

    def reset(self) -> None:
        self.stored: OrderedDict[str, Reply] = OrderedDict()
        self.inflight: dict[str, asyncio.Future] = {}
        self.seen: Counter[str] = Counter()
        self.billed: Counter[str] = Counter()
        self.status_counts: Counter[int] = Counter()
        self.requests = 0
        self.replayed = 0
        self.timeouts = 0
        self.garbled = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.open_connections = getattr(self, "open_connections", 0)  # connections outlive a reset
        self.max_open_connections = self.open_connections
        self.in_flight = getattr(self, "in_flight", 0)  # so do requests being answered
        self.max_in_flight = self.in_flight
        self.arrivals: list[float] = []  # monotonic arrival times of model requests, for the rate statistics
        self.files: dict[str, dict] = {}
        self.batches: dict[str, dict] = {}
        self.batch_requests = 0
        self.batch_api_calls = 0
        self.started = time.time()

    def stats(self, *, with_keys: bool = False, window: float | None = None) -> dict:
        duplicates = {key: n for key, n in self.billed.items() if n > 1}
        data = {
            "simulator": FINGERPRINT,
            "requests": self.requests,
            "billable": sum(self.billed.values()),
            "billed_keys": len(self.billed),
            "duplicate_billed_keys": len(duplicates),
            "max_billed_per_key": max(self.billed.values(), default=0),
            "replayed": self.replayed,
            "timeouts": self.timeouts,
            "garbled": self.garbled,
            "by_status": {str(k): v for k, v in sorted(self.status_counts.items())},
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "open_connections": self.open_connections,
            "max_open_connections": self.max_open_connections,
            "in_flight": self.in_flight,
            "max_in_flight": self.max_in_flight,
            "max_requests_per_minute": max_in_window(self.arrivals, 60.0),
            "batches": len(self.batches),
            "batch_requests": self.batch_requests,
            "batch_api_calls": self.batch_api_calls,
            "batches_by_status": dict(Counter(batch["status"] for batch in self.batches.values())),
            "files": len(self.files),
            "config": {k: v for k, v in asdict(self.config).items() if k in SimulatorConfig.TUNABLE},
        }
        if with_keys:
            data["billed"] = dict(self.billed)
        if window:
            data["max_requests_in_window"] = {"seconds": window, "requests": max_in_window(self.arrivals, window)}
        return data

    # --- HTTP ------------------------------------------------------------------------------------------------

    async def handle_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.open_connections += 1
        self.max_open_connections = max(self.max_open_connections, self.open_connections)
        try:
            while True:
                request = await self._read_request(reader)
                if request is None:
                    break
                method, target, headers, body = request
                reply = await self.dispatch(method, target, headers, body)
                if reply is None:  # an injected timeout: hang up without answering
                    break
                keep_alive = headers.get("connection", "").lower() != "close"
                self._write_reply(writer, reply, keep_alive)
                await writer.drain()
                if not keep_alive:
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass
        finally:
            self.open_connections -= 1
            with contextlib.suppress(Exception):
                writer.close()

    async def _read_request(self, reader: asyncio.StreamReader) -> tuple[str, str, dict, bytes] | None:
        line = await reader.readline()
        if not line:
            return None
        parts = line.decode("latin-1").strip().split()
        if len(parts) != 3:
            raise ValueError("bad request line")
        method, target, _version = parts
        headers: dict[str, str] = {}
        while True:
            raw = await reader.readline()
            if raw in (b"\r\n", b"\n", b""):
                break
            name, _, value = raw.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        if headers.get("transfer-encoding", "").lower() == "chunked":
            body = b""
            while True:
                size = int((await reader.readline()).strip().split(b";")[0], 16)
                if size == 0:
                    await reader.readline()
                    break
                body += await reader.readexactly(size)
                await reader.readline()
                if len(body) > MAX_BODY_BYTES:
                    raise ValueError("body too large")
        else:
            length = int(headers.get("content-length") or 0)
            if length > MAX_BODY_BYTES:
                raise ValueError("body too large")
            body = await reader.readexactly(length) if length else b""
        return method.upper(), target, headers, body

    def _write_reply(self, writer: asyncio.StreamWriter, reply: Reply, keep_alive: bool) -> None:
        head = [
            f"HTTP/1.1 {reply.status} {REASONS.get(reply.status, 'OK')}",
            f"Content-Type: {reply.content_type}; charset=utf-8",
            f"Content-Length: {len(reply.body)}",
            f"Connection: {'keep-alive' if keep_alive else 'close'}",
            "Server: eistudio-simulator",
        ]
        for name, value in (reply.headers or {}).items():
            head.append(f"{name}: {value}")
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + reply.body)

    # --- routing ---------------------------------------------------------------------------------------------

    async def dispatch(self, method: str, target: str, headers: dict, body: bytes) -> Reply | None:
        split = urlsplit(target)
        path = split.path
        if path.startswith("/_sim/"):
            return self.admin(method, path, parse_qs(split.query), body)
        mode = "normal"
        for prefix in ("/html/", "/badjson/", "/unauthorized/"):
            if path.startswith(prefix):
                mode, path = prefix.strip("/"), path[len(prefix) - 1 :]
        if mode == "normal" and ("/files" in path or "/batches" in path):
            self.batch_api_calls += 1
            if self.config.batch_api_status:
                status = self.config.batch_api_status
                message = "The server had an error (simulated)." if status >= 500 else f"Unknown path {path}."
                return error_reply(status, message, "server_error" if status >= 500 else "invalid_request_error")
            return self.batch_api(method, path, parse_qs(split.query), headers, body)
        self.requests += 1
        self.arrivals.append(time.monotonic())
        if len(self.arrivals) > MAX_ARRIVALS:
            del self.arrivals[: MAX_ARRIVALS // 2]
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            reply = await self.route(method, path, headers, body, mode)
        finally:
            self.in_flight -= 1
        if reply is not None:
            self.status_counts[reply.status] += 1
        return reply

    def admin(self, method: str, path: str, query: dict, body: bytes) -> Reply:
        if path == "/_sim/stats" and method == "GET":
            try:
                window = float(query["window"][0]) if "window" in query else None
            except ValueError:
                return error_reply(400, "window must be a number of seconds", "invalid_request_error")
            return json_reply(200, self.stats(with_keys="keys" in query, window=window))
        if path == "/_sim/reset" and method == "POST":
            self.reset()
            return json_reply(200, {"reset": True})
        if path == "/_sim/config":
            if method == "POST":
                try:
                    self.config.update(json.loads(body or b"{}"))
                except (ValueError, TypeError) as exc:
                    return error_reply(400, str(exc), "invalid_request_error")
            return json_reply(200, {k: v for k, v in asdict(self.config).items() if k in SimulatorConfig.TUNABLE})
        return error_reply(404, f"No simulator admin route {path}", "invalid_request_error")

    async def route(self, method: str, path: str, headers: dict, body: bytes, mode: str) -> Reply | None:
        if mode == "unauthorized":
            return error_reply(401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key")
        if path.endswith("/models") and method == "GET":
            return json_reply(200, {"object": "list", "data": [self._model_card(m) for m in KNOWN_MODELS]})
        style = refusals.style_for(path)
        if style is None:
            return error_reply(404, f"Unknown path {path}; try /v1/chat/completions.", "invalid_request_error")
        if method != "POST":
            return error_reply(405, "Use POST.", "invalid_request_error")
        if mode in refusals.BROKEN:
            await asyncio.sleep(0.005)
            return refusals.broken_reply(mode)
        data = refusals.read_request(
            body, unknown_model_status=self.config.unknown_model_status, reject_max_tokens=self.config.reject_max_tokens
        )
        if isinstance(data, Reply):
            return data
        problem = self._validate(style, data)
        if problem:
            return error_reply(400, problem, "invalid_request_error")
        key = headers.get("idempotency-key") or "body:" + hashlib.sha256(body).hexdigest()[:32]
        return await self._idempotent(key, style, data, headers)

    # --- files and batches -------------------------------------------------------------------------------------

    @staticmethod
    def _model_card(model: str) -> dict:
        return {"id": model, "object": "model", "created": 0, "owned_by": FINGERPRINT}

    @staticmethod
    def _validate(style: str, data: dict) -> str:
        return refusals.request_problem(style, data)

    async def _idempotent(self, key: str, style: str, data: dict, headers: dict) -> Reply | None:
        while True:
            if key in self.stored:
                self.replayed += 1
                stored = self.stored[key]
                return Reply(
                    stored.status, stored.body, headers={**(stored.headers or {}), "Idempotent-Replayed": "true"}
                )
            pending = self.inflight.get(key)
            if pending is None:
                break
            await asyncio.shield(pending)
        future = asyncio.get_running_loop().create_future()
        self.inflight[key] = future
        try:
            reply = await self._answer(key, style, data, headers)
            if reply is not None and reply.status == 200:
                self.stored[key] = reply
                if len(self.stored) > MAX_STORED_REPLIES:
                    self.stored.popitem(last=False)
        finally:
            del self.inflight[key]
            future.set_result(None)
        if reply is None:
            # An injected timeout: the client gives up first; a retry with the same key is served normally.
            await asyncio.sleep(self.config.hang_seconds)
        return reply

    async def _answer(self, key: str, style: str, data: dict, headers: dict) -> Reply | None:
        config = self.config
        attempt = self.seen[key]
        self.seen[key] += 1
        fault = simulation.rng_for("fault", config.seed, key, attempt)
        draw = fault.random()
        if draw < config.error_rate_429:
            await asyncio.sleep(0.002)
            wait_ms = config.retry_after_ms
            return error_reply(
                429,
                "Rate limit reached for requests (simulated). Please try again later.",
                "requests",
                "rate_limit_exceeded",
                headers={"retry-after": str(max(1, round(wait_ms / 1000))), "retry-after-ms": str(wait_ms)},
            )
        draw -= config.error_rate_429
        if draw < config.error_rate_500:
            await asyncio.sleep(config.latency_ms / 2000)
            message = "The server had an error while processing your request (simulated)."
            return error_reply(500, message, "server_error")
        draw -= config.error_rate_500
        if draw < config.timeout_rate:
            self.timeouts += 1
            return None
        delay = config.latency_ms + config.jitter_ms * (2 * self.jitter.random() - 1)
        await asyncio.sleep(max(delay, 0) / 1000)
        started = time.time()
        hints = {"answer": headers.get("x-sim-answer", "")}
        styles = {"chat": lambda: self._chat(data, hints), "embeddings": lambda: embeddings.payload(data)}
        payload = styles.get(style, lambda: self._completions(data))()
        if fault.random() < config.garbage_rate:
            self.garbled += 1
            simulation.garble_choices(payload, simulation.rng_for("garble", config.seed, key, attempt))
        if config.zero_usage:
            payload["usage"] = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
        self.billed[key] += 1
        self.prompt_tokens += payload["usage"]["prompt_tokens"]
        self.completion_tokens += payload["usage"].get("completion_tokens", 0)
        request_id = "req_sim_" + hashlib.sha256(f"{key}:{attempt}".encode()).hexdigest()[:20]
        return json_reply(
            200,
            payload,
            headers={"x-request-id": request_id, "openai-processing-ms": str(int((time.time() - started) * 1000))},
        )

    def _chat(self, data: dict, hints: dict) -> dict:
        model = data["model"]
        seed = self.config.seed if data.get("seed") is None else data["seed"]
        messages = data["messages"]
        text = simulation.chat_reply(model, messages, seed=seed, hints=hints)
        finish = "stop"
        max_tokens = data.get("max_tokens", data.get("max_completion_tokens"))
        if max_tokens is not None:
            text, cut = simulation.truncate_tokens(text, max_tokens)
            finish = "length" if cut else finish
        prompt_tokens = simulation.prompt_tokens(messages)
        completion_tokens = simulation.count_tokens(text)
        digest = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:24]
        return {
            "id": f"chatcmpl-sim-{digest}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "system_fingerprint": FINGERPRINT,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "logprobs": None,
                    "finish_reason": finish,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    def _completions(self, data: dict) -> dict:
        model = data["model"]
        seed = self.config.seed if data.get("seed") is None else data["seed"]
        prompts = data["prompt"] if isinstance(data["prompt"], list) else [data["prompt"]]
        max_tokens = data.get("max_tokens")
        max_tokens = 16 if max_tokens is None else max_tokens
        choices = []
        prompt_total = completion_total = 0
        for index, prompt in enumerate(prompts):
            reply = simulation.completion_reply(
                model,
                str(prompt),
                seed=seed,
                max_tokens=max_tokens,
                echo=bool(data.get("echo")),
                logprobs=data.get("logprobs"),
            )
            prompt_total += reply["prompt_tokens"]
            completion_total += reply["completion_tokens"]
            choices.append(
                {
                    "index": index,
                    "text": reply["text"],
                    "logprobs": reply.get("logprobs"),
                    "finish_reason": "length" if max_tokens else "stop",
                }
            )
        digest = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:24]
        return {
            "id": f"cmpl-sim-{digest}",
            "object": "text_completion",
            "created": int(time.time()),
            "model": model,
            "system_fingerprint": FINGERPRINT,
            "choices": choices,
            "usage": {
                "prompt_tokens": prompt_total,
                "completion_tokens": completion_total,
                "total_tokens": prompt_total + completion_total,
            },
        }


async def serve(config: SimulatorConfig, *, ready: asyncio.Future | None = None) -> None:
    """Serve until cancelled; set ``ready`` to the bound (host, port) once listening."""
    simulator = Simulator(config)
    connections: set[asyncio.Task] = set()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        connections.add(task)
        try:
            await simulator.handle_connection(reader, writer)
        finally:
            connections.discard(task)

    server = await asyncio.start_server(handle, config.host, config.port, backlog=config.backlog, reuse_address=True)
    host, port = server.sockets[0].getsockname()[:2]
    config.port = port
    if ready is not None:
        ready.set_result((host, port))
    try:
        await server.serve_forever()
    finally:
        # Idle keep-alive connections and hanging "timeout" replies must not keep the process alive.
        server.close()
        for task in list(connections):
            task.cancel()
