"""Each role's working day in Chromium on the demo data, with the server time of every response.

    .venv/bin/python scripts/bench_day.py [--json OUT] [--keep]

Builds the demo as ``make run`` does (a throwaway SQLite file unless DATABASE_URL is set: migrate, the demo data,
the LLM simulator and the demo studies), starts ``runserver`` (DEBUG on, as ``make run``) and a ``db_worker``, adds
what the walk needs on top of the demo (tests/browser/day.py ``day_prepare``) and walks the same day as
tests/browser/test_day.py: on a phone in English and on a laptop in Chinese, every role through the UI. Prints the
number of document and XHR responses, how many took over 0.5 s of server time (Playwright's request timing, from
the request sent to the response's first byte) and the ten slowest, then any console error or page that scrolled
sideways. Exit status 1 if a step of the walk failed, a console error was logged or a page scrolled sideways (a
slow response is reported, not failed: timings depend on the machine's load).
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SLOW_SECONDS = 0.5
WALKS = ((390, "en"), (1366, "zh-hans"))
MODELS = ("Simulator · MCQ 90%", "Simulator · template style")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(check: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise RuntimeError(f"timed out waiting for {what}")


def answers(url: str) -> bool:
    import urllib.request

    try:
        urllib.request.urlopen(url, timeout=2).close()
    except OSError:
        return False
    return True


def start(command: list[str], env: dict, log: Path) -> subprocess.Popen:
    with log.open("w") as out:
        return subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)


def build_demo(env: dict, tmp: Path, processes: list[subprocess.Popen]) -> str:
    """Migrate, seed the demo, start the simulator and build the demo studies; return the simulator's URL."""
    python = sys.executable

    def manage(*args: str) -> None:
        subprocess.run([python, "manage.py", *args], cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)

    manage("migrate", "--noinput", "-v0")
    manage("createcachetable")
    manage("seed_demo")
    sim_port = free_port()
    simulator = f"http://127.0.0.1:{sim_port}/v1"
    env["LLM_SIMULATOR_URL"] = simulator
    processes.append(start([python, "manage.py", "llm_simulator", "--port", str(sim_port)], env, tmp / "sim.log"))
    wait_for(lambda: answers(simulator + "/models"), 180, "the simulator")
    manage("llm_register_simulator", "--base-url", simulator)
    started = time.monotonic()
    manage("seed_demo_studies")
    print(f"demo studies built in {time.monotonic() - started:.0f} s", flush=True)
    return simulator


def walk_day(url: str, walks: tuple) -> tuple[list, list[str], list[str]]:
    """Walk the day on the demo; return the timings, the errors and the pages that scrolled sideways."""
    from django.contrib.auth import get_user_model
    from playwright.sync_api import sync_playwright

    from annotation.releases.models import Release
    from calibration.models import Judge
    from demo.base import DEMO_PASSWORD
    from demo.calibration import JUDGES
    from llm.models import Endpoint
    from tests.browser.day import Walk, day_prepare, walk_the_day
    from tests.conftest import chromium_path

    User = get_user_model()
    users = {role: User.objects.get(username=role) for role in ("expert", "lead", "researcher", "admin")}
    judges = [Judge.objects.get(name=name) for name, _ in JUDGES]
    models = [Endpoint.objects.get(name=name) for name in MODELS]
    release = Release.objects.get(benchmark__slug="facet", version="0.1.0")
    timings, errors, wide = [], [], []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), headless=True, args=["--no-sandbox"])
        for n, (width, language) in enumerate(walks):
            data = day_prepare(
                tag=f"bench{n}-{language[:2]}{width}",
                version=f"9.{n}.{int(time.time())}",
                expert=users["expert"],
                other_expert=User.objects.get(username="expert2"),
                lead=users["lead"],
                researcher=users["researcher"],
                admin=users["admin"],
                judges=judges,
            )
            walk = Walk(browser, url, width, language, DEMO_PASSWORD)
            try:
                walk_the_day(walk, data, users, models, release)
            except Exception:  # the numbers so far are still worth printing
                errors.append(f"{width} {language}: the walk failed at {walk.page.url}:\n{traceback.format_exc()}")
            finally:
                walk.close()
            timings += [(ms, method, kind, path, f"{width} {language}") for ms, method, kind, path in walk.timings]
            errors += [f"{width} {language}: {e}" for e in walk.errors]
            wide += [f"{width} {language}: {page}" for page in walk.wide]
        browser.close()
    return timings, errors, wide


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write every response's timing to this file")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (database and logs)")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="eistudio-bench-day-"))
    test_only = {"DJANGO_SETTINGS_MODULE", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env = {k: v for k, v in os.environ.items() if k not in test_only}
    env.update(DEBUG="1", PYTHONUNBUFFERED="1")
    env.setdefault("DATABASE_URL", f"sqlite:///{tmp / 'db.sqlite3'}")
    processes: list[subprocess.Popen] = []
    try:
        build_demo(env, tmp, processes)
        port = free_port()
        python = sys.executable
        processes.append(
            start([python, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"], env, tmp / "web.log")
        )
        processes.append(
            start(
                [python, "manage.py", "db_worker", "--no-reload", "--skip-checks", "--interval", "0.2"],
                env,
                tmp / "worker.log",
            )
        )
        url = f"http://127.0.0.1:{port}"
        wait_for(lambda: answers(url + "/login/"), 180, "the web server")
        os.environ.update(env, DJANGO_SETTINGS_MODULE="config.settings", DJANGO_ALLOW_ASYNC_UNSAFE="true")
        sys.path.insert(0, str(ROOT))
        import django

        django.setup()
        timings, errors, wide = walk_day(url, WALKS)
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
    timings.sort(reverse=True)
    slow = [row for row in timings if row[0] > SLOW_SECONDS * 1000]
    database = "PostgreSQL" if env["DATABASE_URL"].startswith("postgres") else "SQLite"
    print(f"day walk on the demo data ({database}, runserver with DEBUG on, walks: {', '.join(map(str, WALKS))})")
    print(f"responses (documents and XHR): {len(timings)}; over {SLOW_SECONDS} s of server time: {len(slow)}")
    print("slowest ten (server ms, method, type, url, walk):")
    for ms, method, kind, path, walk in timings[:10]:
        print(f"  {ms:8.1f}  {method:4} {kind:8} {path.removeprefix(url)}  [{walk}]")
    if args.json:
        args.json.write_text(
            json.dumps([dict(zip(("ms", "method", "type", "url", "walk"), t, strict=True)) for t in timings])
        )
    for line in errors:
        print("error:", line)
    for line in wide:
        print("scrolls sideways:", line)
    if args.keep:
        print(f"kept {tmp}")
    else:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(1 if errors or wide else 0)


if __name__ == "__main__":
    main()
