"""Fixtures for the llm tests: the simulator as a real HTTP server, endpoints on it, and real worker processes."""

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.db import connection

from items import services as item_services
from items.models import Benchmark
from tests.simulator import FAST, ROOT, Simulator, subprocess_env  # noqa: F401  (shared with other test packages)

# Settings for worker processes: short leases and backoffs so that recovery happens within a test.
WORKER_ENV = {
    "LLM_LEASE_SECONDS": "2",
    "LLM_FLUSH_SECONDS": "0.1",
    "LLM_RETRY_BACKOFF_SECONDS": "0.02",
    "LLM_RETRY_BACKOFF_MAX_SECONDS": "0.2",
    "LLM_CHUNK_SIZE": "10",
}


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
            item_services.taxonomy_load_fixture("taxonomy.json")
            item_services.taxonomy_load_fixture("emobench_taxonomy.json")
