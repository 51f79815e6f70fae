#!/usr/bin/env python
"""Run the app's LLM client against an OpenAI-compatible server it was not written with, and count what held.

    .venv/bin/python scripts/conformance.py --server llmock|simulator|litellm [--venv DIR]

``llmock``: LLMock 0.2.2 from ``.ci/llmock-requirements.txt`` (every file pinned by its hash) in a virtual
environment of its own (``--venv``, default /tmp/eistudio-llmock-venv, made with ``pip install --require-hashes``),
one server per fault setting, each on loopback. ``simulator``: the project's own simulator, faults from its config.
``litellm``: the LiteLLM proxy 1.82.6 in mock mode is not installed by this script (its dependency tree is too large
to pin by hash here); it says so and exits 2.

Scenarios, each in this process on a temporary SQLite database (``llm.worker.runner.run_work``, as a worker would):
*Test connection* (the capability probe), a live run of each parser, a batch run, 429 with Retry-After, 5xx bursts,
timeouts, 401, and (simulator only) malformed JSON and an unknown model answered with 400. A scenario holds when the
run ends as the app promises (done with every item stored once, or failed with the provider's reason and the items
pending) within its time limit. Prints one line per scenario, then ``conformance <server>: N run, N held, N failed``
and, where the server counts billing (the simulator), ``requests billed twice: N``. Exit status 1 if any failed.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / ".ci" / "llmock-requirements.txt"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", choices=("llmock", "simulator", "litellm"), required=True)
    parser.add_argument("--venv", default="/tmp/eistudio-llmock-venv", help="LLMock's virtual environment")
    parser.add_argument("--prompts", type=int, default=12, help="prompts per run (default 12)")
    return parser.parse_args()


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_http(url: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2)  # noqa: S310 - a loopback URL this script built
            return
        except OSError as exc:
            if getattr(exc, "code", None):  # an HTTP error: the server answers
                return
            time.sleep(0.2)
    raise RuntimeError(f"no server at {url} after {timeout:.0f} s")


def llmock_venv(venv: Path) -> Path:
    """Return LLMock's executable, installing the pinned, hashed lock into ``venv`` if needed."""
    executable = venv / "bin" / "llmock"
    if not executable.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", "--require-hashes"]
        subprocess.run([*pip, "-r", str(LOCK)], check=True)
    return executable


class Servers:
    """Servers this script started, stopped at the end."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.processes: list[subprocess.Popen] = []

    def start(self, command: list[str], name: str, probe_path: str, port: int) -> str:
        log = (self.log_dir / f"{name}.log").open("w")
        self.processes.append(subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT))
        root = f"http://127.0.0.1:{port}"
        wait_http(root + probe_path)
        return root + "/v1"

    def stop(self) -> None:
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()


def llmock_servers(args: argparse.Namespace, servers: Servers) -> dict[str, str]:
    """Start one LLMock per fault setting; return {setting: base URL}."""
    executable = str(llmock_venv(Path(args.venv)))
    settings = {
        "clean": [],
        "429": ["--error-rate-429", "0.3"],
        "5xx": ["--error-rate-500", "0.2", "--error-rate-503", "0.1"],
        "401": ["--error-rate", "401=1.0"],
        "slow": ["--latency-ms", "1500"],
    }
    urls = {}
    for name, flags in settings.items():
        port = free_port()
        command = [executable, "serve", "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning", *flags]
        urls[name] = servers.start(command, f"llmock-{name}", "/v1/models", port)
    return urls


def simulator_servers(servers: Servers) -> tuple[dict[str, str], str]:
    port = free_port()
    command = [sys.executable, "manage.py", "llm_simulator", "--port", str(port), "--latency-ms", "20"]
    base = servers.start(command, "simulator", "/_sim/stats", port)
    return {name: base for name in ("clean", "429", "5xx", "401", "slow")}, base.removesuffix("/v1")


def scenarios_run(*, server: str, urls: dict[str, str], sim_root: str, n: int, tag: str) -> list:
    """Run every scenario; return [(name, held, detail)]."""
    import json

    from django.core.exceptions import ValidationError

    from llm import services
    from llm.models import LLMCall, Run, RunItem
    from llm.worker import runner

    simulated = server == "simulator"
    model = "sim-mcq-acc90" if simulated else "gpt-4o-mini"

    def sim_config(**values: object) -> None:
        if simulated:
            request = urllib.request.Request(sim_root + "/_sim/config", data=json.dumps(values).encode())
            urllib.request.urlopen(request, timeout=10).read()  # noqa: S310 - loopback

    def endpoint(label: str, base: str, **fields: object) -> object:
        data = {
            "name": f"{server}-{label}-{tag}",
            "base_url": base,
            "model": model,
            "is_simulator": simulated,
            "max_concurrency": 4,
            "timeout_seconds": 5,
            "max_retries": 6,
            "price_input_per_mtok": "1",
            "price_output_per_mtok": "2",
            **fields,
        }
        return services.endpoint_create(data=data)

    def prompts(label: str) -> list[dict]:
        return [
            {
                "key": f"{label}{i}",
                "messages": [{"role": "user", "content": f"{tag} {label} {i}: Which is kinder?\nA. a\nB. b\nC. c"}],
                "hints": {"answer": "B"},
            }
            for i in range(n)
        ]

    def work(run: object) -> object:
        runner.run_work(run_id=run.pk)
        run.refresh_from_db()
        return run

    def stored_once(run: object) -> str:
        items = RunItem.objects.filter(run=run)
        if run.status != Run.Status.DONE:
            return f"run {run.status}: {run.error[:160]}"
        if items.filter(status=RunItem.Status.PENDING).exists() or items.filter(call__isnull=True).exists():
            return "items left pending or without a call"
        if run.done + run.failed != run.planned:
            return f"counts disagree: {run.done} done + {run.failed} failed != {run.planned}"
        return ""

    results = []

    def record(name: str, problem: str, detail: str) -> None:
        results.append((name, not problem, problem or detail))

    probed = endpoint("probe", urls["clean"])
    report = services.endpoint_probe(endpoint=probed)
    caps = report.capabilities or {}
    summary = ", ".join(f"{k} {'yes' if caps.get(k, {}).get('ok') else 'no'}" for k in ("chat", "logprobs", "batch"))
    summary += f", token parameter {caps.get('token_parameter')}, usage {caps.get('usage', {}).get('message') or 'ok'}"
    record("test connection", "" if report.ok else report.message, summary)

    for parser in ("text", "json", "mcq_letter", "judge_verdict"):
        run = work(
            services.run_create(
                endpoint=endpoint(f"live-{parser}", urls["clean"]),
                prompts=prompts(parser),
                parser=parser,
                name=f"conformance {parser}",
                start=False,
            )
        )
        unparsed = LLMCall.objects.filter(run_items__run=run, parsed=False).distinct().count()
        record(
            f"live run, parser {parser}",
            stored_once(run),
            f"{run.done} done, {run.failed} failed ({unparsed} unparsed)",
        )

    batch_endpoint = endpoint("batch", urls["clean"])
    batch_endpoint.capabilities, batch_endpoint.probed_at = probed.capabilities, probed.probed_at
    batch_endpoint.save(update_fields=["capabilities", "probed_at"])
    try:
        run = services.run_create(
            endpoint=batch_endpoint,
            prompts=prompts("batch"),
            parser="text",
            name="conformance batch",
            start=False,
            batch=True,
        )
    except ValidationError as exc:
        held = not caps.get("batch", {}).get("ok")
        record("batch run", "" if held else f"refused: {exc}", f"refused before sending: {' '.join(exc.messages)}")
    else:
        run = work(run)
        batches = list(run.batches.values_list("status", flat=True))
        detail = (
            f"{run.done} done, {run.failed} failed, batches {batches}, warnings {[w['code'] for w in run.warnings]}"
        )
        problem = stored_once(run) or (
            "batch rows left open" if run.batches.filter(status__in=("creating", "submitted")).exists() else ""
        )
        record("batch run", problem, detail)

    sim_config(error_rate_429=0.3, retry_after_ms=200)
    run = work(
        services.run_create(
            endpoint=endpoint("429", urls["429"]), prompts=prompts("r"), parser="text", name="429", start=False
        )
    )
    retries = sum(LLMCall.objects.filter(run_items__run=run).values_list("retries", flat=True))
    problem = stored_once(run) or ("an item failed" if run.failed else "")
    record("429 with Retry-After", problem, f"{run.done} done after {retries} retries")

    sim_config(error_rate_429=0, error_rate_500=0.3)
    run = work(
        services.run_create(
            endpoint=endpoint("5xx", urls["5xx"]), prompts=prompts("s"), parser="text", name="5xx", start=False
        )
    )
    retries = sum(LLMCall.objects.filter(run_items__run=run).values_list("retries", flat=True))
    problem = stored_once(run) or ("an item failed" if run.failed else "")
    record("5xx bursts", problem, f"{run.done} done after {retries} retries")
    sim_config(error_rate_500=0)

    base_401 = sim_root + "/unauthorized/v1" if simulated else urls["401"]
    run = work(
        services.run_create(
            endpoint=endpoint("401", base_401), prompts=prompts("a"), parser="text", name="401", start=False
        )
    )
    pending = RunItem.objects.filter(run=run, status=RunItem.Status.PENDING).count()
    held = run.status == Run.Status.FAILED and "Not authorised" in run.error and pending == run.planned
    record(
        "401",
        "" if held else f"run {run.status}, {pending} pending: {run.error[:120]}",
        f"failed at once: {run.error[:90]}",
    )

    sim_config(timeout_rate=1.0, hang_seconds=3)
    run = work(
        services.run_create(
            endpoint=endpoint("slow", urls["slow"], timeout_seconds=1, max_retries=1),
            prompts=prompts("t"),
            parser="text",
            name="timeouts",
            start=False,
        )
    )
    kinds = set(LLMCall.objects.filter(run_items__run=run).values_list("error_kind", flat=True))
    held = run.status in (Run.Status.DONE, Run.Status.FAILED) and kinds <= {"timeout", ""}
    record("timeouts", "" if held else f"run {run.status}, kinds {kinds}", f"run {run.status}, {run.failed} timed out")
    sim_config(timeout_rate=0)

    if simulated:
        run = work(
            services.run_create(
                endpoint=endpoint("badjson", sim_root + "/badjson/v1"),
                prompts=prompts("j"),
                parser="text",
                name="badjson",
                start=False,
            )
        )
        held = run.status == Run.Status.FAILED and "invalid JSON" in run.error
        record(
            "malformed JSON", "" if held else f"run {run.status}: {run.error[:100]}", "failed at once, items pending"
        )
        sim_config(unknown_model_status=400)
        run = work(
            services.run_create(
                endpoint=endpoint("model400", urls["clean"], model="gpt-nope"),
                prompts=prompts("m"),
                parser="text",
                name="m",
                start=False,
            )
        )
        held = run.status == Run.Status.FAILED and run.failed == 0
        record("unknown model answered 400", "" if held else f"run {run.status}, {run.failed} failed", run.error[:100])
        sim_config(unknown_model_status=404)
        with urllib.request.urlopen(sim_root + "/_sim/stats", timeout=10) as response:  # noqa: S310 - loopback
            stats = json.load(response)
        print(f"requests billed twice: {stats['duplicate_billed_keys']}")
    return results


def main() -> int:
    args = parse_args()
    if args.server == "litellm":
        print(
            "conformance litellm: not run. The LiteLLM proxy 1.82.6 (never 1.82.7 or 1.82.8) must be pinned by hash "
            "with its whole dependency tree in a virtual environment of its own; that lock is not part of this "
            "project yet, so nothing was installed."
        )
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="eistudio-conformance-"))
    os.environ.update(
        {
            "DEBUG": "1",
            "DATABASE_URL": f"sqlite:///{tmp / 'conformance.sqlite3'}",
            "LLM_RETRY_BACKOFF_SECONDS": "0.05",
            "LLM_RETRY_BACKOFF_MAX_SECONDS": "0.5",
            "LLM_BATCH_POLL_SECONDS": "0.5",
            "LLM_CHUNK_SIZE": "10",
            "DJANGO_SETTINGS_MODULE": "config.settings",
        }
    )
    env = dict(os.environ)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0", "--skip-checks"], cwd=ROOT, env=env, check=True)
    servers = Servers(tmp)
    try:
        sim_root = ""
        if args.server == "llmock":
            urls = llmock_servers(args, servers)
        else:
            urls, sim_root = simulator_servers(servers)
        sys.path.insert(0, str(ROOT))
        import django

        django.setup()
        results = scenarios_run(
            server=args.server, urls=urls, sim_root=sim_root, n=args.prompts, tag=uuid.uuid4().hex[:6]
        )
    finally:
        servers.stop()
    held = sum(1 for _name, ok, _detail in results if ok)
    for name, ok, detail in results:
        print(f"{'held  ' if ok else 'FAILED'} {name}: {detail}")
    print(f"conformance {args.server}: {len(results)} run, {held} held, {len(results) - held} failed")
    return 0 if held == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
