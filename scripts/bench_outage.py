#!/usr/bin/env python
"""Measure how LLM runs live through a PostgreSQL outage: workers reconnect, the run completes, nothing is paid twice.

    .venv/bin/python scripts/bench_outage.py                     # 300 prompts, 2 workers, 8 s outage
    .venv/bin/python scripts/bench_outage.py --n 500 --workers 3 --outage-seconds 15 --json

Starts a throwaway PostgreSQL cluster of its own (initdb and pg_ctl, as the postgres user when run as root, on a
free port, in a temporary directory), migrates it (``manage.py migrate``), starts the simulator and ``--workers``
``db_worker`` processes on it, and starts a run of ``--n`` distinct prompts. Once part of the run is done it stops
the cluster (``pg_ctl stop -m fast``) for ``--outage-seconds``, starts it again and waits for the run to finish.

Prints the requests the simulator received, the requests it billed, the requests billed twice (must be 0), the
seconds from the database's return to the run's completion, and whether every worker is still alive; ``--json``
adds the same as one JSON line. Exit status 0 when the run completed with every item done, every prompt billed
exactly once and every worker alive; 1 otherwise; 2 when PostgreSQL's binaries are not found (set PG_BIN to the
directory holding initdb and pg_ctl).
"""

import argparse
import contextlib
import glob
import json
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXIT_NO_POSTGRES = 2


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=300, help="distinct prompts in the run (default 300)")
    parser.add_argument("--workers", type=int, default=2, help="db_worker processes (default 2)")
    parser.add_argument("--outage-seconds", type=float, default=8.0, help="how long the database is down (default 8)")
    parser.add_argument("--latency-ms", type=float, default=200.0, help="simulated latency (default 200)")
    parser.add_argument("--concurrency", type=int, default=8, help="endpoint max concurrency (default 8)")
    parser.add_argument("--stop-at", type=float, default=0.25, help="share of the run done when it stops (0.25)")
    parser.add_argument("--json", action="store_true", help="also print the figures as one JSON line")
    return parser.parse_args()


def postgres_bin() -> tuple[Path | None, str]:
    """Return the directory holding initdb and pg_ctl, or None and why not."""
    candidates = [os.environ.get("PG_BIN", "")]
    candidates += sorted(
        glob.glob("/usr/lib/postgresql/*/bin"),
        key=lambda p: [int(x) for x in p.split("/")[-2].split(".") if x.isdigit()],
        reverse=True,
    )
    if shutil.which("pg_config"):
        result = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True)
        candidates.append(result.stdout.strip())
    if shutil.which("initdb"):
        candidates.append(str(Path(shutil.which("initdb")).parent))
    for candidate in candidates:
        if candidate and (Path(candidate) / "initdb").exists() and (Path(candidate) / "pg_ctl").exists():
            if os.geteuid() == 0:
                try:
                    pwd.getpwnam("postgres")
                except KeyError:
                    return None, "running as root, but there is no 'postgres' user to run the cluster as"
            return Path(candidate), ""
    return None, "PostgreSQL binaries (initdb, pg_ctl) not found; set PG_BIN to their directory"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Cluster:
    """A throwaway PostgreSQL cluster in a temporary directory."""

    def __init__(self, bindir: Path, directory: Path) -> None:
        self.bindir = bindir
        self.directory = directory
        self.port = free_port()
        self.as_postgres = os.geteuid() == 0
        if self.as_postgres:
            shutil.chown(directory, "postgres", "postgres")

    def _run(self, program: str, *args: str) -> None:
        command = [str(self.bindir / program), *args]
        if self.as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=self.directory)

    def init(self) -> None:
        self._run(
            "initdb", "-D", str(self.directory / "data"), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-locale"
        )

    def start(self) -> None:
        options = (
            f"-p {self.port} -k {self.directory} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off"
        )
        data = str(self.directory / "data")
        self._run("pg_ctl", "-D", data, "-l", str(self.directory / "postgres.log"), "-w", "-o", options, "start")

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.directory / "data"), "-m", "fast", "-w", "stop")

    def create_database(self, name: str) -> str:
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", name)
        return f"postgres://postgres@127.0.0.1:{self.port}/{name}"


def start_process(command: list[str], env: dict, log: Path) -> subprocess.Popen:
    with log.open("w") as out:
        return subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


def wait_for_line(log: Path, needle: str, timeout: float = 60.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in log.read_text().splitlines():
            if needle in line:
                return line
        time.sleep(0.05)
    raise RuntimeError(f"{needle!r} did not appear in {log}:\n{log.read_text()}")


def simulator_stats(base_url: str) -> dict:
    with urllib.request.urlopen(base_url.removesuffix("/v1") + "/_sim/stats", timeout=10) as response:
        return json.load(response)


def measure(args: argparse.Namespace, bindir: Path, tmp: Path) -> dict:
    cluster = Cluster(bindir, tmp)
    cluster.init()
    cluster.start()
    processes: list[subprocess.Popen] = []
    try:
        env = dict(os.environ)
        env.update(
            {
                "DATABASE_URL": cluster.create_database("eistudio"),
                "DJANGO_SETTINGS_MODULE": "config.settings",
                "SECRET_KEY": "outage-bench-only-" + uuid.uuid4().hex,
                "DEBUG": "0",
                "SECURE_SSL_REDIRECT": "0",
                "CACHE_BACKEND": "locmem",
                "LOG_LEVEL": "WARNING",
                "PYTHONUNBUFFERED": "1",
                "LLM_LEASE_SECONDS": "2",
                "LLM_FLUSH_SECONDS": "0.1",
                "LLM_CHUNK_SIZE": "10",
                "LLM_WORKER_DB_RETRY_SECONDS": str(max(60.0, 4 * args.outage_seconds)),
            }
        )
        os.environ.update(env)
        python = sys.executable
        migrate = [python, "manage.py", "migrate", "--noinput", "-v0", "--skip-checks"]
        subprocess.run(migrate, cwd=ROOT, env=env, check=True)
        sim_log = tmp / "simulator.log"
        simulator = [python, "manage.py", "llm_simulator", "--port", "0", "--latency-ms", str(args.latency_ms)]
        processes.append(start_process([*simulator, "--jitter-ms", str(args.latency_ms / 4)], env, sim_log))
        base_url = wait_for_line(sim_log, "listening on").split()[-3]
        worker_command = [python, "manage.py", "db_worker", "--interval", "0.05", "--no-startup-delay", "--no-reload"]
        workers = [
            start_process([*worker_command, "--skip-checks"], env, tmp / f"worker{number}.log")
            for number in range(args.workers)
        ]
        processes.extend(workers)

        sys.path.insert(0, str(ROOT))
        import django

        django.setup()
        from django.db import InterfaceError, OperationalError, connection

        from llm import services
        from llm.models import Run, RunItem

        tag = uuid.uuid4().hex[:8]
        endpoint = services.endpoint_create(
            data={
                "name": f"outage-{tag}",
                "base_url": base_url,
                "model": "sim-style-concise",
                "is_simulator": True,
                "max_concurrency": args.concurrency,
            }
        )
        for number in range(args.workers):
            wait_for_line(tmp / f"worker{number}.log", "Starting worker")
        prompts = [
            {"key": f"p{i}", "messages": [{"role": "user", "content": f"Outage {tag} prompt {i}: I lost my keys."}]}
            for i in range(args.n)
        ]
        run = services.run_create(endpoint=endpoint, prompts=prompts, parser="text", name=f"outage {tag}")

        def progress() -> Run | None:
            try:
                return Run.objects.get(pk=run.pk)
            except (OperationalError, InterfaceError):
                connection.close()
                return None

        deadline = time.monotonic() + 120
        while (current := progress()) is None or current.done < args.stop_at * args.n:
            if (current is not None and current.status not in Run.ACTIVE) or time.monotonic() > deadline:
                raise RuntimeError(f"the run ended or stalled before the outage: {current and current.status}")
            time.sleep(0.05)
        done_at_stop = current.done
        connection.close()
        cluster.stop()
        down_at = time.time()
        time.sleep(args.outage_seconds)
        cluster.start()
        back_at = time.time()
        deadline = time.monotonic() + 180
        while (current := progress()) is None or current.status in Run.ACTIVE:
            if time.monotonic() > deadline:
                raise RuntimeError("the run did not finish within 180 s of the database's return")
            time.sleep(0.05)
        stats = simulator_stats(base_url)
        logs = [(tmp / f"worker{number}.log").read_text() for number in range(args.workers)]
        return {
            "database": "PostgreSQL",
            "prompts": args.n,
            "workers": args.workers,
            "outage_seconds": round(back_at - down_at, 2),
            "done_when_stopped": done_at_stop,
            "status": current.status,
            "items_done": RunItem.objects.filter(run=current, status=RunItem.Status.DONE).count(),
            "requests_sent": stats["requests"],
            "billed": stats["billable"],
            "billed_twice": stats["duplicate_billed_keys"],
            "replayed": stats["replayed"],
            "seconds_from_return_to_completion": round(current.finished_at.timestamp() - back_at, 2),
            "reconnect_tries_logged": sum(log.count("reconnecting in") for log in logs),
            "workers_alive": sum(process.poll() is None for process in workers),
        }
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        with contextlib.suppress(subprocess.CalledProcessError):
            cluster.stop()


def main() -> int:
    args = parse_args()
    bindir, why = postgres_bin()
    if bindir is None:
        print(f"skipped: {why}")
        return EXIT_NO_POSTGRES
    tmp = Path(tempfile.mkdtemp(prefix="eistudio-outage-"))
    try:
        result = measure(args, bindir, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"database                 {result['database']}, stopped for {result['outage_seconds']} s")
    print(f"run                      {result['prompts']} prompts, {result['workers']} workers, {result['status']}")
    print(f"items done               {result['items_done']} (done when stopped: {result['done_when_stopped']})")
    print(f"requests sent            {result['requests_sent']} ({result['replayed']} answered from idempotency keys)")
    print(f"billed                   {result['billed']}")
    print(f"billed twice             {result['billed_twice']}  (must be 0)")
    print(f"database back -> done    {result['seconds_from_return_to_completion']} s")
    print(f"workers alive            {result['workers_alive']} of {result['workers']}")
    print(f"reconnect tries logged   {result['reconnect_tries_logged']}")
    if args.json:
        print(json.dumps(result))
    ok = (
        result["status"] == "done"
        and result["items_done"] == result["prompts"]
        and result["billed"] == result["prompts"]
        and result["billed_twice"] == 0
        and result["workers_alive"] == result["workers"]
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
