#!/usr/bin/env python
"""Compare bench_pages results at several sizes: p50 and p95 per page, the growth of p50, and the query counts.

    .venv/bin/python scripts/bench_growth.py 2k.json 20k.json 100k.json [--limit 2] [--max-queries 10]

Each file is the ``--json`` output of scripts/bench_pages.py. Prints a Markdown table (page, role, p50 / p95 ms
and queries at each size, p50 growth from the first file to the second) and then the pages that grow by more than
``--limit`` times from the first size to the second, or issue more than ``--max-queries`` queries anywhere.
"""

import argparse
import json
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", type=Path, nargs="+")
    parser.add_argument("--limit", type=float, default=2.0)
    parser.add_argument("--max-queries", type=int, default=10)
    args = parser.parse_args()
    runs = [json.loads(path.read_text(encoding="utf-8")) for path in args.files]
    sizes = [run[0]["items"] for run in runs]
    by_page = [{(row["page"], row["role"]): row for row in run} for run in runs]
    header = " | ".join(f"{size:,} items: p50 / p95 ms, queries" for size in sizes)
    print(f"| page | role | {header} | p50 growth {sizes[0]:,} → {sizes[1]:,} |")
    print("|---|---|" + "---|" * len(sizes) + "---|")
    grew, heavy = [], []
    for key, first in by_page[0].items():
        rows = [pages.get(key) for pages in by_page]
        cells = " | ".join(f"{r['p50_ms']} / {r['p95_ms']}, {r['queries']}" if r else "—" for r in rows)
        growth = rows[1]["p50_ms"] / first["p50_ms"] if len(rows) > 1 and rows[1] and first["p50_ms"] else None
        shown = f"{growth:.2f}x" if growth else "—"
        print(f"| {key[0]} | {key[1]} | {cells} | {shown} |")
        if growth and growth > args.limit:
            grew.append(f"{key[0]} ({growth:.2f}x)")
        heavy += [f"{key[0]} at {r['items']:,} ({r['queries']})" for r in rows if r and r["queries"] > args.max_queries]
    print()
    print(f"p50 grew more than {args.limit}x from {sizes[0]:,} to {sizes[1]:,}: " + (", ".join(grew) or "none"))
    print(f"more than {args.max_queries} queries: " + (", ".join(heavy) or "none"))


if __name__ == "__main__":
    main()
