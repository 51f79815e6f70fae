#!/usr/bin/env python
"""Measure how many of round-robin's judge calls adaptive pairing needs for a ranking close to the true one.

    .venv/bin/python scripts/bench_pairing.py                      # defaults below
    .venv/bin/python scripts/bench_pairing.py --items 20 --seeds 20

Simulated tournaments (``evaluation.ratings.simulation``): ``--models`` models with strengths spread like the
EQ-Bench 3 leaderboard, ``--items`` items, a judge fitted to EQ-Bench 3's judge calls (noise and position bias),
every comparison in both orders. For each seed: the full round-robin and its own Kendall's tau with the true
order; round-robin stopped after each item; adaptive pairing (``--pairs-per-item`` pairs per item and round)
until ``--budget`` of round-robin's calls. Prints, as medians over seeds, the share of round-robin's calls at which
tau first reaches ``--target`` and from which it stays there, and how well the report's estimated rank stability
(mean Kendall's tau of Bradley-Terry bootstrap rankings) predicts the true tau. It asserts nothing.

``--sweep`` compares, over 6-30 models and two noise levels, adaptive pairing and the rule "auto" that evaluation
runs use by default (``pairs_auto_batch``: one round-robin pass first while it costs at most two rounds, then
adaptive) with round-robin stopped early.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evaluation import ratings  # noqa: E402
from evaluation.ratings import simulation  # noqa: E402


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=int, default=20, help="models (default 20)")
    parser.add_argument("--items", type=int, default=10, help="items judged per pair by round-robin (default 10)")
    parser.add_argument("--seeds", type=int, default=10, help="tournaments, medians are over them (default 10)")
    parser.add_argument("--pairs-per-item", type=int, default=4, help="adaptive pairs per item and round (4)")
    parser.add_argument("--budget", type=float, default=0.5, help="adaptive stops at this share of calls (0.5)")
    parser.add_argument("--target", type=float, default=0.95, help="Kendall's tau to reach (0.95)")
    parser.add_argument("--sweep", action="store_true", help="table over 6-30 models and two noise levels")
    parser.add_argument("--sweep-seeds", type=int, default=5, help="tournaments per setting of the sweep (5)")
    parser.add_argument("--sweep-budget", type=float, default=0.5, help="sweep: adaptive stops at this share (0.5)")
    parser.add_argument(
        "--sweep-models", default="6,8,10,20,30", help="sweep: model counts, comma-separated (6,8,10,20,30)"
    )
    parser.add_argument("--quick", action="store_true", help="with --sweep: 6 and 10 models, 2 seeds, 4 items")
    return parser.parse_args()


def share(values: list[float | None]) -> float | None:
    """Return the median share with never-reached counted as above every other (None if the median never did)."""
    ranked = sorted(values, key=lambda v: (v is None, v or 0.0))
    middle = ranked[(len(ranked) - 1) // 2 : len(ranked) // 2 + 1]
    return None if any(v is None for v in middle) else statistics.fmean(middle)


def compare(
    *, first: float | None, stay: float | None, rr_first: float | None, rr_stay: float | None, budget: float
) -> str:
    """Return the verdict of a rule against round-robin stopped early on both columns (the rule stops at budget)."""
    results = []
    for mine, theirs in ((first, rr_first), (stay, rr_stay)):
        if mine is not None:
            results.append(theirs is None or mine <= theirs)
        elif theirs is not None and theirs <= budget:
            results.append(False)
        else:
            results.append(None)
    if False in results:
        return "WORSE"
    return "not worse" if all(results) else "inconclusive"


def sweep(args: argparse.Namespace) -> None:
    """Print adaptive pairing and the rule "auto" against round-robin stopped early over models and judge noise."""
    models = (6, 10) if args.quick else tuple(int(n) for n in args.sweep_models.split(","))
    seeds = 2 if args.quick else args.sweep_seeds
    items = 4 if args.quick else args.items
    base = simulation.SimulatedJudge()
    start = time.perf_counter()
    print(
        f"Pairing sweep: {items} items, both orders, {seeds} seeds, stop rule tau>={args.target} with the true order; "
        f"adaptive up to {args.pairs_per_item} pairs per item and round (a round costs at most one round-robin "
        f"item) up to {args.sweep_budget:.0%} of round-robin's calls ('inconclusive' when neither reached by then); "
        "medians of the share "
        "of round-robin's calls (first reached / from then on; '-' never within the calls)"
    )
    print(
        f"  {'models':>6} {'noise':>6} {'round-robin stopped early':>27} {'adaptive':>17}  verdict"
        f"{'':<6} {'auto (default)':>19}  verdict"
    )
    for noise in (base.noise, 2 * base.noise):
        judge = simulation.SimulatedJudge(noise=noise)
        for n_models in models:
            strengths = simulation.leaderboard_strengths(n_models)
            # A round costs at most one round-robin item, so both are compared at the same granularity.
            per_item = max(1, min(args.pairs_per_item, n_models * (n_models - 1) // 2 // items))
            rr_first, rr_stay, ad_first, ad_stay, au_first, au_stay = [], [], [], [], [], []
            for seed in range(seeds):
                _, full = simulation.simulate_round_robin(strengths, n_items=items, seed=seed, judge=judge)
                rr_first.append(full.fraction_reaching(args.target))
                rr_stay.append(full.fraction_staying(args.target))
                _, adaptive = simulation.simulate_adaptive(
                    strengths,
                    n_items=items,
                    seed=seed,
                    pairs_per_item=per_item,
                    budget=args.sweep_budget,
                    judge=judge,
                )
                ad_first.append(adaptive.fraction_reaching(args.target))
                ad_stay.append(adaptive.fraction_staying(args.target))
                _, auto = simulation.simulate_adaptive(
                    strengths,
                    n_items=items,
                    seed=seed,
                    pairs_per_item=per_item,
                    budget=args.sweep_budget,
                    judge=judge,
                    rule="auto",
                )
                au_first.append(auto.fraction_reaching(args.target))
                au_stay.append(auto.fraction_staying(args.target))
            cells = [share(v) for v in (rr_first, rr_stay, ad_first, ad_stay, au_first, au_stay)]
            text = ["-" if c is None else f"{c:.2f}" for c in cells]

            verdicts = [
                compare(
                    first=cells[a], stay=cells[a + 1], rr_first=cells[0], rr_stay=cells[1], budget=args.sweep_budget
                )
                for a in (2, 4)
            ]
            print(
                f"  {n_models:>6} {noise:>6.1f} {text[0]:>13} / {text[1]:<11} {text[2]:>8} / {text[3]:<6}  "
                f"{verdicts[0]:<12} {text[4]:>13} / {text[5]:<6}  {verdicts[1]}",
                flush=True,
            )
    print(f"  {'time':<58} {time.perf_counter() - start:8.2f} s")


def median(values: list[float | None]) -> str:
    """Return the median with values that never reached the target counted as above every other (shown '>')."""
    ranked = sorted(values, key=lambda v: (v is None, v or 0.0))
    middle = ranked[(len(ranked) - 1) // 2 : len(ranked) // 2 + 1]
    if any(v is None for v in middle):
        return "not reached"
    return f"{statistics.fmean(middle):.3f}"


def main() -> None:
    args = parse_args()
    if args.sweep:
        sweep(args)
        return
    strengths = simulation.leaderboard_strengths(args.models)
    judge = simulation.SimulatedJudge()
    start = time.perf_counter()
    full_tau, early_first, early_stay, adaptive_first, adaptive_stay = [], [], [], [], []
    estimated, actual = [], []
    for seed in range(args.seeds):
        _, full = simulation.simulate_round_robin(strengths, n_items=args.items, seed=seed, judge=judge)
        full_tau.append(full.taus[-1])
        early_first.append(full.fraction_reaching(args.target))
        early_stay.append(full.fraction_staying(args.target))
        verdicts, adaptive = simulation.simulate_adaptive(
            strengths,
            n_items=args.items,
            seed=seed,
            pairs_per_item=args.pairs_per_item,
            budget=args.budget,
            judge=judge,
        )
        adaptive_first.append(adaptive.fraction_reaching(args.target))
        adaptive_stay.append(adaptive.fraction_staying(args.target))
        estimated.append(ratings.bradley_terry(verdicts, n_resamples=200, seed=seed).rank_stability)
        actual.append(adaptive.taus[-1])
    calls = args.items * args.models * (args.models - 1)
    print(
        f"Pairing: {args.models} models spread like EQ-Bench 3, {args.items} items, judge noise "
        f"{judge.noise} and position bias {judge.position_bias} rating points (fitted to EQ-Bench 3), both orders, "
        f"{args.seeds} seeds, target tau {args.target}"
    )
    print(
        f"  round-robin: {calls:,} judge calls; its own Kendall tau with the true order: median "
        f"{statistics.median(full_tau):.3f} (min {min(full_tau):.3f})"
    )
    print(
        f"  round-robin stopped after fewer items: calls fraction at tau>={args.target}: {median(early_first)}, "
        f"staying there from {median(early_stay)}"
    )
    print(
        f"adaptive pairing: calls fraction at tau>={args.target}: {median(adaptive_first)} "
        f"(round-robin baseline's own tau: {statistics.median(full_tau):.3f})"
    )
    print(
        f"  adaptive, {args.pairs_per_item} pairs per item and round: staying at tau>={args.target} from "
        f"{median(adaptive_stay)}; per seed (reach): "
        + ", ".join("—" if v is None else f"{v:.2f}" for v in adaptive_first)
    )
    print(
        f"  at {args.budget:.0%} of the calls: true tau median {statistics.median(actual):.3f}; estimated rank "
        f"stability (Bradley-Terry bootstrap) median {statistics.median(estimated):.3f}"
    )
    print(f"  {'time':<58} {time.perf_counter() - start:8.2f} s")


if __name__ == "__main__":
    main()
