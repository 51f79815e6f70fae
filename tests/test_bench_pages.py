"""``make bench``'s page benchmark builds its data and measures every page on a fresh database (SQLite here).

No timing is asserted (speed is the benchmark's to report, docs/performance.md): only that the build and every page
work, that the JSON has the documented fields, and that no page runs more than 10 queries.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_page_benchmark_builds_and_measures_every_page_on_a_fresh_database(tmp_path):
    out = tmp_path / "pages.json"
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "DJANGO_SETTINGS_MODULE"}}
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'bench.sqlite3'}"
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bench_pages.py"), "--items", "60", "--runs", "1", "--json", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    rows = json.loads(out.read_text(encoding="utf-8"))
    assert len(rows) == 40
    measured = {(r["page"], r["role"]) for r in rows}
    assert {("home", "expert"), ("home", "lead_expert"), ("home", "researcher")} <= measured
    for row in rows:
        assert set(row) == {"page", "role", "items", "status", "queries", "p50_ms", "p95_ms", "peak_mb"}, row
        assert row["status"] in (200, 302) and row["items"] == 60, row
        assert row["queries"] <= 10, row
