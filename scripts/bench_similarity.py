#!/usr/bin/env python
"""Measure the near-duplicate search: recall and precision against the exact N x N computation, time and peak
memory at 10k and 100k items, and the stored index in a database (docs/screening.md, *Near-duplicates*).

    .venv/bin/python scripts/bench_similarity.py                         # everything, SQLite for the database part
    DATABASE_URL=postgres://user@host:5432/db .venv/bin/python scripts/bench_similarity.py --db-items 100000
    .venv/bin/python scripts/bench_similarity.py --sizes 10000 --skip-db --skip-old

1. Recall and precision of ``annotation.items.similarity.near_duplicates`` (MinHash LSH candidates, exact scores)
against the
   exact computation it replaced (scikit-learn TF-IDF, every pair), at the item threshold 0.85 and at the lowest
   the near-duplicates page offers: on the real EmoBench items in English and Chinese (from ../shared/data/external,
   skipped when absent), on them with paraphrased copies, and on 10k synthetic bilingual items with paraphrases.
2. Time and peak memory of the near-duplicate computation over ``--sizes`` synthetic items per language (2% of
   them paraphrased copies), each in a fresh process: the peak of tracemalloc during the computation (Python and
   NumPy allocations; a second run, as tracing slows it down) and the process's peak resident set (the texts,
   Python and the libraries included). ``--skip-old`` leaves out the old dense computation at 10k for comparison.
3. The index in a database (``DATABASE_URL``, else SQLite; a throw-away test database is created and dropped):
   ``--db-items`` items written in bulk, then ``similarity_index`` (signing everything in batches), the neighbour
   lookup of the item page for ``--lookups`` random items (queries, median and p95 milliseconds) and the
   near-duplicates report (time, queries, peak memory).

It asserts nothing; tests/items/test_similarity_recall.py holds the recall floor.
"""

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXTERNAL = ROOT.parent / "shared" / "data" / "external"
sys.path.insert(0, str(ROOT))

from annotation.items import lsh, synthetic  # noqa: E402
from annotation.items.similarity import near_duplicates  # noqa: E402

# Chinese paraphrases edit characters, English ones words: strengths giving pairs all around the thresholds.
STRENGTH = {"en": 0.35, "zh": 0.1}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000], help="items (10000 100000)")
    parser.add_argument("--db-items", type=int, default=5000, help="items in the database part (5000)")
    parser.add_argument("--lookups", type=int, default=200, help="neighbour lookups timed (200)")
    parser.add_argument("--skip-recall", action="store_true")
    parser.add_argument("--skip-old", action="store_true", help="leave out the old dense computation at 10k")
    parser.add_argument("--skip-db", action="store_true")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    return parser.parse_args()


def corpus(n: int, lang: str, *, seed: int = 1, copies: float = 0.02) -> dict[str, str]:
    """Return ``n`` synthetic texts in ``lang`` plus paraphrased copies of ``copies`` of them."""
    items = synthetic.scenarios(n, seed=seed)
    texts = {f"s{i:06d}": item[lang] for i, item in enumerate(items)}
    rng = random.Random(seed)
    for i in range(int(n * copies)):
        strength = rng.uniform(0, STRENGTH[lang] / 3)
        texts[f"p{i:06d}"] = synthetic.paraphrase(items[i][lang], lang, strength=strength, seed=i)
    return texts


# --- 1. recall and precision ---------------------------------------------------------------------------------------


def exact_pairs(texts: dict[str, str], threshold: float) -> set[tuple[str, str]]:
    """Return the pairs at or above ``threshold`` by the old computation, a block of rows at a time."""
    import numpy as np
    from sklearn.feature_extraction.text import TfidfVectorizer

    keys = [k for k in sorted(texts) if texts[k].strip()]
    matrix = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), sublinear_tf=True).fit_transform(
        [texts[k] for k in keys]
    )
    found = set()
    for start in range(0, len(keys), 1000):
        block = (matrix[start : start + 1000] @ matrix.T).toarray()
        rows, cols = np.nonzero(block >= threshold)
        found |= {(keys[start + i], keys[j]) for i, j in zip(rows, cols, strict=True) if start + i < j}
    return found


def emobench(lang: str) -> dict[str, str]:
    from annotation.items.emobench import EA_QUESTION, EU_QUESTION, ZH_QUESTION_TYPES

    texts = {}
    for name in ("EA", "EU"):
        for line in (EXTERNAL / "emobench" / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row["language"] != lang:
                continue
            subject, scenario = row["subject"].strip(), row["scenario"].strip()
            if name == "EA":
                kind = row["question type"].strip()
                kind = kind.lower() if lang == "en" else ZH_QUESTION_TYPES.get(kind.casefold(), kind)
                texts[f"ea-{row['qid']}"] = scenario + "\n" + EA_QUESTION[lang].format(q_type=kind, subject=subject)
            else:
                for part in ("emotion", "cause"):
                    question = EU_QUESTION[part][lang].format(subject=subject)
                    texts[f"eu-{row['qid']}-{part}"] = scenario + "\n" + question
    return texts


def paraphrased(texts: dict[str, str], lang: str, n: int) -> dict[str, str]:
    rng = random.Random(1)
    result = dict(texts)
    for i, key in enumerate(rng.sample(sorted(texts), n)):
        result[f"para-{i}"] = synthetic.paraphrase(texts[key], lang, strength=rng.uniform(0, STRENGTH[lang]), seed=i)
    return result


def recall() -> None:
    print("1. Recall and precision against the exact N x N computation (pairs found by both / by one)")
    collections = []
    if (EXTERNAL / "emobench").is_dir():
        for lang in ("en", "zh"):
            real = emobench(lang)
            collections.append((f"EmoBench {lang}", real))
            collections.append((f"EmoBench {lang} + 300 paraphrases", paraphrased(real, lang, 300)))
    else:
        print(f"   (EmoBench skipped: {EXTERNAL / 'emobench'} not found)")
    for lang in ("en", "zh"):
        items = synthetic.scenarios(10_000, seed=3)
        texts = paraphrased({f"s{i}": item[lang] for i, item in enumerate(items)}, lang, 2000)
        collections.append((f"synthetic {lang} 10k + 2000 paraphrases", texts))
    header = ("collection", "texts", "threshold", "exact", "found", "recall", "precision")
    print("   {:40s} {:>6s} {:>9s} {:>6s} {:>6s} {:>7s} {:>9s}".format(*header))
    for name, texts in collections:
        for threshold in (0.85, lsh.LOWEST_THRESHOLD):
            exact = exact_pairs(texts, threshold)
            found = {(p.a, p.b) for p in near_duplicates(texts, threshold=threshold)}
            hits = len(exact & found)
            print(
                f"   {name:40s} {len(texts):6d} {threshold:9.2f} {len(exact):6d} {len(found):6d} "
                f"{hits / max(len(exact), 1):7.4f} {hits / max(len(found), 1):9.4f}"
            )


# --- 2. time and memory of the pure computation ----------------------------------------------------------------


def child(kind: str, n: int, lang: str) -> dict:
    texts = corpus(n, lang)
    start = time.perf_counter()
    if kind == "new":
        pairs = len(near_duplicates(texts, threshold=0.85))
    else:
        import numpy as np
        from sklearn.feature_extraction.text import TfidfVectorizer

        # The replaced code: one dense N x N similarity matrix.
        keys = sorted(texts)
        matrix = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), sublinear_tf=True).fit_transform(
            [texts[k] for k in keys]
        )
        pairs = int(np.count_nonzero(np.triu((matrix @ matrix.T).toarray() >= 0.85, k=1)))
    seconds = time.perf_counter() - start
    rss = peak_rss_mb()
    tracemalloc.start()
    if kind == "new":
        near_duplicates(texts, threshold=0.85)
    traced = tracemalloc.get_traced_memory()[1] / 2**20 if kind == "new" else float("nan")
    return {"texts": len(texts), "pairs": pairs, "seconds": seconds, "rss_mb": rss, "traced_mb": traced}


def peak_rss_mb() -> float:
    """Return this process's peak resident set (VmHWM: unlike ru_maxrss, not inherited from the parent at exec)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_child(*args: str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def computation(sizes: list[int], old: bool) -> None:
    print("\n2. Near-duplicate computation (threshold 0.85), synthetic items, each run in a fresh process")
    header = ("code", "lang", "texts", "pairs", "seconds", "peak traced MB", "peak RSS MB")
    print("   {:5s} {:4s} {:>7s} {:>6s} {:>8s} {:>15s} {:>12s}".format(*header))
    runs = [("new", n, lang) for n in sizes for lang in ("en", "zh")]
    if old and 10_000 in sizes:
        runs += [("old", 10_000, lang) for lang in ("en", "zh")]
    for kind, n, lang in runs:
        r = run_child("pure", kind, str(n), lang)
        print(
            f"   {kind:5s} {lang:4s} {r['texts']:7d} {r['pairs']:6d} {r['seconds']:8.1f} {r['traced_mb']:15.0f} "
            f"{r['rss_mb']:12.0f}"
        )


# --- 3. the stored index in a database -------------------------------------------------------------------------


def database(n: int, lookups: int) -> None:
    print(f"\n3. The stored index, {n} bilingual items in {os.environ.get('DATABASE_URL', 'SQLite')}")
    for line in run_child("db", str(n), str(lookups))["lines"]:
        print("   " + line)


def db_child(n: int, lookups: int) -> dict:
    import statistics

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings_test")
    django.setup()
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from annotation.items import services
    from annotation.items.models import Benchmark, Dimension, Item, ItemRevision
    from annotation.items.neighbours import item_neighbours, near_duplicate_report
    from annotation.items.signatures import index_build

    lines = []
    test_db = connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        services.taxonomy_load_fixture("taxonomy.json")
        bench = Benchmark.objects.get(slug="facet")
        dim = Dimension.objects.filter(benchmark=bench, children__isnull=True).first()
        start = time.perf_counter()
        texts = {lang: corpus(n, lang) for lang in ("en", "zh")}
        uids = list(texts["en"])
        for first in range(0, len(uids), 2000):
            chunk = uids[first : first + 2000]
            items = Item.objects.bulk_create(
                Item(uid=uid, benchmark=bench, dimension=dim, kind="open_prompt", has_en=True, has_zh=True)
                for uid in chunk
            )
            revisions = ItemRevision.objects.bulk_create(
                ItemRevision(
                    item=item,
                    number=1,
                    content={lang: {"prompt": texts[lang][item.uid]} for lang in ("en", "zh")},
                    content_hash=item.uid,
                )
                for item in items
            )
            for item, revision in zip(items, revisions, strict=True):
                item.current_revision = revision
            Item.objects.bulk_update(items, ["current_revision"])
        lines.append(f"{len(uids)} items written in bulk in {time.perf_counter() - start:.0f} s")

        start = time.perf_counter()
        report = index_build(benchmarks=[bench])
        seconds = time.perf_counter() - start
        lines.append(
            f"similarity_index: {report.signed} signatures in {seconds:.0f} s, peak RSS of the process "
            f"{peak_rss_mb():.0f} MB (the {len(uids)} texts it wrote included)"
        )

        sample = random.Random(0).sample(uids, min(lookups, len(uids)))
        timings, counts = [], []
        for i, uid in enumerate(sample):
            item = Item.objects.select_related("current_revision").get(uid=uid)
            with CaptureQueriesContext(connection) as captured:
                start = time.perf_counter()
                item_neighbours(item=item, threshold=0.85)
                elapsed = time.perf_counter() - start
            if i:  # the first lookup loads the n-gram weights into memory
                timings.append(elapsed * 1000)
                counts.append(len(captured.captured_queries))
        p95 = statistics.quantiles(timings, n=20)[-1]
        lines.append(
            f"neighbour lookup of {len(timings)} items: {min(counts)}-{max(counts)} queries (one more when the "
            f"process first reads an index's weights), median {statistics.median(timings):.1f} ms, p95 {p95:.1f} ms"
        )
        for lang in ("en", "zh"):
            with CaptureQueriesContext(connection) as captured:
                start = time.perf_counter()
                result = near_duplicate_report(benchmark=bench, language=lang, threshold=0.85)
                seconds = time.perf_counter() - start
            tracemalloc.start()
            near_duplicate_report(benchmark=bench, language=lang, threshold=0.85)
            peak = tracemalloc.get_traced_memory()[1] / 2**20
            tracemalloc.stop()
            lines.append(
                f"near-duplicates report [{lang}]: {result.pairs} pairs in {len(result.clusters)} clusters, "
                f"{seconds:.1f} s, {len(captured.captured_queries)} queries, peak traced {peak:.0f} MB"
            )
    finally:
        connection.creation.destroy_test_db(test_db, verbosity=0)
    return {"lines": lines}


def main() -> None:
    args = parse_args()
    if args.child:
        kind, *rest = args.child
        result = child(rest[0], int(rest[1]), rest[2]) if kind == "pure" else db_child(int(rest[0]), int(rest[1]))
        print(json.dumps(result))
        return
    print(
        f"LSH: {lsh.BANDS} bands x {lsh.ROWS} rows, shingles char_wb {lsh.SHINGLE_SIZES}-grams less those in over "
        f"{lsh.STOP_SHARE:.0%} of texts, pruned below estimated Jaccard {lsh.PRUNE_JACCARD}\n"
    )
    if not args.skip_recall:
        recall()
    computation(args.sizes, not args.skip_old)
    if not args.skip_db:
        database(args.db_items, args.lookups)


if __name__ == "__main__":
    main()
