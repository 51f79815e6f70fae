"""Embeddings: the simulator's ``POST /v1/embeddings`` in OpenAI's shape (over HTTP), and ``llm.embeddings`` fetching
vectors through an endpoint's embedding model with the calls' cache, retries and cost, against the simulator."""

import base64
import json
import urllib.error
import urllib.request
from decimal import Decimal

import numpy as np
import pytest

from llm.embeddings import BATCH, EmbeddingError, decode_embeddings, embeddings_fetch
from llm.models import LLMCall
from llm.simulator import embeddings as simulated

pytestmark = pytest.mark.django_db


def post(simulator, body: dict, path: str = "/v1/embeddings") -> tuple[int, dict]:
    request = urllib.request.Request(
        simulator.root + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)


def test_the_simulator_answers_in_openais_shape(simulator):
    texts = ["I lost my job today and I feel terrible.", "I lost my job yesterday; I feel awful.", "Paris is sunny."]
    status, data = post(simulator, {"model": "sim-embed", "input": texts})
    assert status == 200
    assert set(data) == {"object", "data", "model", "usage"} and data["object"] == "list"
    assert data["model"] == "sim-embed"
    assert [item["index"] for item in data["data"]] == [0, 1, 2]
    assert all(set(item) == {"object", "index", "embedding"} and item["object"] == "embedding" for item in data["data"])
    vectors = np.array([item["embedding"] for item in data["data"]])
    assert vectors.shape == (3, 256) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # Similar texts get similar vectors; unrelated ones nearly orthogonal ones.
    assert vectors[0] @ vectors[1] > 0.4 and abs(vectors[0] @ vectors[2]) < 0.2
    usage = data["usage"]
    assert set(usage) == {"prompt_tokens", "total_tokens"} and usage["prompt_tokens"] == usage["total_tokens"] > 10

    # One string, a chosen size and base64 float32 give the same vector as the pure function, whatever the batch.
    status, one = post(
        simulator, {"model": "sim-embed", "input": texts[0], "dimensions": 64, "encoding_format": "base64"}
    )
    assert status == 200 and len(one["data"]) == 1
    vector = np.frombuffer(base64.b64decode(one["data"][0]["embedding"]), dtype="<f4")
    assert vector.shape == (64,) and np.allclose(vector, simulated.embed(texts[0], 64))
    status, sized = post(simulator, {"model": "sim-embed-32", "input": [texts[2], texts[0]]})
    assert len(sized["data"][1]["embedding"]) == 32
    assert np.allclose(sized["data"][1]["embedding"], simulated.embed(texts[0], 32), atol=1e-6)
    # Chinese is read by characters and pairs of characters.
    zh = [simulated.embed("我今天丢了工作，很难过"), simulated.embed("我昨天丢了工作，感觉很难过")]
    assert zh[0] @ zh[1] > 0.5


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"model": "sim-embed", "input": ""}, 400, "input[0]"),
        ({"model": "sim-embed", "input": []}, 400, "non-empty"),
        ({"model": "sim-embed", "input": ["ok", 3.5]}, 400, "input[1]"),
        ({"model": "sim-embed", "input": "ok", "dimensions": 0}, 400, "dimensions"),
        ({"model": "sim-embed", "input": "ok", "encoding_format": "int8"}, 400, "encoding_format"),
        ({"model": "sim-embed", "input": ["x"] * 2049}, 400, "2048"),
        ({"model": "text-embedding-3-small", "input": "ok"}, 404, "does not exist"),
    ],
)
def test_the_simulator_refuses_a_bad_request_as_openai_does(simulator, body, status, message):
    got, data = post(simulator, body)
    assert got == status and message in data["error"]["message"]


def test_token_arrays_are_embedded_too(simulator):
    status, data = post(simulator, {"model": "sim-embed", "input": [[1, 2, 3], [1, 2, 4]]})
    assert status == 200 and len(data["data"]) == 2


def test_decoding_refuses_a_reply_that_does_not_match_the_texts():
    good = {"data": [{"index": 1, "embedding": [0.0, 2.0]}, {"index": 0, "embedding": [3.0, 4.0]}]}
    assert np.allclose(decode_embeddings(good, 2), [[0.6, 0.8], [0.0, 1.0]])
    with pytest.raises(ValueError, match="1 embeddings for 2 texts"):
        decode_embeddings({"data": good["data"][:1]}, 2)
    with pytest.raises(ValueError, match="index"):
        decode_embeddings({"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [1.0]}]}, 2)
    with pytest.raises(ValueError, match="different"):
        decode_embeddings({"data": [{"embedding": [1.0]}, {"embedding": [1.0, 0.0]}]}, 2)
    with pytest.raises(ValueError, match="zero vector"):
        decode_embeddings({"data": [{"embedding": [0.0, 0.0]}]}, 1)


def test_fetching_records_calls_answers_repeats_from_the_cache_and_costs_the_tokens(simulator, make_endpoint):
    endpoint = make_endpoint(
        "sim-style-concise", embedding_model="sim-embed", embedding_dimensions=48, price_embedding_per_mtok="0.5"
    )
    texts = [f"Text number {n}: my friend {n % 7} forgot my birthday." for n in range(BATCH + 20)]
    found = embeddings_fetch(endpoint=endpoint, texts=[*texts, texts[0]])
    assert found.vectors.shape == (len(texts) + 1, 48) and found.vectors.dtype == np.float32
    assert np.allclose(found.vectors[0], simulated.embed(texts[0], 48)) and np.allclose(
        found.vectors[-1], found.vectors[0]
    )
    assert (found.requests, found.cached, found.dimensions) == (2, 0, 48)
    calls = list(LLMCall.objects.filter(endpoint=endpoint))
    assert len(calls) == 2 and all(c.status == LLMCall.Status.SUCCEEDED and c.parsed for c in calls)
    assert sorted(len(c.request["input"]) for c in calls) == [20, BATCH]
    assert all(c.request["model"] == "sim-embed" and c.request["dimensions"] == 48 for c in calls)
    assert sum(c.input_tokens for c in calls) == found.input_tokens == simulator.stats()["prompt_tokens"]
    assert sum(c.cost for c in calls) == found.cost == Decimal(found.input_tokens) * Decimal("0.5") / 1_000_000
    requests = simulator.stats()["requests"]
    again = embeddings_fetch(endpoint=endpoint, texts=texts)
    assert (again.requests, again.cached, again.cost) == (0, 2, 0) and simulator.stats()["requests"] == requests
    assert np.array_equal(again.vectors, found.vectors[:-1])


def test_transient_errors_are_retried_and_recorded(simulator, make_endpoint):
    simulator.configure(error_rate_429=0.5, retry_after_ms=10)
    endpoint = make_endpoint("sim-style-concise", embedding_model="sim-embed")
    texts = [f"Another text {n} about a cancelled trip." for n in range(BATCH * 3)]
    found = embeddings_fetch(endpoint=endpoint, texts=texts)
    assert found.vectors.shape == (len(texts), 256)
    calls = LLMCall.objects.filter(endpoint=endpoint)
    assert sum(c.retries for c in calls) > 0 and all(c.status == LLMCall.Status.SUCCEEDED for c in calls)
    stats = simulator.stats()
    assert stats["by_status"]["429"] > 0 and stats["duplicate_billed_keys"] == 0 and stats["billed_keys"] == 3


def test_an_endpoint_that_cannot_embed_says_why(simulator, make_endpoint):
    with pytest.raises(EmbeddingError, match="has no embedding model"):
        embeddings_fetch(endpoint=make_endpoint("sim-style-concise"), texts=["hello"])
    wrong = make_endpoint("sim-style-concise", embedding_model="text-embedding-3-small")
    with pytest.raises(EmbeddingError, match="does not exist"):
        embeddings_fetch(endpoint=wrong, texts=["hello"])
    assert LLMCall.objects.get(endpoint=wrong).error_kind == "not_found"
    with pytest.raises(EmbeddingError, match="some content"):
        embeddings_fetch(endpoint=wrong, texts=["hello", "  "])
