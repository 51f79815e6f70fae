#!/usr/bin/env python
"""Measure the contamination check's nearest-neighbour search on synthetic English texts, N release texts x N corpus.

    .venv/bin/python scripts/bench_contamination.py 20000
    .venv/bin/python scripts/bench_contamination.py 20000 --embeddings 256

Texts are 40 words drawn from a Zipf vocabulary of 30,000 words. Prints the CPU time, the process's peak resident
memory and the mean nearest-neighbour cosine. With ``--embeddings D`` the texts are embedded by the simulator's
embedding function (``llm.simulator.embeddings.embed``, in this process: no HTTP) into D dimensions and the
block-wise dense search is measured instead (the embedding time is printed apart).
"""

import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evaluation import contamination  # noqa: E402 (after the path is set)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    rng = np.random.default_rng(0)
    vocabulary = np.array([f"w{i}" for i in range(30000)])
    weights = 1 / np.arange(1, len(vocabulary) + 1)
    weights /= weights.sum()

    def texts(k: int) -> list[str]:
        return [" ".join(rng.choice(vocabulary, size=40, p=weights)) for _ in range(k)]

    queries, corpus = texts(n), texts(n)
    if "--embeddings" in sys.argv:
        from llm.simulator.embeddings import embed  # deferred: only this mode needs it

        dimensions = int(sys.argv[sys.argv.index("--embeddings") + 1])
        start = time.process_time()
        left = np.vstack([embed(text, dimensions) for text in queries])
        right = np.vstack([embed(text, dimensions) for text in corpus])
        print(f"embedded {2 * n} texts in {time.process_time() - start:.1f}s cpu")
        start = time.process_time()
        _where, best = contamination.dense_nearest_neighbours(left, right)
    else:
        start = time.process_time()
        _where, best = contamination.nearest_neighbours(queries, corpus)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"n={n} cpu={time.process_time() - start:.1f}s peak_rss={peak:.0f}MB mean={best.mean():.3f}")


if __name__ == "__main__":
    main()
