"""Fixtures for the llm tests: the simulator as a real HTTP server, endpoints on it, and real worker processes."""

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
from django.db import connection

from annotation import services as annotation_services
from annotation.models import Benchmark
from llm import services
from llm.models import Endpoint

ROOT = Path(__file__).resolve().parents[2]
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
}
# Settings for worker processes: short leases and backoffs so that recovery happens within a test.
WORKER_ENV = {
    "LLM_LEASE_SECONDS": "2",
    "LLM_FLUSH_SECONDS": "0.1",
    "LLM_RETRY_BACKOFF_SECONDS": "0.02",
    "LLM_RETRY_BACKOFF_MAX_SECONDS": "0.2",
    "LLM_CHUNK_SIZE": "10",
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
    deadline = time.monotonic() + 30
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
        data = {
            "name": f"{model}-{Endpoint.objects.count() + 1}",
            "base_url": simulator.base_url,
            "model": model,
            "is_simulator": True,
            "max_concurrency": 8,
            "timeout_seconds": 5,
            "max_retries": 6,
            "price_input_per_mtok": "1",
            "price_output_per_mtok": "2",
            **fields,
        }
        return services.endpoint_create(data=data)

    return make


def mcq_prompts(n: int, *, answer: str = "B", prefix: str = "q") -> list[dict]:
    """Return ``n`` distinct multiple-choice prompts with the simulator told the answer key."""
    return [
        {
            "key": f"{prefix}{i}",
            "messages": [{"role": "user", "content": f"Item {prefix}{i}: how does Mia feel?\nA. Joy\nB. Sad\nC. Calm"}],
            "hints": {"answer": answer},
        }
        for i in range(n)
    ]


# --- real worker processes ----------------------------------------------------------------------------------


def database_url_for_workers() -> str:
    """Return a DATABASE_URL for the test database this session created (SQLite file or PostgreSQL)."""
    settings = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{settings['NAME']}"
    user = settings.get("USER") or ""
    password = f":{settings['PASSWORD']}" if settings.get("PASSWORD") else ""
    auth = f"{user}{password}@" if user else ""
    port = f":{settings['PORT']}" if settings.get("PORT") else ""
    return f"postgres://{auth}{settings.get('HOST') or 'localhost'}{port}/{settings['NAME']}"


class Workers:
    """Start ``manage.py db_worker`` processes on the test database; every one left is stopped at teardown."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.processes: list[subprocess.Popen] = []

    def start(self, *, batch: bool = False, **env: str) -> subprocess.Popen:
        log = self.log_dir / f"worker{len(self.processes)}.log"
        command = [
            sys.executable,
            "manage.py",
            "db_worker",
            "--interval",
            "0.05",
            "--no-startup-delay",
            "--no-reload",
            "--skip-checks",
        ]
        if batch:
            command.append("--batch")
        with log.open("w") as out:
            process = subprocess.Popen(
                command,
                cwd=ROOT,
                env=subprocess_env(DATABASE_URL=database_url_for_workers(), **WORKER_ENV, **env),
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        process.log = log
        self.processes.append(process)
        return process

    def wait(self, process: subprocess.Popen, timeout: float = 60) -> int:
        return process.wait(timeout=timeout)

    def logs(self) -> str:
        return "\n".join(p.log.read_text() for p in self.processes)

    def stop_all(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.kill()
        for process in self.processes:
            process.wait(timeout=10)


@pytest.fixture
def workers(tmp_path: Path) -> Iterator[Workers]:
    pool = Workers(tmp_path)
    yield pool
    pool.stop_all()


@pytest.fixture(scope="module")
def restore_taxonomy_after_module(django_db_blocker: object) -> Iterator[None]:
    """Reload the session's taxonomy after a module of transactional tests flushed the database."""
    yield
    with django_db_blocker.unblock():
        if not Benchmark.objects.filter(slug="facet").exists():
            annotation_services.taxonomy_load_fixture("taxonomy.json")
            annotation_services.taxonomy_load_fixture("emobench_taxonomy.json")
