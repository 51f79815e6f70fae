"""Requests, their cache keys and their cost: pure functions, no database.

A request is the exact JSON body sent to the provider (model, messages or prompt, parameters). Its hash is
the cache key: the same endpoint, model, messages, parameters and seed give the same hash.
"""

import hashlib
from decimal import ROUND_HALF_UP, Decimal

from core.canonical import canonical_json

CHAT = "chat"
COMPLETIONS = "completions"
# Not an endpoint's API style: the kind of request an endpoint with an embedding model also takes (/embeddings).
EMBEDDINGS = "embeddings"
MILLION = Decimal(1_000_000)
CENT_FRACTION = Decimal("0.00000001")
# A rough characters-per-token ratio for estimates made before any reply arrives.
CHARS_PER_TOKEN = 4
DEFAULT_EXPECTED_OUTPUT_TOKENS = 256


class RequestError(ValueError):
    """A prompt cannot be turned into a request (its message says which field is wrong)."""


def build_request(
    *,
    api_style: str,
    model: str,
    defaults: dict,
    messages: list | None = None,
    prompt: str | None = None,
    params: dict | None = None,
) -> dict:
    """Return the JSON body for one request: the endpoint's defaults, overridden by the prompt's ``params``."""
    for reserved in ("model", "messages", "prompt", "stream", "n"):
        if params and reserved in params:
            raise RequestError(f"params may not set {reserved!r}")
    body: dict = {"model": model}
    body.update(defaults)
    body.update(params or {})
    if api_style == CHAT:
        _chat_body(body, messages=messages, prompt=prompt)
    elif api_style == COMPLETIONS:
        _completions_body(body, messages=messages, prompt=prompt)
    else:
        raise RequestError(f"unknown API style {api_style!r}")
    return body


def _chat_body(body: dict, *, messages: list | None, prompt: str | None) -> None:
    """Add the messages to a chat request's ``body`` (a lone ``prompt`` as the user's message)."""
    if prompt is not None and messages is None:
        messages = [{"role": "user", "content": prompt}]
    if not isinstance(messages, list) or not messages:
        raise RequestError("messages must be a non-empty list of {role, content} objects")
    for message in messages:
        if not isinstance(message, dict) or "role" not in message or "content" not in message:
            raise RequestError("every message needs a role and a content")
    body["messages"] = messages


def _completions_body(body: dict, *, messages: list | None, prompt: str | None) -> None:
    """Add the prompt to a completions request's ``body`` (messages joined when there is no prompt), scored by
    default: the prompt echoed with its log-probabilities, no tokens generated."""
    if prompt is None and messages:
        prompt = "\n\n".join(str(m.get("content", "")) for m in messages if isinstance(m, dict))
    if not isinstance(prompt, str) or not prompt:
        raise RequestError("prompt must be a non-empty string for a completions endpoint")
    body.pop("reasoning_effort", None)
    body["prompt"] = prompt
    body.setdefault("echo", True)
    body.setdefault("logprobs", 1)
    body.setdefault("max_tokens", 0)


def request_hash(request: dict, *, fresh_nonce: str = "") -> str:
    """Return the cache key of a request; a ``fresh_nonce`` makes a deliberately distinct key."""
    text = canonical_json(request)
    if fresh_nonce:
        text += "\nfresh:" + fresh_nonce
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def idempotency_key(call_hash: str, send_number: int) -> str:
    """Return the Idempotency-Key for the ``send_number``-th billable send of a call (0 for the first)."""
    return call_hash if send_number == 0 else f"{call_hash}:{send_number}"


def call_cost(*, input_tokens: int, output_tokens: int, price_input: Decimal, price_output: Decimal) -> Decimal:
    """Return the price of a reply from its token counts and the prices per million tokens."""
    cost = (Decimal(input_tokens) * Decimal(price_input) + Decimal(output_tokens) * Decimal(price_output)) / MILLION
    return cost.quantize(CENT_FRACTION, rounding=ROUND_HALF_UP)


def rough_request_cost(request: dict, *, price_input: Decimal, price_output: Decimal) -> Decimal:
    """Estimate what a request will cost before sending it (characters / 4 in, max_tokens or 256 out)."""
    if "messages" in request:
        chars = sum(len(str(m.get("content", ""))) for m in request["messages"] if isinstance(m, dict))
    else:
        chars = len(str(request.get("prompt", "")))
    max_tokens = request.get("max_tokens", request.get("max_completion_tokens"))
    output = DEFAULT_EXPECTED_OUTPUT_TOKENS if max_tokens is None else int(max_tokens)
    return call_cost(
        input_tokens=chars // CHARS_PER_TOKEN + 1,
        output_tokens=output,
        price_input=price_input,
        price_output=price_output,
    )


def request_max_cost(request: dict, *, price_input: Decimal, price_output: Decimal, sends: int = 1) -> Decimal:
    """Return the most a request can cost, for budgets: a token per prompt character, ``max_tokens`` out.

    A token per character (plus each message's overhead) is more than any tokenizer in use counts for text; without
    ``max_tokens`` the reply is taken to be at most 256 tokens. ``sends`` counts re-sends after unparseable replies.
    """
    if "messages" in request:
        messages = [m for m in request["messages"] if isinstance(m, dict)]
        input_tokens = sum(len(str(m.get("content", ""))) + 4 for m in messages) + 3
    else:
        input_tokens = len(str(request.get("prompt", ""))) + 1
    max_tokens = request.get("max_tokens", request.get("max_completion_tokens"))
    output = DEFAULT_EXPECTED_OUTPUT_TOKENS if max_tokens is None else int(max_tokens)
    one = call_cost(input_tokens=input_tokens, output_tokens=output, price_input=price_input, price_output=price_output)
    return one * max(sends, 1)


def estimate_total(
    *, spent: Decimal, billed_items: int, remaining: int, initial_estimate: Decimal, planned: int
) -> Decimal:
    """Estimate a run's total cost: what was spent plus the remaining items at the average cost so far.

    Before any billed reply, scale the up-front estimate (from prompt lengths) to the remaining items.
    """
    if billed_items > 0:
        average = Decimal(spent) / billed_items
        total = Decimal(spent) + average * remaining
    elif planned > 0:
        total = Decimal(spent) + Decimal(initial_estimate) * remaining / planned
    else:
        total = Decimal(spent)
    return total.quantize(CENT_FRACTION, rounding=ROUND_HALF_UP)


def response_text(api_style: str, data: object) -> str:
    """Return the text of the first choice of a chat or completions reply; raise ``ValueError`` if absent."""
    if api_style == EMBEDDINGS:
        return embeddings_summary(data)
    if not isinstance(data, dict) or not isinstance(data.get("choices"), list) or not data["choices"]:
        raise ValueError("the reply has no choices")
    choice = data["choices"][0]
    if not isinstance(choice, dict):
        raise ValueError("the first choice is not an object")
    if api_style == CHAT:
        message = choice.get("message")
        if not isinstance(message, dict):
            raise ValueError("the first choice has no message")
        content = message.get("content")
        return content if isinstance(content, str) else ""
    text = choice.get("text")
    if not isinstance(text, str):
        raise ValueError("the first choice has no text")
    return text


def build_embedding_request(*, model: str, inputs: list[str], dimensions: int | None = None) -> dict:
    """Return the JSON body of an embeddings request (vectors as base64 float32, the compact form)."""
    if not inputs or not all(isinstance(text, str) and text for text in inputs):
        raise RequestError("input must be a non-empty list of non-empty strings")
    body: dict = {"model": model, "input": inputs, "encoding_format": "base64"}
    if dimensions is not None:
        body["dimensions"] = dimensions
    return body


def embeddings_summary(data: object) -> str:
    """Check that a reply is an OpenAI embeddings list and describe it ("3 embeddings"); ``ValueError`` if not."""
    items = data.get("data") if isinstance(data, dict) else None
    if not isinstance(items, list) or not items:
        raise ValueError("the reply has no data list of embeddings")
    if not all(isinstance(item, dict) and isinstance(item.get("embedding"), (list, str)) for item in items):
        raise ValueError("an item of the data list has no embedding")
    return f"{len(items)} embeddings"


def usage_tokens(data: object) -> tuple[int, int]:
    """Return (input, output) token counts from a reply's ``usage``, 0 when the provider sent none."""
    usage = data.get("usage") if isinstance(data, dict) else None
    if not isinstance(usage, dict):
        return 0, 0

    def count(*names: str) -> int:
        for name in names:
            value = usage.get(name)
            if isinstance(value, int) and value >= 0:
                return value
        return 0

    return count("prompt_tokens", "input_tokens"), count("completion_tokens", "output_tokens")
