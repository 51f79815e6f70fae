"""``make bench``'s page benchmark covers every GET route of the URL resolver, and measures each on a fresh database.

No timing is asserted (speed is the benchmark's to report, docs/performance.md): only that every route of the
resolver is either requested by the benchmark or excluded with a reason (POST-only routes really refuse a GET), that
the build and every request work, that the JSON has the documented fields, and that no page runs more than 10 queries
except the ones listed in ``KNOWN_OVER`` (each a known miss of docs/performance.md, to be fixed).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.core import crawl

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import bench_routes  # noqa: E402

# Routes still over 10 queries at the benchmark's sizes (docs/performance.md, "What is left").
KNOWN_OVER = {
    ("home", "admin"),  # 11: every panel of every role, the researcher's three run lists (docs/performance.md)
}


def route_keys() -> list[str]:
    return [route.name or route.route for route in crawl.routes()]


def test_every_exclusion_is_a_route_with_a_reason():
    keys = set(route_keys())
    assert not set(bench_routes.EXCLUDED) - keys, "excluded routes that no longer exist"
    for key, reason in bench_routes.EXCLUDED.items():
        assert len(reason) > 15, key


@pytest.mark.django_db
def test_routes_excluded_as_post_only_refuse_a_get(client, django_user_model):
    client.force_login(django_user_model.objects.create_superuser("root", password="x-2026-pass"))
    routes = {route.name or route.route: route for route in crawl.routes()}
    post_only = [key for key, reason in bench_routes.EXCLUDED.items() if reason == bench_routes.POST_ONLY]
    assert len(post_only) > 20
    for key in post_only:
        url = bench_routes.placeholder_url(routes[key])
        assert client.get(url).status_code == 405, (key, url)


def test_the_page_benchmark_requests_every_get_route_on_a_fresh_database(tmp_path):
    out = tmp_path / "pages.json"
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "DJANGO_SETTINGS_MODULE"}}
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'bench.sqlite3'}"
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bench_pages.py"), "--items", "60", "--runs", "1", "--json", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    rows = json.loads(out.read_text(encoding="utf-8"))
    measured = {r["route"] for r in rows}
    keys = route_keys()
    # Every route of the resolver is requested or excluded with a reason, never both.
    assert set(keys) == measured | set(bench_routes.EXCLUDED), set(keys) ^ (measured | set(bench_routes.EXCLUDED))
    assert not measured & set(bench_routes.EXCLUDED)
    assert f"{len(keys) - len(bench_routes.EXCLUDED)} GET routes" in result.stdout
    assert {("home", "expert"), ("home", "lead_expert"), ("home", "researcher"), ("home", "admin")} <= {
        (r["page"], r["role"]) for r in rows
    }
    for row in rows:
        assert set(row) == {
            "page",
            "route",
            "url",
            "role",
            "items",
            "status",
            "expected",
            "queries",
            "p50_ms",
            "p95_ms",
            "peak_mb",
        }, row
        assert row["items"] == 60, row
        assert row["status"] == 403 if row["expected"] == 403 else row["status"] < 400, row
    over = [
        (row["route"], row["role"], row["queries"])
        for row in rows
        if (row["route"], row["role"]) not in KNOWN_OVER and row["queries"] > 10
    ]
    assert not over, over
