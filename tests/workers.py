"""Real ``manage.py db_worker`` processes on the test database, for the tests marked ``worker``.

Registered for every test package through tests/conftest.py; ``make test-fast`` leaves these tests out.
"""

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.db import connection

from tests.simulator import ROOT, subprocess_env

# Settings for worker processes: short leases and backoffs so that recovery happens within a test.
WORKER_ENV = {
    "LLM_LEASE_SECONDS": "2",
    "LLM_FLUSH_SECONDS": "0.1",
    "LLM_RETRY_BACKOFF_SECONDS": "0.02",
    "LLM_RETRY_BACKOFF_MAX_SECONDS": "0.2",
    "LLM_CHUNK_SIZE": "10",
}


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


def wait_until(predicate: object, timeout: float = 60, message: str = "") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {message or predicate}")


def wait_for_workers_ready(workers: Workers) -> None:
    wait_until(lambda: all("Starting worker" in p.log.read_text() for p in workers.processes), 180, "workers ready")
