"""A PostgreSQL outage in the middle of a run: two ``db_worker`` processes live through it, the run completes and
every call is billed exactly once. Runs ``scripts/bench_outage.py``, which starts a throwaway cluster of its own
(initdb and pg_ctl), migrates it, starts the simulator and the workers on it, stops the cluster for 8 seconds in
the middle of the run and starts it again; the same script prints the figures for anyone to rerun.

Skipped when PostgreSQL's binaries are missing, unless REQUIRE_POSTGRES=1 (CI), which makes that a failure.
"""

import json
import os
import subprocess
import sys

import pytest

from tests.simulator import ROOT

pytestmark = pytest.mark.worker
EXIT_NO_POSTGRES = 2


def test_workers_live_through_a_database_outage_and_the_run_completes_billed_once():
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "DJANGO_SETTINGS_MODULE"}}
    command = [sys.executable, "scripts/bench_outage.py", "--n", "300", "--workers", "2", "--outage-seconds", "8"]
    result = subprocess.run(
        [*command, "--json"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    print(result.stdout)
    if result.returncode == EXIT_NO_POSTGRES:
        if os.environ.get("REQUIRE_POSTGRES") == "1":
            pytest.fail(f"REQUIRE_POSTGRES=1 but {result.stdout.strip()}")
        pytest.skip(result.stdout.strip())
    lines = result.stdout.strip().splitlines()
    assert lines and lines[-1].startswith("{"), result.stdout + result.stderr
    figures = json.loads(lines[-1])
    assert figures["status"] == "done" and figures["items_done"] == 300
    assert figures["billed"] == 300, "every distinct prompt billed"
    assert figures["billed_twice"] == 0, "none billed twice"
    assert figures["workers_alive"] == 2, "both workers outlived the outage"
    assert figures["reconnect_tries_logged"] > 0, "the workers did meet the outage"
    assert figures["outage_seconds"] >= 8
    assert figures["seconds_from_return_to_completion"] < 60
    assert result.returncode == 0, result.stdout + result.stderr
