"""The client against LLMock 0.2.2, a third-party OpenAI-compatible server with fault injection (not our simulator).

Runs when ``LLMOCK_URL`` names a running LLMock (``.ci/run`` starts one, and ``LLMOCK_FAULTS_URL`` one injecting 429
and 5xx replies); with ``REQUIRE_LLMOCK=1`` a missing server fails these tests instead of skipping them.
``scripts/conformance.py --server llmock`` runs the same scenarios and more, starting its own servers.
"""

import os
import urllib.error
import urllib.request

import pytest

from llm import services
from llm.models import LLMCall, Run, RunItem
from llm.worker import runner
from tests.factories import make_llm_endpoint


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
