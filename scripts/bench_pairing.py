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

``--sweep`` compares, over 6-30 models and two noise levels, the rule "auto" that evaluation
runs use by default (``pairs_auto_batch``: round-robin passes where a pass costs at most two rounds, adaptive
otherwise) with round-robin stopped early, seed by seed on the same judge draws (common random numbers), with a
bootstrap interval over seeds for each difference.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

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
    parser.add_argument("--sweep-seeds", type=int, default=20, help="tournaments per setting of the sweep (20)")
    parser.add_argument("--sweep-budget", type=float, default=0.5, help="sweep: adaptive stops at this share (0.5)")
    parser.add_argument(
        "--sweep-models",
        default="6,8,10,12,14,16,18,20,30",
        help="sweep: model counts, comma-separated (6,8,10,12,14,16,18,20,30)",
    )
    parser.add_argument("--with-adaptive", action="store_true", help="sweep: plain adaptive pairing too")
    parser.add_argument("--quick", action="store_true", help="with --sweep: 6 and 10 models, 3 seeds, 4 items")
    return parser.parse_args()


NEVER = 1.0  # a rule that does not reach (or stay at) the target within the budget counts as needing every call


def paired(mine: list[float | None], theirs: list[float | None], *, boot: int = 2000) -> tuple[float, float, float]:
    """Return the mean per-seed difference ``mine - theirs`` (never = ``NEVER``) and its 95% bootstrap interval."""
    diff = np.array([NEVER if a is None else a for a in mine]) - np.array([NEVER if b is None else b for b in theirs])
    rng = np.random.default_rng(0)
    means = diff[rng.integers(0, diff.size, (boot, diff.size))].mean(axis=1)
    low, high = np.quantile(means, [0.025, 0.975])
    return float(diff.mean()), float(low), float(high)


def verdict(intervals: list[tuple[float, float, float]]) -> str:
    """Return "WORSE" when an interval of the differences lies above 0, "better" when one lies below and none above."""
    if any(low > 0 for _, low, _ in intervals):
        return "WORSE"
    return "better" if any(high < 0 for _, _, high in intervals) else "no difference"


def mean_share(values: list[float | None]) -> str:
    """Return the mean share over seeds (never = ``NEVER``) and how many seeds never got there."""
    never = sum(v is None for v in values)
    text = f"{statistics.fmean(NEVER if v is None else v for v in values):.3f}"
    return text + (f" ({never} never)" if never else "")


def sweep(args: argparse.Namespace) -> None:
    """Print the rule "auto" (and adaptive, if asked) against round-robin stopped early over models and noise."""
    models = (6, 10) if args.quick else tuple(int(n) for n in args.sweep_models.split(","))
    seeds = 3 if args.quick else args.sweep_seeds
    items = 4 if args.quick else args.items
    rules = ("auto", "adaptive") if args.with_adaptive else ("auto",)
    base = simulation.SimulatedJudge()
    start = time.perf_counter()
    print(
        f"Pairing sweep: {items} items, both orders, {seeds} seeds (common random numbers: a seed's rules read the "
        f"same judge draws), stop rule tau>={args.target} with the true order, everything within "
        f"{args.sweep_budget:.0%} of round-robin's calls; rounds of at most {args.pairs_per_item} pairs per item, "
        "costing at most one round-robin item. Per setting: mean share of round-robin's calls, first reached / "
        f"from then on (not within the budget = {NEVER:.1f}); the rule minus round-robin stopped early, seed by "
        "seed: mean and 95% bootstrap interval over seeds; WORSE when an interval lies above 0"
    )
    for noise in (base.noise, 2 * base.noise):
        judge = simulation.SimulatedJudge(noise=noise)
        for n_models in models:
            strengths = simulation.leaderboard_strengths(n_models)
            per_item = max(1, min(args.pairs_per_item, n_models * (n_models - 1) // 2 // items))
            first: dict[str, list[float | None]] = {rule: [] for rule in ("round-robin", *rules)}
            stay: dict[str, list[float | None]] = {rule: [] for rule in first}
            for seed in range(seeds):
                _, full = simulation.simulate_round_robin(strengths, n_items=items, seed=seed, judge=judge)
                early = full.within(args.sweep_budget)
                first["round-robin"].append(early.fraction_reaching(args.target))
                stay["round-robin"].append(early.fraction_staying(args.target))
                for rule in rules:
                    _, run = simulation.simulate_adaptive(
                        strengths,
                        n_items=items,
                        seed=seed,
                        pairs_per_item=per_item,
                        budget=args.sweep_budget,
                        judge=judge,
                        rule=rule,
                    )
                    # The last round may pass the budget; what it bought is left out, as round-robin's is.
                    run = run.within(args.sweep_budget)
                    first[rule].append(run.fraction_reaching(args.target))
                    stay[rule].append(run.fraction_staying(args.target))
            print(
                f"  {n_models} models, noise {noise:.1f}: round-robin stopped early "
                f"{mean_share(first['round-robin'])} / {mean_share(stay['round-robin'])}",
                flush=True,
            )
            for rule in rules:
                intervals = [
                    paired(first[rule], first["round-robin"]),
                    paired(stay[rule], stay["round-robin"]),
                ]
                label = "auto (default)" if rule == "auto" else rule
                print(
                    f"    {label:<15} {mean_share(first[rule])} / {mean_share(stay[rule])}; minus round-robin: "
                    + " / ".join(f"{m:+.3f} ({lo:+.3f} to {hi:+.3f})" for m, lo, hi in intervals)
                    + f"  {verdict(intervals)}",
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
        "stability (Bradley-Terry bootstrap) median "
        + (f"{statistics.median(defined):.3f}" if (defined := [v for v in estimated if v is not None]) else "-")
        + (f" ({len(estimated) - len(defined)} without a maximum likelihood)" if len(defined) < len(estimated) else "")
    )
    print(f"  {'time':<58} {time.perf_counter() - start:8.2f} s")


if __name__ == "__main__":
    main()
