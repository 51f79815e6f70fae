#!/usr/bin/env python
"""Compare the cost of the same run sent live and as provider batches, end to end on the simulator.

    .venv/bin/python scripts/bench_batch.py [--n 500] [--batch-delay-ms 1000]

Starts the simulator and a db_worker on a temporary SQLite database (or on DATABASE_URL), runs N prompts live on
one endpoint, then the same N prompts in batch mode on a second endpoint of the same model (so the cache does not
answer them), with batch prices at half the live ones as major providers charge. Prints both spends, taken from the
runs (tokens the simulator reported, priced as stored on the calls), and ``batch cost / live cost``. Exit status 1
if the simulator billed any request twice, missed one, or either run did not finish.

Then, on the same single worker, a live run of ``--live-n`` prompts on an idle worker and again while a batch run
waits ``--open-batch-minutes`` at the simulator: ``live run during an open batch: X of idle time`` (goal <= 1.2: the
open batch is polled by short tasks queued for later, never by a worker waiting on it). The batch run is then
cancelled: its batches must end cancelled at the simulator, with nothing left reserved.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path

# The scripts' shared way of starting a process with its log and waiting for a line in it.
from bench import start, stop, wait_for_line

ROOT = Path(__file__).resolve().parent.parent


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=500, help="prompts in each run (default 500)")
    parser.add_argument("--concurrency", type=int, default=32, help="live concurrency (default 32)")
    parser.add_argument("--latency-ms", type=float, default=50.0, help="simulated live latency (default 50)")
    parser.add_argument("--batch-delay-ms", type=float, default=1000.0, help="when a batch completes (default 1000)")
    parser.add_argument("--chunk-size", type=int, default=100, help="items per chunk, one batch each (default 100)")
    parser.add_argument("--live-n", type=int, default=100, help="prompts of the live run beside a batch (default 100)")
    parser.add_argument("--open-batch-minutes", type=float, default=10.0, help="how long the open batch waits")
    return parser.parse_args()


def main() -> int:
    args = parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="eistudio-bench-batch-"))
    env = dict(os.environ)
    env.setdefault("SECRET_KEY", "bench-only-secret-key-" + uuid.uuid4().hex)
    env["DEBUG"] = "0"
    env["SECURE_SSL_REDIRECT"] = "0"
    env["LOG_LEVEL"] = "WARNING"
    env["LLM_BATCH_POLL_SECONDS"] = "2"
    env.setdefault("DATABASE_URL", f"sqlite:///{tmp / 'bench.sqlite3'}")
    os.environ.update(env)
    python = sys.executable
    subprocess.run([python, "manage.py", "migrate", "--noinput", "-v0", "--skip-checks"], cwd=ROOT, env=env, check=True)

    processes: list[subprocess.Popen] = []
    try:
        sim_log = tmp / "simulator.log"
        command = [python, "manage.py", "llm_simulator", "--port", "0", "--latency-ms", str(args.latency_ms)]
        command += ["--jitter-ms", "0", "--batch-delay-ms", str(args.batch_delay_ms)]
        processes.append(start(command, env, sim_log))
        base = wait_for_line(sim_log, "listening on").split()[-3]
        worker = [python, "manage.py", "db_worker", "--interval", "0.05", "--no-startup-delay", "--skip-checks"]
        processes.append(start(worker, env, tmp / "worker.log"))

        sys.path.insert(0, str(ROOT))
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
        import django

        django.setup()
        from llm import services
        from llm.models import Run

        tag = uuid.uuid4().hex[:8]

        def endpoint(label: str) -> object:
            return services.endpoint_create(
                data={
                    "name": f"bench-batch-{tag}-{label}",
                    "base_url": base,
                    "model": "sim-style-concise",
                    "is_simulator": True,
                    "max_concurrency": args.concurrency,
                    "price_input_per_mtok": "0.5",
                    "price_output_per_mtok": "1.5",
                    "price_batch_input_per_mtok": "0.25",
                    "price_batch_output_per_mtok": "0.75",
                }
            )

        prompts = [
            {"key": f"p{i}", "messages": [{"role": "user", "content": f"Bench {tag} prompt {i}: I failed my exam."}]}
            for i in range(args.n)
        ]

        def finished_run(label: str, *, batch: bool, items: list | None = None) -> tuple[float, Run]:
            started = time.monotonic()
            run = services.run_create(
                endpoint=endpoint(label),
                prompts=items or prompts,
                parser="text",
                name=f"bench batch {tag} {label}",
                chunk_size=args.chunk_size,
                batch=batch,
            )
            deadline = started + 120 + 20 * args.n * args.latency_ms / 1000 / args.concurrency
            while True:
                run.refresh_from_db()
                if run.status not in Run.ACTIVE:
                    break
                if [p for p in processes if p.poll() is not None] or time.monotonic() > deadline:
                    logs = "\n".join(path.read_text() for path in sorted(tmp.glob("*.log")))
                    raise RuntimeError(f"a worker or the simulator stopped, or the run took too long:\n{logs}")
                time.sleep(0.05)
            return time.monotonic() - started, run

        def simulator(path: str, data: bytes | None = None) -> dict:
            with urllib.request.urlopen(base.removesuffix("/v1") + path, data=data) as response:
                return json.load(response)

        live_seconds, live = finished_run("live", batch=False)
        live_stats = simulator("/_sim/stats")
        # The simulator keeps replies by idempotency key, which is the request's hash whatever the endpoint: forget
        # them, so that the batch run is answered (and billed) afresh.
        simulator("/_sim/reset", b"")
        batch_seconds, batched = finished_run("batch", batch=True)
        stats = simulator("/_sim/stats")

        print(f"prompts             {args.n} per run, the same in both")
        print(f"live run            {live_seconds:.2f} s, {live.status}: {live.done} done, spent {live.spent:.6f}")
        print(
            f"batch run           {batch_seconds:.2f} s, {batched.status}: {batched.done} done, spent "
            f"{batched.spent:.6f} in {stats['batches']} batches"
        )
        print(
            f"tokens              live {live.input_tokens}+{live.output_tokens}, batch "
            f"{batched.input_tokens}+{batched.output_tokens} (input+output)"
        )
        print(
            f"simulator billed    live run {live_stats['billable']} ({live_stats['duplicate_billed_keys']} twice), "
            f"batch run {stats['billable']} ({stats['duplicate_billed_keys']} twice, {stats['requests']} sent live)"
        )
        ratio = batched.spent / live.spent if live.spent else 0
        print(f"batch cost / live cost: {ratio:.2f}")
        beside_ok = live_beside_open_batch(args, tag, endpoint, finished_run, simulator)
        ok = beside_ok and (
            live.status == batched.status == Run.Status.DONE
            and live.done == batched.done == args.n
            and live_stats["billable"] == stats["billable"] == args.n
            and live_stats["duplicate_billed_keys"] == stats["duplicate_billed_keys"] == 0
        )
        return 0 if ok else 1
    finally:
        stop(processes, tmp)


def live_beside_open_batch(
    args: argparse.Namespace, tag: str, endpoint: object, finished_run: object, simulator: object
) -> bool:
    """Time a live run on an idle worker and beside a batch run waiting at the simulator; cancel the batch run."""
    from llm import services
    from llm.models import Run, RunBatch

    def live_prompts(label: str) -> list[dict]:
        return [
            {
                "key": f"{label}{i}",
                "messages": [{"role": "user", "content": f"Bench {tag} {label} {i}: I lost my job."}],
            }
            for i in range(args.live_n)
        ]

    idle_seconds, idle = finished_run("idle", batch=False, items=live_prompts("idle"))
    simulator("/_sim/config", json.dumps({"batch_delay_ms": args.open_batch_minutes * 60_000}).encode())
    waiting = services.run_create(
        endpoint=endpoint("open-batch"),
        prompts=live_prompts("batch"),
        parser="text",
        name=f"bench open batch {tag}",
        chunk_size=50,
        batch=True,
    )
    deadline = time.monotonic() + 60
    submitted = RunBatch.objects.filter(run=waiting, status=RunBatch.Status.SUBMITTED)
    while submitted.count() < waiting.chunks.count():
        if time.monotonic() > deadline:
            raise RuntimeError("the batch run's batches were not created within 60 s")
        time.sleep(0.05)
    busy_seconds, busy = finished_run("beside", batch=False, items=live_prompts("beside"))
    waiting.refresh_from_db()
    still_open = waiting.status == Run.Status.RUNNING and submitted.count() == waiting.chunks.count()
    services.run_cancel(run=waiting)
    deadline = time.monotonic() + 60
    while RunBatch.objects.filter(run=waiting, status__in=RunBatch.OPEN).exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    waiting.refresh_from_db()
    stats = simulator("/_sim/stats")
    ratio = busy_seconds / idle_seconds
    print(
        f"live run idle       {idle_seconds:.2f} s, {idle.status}: {idle.done} done ({args.live_n} prompts, 1 worker)"
    )
    print(
        f"live run beside     {busy_seconds:.2f} s, {busy.status}: {busy.done} done, while a batch run waited "
        f"{args.open_batch_minutes:g} min at the simulator ({'still open' if still_open else 'NOT open'})"
    )
    print(
        f"after cancelling    batches at the simulator {stats['batches_by_status']}, open rows "
        f"{RunBatch.objects.filter(run=waiting, status__in=RunBatch.OPEN).count()}, reserved {waiting.reserved}"
    )
    print(f"live run during an open batch: {ratio:.2f} of idle time")
    return (
        idle.status == busy.status == Run.Status.DONE
        and still_open
        and not RunBatch.objects.filter(run=waiting, status__in=RunBatch.OPEN).exists()
        and waiting.reserved == 0
    )


if __name__ == "__main__":
    sys.exit(main())
