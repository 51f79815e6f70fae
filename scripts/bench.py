#!/usr/bin/env python
"""Benchmark the LLM run path end to end: task queue, db_worker, openai client, HTTP, simulator, database writes.

    make bench                                  # SQLite in a temporary file
    DATABASE_URL=postgres://... make bench      # PostgreSQL (writes an endpoint and two runs into that database)
    make bench BENCH_ARGS="--n 500 --workers 2"

Prints throughput as a ratio of the ideal ``concurrency / latency`` and the time of a second, fully cached pass
as a share of the first. Exit status 1 if the simulator billed any request twice or missed one.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=2000, help="calls in the run (default 2000)")
    parser.add_argument("--concurrency", type=int, default=64, help="endpoint max concurrency (default 64)")
    parser.add_argument("--latency-ms", type=float, default=500.0, help="simulated latency (default 500)")
    parser.add_argument("--jitter-ms", type=float, default=0.0, help="simulated latency jitter (default 0)")
    parser.add_argument("--workers", type=int, default=1, help="db_worker processes (default 1)")
    parser.add_argument("--chunk-size", type=int, default=None, help="items per chunk (default LLM_CHUNK_SIZE)")
    parser.add_argument(
        "--budget",
        type=float,
        default=1000.0,
        help="the run's budget (default 1000, far above its cost: every request reserves its most possible cost, "
        "none is refused); 0 for none",
    )
    parser.add_argument("--rpm", type=int, default=0, help="the endpoint's requests-per-minute limit (default none)")
    return parser.parse_args()


def start(command: list[str], env: dict, log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True
    )


def wait_for_line(log: Path, needle: str, timeout: float = 30.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in log.read_text().splitlines():
            if needle in line:
                return line
        time.sleep(0.05)
    raise RuntimeError(f"{needle!r} did not appear in {log}:\n{log.read_text()}")


def cpu_seconds(processes: list[subprocess.Popen]) -> float:
    """Return the CPU time (user + system) the processes have used so far, from /proc (0 where there is none)."""
    total = 0.0
    for process in processes:
        try:
            fields = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def stop(processes: list[subprocess.Popen], tmp: Path) -> None:
    """Stop the started processes (killing any that do not stop within 10 s) and remove the scratch folder."""
    for process in processes:
        process.terminate()
    for process in processes:
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
    shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    args = parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="eistudio-bench-"))
    env = dict(os.environ)
    env.setdefault("SECRET_KEY", "bench-only-secret-key-" + uuid.uuid4().hex)
    env["DEBUG"] = "0"
    env["SECURE_SSL_REDIRECT"] = "0"
    env["LOG_LEVEL"] = "WARNING"
    env.setdefault("DATABASE_URL", f"sqlite:///{tmp / 'bench.sqlite3'}")
    os.environ.update(env)
    database = "PostgreSQL" if env["DATABASE_URL"].startswith("postgres") else "SQLite"
    python = sys.executable
    subprocess.run([python, "manage.py", "migrate", "--noinput", "-v0", "--skip-checks"], cwd=ROOT, env=env, check=True)

    processes: list[subprocess.Popen] = []
    try:
        sim_log = tmp / "simulator.log"
        processes.append(
            start(
                [
                    python,
                    "manage.py",
                    "llm_simulator",
                    "--port",
                    "0",
                    "--latency-ms",
                    str(args.latency_ms),
                    "--jitter-ms",
                    str(args.jitter_ms),
                ],
                env,
                sim_log,
            )
        )
        base = wait_for_line(sim_log, "listening on").split()[-3]
        for number in range(args.workers):
            log = tmp / f"worker{number}.log"
            processes.append(
                start(
                    [python, "manage.py", "db_worker", "--interval", "0.05", "--no-startup-delay", "--skip-checks"],
                    env,
                    log,
                )
            )

        sys.path.insert(0, str(ROOT))
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
        import django

        django.setup()
        from llm import services
        from llm.models import Run

        tag = uuid.uuid4().hex[:8]
        endpoint = services.endpoint_create(
            data={
                "name": f"bench-{tag}",
                "base_url": base,
                "model": "sim-style-concise",
                "is_simulator": True,
                "max_concurrency": args.concurrency,
                "rpm_limit": args.rpm,
                "price_input_per_mtok": "0.5",
                "price_output_per_mtok": "1.5",
            }
        )
        prompts = [
            {"key": f"p{i}", "messages": [{"role": "user", "content": f"Bench {tag} prompt {i}: I failed my exam."}]}
            for i in range(args.n)
        ]

        def timed_run(label: str) -> tuple[float, Run]:
            started = time.monotonic()
            run = services.run_create(
                endpoint=endpoint,
                prompts=prompts,
                parser="text",
                name=f"bench {tag} {label}",
                chunk_size=args.chunk_size,
                budget=Decimal(str(args.budget)) if args.budget else None,
            )
            deadline = started + 60 + 20 * args.n * args.latency_ms / 1000 / args.concurrency
            while True:
                run.refresh_from_db()
                if run.status not in Run.ACTIVE:
                    break
                stopped = [p for p in processes if p.poll() is not None]
                if stopped or time.monotonic() > deadline:
                    logs = "\n".join(path.read_text() for path in sorted(tmp.glob("*.log")))
                    raise RuntimeError(f"a worker or the simulator stopped, or the run took too long:\n{logs}")
                time.sleep(0.02)
            return time.monotonic() - started, run

        # Warm the workers (imports, first connections) outside the measurement.
        warm_up = [{"key": "warm-up", "messages": [{"role": "user", "content": f"Bench {tag} warm-up"}]}]
        warm = services.run_create(endpoint=endpoint, prompts=warm_up, parser="text", name=f"bench {tag} warm-up")
        deadline = time.monotonic() + 120
        while warm.status in Run.ACTIVE and time.monotonic() < deadline:
            time.sleep(0.1)
            warm.refresh_from_db()
        time.sleep(0.5)
        with urllib.request.urlopen(base.removesuffix("/v1") + "/_sim/reset", data=b"") as response:
            response.read()

        workers = processes[1:]
        cpu_before = cpu_seconds(workers)
        first_seconds, first = timed_run("first pass")
        worker_cpu = cpu_seconds(workers) - cpu_before
        second_seconds, second = timed_run("cached pass")
        with urllib.request.urlopen(base.removesuffix("/v1") + "/_sim/stats") as response:
            stats = json.load(response)

        ideal = args.concurrency / (args.latency_ms / 1000)
        throughput = args.n / first_seconds
        ratio = throughput / ideal
        print(f"database            {database}")
        print(f"calls               {args.n} (concurrency {args.concurrency}, latency {args.latency_ms:.0f} ms)")
        print(f"workers             {args.workers}")
        limits = f"budget {args.budget:g} (every request reserved)" if args.budget else "no budget"
        print(f"limits              shared slots; {limits}; " + (f"{args.rpm} rpm" if args.rpm else "no rpm limit"))
        print(f"first pass          {first_seconds:.2f} s, {first.status}: {first.done} done, {first.failed} failed")
        print(f"throughput          {throughput:.1f} calls/s; ideal {ideal:.1f} calls/s")
        print(f"ratio to ideal      {ratio:.3f}  (target >= 0.95)")
        print(f"worker CPU          {worker_cpu:.2f} s in the first pass, {1000 * worker_cpu / args.n:.2f} ms per call")
        print(f"cached pass         {second_seconds:.2f} s, {second.cached} from cache, status {second.status}")
        print(f"cached / first      {100 * second_seconds / first_seconds:.1f}%  (target < 5%)")
        print(
            f"simulator billed    {stats['billable']} requests, {stats['duplicate_billed_keys']} keys billed twice, "
            f"{stats['requests']} requests seen"
        )
        ok = stats["billable"] == args.n and stats["duplicate_billed_keys"] == 0 and first.done == args.n
        return 0 if ok else 1
    finally:
        stop(processes, tmp)


if __name__ == "__main__":
    sys.exit(main())
