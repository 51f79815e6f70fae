#!/usr/bin/env python
"""Measure import, re-import, export and release freeze/export of many synthetic bilingual items.

    DEBUG=1 DATABASE_URL=postgres://user@host/db .venv/bin/python scripts/bench_import.py --items 12000 --release 2000
    DEBUG=1 .venv/bin/python scripts/bench_import.py --items 2000 --release 500     # SQLite: ./db.sqlite3

Writes ``--items`` items as an interchange file (English and Chinese texts from ``annotation.items.synthetic``, spread
over
the FACET dimensions, scenarios, emotions and kinds; the first ``--release`` of them accepted, the rest drafts),
then runs each step in its own process and prints its wall time and peak resident memory (``ru_maxrss`` of that
process, Django and the data included):

- import: ``items_import`` of the file (the page, the API and ``import_items`` call it);
- re-import: the same file again (changes nothing);
- export_items: ``manage.py export_items`` of the run's items to a file;
- freeze: ``release_create`` of the run's accepted items and ``release_freeze`` (checklist, files written);
- export_release: ``release_export_to_directory`` of the frozen release;
- release page: the frozen release's detail page, rendered once.

Every run uses fresh uids and a fresh release version, so runs can share a database (migrated, taxonomy loaded on
first use). It asserts only that each step did what it should.
"""

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

OPEN_DIMENSIONS = {"emotion_deepening", "emotion_matching", "empathetic_understanding", "emotion_regulation"}
STEPS = ("import", "reimport", "export_items", "freeze", "export_release", "release_page")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=2000, help="items in the import file (default 2000)")
    parser.add_argument("--release", type=int, default=500, help="accepted items, all in the release (default 500)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", default=",".join(STEPS), help="comma-separated subset of " + ",".join(STEPS))
    parser.add_argument("--step", help=argparse.SUPPRESS)
    parser.add_argument("--run", help=argparse.SUPPRESS)
    parser.add_argument("--dir", help=argparse.SUPPRESS)
    return parser.parse_args()


def setup_django() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.conf import settings

    # Measure as production runs: with DEBUG on, Django would keep the text of every query (bulk inserts included).
    settings.DEBUG = False
    from annotation.items.models import Benchmark
    from annotation.items.services import taxonomy_load_fixture

    if not Benchmark.objects.filter(slug="facet").exists():
        taxonomy_load_fixture("taxonomy.json")


def write_file(path: Path, *, n: int, accepted: int, run: str, seed: int) -> None:
    """Write ``n`` interchange records to ``path``, the first ``accepted`` of them accepted."""
    from annotation.items.synthetic import scenarios

    taxonomy = json.loads((ROOT / "fixtures" / "taxonomy.json").read_text(encoding="utf-8"))
    facet = next(b for b in taxonomy["benchmarks"] if b["slug"] == "facet")
    dimensions = [leaf["code"] for module in facet["dimensions"] for leaf in module.get("children", [])]
    emotions = [e["code"] for e in taxonomy["emotion_categories"]]
    scenario_codes = [s["code"] for d in taxonomy["scenario_domains"] for s in d.get("scenarios", [])]
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as file:
        for i, text in enumerate(scenarios(n, seed=seed)):
            dimension = dimensions[i % len(dimensions)]
            if dimension in OPEN_DIMENSIONS:
                kind, content = "open_prompt", {lang: {"context": "", "prompt": text[lang]} for lang in ("en", "zh")}
            else:
                answer = rng.randrange(4)
                kind = "mcq"
                content = {
                    "en": {
                        "context": text["en"],
                        "question": "What does the person most likely feel?",
                        "options": ["Relief", "Disappointment", "Anxiety", "Pride"],
                        "answer": answer,
                    },
                    "zh": {
                        "context": text["zh"],
                        "question": "这个人最可能有什么感受？",
                        "options": ["如释重负", "失望", "焦虑", "自豪"],
                        "answer": answer,
                    },
                }
            record = {
                "format": "eistudio-item/1",
                "uid": f"{run}-{i:06d}",
                "benchmark": "facet",
                "dimension": dimension,
                "kind": kind,
                "scenario": rng.choice(scenario_codes),
                "emotions": sorted(rng.sample(emotions, rng.randint(1, 2))),
                "crisis_level": rng.randint(1, 5) if dimension == "crisis_recognition" else None,
                "difficulty": rng.choice(["easy", "medium", "hard"]),
                "status": "accepted" if i < accepted else "draft",
                "origin": "imported",
                "metadata": {"source": "bench_import"},
                "content": content,
            }
            file.write(json.dumps(record, ensure_ascii=False) + "\n")


def run_step(step: str, *, run: str, directory: Path, n: int, accepted: int) -> str:
    """Run one step in this process (already set up) and return what it did."""
    from django.core.management import call_command

    from annotation.items import services
    from annotation.items.models import Benchmark
    from annotation.releases import services as releases
    from annotation.releases.models import Release

    data_path = directory / "items.jsonl"
    version = f"0.0.{int(run.split('-')[1], 16)}"
    if step in ("import", "reimport"):
        report = services.items_import(data=data_path.read_bytes(), user=None)
        expected = (n, 0) if step == "import" else (0, n)
        assert (len(report.created), len(report.unchanged)) == expected, (step, report.total)
        return f"{len(report.created)} created, {len(report.revised)} revised, {len(report.unchanged)} unchanged"
    if step == "export_items":
        out = directory / "export.jsonl"
        call_command("export_items", "--out", str(out), "--q", run, stderr=open(os.devnull, "w"))  # noqa: SIM115
        lines = sum(1 for _ in out.open(encoding="utf-8"))
        assert lines == n, lines
        return f"{lines} lines, {out.stat().st_size} bytes"
    if step == "freeze":
        release = releases.release_create(
            benchmark=Benchmark.objects.get(slug="facet"),
            version=version,
            title="bench",
            user=None,
            filters={"status": "accepted", "q": run},
        )
        releases.release_freeze(release=release, user=None, override_reason="benchmark")
        return f"{release.entries.count()} items frozen"
    release = Release.objects.get(benchmark__slug="facet", version=version)
    if step == "export_release":
        files = releases.release_export_to_directory(release=release, out=directory / "release")
        return f"{len(files)} files, {sum(len(d) for d in files.values())} bytes"
    if step == "release_page":
        from django.contrib.auth import get_user_model
        from django.test import Client

        user, _created = get_user_model().objects.get_or_create(username="bench-import", is_superuser=True)
        client = Client()
        client.force_login(user)
        response = client.get(f"/releases/facet/{version}/", HTTP_HOST="localhost")
        assert response.status_code == 200, response.status_code
        return f"{len(response.content)} bytes of HTML"
    raise SystemExit(f"unknown step {step}")


def child(args: argparse.Namespace) -> None:
    setup_django()
    start = time.perf_counter()
    what = run_step(args.step, run=args.run, directory=Path(args.dir), n=args.items, accepted=args.release)
    seconds = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "peak_mb": peak_mb, "what": what}))


def main() -> None:
    args = parse_args()
    if args.step:
        child(args)
        return
    setup_django()
    from django.db import connection

    run = f"bench-{random.randrange(16**6):06x}"
    steps = [s for s in args.steps.split(",") if s]
    print(f"database: {connection.vendor}; run {run}: {args.items} items, release of {args.release}")
    with tempfile.TemporaryDirectory(prefix="bench-import-") as tmp:
        directory = Path(tmp)
        start = time.perf_counter()
        write_file(directory / "items.jsonl", n=args.items, accepted=args.release, run=run, seed=args.seed)
        size = (directory / "items.jsonl").stat().st_size
        print(f"{'write file':<15} {time.perf_counter() - start:8.1f} s  {size / 2**20:9.1f} MiB file")
        for step in steps:
            command = [sys.executable, __file__, "--step", step, "--run", run, "--dir", tmp]
            command += ["--items", str(args.items), "--release", str(args.release)]
            result = subprocess.run(command, capture_output=True, text=True, check=False)
            if result.returncode:
                sys.stderr.write(result.stdout + result.stderr)
                raise SystemExit(f"step {step} failed")
            out = json.loads(result.stdout.strip().splitlines()[-1])
            print(f"{step:<15} {out['seconds']:8.1f} s  {out['peak_mb']:9.0f} MB peak RSS  {out['what']}")


if __name__ == "__main__":
    main()
