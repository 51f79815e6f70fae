"""Embeddings of texts through an endpoint's embedding model (the OpenAI embeddings API, ``POST {base}/embeddings``).

An endpoint embeds when it names an ``embedding_model``. Texts are sent ``BATCH`` at a time (at most ``BATCH_CHARS``
characters per request), each request an ordinary ``LLMCall`` of its endpoint: the same key rules, retries with
backoff, idempotency keys, the call table as the cache (an identical request is answered from the stored reply, at
no cost) and its cost at the endpoint's embedding price. Requests go a wave of ``WAVE`` at a time, so that only a
wave's replies are held as JSON; the vectors are kept as one float32 matrix, L2-normalised (cosine = dot product).
Never call this inside a transaction: it sends requests.
"""

import asyncio
import base64
import dataclasses
from dataclasses import dataclass
from decimal import Decimal

import numpy as np
from django.conf import settings
from django.db import transaction

from llm.calls import EMBEDDINGS, RequestError, build_embedding_request, call_cost, request_hash
from llm.executor import CallSpec, execute_all
from llm.models import Endpoint, LLMCall
from llm.recording import CallState, KeyProblem, endpoint_config, merge_outcome

BATCH = 128
BATCH_CHARS = 100_000
WAVE = 16
# Longer texts are cut (OpenAI's models take 8,192 tokens per input; a CJK character may be more than one).
MAX_CHARS = 4000


class EmbeddingError(Exception):
    """The texts could not be embedded; the message says why (the endpoint, the call, the reply)."""


@dataclass
class Embeddings:
    vectors: np.ndarray  # (texts, dimensions), float32, rows of unit length
    model: str
    requests: int = 0
    cached: int = 0
    input_tokens: int = 0
    cost: Decimal = Decimal("0")

    @property
    def dimensions(self) -> int:
        return int(self.vectors.shape[1])


def decode_embeddings(data: object, n: int) -> np.ndarray:
    """Return the ``n`` vectors of an OpenAI embeddings reply (float lists or base64 float32) in input order,
    normalised to unit length; ``ValueError`` naming what is wrong with the reply."""
    items = data.get("data") if isinstance(data, dict) else None
    if not isinstance(items, list) or len(items) != n:
        got = len(items) if isinstance(items, list) else "no"
        raise ValueError(f"the reply has {got} embeddings for {n} texts")
    rows: list = [None] * n
    for position, item in enumerate(items):
        index = _embedding_index(item, position, rows)
        rows[index] = _embedding_vector(item.get("embedding"), index)
    return _unit_rows(rows)


def _embedding_index(item: object, position: int, rows: list) -> int:
    """Return where the reply's ``position``-th embedding goes: its ``index`` (else its position), once each."""
    index = item.get("index", position) if isinstance(item, dict) else None
    if not isinstance(index, int) or not 0 <= index < len(rows) or rows[index] is not None:
        raise ValueError(f"embedding {position} has a missing, repeated or out-of-range index")
    return index


def _embedding_vector(vector: object, index: int) -> np.ndarray:
    """Return one embedding of a reply as float32: base64 little-endian float32, or a list of numbers."""
    if isinstance(vector, str):
        try:
            return np.frombuffer(base64.b64decode(vector, validate=True), dtype="<f4")
        except (ValueError, TypeError) as exc:
            raise ValueError(f"embedding {index} is not base64 float32: {exc}") from exc
    if isinstance(vector, list) and all(isinstance(x, (int, float)) for x in vector):
        return np.asarray(vector, dtype=np.float32)
    raise ValueError(f"embedding {index} is neither a list of numbers nor base64")


def _unit_rows(rows: list[np.ndarray]) -> np.ndarray:
    """Return the vectors as one matrix of unit rows; they must be of one non-zero length, finite, not zero."""
    sizes = {len(row) for row in rows}
    if len(sizes) != 1 or 0 in sizes:
        raise ValueError(f"the embeddings have different or empty lengths: {sorted(sizes)}")
    matrix = np.vstack(rows).astype(np.float32)
    if not np.isfinite(matrix).all():
        raise ValueError("an embedding holds a value that is not a finite number")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    if (norms == 0).any():
        raise ValueError("an embedding is the zero vector")
    return matrix / norms


def _batches(texts: list[str]) -> list[list[str]]:
    batches: list[list[str]] = [[]]
    chars = 0
    for text in texts:
        if batches[-1] and (len(batches[-1]) >= BATCH or chars + len(text) > BATCH_CHARS):
            batches.append([])
            chars = 0
        batches[-1].append(text)
        chars += len(text)
    return batches


def embeddings_fetch(*, endpoint: Endpoint, texts: list[str]) -> Embeddings:
    """Embed ``texts`` with the endpoint's embedding model; return one unit vector per text, in order.

    Identical texts are embedded once; blank ones are refused. Raise ``EmbeddingError`` when the endpoint does not
    embed, its key cannot be used, a request fails for good (after the endpoint's retries) or a reply is not a
    list of one embedding per text.
    """
    if not endpoint.embedding_model:
        raise EmbeddingError(f"The endpoint {endpoint.name} has no embedding model.")
    clipped = [text.strip()[:MAX_CHARS] for text in texts]
    if not clipped or not all(clipped):
        raise EmbeddingError("Every text to embed must have some content.")
    unique = list(dict.fromkeys(clipped))
    try:
        config = dataclasses.replace(endpoint_config(endpoint), api_style=EMBEDDINGS)
        requests = [
            build_embedding_request(
                model=endpoint.embedding_model, inputs=batch, dimensions=endpoint.embedding_dimensions
            )
            for batch in _batches(unique)
        ]
    except (KeyProblem, RequestError) as exc:
        raise EmbeddingError(f"{endpoint.name}: {exc}") from exc
    found = Embeddings(vectors=np.zeros((0, 0), dtype=np.float32), model=endpoint.embedding_model)
    parts: list[np.ndarray] = []
    for start in range(0, len(requests), WAVE):
        parts += _wave(endpoint, config, requests[start : start + WAVE], found)
    if len({part.shape[1] for part in parts}) != 1:
        raise EmbeddingError(f"{endpoint.name}: the replies give embeddings of different lengths.")
    matrix = np.vstack(parts)
    if len(unique) == len(clipped):
        found.vectors = matrix
    else:
        where = {text: i for i, text in enumerate(unique)}
        found.vectors = matrix[[where[text] for text in clipped]]
    return found


def _wave(endpoint: Endpoint, config: object, requests: list[dict], found: Embeddings) -> list[np.ndarray]:
    """Embed one wave of requests: from the cache where the call succeeded before, else sent now and recorded."""
    hashes = [request_hash(request) for request in requests]
    with transaction.atomic():
        LLMCall.objects.bulk_create(
            [LLMCall(endpoint=endpoint, request_hash=h, request=r) for h, r in zip(hashes, requests, strict=True)],
            ignore_conflicts=True,
        )
    calls = {c.request_hash: c for c in LLMCall.objects.filter(endpoint=endpoint, request_hash__in=hashes)}
    vectors: dict[str, np.ndarray] = {}
    specs = []
    for key, request in zip(hashes, requests, strict=True):
        call, n = calls[key], len(request["input"])
        if call.status == LLMCall.Status.SUCCEEDED:
            try:
                vectors[key] = decode_embeddings(call.response_json, n)
            except ValueError:
                pass  # a stored reply that does not decode is sent again
            else:
                found.cached += 1
                continue
        specs.append(
            CallSpec(
                ident=key,
                request=request,
                call_hash=key,
                first_send=call.sends,
                parser=lambda _text, data, n=n: decode_embeddings(data, n),
                max_parse_retries=settings.LLM_MAX_PARSE_RETRIES,
            )
        )
    outcomes = asyncio.run(execute_all(config, specs)) if specs else []
    with transaction.atomic():
        for outcome in outcomes:
            call = calls[outcome.spec.ident]
            cost = call_cost(
                input_tokens=outcome.input_tokens,
                output_tokens=0,
                price_input=endpoint.price_embedding_per_mtok,
                price_output=Decimal("0"),
            )
            state = CallState(
                call.pk, call.sends, call.retries, call.input_tokens, call.output_tokens, call.cost, call.attempts
            )
            LLMCall.objects.filter(pk=call.pk).update(**merge_outcome(state, outcome, cost))
            found.requests += 1
            found.input_tokens += outcome.input_tokens
            found.cost += cost
    for outcome in outcomes:
        if not outcome.parsed:
            raise EmbeddingError(f"{endpoint.name} ({endpoint.embedding_model}): {outcome.error}")
        vectors[outcome.spec.ident] = outcome.result
    return [vectors[key] for key in hashes]
