"""Sizing figures for docs/deploy.md: start `make serve` on a fresh SQLite database (or DATABASE_URL), sign in,
request pages, and print each gunicorn process's memory and the server time per page.

    .venv/bin/python scripts/bench_serve.py [--requests 200] [--workers 2]
"""

import argparse
import http.client
import os
import re
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(port: int, method: str, path: str, headers: dict, body: str = "") -> tuple[int, dict, bytes, float]:
    started = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request(
        method, path, body=body or None, headers={"Host": "127.0.0.1", "X-Forwarded-Proto": "https", **headers}
    )
    response = conn.getresponse()
    data = response.read()
    elapsed = time.perf_counter() - started
    conn.close()
    return response.status, dict(response.getheaders()), data, elapsed


def cookies(headers: dict, jar: dict) -> dict:
    for part in headers.get("Set-Cookie", "").split(", "):
        match = re.match(r"(\w+)=([^;]*)", part)
        if match:
            jar[match.group(1)] = match.group(2)
    return jar


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="eistudio-bench-serve-"))
    test_only = {"DJANGO_SETTINGS_MODULE", "DEBUG", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env = {k: v for k, v in os.environ.items() if k not in test_only}
    port = free_port()
    env.update(
        SECRET_KEY=secrets.token_urlsafe(50),
        DATABASE_URL=os.environ.get("DATABASE_URL", f"sqlite:///{tmp / 'db.sqlite3'}"),
        ALLOWED_HOSTS="127.0.0.1",
        STATIC_ROOT=str(tmp / "static"),
        WEB_CONCURRENCY=str(args.workers),
        PORT=str(port),
        PY=sys.executable,
    )
    server = subprocess.Popen([str(ROOT / "scripts" / "serve.sh")], cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit("make serve did not start") from None
                time.sleep(0.3)
        subprocess.run(
            [
                sys.executable,
                "manage.py",
                "shell",
                "-c",
                "from django.contrib.auth.models import User; "
                "User.objects.filter(username='bench').exists() or "
                "User.objects.create_superuser('bench', '', 'bench-pass-2026')",
            ],
            cwd=ROOT,
            env={**env, "DEBUG": "0"},
            check=True,
            capture_output=True,
        )
        jar: dict = {}
        status, headers, body, _ = request(port, "GET", "/login/", {})
        cookies(headers, jar)
        token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', body).group(1).decode()
        form = f"csrfmiddlewaretoken={token}&username=bench&password=bench-pass-2026"
        status, headers, _, _ = request(
            port,
            "POST",
            "/login/",
            {
                "Cookie": f"csrftoken={jar['csrftoken']}",
                "Content-Type": "application/x-www-form-urlencoded",
                "Referer": "https://127.0.0.1/login/",
            },
            form,
        )
        cookies(headers, jar)
        assert status == 302 and "sessionid" in jar, f"sign-in failed: {status}"
        signed_in = {"Cookie": "; ".join(f"{k}={v}" for k, v in jar.items())}
        for path, headers_ in (("/login/", {}), ("/", signed_in), ("/items/", signed_in), ("/api/items/", signed_in)):
            times = []
            for _ in range(args.requests):
                status, _, _, elapsed = request(port, "GET", path, headers_)
                assert status == 200, (path, status)
                times.append(elapsed * 1000)
            times.sort()
            print(
                f"serve: GET {path:<12} median {statistics.median(times):6.1f} ms, "
                f"p95 {times[int(0.95 * len(times)) - 1]:6.1f} ms ({args.requests} requests, empty database)"
            )
        children = subprocess.run(["pgrep", "-P", str(server.pid)], capture_output=True, text=True).stdout.split()
        sizes = [rss_mb(server.pid)] + sorted(rss_mb(int(pid)) for pid in children)
        print(
            f"serve: gunicorn processes (arbiter + {args.workers} workers) RSS MB: "
            + ", ".join(f"{size:.0f}" for size in sizes)
        )
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
