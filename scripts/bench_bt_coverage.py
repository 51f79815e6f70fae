#!/usr/bin/env python
"""Measure how often Bradley-Terry's percentile bootstrap intervals cover the true strengths.

    .venv/bin/python scripts/bench_bt_coverage.py                  # defaults below
    .venv/bin/python scripts/bench_bt_coverage.py --tournaments 50 --resamples 500

Simulated round robins: ``--models`` models (each size in turn) with true strengths drawn from N(0, 1) and
centred, every pair playing ``--games`` games won with probability sigma(theta_i - theta_j), ties with probability
``--ties`` (half a win each, as ``ratings.bradley_terry`` counts them). Each tournament is rated by
``ratings.bradley_terry`` (``--resamples`` bootstrap resamples, ``--confidence``); an interval covers when it
holds the true centred strength (an unbounded side counts as holding it). Prints, per number of models, the share
of intervals that cover, with a 95% Wilson interval over intervals (those of one tournament are not independent:
read the spread across tournaments, also printed, as the better guide). It asserts nothing.
"""

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evaluation import ratings  # noqa: E402


def tournament(n_models: int, games: int, ties: float, rng: np.random.Generator) -> tuple[list, dict[str, float]]:
    """Return a round robin's verdicts and the true centred strengths."""
    theta = rng.normal(0.0, 1.0, n_models)
    theta -= theta.mean()
    names = [f"m{i:02d}" for i in range(n_models)]
    verdicts = []
    for i in range(n_models):
        for j in range(i + 1, n_models):
            p = 1.0 / (1.0 + math.exp(-(theta[i] - theta[j])))
            for _ in range(games):
                u = rng.random()
                margin = 0 if u < ties else (1 if rng.random() < p else -1)
                verdicts.append((names[i], names[j], margin))
    return verdicts, dict(zip(names, theta.tolist(), strict=True))


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Return the Wilson score interval of a proportion."""
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=int, nargs="+", default=[10, 20])
    parser.add_argument("--games", type=int, default=4, help="games per pair (default 4)")
    parser.add_argument("--ties", type=float, default=0.1, help="probability of a tie (default 0.1)")
    parser.add_argument("--tournaments", type=int, default=100, help="tournaments per size (default 100)")
    parser.add_argument("--resamples", type=int, default=ratings.DEFAULT_RESAMPLES)
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    print(
        f"Bradley-Terry percentile bootstrap: {args.tournaments} round robins per size, {args.games} games per pair, "
        f"ties {args.ties:g}, {args.resamples} resamples, nominal {args.confidence:.0%}, seed {args.seed}"
    )
    for n_models in args.models:
        started = time.perf_counter()
        rng = np.random.default_rng([args.seed, n_models])
        covered = total = 0
        shares = []
        for t in range(args.tournaments):
            verdicts, truth = tournament(n_models, args.games, args.ties, rng)
            rated = ratings.bradley_terry(
                verdicts, n_resamples=args.resamples, seed=t, confidence=args.confidence
            ).by_model()
            hits = 0
            for name, strength in truth.items():
                low, high = rated[name].low, rated[name].high
                hits += (low is None or low <= strength) and (high is None or strength <= high)
            covered += hits
            total += len(truth)
            shares.append(hits / len(truth))
        low, high = wilson(covered, total)
        print(
            f"{n_models} models: coverage {covered / total:.3f} (Wilson 95% {low:.3f}-{high:.3f}; {total} intervals); "
            f"per tournament mean {np.mean(shares):.3f}, sd {np.std(shares, ddof=1):.3f} "
            f"({time.perf_counter() - started:.1f} s)"
        )


if __name__ == "__main__":
    main()
