"""The client against LLMock 0.2.2, a third-party OpenAI-compatible server with fault injection (not our simulator).

Runs when ``LLMOCK_URL`` names a running LLMock (``.ci/run`` starts one, and ``LLMOCK_FAULTS_URL`` one injecting 429
and 5xx replies); with ``REQUIRE_LLMOCK=1`` a missing server fails these tests instead of skipping them.
``scripts/conformance.py --server llmock`` runs the same scenarios and more, starting its own servers.
"""

import json
import os
import urllib.error
import urllib.request

import numpy as np
import pytest

from evaluation.models import ContaminationCheck
from evaluation.services.contamination import contamination_check_create
from llm import services
from llm.embeddings import BATCH, embeddings_fetch
from llm.models import LLMCall, Run, RunItem
from llm.worker import runner
from tests.factories import make_frozen_release, make_item, make_llm_endpoint, mcq_content


def _server(variable: str) -> str:
    url = os.environ.get(variable, "")
    required = os.environ.get("REQUIRE_LLMOCK") == "1"
    if not url:
        if required:
            pytest.fail(f"REQUIRE_LLMOCK=1 but {variable} is not set: .ci/run starts LLMock and sets it")
        pytest.skip(f"{variable} is not set (LLMock is started by .ci/run)")
    try:
        urllib.request.urlopen(url.removesuffix("/v1") + "/v1/models", timeout=5).read()  # noqa: S310 - loopback
    except urllib.error.HTTPError:
        pass  # it answers (with an injected fault, on the faulty server)
    except OSError as exc:
        if required:
            pytest.fail(f"no LLMock answers at {url}: {exc}")
        pytest.skip(f"no LLMock answers at {url}: {exc}")
    return url


@pytest.fixture
def llmock(fast_retries) -> str:
    return _server("LLMOCK_URL")


def endpoint(base_url: str, **fields: object):
    return make_llm_endpoint(base_url=base_url, model="gpt-4o-mini", is_simulator=False, max_concurrency=4, **fields)


def prompts(n: int, label: str) -> list[dict]:
    return [{"key": f"{label}{i}", "messages": [{"role": "user", "content": f"{label} {i}: hello"}]} for i in range(n)]


def work(run: Run) -> Run:
    runner.run_work(run_id=run.pk)
    run.refresh_from_db()
    return run


def test_test_connection_probes_llmock(db, llmock):
    report = services.endpoint_probe(endpoint=endpoint(llmock))
    assert report.ok, report.message
    capabilities = report.capabilities
    assert capabilities["chat"]["ok"] and capabilities["token_parameter"] == "max_tokens"
    assert capabilities["logprobs"]["ok"] is False, "LLMock has no legacy completions: log-prob runs are refused"
    assert capabilities["batch"]["ok"] is True


@pytest.mark.parametrize("parser", ["text", "json", "mcq_letter", "judge_verdict"])
def test_a_live_run_of_each_parser_stores_every_item_once(transactional_db, llmock, parser):
    run = work(
        services.run_create(
            endpoint=endpoint(llmock), prompts=prompts(8, parser), parser=parser, name=parser, start=False
        )
    )
    assert run.status == Run.Status.DONE, run.error
    assert run.done + run.failed == 8
    items = RunItem.objects.filter(run=run)
    assert not items.filter(status=RunItem.Status.PENDING).exists() and not items.filter(call__isnull=True).exists()
    if parser == "text":
        assert run.done == 8
    else:
        # LLMock answers in prose: the parsers refuse it, and the raw reply is kept with the item.
        assert all(call.response_text for call in LLMCall.objects.filter(run_items__run=run))


def test_a_batch_run_on_llmock_finishes(transactional_db, llmock, settings):
    settings.LLM_BATCH_POLL_SECONDS = 0.2
    run = work(
        services.run_create(
            endpoint=endpoint(llmock), prompts=prompts(12, "b"), parser="text", name="b", start=False, batch=True
        )
    )
    assert (run.status, run.done) == (Run.Status.DONE, 12), run.error
    assert not run.batches.filter(status__in=("creating", "submitted")).exists() and run.reserved == 0


def test_429_and_5xx_bursts_are_retried_to_the_end(transactional_db, fast_retries):
    faulty = _server("LLMOCK_FAULTS_URL")
    run = work(
        # Half of LLMock's replies here are faults: with the factory's 6 retries a prompt runs out of attempts with
        # probability 0.5^7, one in seven runs of 20 prompts; with 20 retries, one run in 50,000.
        services.run_create(
            endpoint=endpoint(faulty, max_retries=20), prompts=prompts(20, "f"), parser="text", name="f", start=False
        )
    )
    assert (run.status, run.done, run.failed) == (Run.Status.DONE, 20, 0), run.error
    assert sum(LLMCall.objects.filter(run_items__run=run).values_list("retries", flat=True)) > 0


def test_embeddings_from_llmock_come_back_as_unit_vectors_in_order_and_are_cached(db, llmock):
    # LLMock answers float lists of its own length (1536) whatever the request asks (base64, ``dimensions``): the
    # client decodes both forms and reports the length it received.
    embedder = endpoint(
        llmock, embedding_model="text-embedding-3-small", embedding_dimensions=256, price_embedding_per_mtok="0.02"
    )
    texts = [f"Text {n}: my friend forgot my birthday and said sorry the next day." for n in range(BATCH + 5)]
    found = embeddings_fetch(endpoint=embedder, texts=[*texts, texts[0]])
    assert found.vectors.shape == (len(texts) + 1, 1536) and found.dimensions == 1536
    assert np.allclose(np.linalg.norm(found.vectors, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(found.vectors[-1], found.vectors[0]) and not np.allclose(found.vectors[0], found.vectors[1])
    assert (found.requests, found.cached) == (2, 0) and found.input_tokens > 0 and found.cost > 0
    calls = LLMCall.objects.filter(endpoint=embedder)
    assert calls.count() == 2 and all(call.status == LLMCall.Status.SUCCEEDED and call.parsed for call in calls)
    again = embeddings_fetch(endpoint=embedder, texts=texts)
    assert (again.requests, again.cached) == (0, 2) and np.array_equal(again.vectors, found.vectors[:-1])


# The rest of an item's text as the check reads it (evaluation.contamination.version_text): question, then options.
QUESTION = ["What does Mia most likely feel?", "Joy", "Disappointment", "Fear", "Pride"]


def test_a_contamination_check_embeds_through_llmock(transactional_db, llmock, taxonomy, lead, researcher):
    for n, name in enumerate(("Mia", "Lena")):
        content = mcq_content()
        content["en"]["context"] = f"{name}'s best friend forgot the birthday party and apologised the next day."
        make_item(uid=f"mock-{n}", user=lead, status="accepted", content=content)
    release = make_frozen_release(version="0.4.0", user=lead, override_reason="two items")
    embedder = endpoint(llmock, name="llmock embedder", embedding_model="text-embedding-3-small")
    copy = "\n".join(["Lena's best friend forgot the birthday party and apologised the next day.", *QUESTION])
    lines = [{"id": "copy", "text": copy}, {"id": "far", "text": "Quarterly revenue grew in the northern region."}]
    corpus = "\n".join(json.dumps(line) for line in lines).encode()
    check = contamination_check_create(
        release=release, name="sft", data=corpus, user=researcher, embedding_endpoint=embedder
    )
    check.refresh_from_db()
    assert check.status == ContaminationCheck.Status.DONE, check.error
    en = check.result["languages"]["en"]["embedding"]
    assert en["n"] == 2 and en["corpus_n"] == 2 and sum(b["count"] for b in en["histogram"]) == 2
    # LLMock's vectors are seeded by a hash of the text: an exact copy has cosine 1, other texts are unrelated.
    assert (en["closest"][0]["key"], en["closest"][0]["corpus_key"]) == ("mock-1", "copy")
    assert en["closest"][0]["cosine"] == pytest.approx(1.0, abs=1e-5)
    facts = check.result["embedding"]
    assert facts["endpoint"] == "llmock embedder" and facts["dimensions"] == 1536 and facts["requests"] >= 1
