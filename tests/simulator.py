"""The LLM simulator as a real HTTP server for the whole test session, and endpoints on it.

Registered for every test package through tests/conftest.py; worker processes come from tests/workers.py.
"""

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from llm.models import Endpoint
from tests.factories import make_llm_endpoint

ROOT = Path(__file__).resolve().parents[1]
FAST = {
    "latency_ms": 20,
    "jitter_ms": 5,
    "error_rate_429": 0.0,
    "error_rate_500": 0.0,
    "timeout_rate": 0.0,
    "garbage_rate": 0.0,
    "retry_after_ms": 30,
    "hang_seconds": 30,
    "seed": 0,
    "unknown_model_status": 404,
    "reject_max_tokens": 0,
    "batch_api_status": 0,
    "zero_usage": 0,
}


@dataclass
class Simulator:
    root: str

    @property
    def base_url(self) -> str:
        return self.root + "/v1"

    def _request(self, path: str, data: dict | None = None) -> dict:
        body = None if data is None else json.dumps(data).encode()
        with urllib.request.urlopen(self.root + path, data=body, timeout=10) as response:
            return json.load(response)

    def stats(self, *, keys: bool = False) -> dict:
        return self._request("/_sim/stats" + ("?keys=1" if keys else ""))

    def reset(self) -> None:
        self._request("/_sim/reset", {})

    def configure(self, **settings: float) -> None:
        self._request("/_sim/config", settings)

    def wait_until_idle(self, timeout: float = 120) -> None:
        """Wait until no model request is being answered (replies that a test hung end on their own after
        ``hang_seconds``). Idle keep-alive connections that another client still holds are not waited for: tests
        count requests in flight, or connections relative to the count they start from."""
        deadline = time.monotonic() + timeout
        while (stats := self.stats())["in_flight"] > 0:
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"the simulator is still answering {stats['in_flight']} request(s) an earlier test left "
                    f"after {timeout:.0f} s ({stats['open_connections']} connections open)"
                )
            time.sleep(0.05)


def subprocess_env(**extra: str) -> dict:
    env = dict(os.environ)
    env.update({"DJANGO_SETTINGS_MODULE": "config.settings_test", "PYTHONUNBUFFERED": "1", **extra})
    return env


@pytest.fixture(scope="session")
def simulator_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Simulator]:
    """Run ``manage.py llm_simulator`` on a free port for the whole session."""
    log = tmp_path_factory.mktemp("simulator") / "simulator.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "manage.py", "llm_simulator", "--port", "0", "--latency-ms", "20", "--jitter-ms", "5"],
            cwd=ROOT,
            env=subprocess_env(),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + 180  # a loaded machine starts Django slowly
    root = None
    while time.monotonic() < deadline and root is None:
        for line in log.read_text().splitlines():
            if "listening on" in line:
                root = line.split()[-3].removesuffix("/v1")
        if process.poll() is not None:
            raise RuntimeError(f"the simulator exited:\n{log.read_text()}")
        time.sleep(0.05)
    if root is None:
        process.kill()
        raise RuntimeError(f"the simulator did not start:\n{log.read_text()}")
    yield Simulator(root)
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()


@pytest.fixture
def simulator(simulator_server: Simulator) -> Simulator:
    """The session's simulator, reset to fast, fault-free behaviour."""
    simulator_server.reset()
    simulator_server.configure(**FAST)
    return simulator_server


@pytest.fixture
def simulator_idle(simulator_server: Simulator) -> None:
    """Wait for the connections earlier tests left hanging (injected timeouts) to close, before ``simulator`` resets
    the counts: for tests that count open connections."""
    simulator_server.wait_until_idle()


@pytest.fixture
def fast_retries(settings: object) -> None:
    settings.LLM_RETRY_BACKOFF_SECONDS = 0.01
    settings.LLM_RETRY_BACKOFF_MAX_SECONDS = 0.1
    settings.LLM_LEASE_SECONDS = 2
    settings.LLM_FLUSH_SECONDS = 0.05
    settings.LLM_CHUNK_SIZE = 10


@pytest.fixture
def make_endpoint(db: None, simulator: Simulator, fast_retries: None):
    """Create an endpoint on the simulator (or anywhere, with ``base_url``)."""

    def make(model: str = "sim-mcq-acc70", **fields: object) -> Endpoint:
        return make_llm_endpoint(**{"base_url": simulator.base_url, "model": model, **fields})

    return make
