#!/usr/bin/env python
"""Time the pure rating and statistics code on synthetic data of realistic size (no database, no network).

    .venv/bin/python scripts/bench_ratings.py                       # defaults below
    .venv/bin/python scripts/bench_ratings.py --verdicts 20000 --passes 5

1. Ratings: ``--verdicts`` pairwise verdicts (default 100,000) among ``--rating-models`` models, margins -5..+5
   drawn from latent skills, rated with each margin mapping and ``--passes`` passes.
2. A report: ``--models`` models x ``--dimensions`` dimensions x 2 languages: accuracy with Wilson intervals
   and macro/micro averages, every paired bootstrap (10,000 resamples) with BH-FDR, position bias, multi-turn
   split, crisis confusion, ratings and win-rate matrices per dimension and language and overall, ΔZ,
   cross-lingual gaps and style metrics of every response.
3. EQ-Bench 3 (when ``--eqbench3`` holds its data): the published ratings refitted in both modes of
   ``ratings.eqbench3_rate``, with Spearman, Kendall, the largest difference in normalised points and the
   offset of mu (published mean minus ours).

Prints wall-clock seconds per step; it asserts nothing (it is not a test).
"""

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import cast

import numpy as np
from scipy import stats as scipy_stats

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evaluation import eqbench, ratings, stats, style  # noqa: E402

LANGUAGES = ("en", "zh")
RESPONSES = {
    "en": (
        "I understand how you feel. That sounds really hard. Losing a pet you have cared for is painful.\n"
        "- Put up posters in the neighbourhood.\n- Call the local shelters.\nYou are not alone. Take care."
    ),
    "zh": "我理解你的感受。这真的很不容易！\n1、在小区贴寻猫启事\n2、联系附近的救助站\n你并不孤单，加油！",
}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--verdicts", type=int, default=100_000, help="verdicts to rate (default 100000)")
    parser.add_argument("--rating-models", type=int, default=20, help="models in the rating benchmark (default 20)")
    parser.add_argument("--passes", type=int, default=ratings.DEFAULT_PASSES, help="shuffled passes (default 10)")
    parser.add_argument("--models", type=int, default=10, help="models in the report (default 10)")
    parser.add_argument("--dimensions", type=int, default=10, help="dimensions in the report (default 10)")
    parser.add_argument("--items", type=int, default=48, help="objective items per dimension and language (48)")
    parser.add_argument("--prompts", type=int, default=24, help="open prompts per dimension and language (24)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--eqbench3",
        type=Path,
        default=Path(__file__).resolve().parents[2] / "shared/data/external/eqbench3",
        help="folder with EQ-Bench 3's pairwise_comparisons_compact.jsonl and published ratings",
    )
    return parser.parse_args()


def timed(label: str, action: Callable[[], object]) -> tuple[object, float]:
    start = time.perf_counter()
    result = action()
    elapsed = time.perf_counter() - start
    print(f"  {label:<58} {elapsed:8.2f} s")
    return result, elapsed


def simulate_verdicts(
    rng: np.random.Generator, models: list[str], pairs: list[tuple[str, str]], skill: dict[str, float]
) -> list[ratings.Verdict]:
    """Return one verdict per pair: probit performance difference, margin = |difference| / 2 rounded, at most 5."""
    a = np.array([skill[x] for x, _ in pairs])
    b = np.array([skill[y] for _, y in pairs])
    performance = a - b + rng.normal(0, math.sqrt(2) * 25 / 6, size=len(pairs))
    margins = np.sign(performance) * np.minimum(5, np.round(np.abs(performance) / 2))
    return [ratings.Verdict(x, y, float(m)) for (x, y), m in zip(pairs, margins, strict=True)]


def bench_ratings(args: argparse.Namespace) -> None:
    rng = np.random.default_rng(args.seed)
    models = [f"model-{i:02d}" for i in range(args.rating_models)]
    skill = dict(zip(models, np.linspace(-8, 8, len(models)), strict=True))
    first = rng.integers(0, len(models), size=args.verdicts)
    second = (first + rng.integers(1, len(models), size=args.verdicts)) % len(models)
    pairs = [(models[i], models[j]) for i, j in zip(first, second, strict=True)]
    verdicts = simulate_verdicts(rng, models, pairs, skill)
    print(f"Ratings: {len(verdicts):,} verdicts, {len(models)} models, {args.passes} passes")
    for mapping in ratings.MARGIN_MAPPINGS:
        result, elapsed = timed(
            f"rate_verdicts, margin mapping {mapping!r}",
            lambda mapping=mapping: ratings.rate_verdicts(verdicts, margin_mapping=mapping, n_passes=args.passes),
        )
        updates = result.n_updates * args.passes
        print(f"  {'':<58} {updates / elapsed / 1e6:8.2f} M updates/s ({result.n_updates:,.0f} per pass)")
    truth = sorted(models, key=skill.get, reverse=True)
    print(f"  Kendall tau with the true order: {ratings.rank_agreement(result.ranking(), truth).tau:.3f}")


def bench_report(args: argparse.Namespace) -> None:
    rng = np.random.default_rng(args.seed + 1)
    models = [f"m{i}" for i in range(args.models)]
    dimensions = [f"d{i}" for i in range(args.dimensions)]
    ability = dict(zip(models, rng.uniform(0.3, 0.8, len(models)), strict=True))
    skill = dict(zip(models, rng.normal(0, 4, len(models)), strict=True))
    n_items = args.items
    print(
        f"Report: {len(models)} models x {len(dimensions)} dimensions x {len(LANGUAGES)} languages, "
        f"{n_items} objective items and {args.prompts} open prompts per dimension and language"
    )
    total = 0.0

    def step(label: str, action: Callable[[], object]) -> object:
        nonlocal total
        result, elapsed = timed(label, action)
        total += elapsed
        return result

    correct = {
        (lang, dim, model): (rng.random(n_items) < ability[model]).astype(int)
        for lang in LANGUAGES
        for dim in dimensions
        for model in models
    }

    def objective() -> dict:
        table = {}
        for lang in LANGUAGES:
            groups = [(model, dim) for model in models for dim in dimensions for _ in range(n_items)]
            values = np.concatenate([correct[(lang, dim, model)] for model in models for dim in dimensions])
            table[lang] = stats.accuracy_by_group(groups, values, seed=args.seed)
        return table

    step("accuracy per model x dimension, Wilson, macro/micro", objective)

    def bootstraps() -> list:
        rows = []
        for lang in LANGUAGES:
            for dim in dimensions:
                scores = {model: correct[(lang, dim, model)] for model in models}
                rows += stats.paired_bootstrap_all(scores, seed=args.seed)
            overall = {model: np.concatenate([correct[(lang, d, model)] for d in dimensions]) for model in models}
            rows += stats.paired_bootstrap_all(overall, seed=args.seed)
        stats.benjamini_hochberg([row.p_value for row in rows])
        return rows

    rows = step("paired bootstrap, every pair, 10,000 resamples, BH", bootstraps)
    print(f"  {'':<58} {len(rows)} comparisons")

    def wrong_answers() -> None:
        n = n_items * len(dimensions)
        for _language in LANGUAGES:
            for model in models:
                key = rng.integers(0, 4, size=n)
                chosen = np.where(rng.random(n) < ability[model], key, rng.integers(0, 4, size=n))
                stats.position_bias(chosen.tolist(), key.tolist(), n_options=4)
                stats.turn_split(rng.random((n_items, 2)) < ability[model])
                truth = rng.integers(1, 6, size=n_items)
                predicted = np.clip(truth + rng.integers(-1, 2, size=n_items), 1, 5)
                stats.crisis_confusion(truth.tolist(), predicted.tolist())

    step("position bias, multi-turn split, crisis confusion", wrong_answers)

    round_robin = ratings.pairs_round_robin(models)
    verdicts = {
        (lang, dim): simulate_verdicts(rng, models, round_robin * args.prompts, skill)
        for lang in LANGUAGES
        for dim in dimensions
    }

    def subjective() -> dict:
        result = {}
        for lang in LANGUAGES:
            everything = []
            for dim in dimensions:
                rows = verdicts[(lang, dim)]
                everything += rows
                result[(lang, dim)] = ratings.rate_verdicts(rows, models=models, seed=args.seed)
                stats.win_rate_matrix(rows, models=models)
            result[(lang, "overall")] = ratings.rate_verdicts(everything, models=models, seed=args.seed)
            stats.win_rate_matrix(everything, models=models)
        return result

    rated = cast(dict, step("ratings + win-rate matrices per dimension, language, overall", subjective))
    print(f"  {'':<58} {sum(len(v) for v in verdicts.values()):,} verdicts")

    def analyses() -> None:
        objective_scores = {lang: {m: ability[m] + rng.normal(0, 0.02) for m in models} for lang in LANGUAGES}
        subjective_scores = {lang: {r.model: r.mu for r in rated[(lang, "overall")].ratings} for lang in LANGUAGES}
        stats.delta_z(objective_scores, subjective_scores, dead_band=0.25)
        by_dimension = {
            dim: {lang: {m: float(correct[(lang, dim, m)].mean()) for m in models} for lang in LANGUAGES}
            for dim in dimensions
        }
        stats.cross_lingual_gaps(by_dimension, language_a="zh", language_b="en", leave_dimension_out=True)

    step("ΔZ typology, cross-lingual gaps", analyses)

    def styles() -> None:
        for lang in LANGUAGES:
            metrics = {}
            for model in models:
                texts = [RESPONSES[lang]] * (args.prompts * len(dimensions))
                metrics[model] = style.style_summary(texts, lang).metrics()
            overall = {r.model: r.mu for r in rated[(lang, "overall")].ratings}
            style.style_rating_correlations(metrics, overall)

    step(f"style metrics of {len(models) * args.prompts * len(dimensions) * 2:,} responses", styles)
    print(f"  {'total':<58} {total:8.2f} s")


def bench_eqbench3(args: argparse.Namespace) -> None:
    comparisons = args.eqbench3 / "pairwise_comparisons_compact.jsonl"
    published_path = args.eqbench3 / "published_ratings_2025-04-28.json"
    if not comparisons.exists() or not published_path.exists():
        print(f"EQ-Bench 3: no data in {args.eqbench3}; skipped")
        return
    published = json.loads(published_path.read_text(encoding="utf-8"))["ratings"]
    judgements = eqbench.eqbench3_load(comparisons)
    ladder = sorted(published, key=lambda name: published[name]["elo"])
    # The canonical ratings' ladder before their re-solve is not in the files; this one reproduces them (see
    # docs/statistics.md): the published ladder with grok-3-mini-beta three places lower.
    solve_time = [name for name in ladder if name != "grok-3-mini-beta"]
    solve_time.insert(solve_time.index("google/gemini-2.0-flash-001"), "grok-3-mini-beta")
    names = sorted(published)
    theirs = np.array([published[name]["elo_norm"] for name in names])
    theirs_mu = np.array([published[name]["elo"] for name in names])
    print(f"EQ-Bench 3: {len(judgements):,} judge calls, {len(names)} models, fit to the published ratings")
    print(f"  {'mode':<58} {'Spearman':>8} {'Kendall':>8} {'max |d|':>8} {'offset':>8}")
    fits = (
        (f"order_independent, window 16, {ratings.EQBENCH3_PASSES} passes (default)", "order_independent", ladder),
        ("faithful, final solve of a run (core/elo.py, no window)", "faithful", None),
        ("faithful, canonical re-solve, window 8, published ladder", "faithful", ladder),
        ("faithful, canonical re-solve, window 8, solve-time ladder", "faithful", solve_time),
    )
    for label, mode, used_ladder in fits:
        ours = ratings.eqbench3_rate(judgements, mode=mode, ladder=used_ladder).by_model()
        mine = np.array([ours[name].display for name in names])
        mu = np.array([ours[name].mu for name in names])
        spearman = scipy_stats.spearmanr(mine, theirs).statistic
        kendall = scipy_stats.kendalltau(mine, theirs).statistic
        largest = np.max(np.abs(mine - theirs))
        print(f"  {label:<58} {spearman:8.4f} {kendall:8.4f} {largest:8.1f} {theirs_mu.mean() - mu.mean():8.1f}")
    print("  max |d|: normalised points (200..1500 scale); offset: published mean mu minus ours")


def main() -> None:
    args = parse_args()
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"Python {sys.version.split()[0]}, numpy {np.__version__}, {os.cpu_count()} cores, load average {load}")
    bench_ratings(args)
    bench_report(args)
    bench_eqbench3(args)


if __name__ == "__main__":
    main()
