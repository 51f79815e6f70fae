"""Server time, SQL queries and peak Python memory of every GET route, on a database of a given size.

    .venv/bin/python scripts/bench_pages.py --items 2000 [--runs 9] [--json OUT] [--only NAME]
    DATABASE_URL=postgres://USER@HOST/bench .venv/bin/python scripts/bench_pages.py --items 100000 --json out.json

Builds the data once (reused when the database already holds it): N bilingual items with two revisions each and
two emotions, 50 users and an admin, an open and a closed screening round over 1/12 of the items each with two
reviewers per item, model responses to the open prompts and a comparison set labelled by experts (about 90% done),
the studies and the rows every other route needs (scripts/bench_studies.py), and an EiCAP study (reply sets drafted,
audited and expanded, a key validation with disagreements) and a contamination check (scripts/bench_eicap.py).
Rows are written with ``bulk_create`` in batches (the benchmark's own fast path; the import path has its own
benchmark, scripts/bench_import.py). Without DATABASE_URL a throwaway SQLite file is used. A database holding items
that this script did not make is refused, so it never writes into real data.

Then requests every GET route of the URL resolver (scripts/bench_routes.py: pages, htmx partials, API lists and
details, admin pages; first, middle and last objects and pages, filters, English and Chinese searches of one and two
characters) with Django's test client as the role that uses it, ``--runs`` times, and prints one line per request:
status, p50 and p95 server time, SQL queries, peak Python memory (tracemalloc, one extra run). It ends with the
number of GET routes and the misses (p95 over 50 ms or more than 10 queries), and fails when a route is neither
filled nor excluded with a reason, or when a request answers an unexpected status. ``--json`` writes a list of
objects with ``page``, ``route``, ``url``, ``role``, ``items``, ``status``, ``expected``, ``queries``, ``p50_ms``,
``p95_ms``, ``peak_mb``.
"""

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from bench_eicap import build_eicap
from bench_routes import Case, Unfilled, cases
from bench_studies import build_calibration, build_evaluation, build_extras, studies_built, studies_reset

ROOT = Path(__file__).resolve().parents[1]
MARKER = "bench_lead"
P95_TARGET_MS = 50
QUERY_TARGET = 10


def setup_django() -> None:
    sys.path.insert(0, str(ROOT))
    if "DATABASE_URL" not in os.environ:
        folder = Path(tempfile.mkdtemp(prefix="eistudio-bench-pages-"))
        os.environ["DATABASE_URL"] = f"sqlite:///{folder / 'db.sqlite3'}"
    os.environ.setdefault("DEBUG", "1")  # no HTTPS redirect for the test client; pages and queries are the same
    # The cache production uses (DEBUG would choose the in-process one): a cached value costs its query here too.
    os.environ.setdefault("CACHE_BACKEND", "database")
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
    import django

    django.setup()
    from django.conf import settings

    settings.ALLOWED_HOSTS = ["*"]
    settings.DEBUG = False  # no query log growing in memory; CaptureQueriesContext still counts


def build(n: int, rng: random.Random, labels: int | None = None) -> None:
    """Write the benchmark's data (see the module docstring)."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.utils import timezone

    from annotation.items import services
    from annotation.items.content import searchable_text
    from annotation.items.models import Benchmark, Dimension, EmotionCategory, Item, ItemRevision
    from annotation.items.synthetic import scenarios
    from annotation.labelling import services as labelling_services
    from annotation.labelling.models import Comparison, ComparisonSet, ExpertLabel, LabelAssignment, ModelResponse
    from annotation.screening import services as screening_services
    from annotation.screening.models import Criterion, Review, ReviewAssignment, RoundItem, ScreeningRound

    user_model = get_user_model()
    started = time.perf_counter()
    if not Benchmark.objects.filter(slug="facet").exists():
        services.taxonomy_load_fixture("taxonomy.json")
    users = []
    for i in range(50):
        role = "lead_expert" if i == 0 else "researcher" if i == 1 else "expert"
        user = user_model.objects.create_user(MARKER if i == 0 else f"bench_{i}", password="bench-pass-2026")
        user.groups.add(Group.objects.get(name=role))
        users.append(user)
    lead, researcher, experts = users[0], users[1], users[2:]
    benchmark = Benchmark.objects.get(slug="facet")
    dimensions = list(Dimension.objects.filter(benchmark=benchmark, children__isnull=True))
    emotions = list(EmotionCategory.objects.all())
    statuses = ["draft"] * 5 + ["accepted"] * 3 + ["rejected", "in_screening"]
    Item.objects.bulk_create(
        [
            Item(
                uid=f"bench-{i:06d}",
                benchmark=benchmark,
                dimension=rng.choice(dimensions),
                kind="open_prompt" if i % 4 == 0 else "mcq",
                status=rng.choice(statuses),
                difficulty=rng.choice(["", "easy", "medium", "hard"]),
                has_en=True,
                has_zh=i % 10 != 0,
                parity_ok=i % 7 != 0,
                created_by=lead,
                updated_by=lead,
            )
            for i in range(n)
        ],
        batch_size=2000,
    )
    items = list(Item.objects.filter(uid__startswith="bench-").order_by("id"))
    texts = scenarios(n, seed=rng.randrange(2**31))
    revisions = []
    for item in items:
        text = texts[item.pk % len(texts)]
        for number in (1, 2):
            # Revision 1 is a draft of revision 2: realistic texts (annotation.items.synthetic), a rare near-duplicate.
            en = text["en"] if number == 2 else text["en"].rsplit(" ", 3)[0]
            zh = text["zh"] if number == 2 else text["zh"][:-6]
            if item.kind == "open_prompt":
                content = {"en": {"prompt": en}, "zh": {"prompt": zh}}
            else:
                content = {
                    "en": {"context": en, "question": "How does she feel?", "options": ["a", "b", "c", "d"]},
                    "zh": {"context": zh, "question": "她感觉如何？", "options": ["甲", "乙", "丙", "丁"]},
                    "answer": 0,
                }
            revisions.append(
                ItemRevision(item=item, number=number, content=content, content_hash=f"{item.pk}-{number}", author=lead)
            )
    ItemRevision.objects.bulk_create(revisions, batch_size=2000)
    del revisions
    current = {r.item_id: r for r in ItemRevision.objects.filter(number=2, item__uid__startswith="bench-")}
    for item in items:
        item.current_revision = current[item.pk]
        item.search_text = searchable_text(current[item.pk].content)
    Item.objects.bulk_update(items, ["current_revision", "search_text"], batch_size=2000)
    through = Item.emotions.through
    through.objects.bulk_create(
        [through(item_id=item.pk, emotioncategory_id=e.pk) for item in items for e in rng.sample(emotions, 2)],
        batch_size=5000,
    )
    criteria = list(Criterion.objects.filter(dimension=None))
    for number, status in ((1, "closed"), (2, "open")):
        screening_round = ScreeningRound.objects.create(
            benchmark=benchmark,
            number=number,
            title=f"bench round {number}",
            opened_by=lead,
            status=status,
            closed_by=lead if status == "closed" else None,
            closed_at=timezone.now() if status == "closed" else None,
        )
        screening_round.criteria.set(criteria)
        screening_round.reviewers.set([*experts[:10], lead])
        chosen = items[(number - 1) * n // 12 : number * n // 12]
        RoundItem.objects.bulk_create(
            [
                RoundItem(round=screening_round, item=item, revision=current[item.pk], outcome="pending")
                for item in chosen
            ]
        )
        assignments = []
        for k, round_item in enumerate(RoundItem.objects.filter(round=screening_round).order_by("pk")):
            pair = [lead, experts[k % 10]] if k % 3 == 0 else [experts[k % 10], experts[(k + 1) % 10]]
            assignments += [
                ReviewAssignment(round_item=round_item, round=screening_round, reviewer=r, position=k) for r in pair
            ]
        ReviewAssignment.objects.bulk_create(assignments, batch_size=5000)
        now, reviews = timezone.now(), []
        for assignment in ReviewAssignment.objects.filter(round_item__round=screening_round):
            if status == "open" and rng.random() < 0.4:
                continue
            scores = {
                c.code: rng.choice(["pass", "fail"]) if c.scale == "pass_fail" else rng.randint(1, 5) for c in criteria
            }
            decision = rng.choice(["accept", "accept", "revise", "reject"])
            reviews.append(
                Review(assignment=assignment, status="submitted", decision=decision, scores=scores, submitted_at=now)
            )
        Review.objects.bulk_create(reviews, batch_size=5000)
        # Reviews written directly: fill in the stored counts the screening services keep.
        screening_services.round_recount(round=screening_round)
    open_prompts = [item for item in items if item.kind == "open_prompt"]
    ModelResponse.objects.bulk_create(
        [
            ModelResponse(item=item, language=lang, model_name=m, text=f"{m} answers {item.uid} in {lang}.")
            for item in open_prompts
            for lang in ("en", "zh")
            for m in ("model-a", "model-b")
        ],
        batch_size=5000,
    )
    pairs: dict[tuple[int, str], list] = {}
    for response in ModelResponse.objects.filter(item__uid__startswith="bench-").order_by("model_name"):
        pairs.setdefault((response.item_id, response.language), []).append(response)
    comparison_set = ComparisonSet.objects.create(name="bench set", benchmark=benchmark, created_by=researcher)
    comparison_set.experts.set([*experts[:10], lead])
    Comparison.objects.bulk_create(
        [
            Comparison(
                comparison_set=comparison_set,
                item_id=item_id,
                language=lang,
                dimension=dimensions[0],
                response_a=responses[0],
                response_b=responses[1],
            )
            for (item_id, lang), responses in pairs.items()
        ],
        batch_size=5000,
    )
    # Each comparison goes to `per` of the 11 labellers (2 unless --labels asks for more), about 90% labelled.
    comparisons = list(Comparison.objects.filter(comparison_set=comparison_set).order_by("pk").values_list("pk"))
    team = [lead, *experts[:10]]
    per = 2 if labels is None else max(2, min(len(team), -(-labels * 10 // (9 * max(1, len(comparisons))))))
    share = 0.9 if labels is None else min(1.0, labels / max(1, per * len(comparisons)))
    for start in range(0, len(comparisons), 5000):
        chunk = [
            LabelAssignment(
                comparison_id=pk,
                comparison_set=comparison_set,
                expert=team[(k + j * 3) % len(team)],
                shown_order="AB",
                position=k,
            )
            for k, (pk,) in enumerate(comparisons[start : start + 5000], start)
            for j in range(per)
        ]
        LabelAssignment.objects.bulk_create(chunk, batch_size=5000)
        ExpertLabel.objects.bulk_create(
            [
                ExpertLabel(assignment=a, score=rng.randint(-3, 3), shown_order="AB")
                for a in chunk
                if rng.random() < share
            ],
            batch_size=5000,
        )
    # Labels written directly: fill in the stored counts the labelling services keep.
    labelling_services.comparison_set_recount(comparison_set=comparison_set)
    finish(rng)
    print(f"built {n} items in {time.perf_counter() - started:.0f} s", flush=True)


def finish(rng: random.Random) -> None:
    """Build the studies and the near-duplicate index; after a build that stopped here, start these again."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection

    from annotation.items.models import Benchmark

    users = get_user_model().objects.filter(username__startswith="bench_").order_by("pk")
    lead, researcher = users.get(username=MARKER), users.get(username="bench_1")
    experts = [u for u in users if u.username not in (MARKER, "bench_1")]
    benchmark = Benchmark.objects.get(slug="facet")
    studies_reset()
    build_calibration(benchmark=benchmark, lead=lead, researcher=researcher, experts=experts, rng=rng)
    build_evaluation(benchmark=benchmark, lead=lead, researcher=researcher, rng=rng)
    build_import_jobs(lead=lead)
    call_command("similarity_index", verbosity=0)  # near-duplicate signatures, as saving each item would write
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")


def build_import_jobs(*, lead: object) -> None:
    """Two finished item import jobs of the lead expert: one done, one failed with the most errors a job lists."""
    from annotation.items.models import ItemImportJob
    from annotation.items.services.import_jobs import MAX_LISTED

    ItemImportJob.objects.filter(created_by=lead).delete()
    error = {"field": "dimension", "message": "unknown dimension code 'x'"}
    errors = [{"line": n, **error} for n in range(1, MAX_LISTED + 1)]
    common = {"created_by": lead, "format": "eistudio", "sha256": "0" * 64, "size": 30_000_000, "total": 22_000}
    ItemImportJob.objects.create(filename="bench-done.jsonl", status="done", created=22_000, processed=22_000, **common)
    ItemImportJob.objects.create(
        filename="bench-failed.jsonl", status="failed", errors=errors, error_count=2 * MAX_LISTED, **common
    )


def near_duplicates_store() -> None:
    """Store the near-duplicate clusters the pages read, as the worker a first view queues would (kept while the
    bank is unchanged): the pages are measured reading them, not showing that they are being computed."""
    from django.conf import settings

    from annotation.items import near_duplicates
    from annotation.items.content import LANGUAGES
    from annotation.items.models import Benchmark, NearDuplicateReport

    threshold = near_duplicates.threshold_rounded(settings.NEAR_DUPLICATE_THRESHOLD)
    for benchmark in Benchmark.objects.order_by("slug"):
        for language in LANGUAGES:
            key = near_duplicates.inputs_key(benchmark_id=benchmark.pk, language=language)
            kept = NearDuplicateReport.objects.filter(benchmark=benchmark, language=language, threshold=threshold)
            if not kept.filter(inputs_key=key).exists():
                started = time.perf_counter()
                report = near_duplicates.report_compute(benchmark=benchmark, language=language, threshold=threshold)
                print(
                    f"near-duplicates of {benchmark.slug} [{language}] stored: {report.cluster_count} clusters "
                    f"in {time.perf_counter() - started:.1f} s",
                    flush=True,
                )


def comparisons_store() -> None:
    """Store the comparison of the releases the compare routes request (bench_routes.py), as the worker a first
    view queues would (kept while both releases are unchanged)."""
    from annotation.releases import comparisons
    from annotation.releases.models import Release, ReleaseComparison

    old, new = Release.objects.get(title="bench release"), Release.objects.filter(title="bench draft release").first()
    if new is None:
        return
    key = comparisons.comparison_key(old=old, new=new)
    if not ReleaseComparison.objects.filter(old=old, new=new, inputs_key=key).exists():
        started = time.perf_counter()
        comparisons.comparison_compute(old=old, new=new)
        print(f"comparison of {old.version} and {new.version} stored in {time.perf_counter() - started:.1f} s")


def measure(requests: list[Case], runs: int, items: int, show_queries: bool = False) -> list[dict]:
    from django.contrib.auth import get_user_model
    from django.db import connection, reset_queries
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from core.startup import settle

    settle()  # as a web process does before its first request (config.wsgi)
    clients: dict[str, Client] = {}
    results = []
    for case in requests:
        username, url = case.username, case.url
        headers = {"HTTP_HX_REQUEST": "true"} if case.htmx else {}
        if username not in clients:
            clients[username] = Client()
            clients[username].force_login(get_user_model().objects.get(username=username))
        client = clients[username]
        client.get(url, **headers)  # warm caches, as a page a user has opened before
        times = []
        for _ in range(runs):
            reset_queries()  # a full query log (9,000 entries) would make every count 0
            with CaptureQueriesContext(connection) as queries:
                started = time.perf_counter()
                response = client.get(url, HTTP_ACCEPT="text/html,application/json", **headers)
                times.append((time.perf_counter() - started) * 1000)
        count = len(queries)  # read now: the next request clears the query log the count is sliced from
        if show_queries:
            # The last run's queries, slowest first: where a page's time goes.
            for q in sorted(queries.captured_queries, key=lambda q: -float(q["time"])):
                print(f"    {float(q['time']) * 1000:7.1f} ms  {q['sql'][:400]}", flush=True)
        tracemalloc.start()
        client.get(url, **headers)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        times.sort()
        row = {
            "page": case.page,
            "route": case.route,
            "url": url,
            "role": case.role,
            "items": items,
            "status": response.status_code,
            "expected": 403 if case.refused else "< 400",
            "queries": count,
            "p50_ms": round(statistics.median(times), 1),
            "p95_ms": round(times[min(len(times) - 1, max(0, round(0.95 * len(times)) - 1))], 1),
            "peak_mb": round(peak, 1),
        }
        results.append(row)
        print(
            f"{case.page[:40]:40s} {row['role']:12s} {row['status']} "
            f"p50 {row['p50_ms']:8.1f} ms  p95 {row['p95_ms']:8.1f} ms  "
            f"queries {row['queries']:3d}  peak {row['peak_mb']:6.1f} MB",
            flush=True,
        )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--labels", type=int, help="expert labels in the big comparison set (default: about 0.9 N)")
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--json", type=Path, help="write the results here as JSON")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", action="append", help="measure only the pages whose name contains this (repeatable)")
    parser.add_argument(
        "--skip",
        action="append",
        help="leave out the pages whose name contains this (repeatable; the report names them as not measured)",
    )
    parser.add_argument("--queries", action="store_true", help="print each page's queries with their times")
    args = parser.parse_args()
    setup_django()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from annotation.items.models import Item

    call_command("migrate", verbosity=0)
    call_command("createcachetable", verbosity=0)  # the cache the benchmark runs on (setup_django)
    if not get_user_model().objects.filter(username=MARKER).exists():
        if Item.objects.exists():
            raise SystemExit("this database holds items the benchmark did not make: give it an empty database")
        build(args.items, random.Random(args.seed), labels=args.labels)
    elif not studies_built():
        started = time.perf_counter()
        finish(random.Random(args.seed))  # a build stopped before its studies: finish it
        print(f"finished the build in {time.perf_counter() - started:.0f} s", flush=True)
    build_extras(rng=random.Random(args.seed))  # the rows the other routes need (kept when already there)
    # The EiCAP study and the contamination check (scripts/bench_eicap.py), sized by the bench items; kept once built.
    # The benchmark's size is its own items (the EiCAP probes expanded from reply sets are not counted).
    items = Item.objects.filter(uid__startswith="bench-").count()
    build_eicap(items=items, rng=random.Random(args.seed))
    near_duplicates_store()
    comparisons_store()
    try:
        wanted = (lambda c: any(part in c.page or part == c.route for part in args.only)) if args.only else None
        route_count, requests = cases(wanted)
    except Unfilled as error:
        raise SystemExit(str(error)) from error
    skipped = [c for c in requests if any(part in c.page or part == c.route for part in args.skip or [])]
    requests = [c for c in requests if c not in skipped]
    print(
        f"{route_count} GET routes, {len(requests)} requests, at {items} items "
        f"({os.environ['DATABASE_URL'].split('@')[-1]})",
        flush=True,
    )
    results = measure(requests, args.runs, items, show_queries=args.queries)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    report(route_count, results)
    for case in skipped:
        print(f"  NOT MEASURED (--skip) {case.page} {case.role} {case.url}")
    if failed(results):
        raise SystemExit("some requests failed (status 400 or more): the benchmark filled them wrongly or a page broke")


def failed(results: list[dict]) -> list[dict]:
    """Return the rows whose status is not the one expected: under 400, or 403 where the product refuses everyone."""
    return [r for r in results if (r["status"] != 403 if r["expected"] == 403 else r["status"] >= 400)]


def misses(results: list[dict]) -> list[dict]:
    """Return the rows over the targets: p95 above 50 ms or more than 10 queries."""
    return [r for r in results if r["p95_ms"] > P95_TARGET_MS or r["queries"] > QUERY_TARGET]


def report(route_count: int, results: list[dict]) -> None:
    """Print the route count and the misses, grouped by route."""
    over = misses(results)
    routes = {r["route"] for r in results}
    print(
        f"\n{route_count} GET routes ({len(routes)} measured), {len(results)} requests; "
        f"{len(over)} over p95 {P95_TARGET_MS} ms or {QUERY_TARGET} queries:",
        flush=True,
    )
    for r in over:
        print(
            f"  MISS {r['page'][:40]:40s} {r['role']:12s} p95 {r['p95_ms']:8.1f} ms  "
            f"queries {r['queries']:3d}  {r['url']}"
        )
    for r in failed(results):
        print(f"  FAILED {r['status']} {r['page']} {r['role']} {r['url']}")


if __name__ == "__main__":
    main()
