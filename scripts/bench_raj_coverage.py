#!/usr/bin/env python
"""Measure how often the design-weighted (Raj) 95% interval of a judge's agreement covers the whole-set agreement.

    .venv/bin/python scripts/bench_raj_coverage.py                 # the sweep below, 400 runs per setting
    .venv/bin/python scripts/bench_raj_coverage.py --runs 1000 --strata 3 --per-stratum 100 --draws 60

A simulated comparison set: ``--strata`` strata of ``--per-stratum`` comparisons, 40% of them hard; three judges
name the experts' majority winner with probability ``easy`` on an easy comparison and their own ``hard`` accuracy
on a hard one (so they err together on hard pairs), at three agreement levels (``LEVELS``). Each run serves
``--draws`` comparisons as the product does (``annotation.labelling.active``: strata in turn, priorities from the
plain means of the comparisons served so far, refreshed once per round, every draw's probability recorded) and
computes each judge's design-weighted agreement in the ratio form the report uses
(``active.stratified_mean(..., defined=...)``). An interval covers when it holds the judge's agreement over the
whole set. Printed per setting and judge: the coverage of the reported interval (Korn-Graubard,
``DesignEstimate.low``-``high``) and, for comparison, of the symmetric ``value +- t se`` interval used before;
then the lowest coverage and the pooled coverage with 95% Wilson intervals over runs. Seeded; it asserts nothing
(``tests/calibration/test_active_design.py`` runs a smaller sweep and asserts).
"""

import argparse
import itertools
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from annotation.labelling import active  # noqa: E402

HARD_SHARE = 0.4
# name: (hard accuracy of each judge, easy accuracy); whole-set agreement about 0.63, 0.78 and 0.92.
LEVELS = {
    "low": ((0.35, 0.40, 0.45), 0.80),
    "mid": ((0.42, 0.50, 0.51), 0.95),
    "high": ((0.65, 0.72, 0.78), 0.99),
}


def pool(n_strata: int, per_stratum: int, level: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Return each comparison's stratum and whether each judge agrees with the experts (comparisons x judges)."""
    hard_accuracy, easy = LEVELS[level]
    strata = np.repeat(np.arange(n_strata), per_stratum)
    hard = rng.random(strata.size) < HARD_SHARE
    chance = np.where(hard[:, None], np.array(hard_accuracy)[None, :], easy)
    return strata, (rng.random(chance.shape) < chance).astype(float)


def serve(
    strata: np.ndarray,
    agree: np.ndarray,
    rounds: int,
    runs: int,
    rng: np.random.Generator,
    epsilon: float = active.EPSILON,
) -> tuple[np.ndarray, np.ndarray]:
    """Serve ``rounds`` comparisons per stratum in ``runs`` independent runs at once; return order and q (runs x draws).

    As the product: the stratum's remaining comparisons are drawn with ``active.draw_probabilities`` over
    ``active.priorities`` of the judges' winners, P(best) from the plain means of the comparisons served so far.
    """
    winners = np.where(agree > 0, 1.0, -1.0)
    n_judges = agree.shape[1]
    served = np.zeros((runs, strata.size), dtype=bool)
    order, probabilities = [], []
    members = [np.flatnonzero(strata == h) for h in np.unique(strata)]
    for _ in range(rounds):
        if order:
            seen = agree[np.stack(order, axis=1)]  # runs x served x judges
            mean = seen.mean(axis=1)
            error = np.sqrt(np.maximum(mean * (1 - mean), 0.05) / seen.shape[1])
            best = active.best_probabilities(mean, error, seed=int(rng.integers(2**31)))
        else:
            best = np.full((runs, n_judges), 1 / n_judges)
        for index in members:
            weights = active.priorities(winners[index][None, :, :], best[:, None, :])
            q = active.draw_probabilities(weights, remaining=~served[:, index], epsilon=epsilon)
            cumulative = np.cumsum(q, axis=1)
            u = rng.random(runs)[:, None] * cumulative[:, -1:]
            chosen = np.minimum((cumulative <= u).sum(axis=1), index.size - 1)
            rows = np.arange(runs)
            served[rows, index[chosen]] = True
            order.append(index[chosen])
            probabilities.append(q[rows, chosen])
    return np.stack(order, axis=1), np.stack(probabilities, axis=1)


def coverage(
    n_strata: int, per_stratum: int, draws: int, level: str, runs: int, seed: int = 0, epsilon: float = active.EPSILON
) -> dict[str, np.ndarray]:
    """Return, per judge, how many runs' reported and symmetric-t intervals cover, and the whole-set agreement."""
    rng = np.random.default_rng([seed, n_strata, per_stratum, draws, list(LEVELS).index(level)])
    strata, agree = pool(n_strata, per_stratum, level, rng)
    sizes = {h: per_stratum for h in range(n_strata)}
    truth = agree.mean(axis=0)
    order, q = serve(strata, agree, draws // n_strata, runs, rng, epsilon)
    reported = np.zeros(agree.shape[1], dtype=int)
    symmetric = np.zeros(agree.shape[1], dtype=int)
    for run in range(runs):
        for j in range(agree.shape[1]):
            y = agree[order[run], j]
            estimate = active.stratified_mean(y, q[run], strata[order[run]], sizes, defined=np.ones_like(y))
            reported[j] += estimate.low <= truth[j] <= estimate.high
            symmetric[j] += abs(estimate.value - truth[j]) <= estimate.half_width
    return {"reported": reported, "symmetric": symmetric, "truth": truth}


def wilson(successes: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """Return the Wilson score interval of a proportion."""
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--strata", type=int, nargs="+", default=[3, 5, 10, 20])
    parser.add_argument("--per-stratum", type=int, nargs="+", default=[13, 50, 100])
    parser.add_argument("--draws", type=int, nargs="+", default=[60, 180])
    parser.add_argument("--levels", nargs="+", default=list(LEVELS), choices=list(LEVELS))
    parser.add_argument("--runs", type=int, default=400, help="runs per setting (default 400)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--epsilon", type=float, default=active.EPSILON, help=f"uniform share of the draw ({active.EPSILON})"
    )
    args = parser.parse_args()
    started = time.process_time()
    print("strata x size, draws, level: whole-set agreement; coverage reported (Korn-Graubard) | symmetric t")
    low = (2.0, "")
    covered = total = 0
    for n_strata, per, draws, level in itertools.product(args.strata, args.per_stratum, args.draws, args.levels):
        rounds = draws // n_strata
        if rounds < 2 or rounds > per:
            continue  # fewer than two draws per stratum has no variance; more than the stratum cannot be served
        result = coverage(n_strata, per, draws, level, args.runs, args.seed, args.epsilon)
        share = result["reported"] / args.runs
        print(
            f"{n_strata:2d} x {per:3d}, {draws:3d} draws, {level:4s}: "
            f"{' / '.join(f'{t:.3f}' for t in result['truth'])}; "
            f"{' / '.join(f'{c:.3f}' for c in share)} | "
            f"{' / '.join(f'{c:.3f}' for c in result['symmetric'] / args.runs)}",
            flush=True,
        )
        j = int(share.argmin())
        if share[j] < low[0]:
            low = (share[j], f"{n_strata} x {per}, {draws} draws, {level}, judge {j}", result["reported"][j])
        covered += int(result["reported"].sum())
        total += result["reported"].size * args.runs
    if total:
        lo, hi = wilson(int(low[2]), args.runs)
        print(f"lowest: {low[0]:.3f} (Wilson 95% {lo:.3f}-{hi:.3f}; {args.runs} runs) at {low[1]}")
        lo, hi = wilson(covered, total)
        print(f"pooled: {covered / total:.3f} (Wilson 95% {lo:.3f}-{hi:.3f}; {total} intervals)")
    print(f"cpu seconds: {time.process_time() - started:.1f}")


if __name__ == "__main__":
    main()
