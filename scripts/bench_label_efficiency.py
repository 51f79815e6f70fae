"""Measure how many expert labels active allocation saves when choosing the best of several close judges.

Simulation (all seeds at once, NumPy): 5 dimensions x 2 languages = 10 strata of ``--per-stratum`` comparisons.
The default run (``make bench``) is the original setting: four judges that agree with the experts' majority with
probabilities 0.62, 0.66, 0.70 and 0.71 (drawn directly), errors correlated through a shared per-comparison
difficulty (Gaussian copula, rho 0.5). That cannot model noisy experts, so ``--settings`` (also run by ``make
bench``) simulates from a hidden truth instead: each comparison has a true winner; 3 experts label it with their
own independent noise (accuracies 0.85/0.78/0.72, or 0.70/0.65/0.60) and their majority is the reference; 3 or 6
judges name the true winner with accuracies spread below 0.80 (the best two 0.80 and 0.76), their errors either
correlated (shared difficulty, rho 0.5) or independent. A judge then agrees with the majority when both are right
or both wrong. The truly best judge of a seed is the one with the highest agreement with the majority on the
whole pool (the quantity a calibration estimates). ``--quick`` runs the settings small, for the tests.

Both orders have every served comparison labelled by all 3 experts (so labels = 3 x comparisons) and serve the
strata in turn, one comparison per stratum per step. Stratified random order: every comparison left in the stratum
equally likely, agreement = the plain mean (what the product does today). Active order: the product's draw
(``annotation.labelling.active``): priority = disagreement between judges weighted by P(judge best), mixed with an
epsilon share drawn uniformly, every draw's probability recorded; agreement = Raj's design-unbiased estimator,
stratified. P(judge best) comes, as in the product (``calibration.allocation``), from the plain means of the
labelled served comparisons (they steer the draw only; the probabilities recorded keep the estimate unbiased). One
simplification against the product, stated so it can be judged: priorities are refreshed every ``--batch`` draws per
stratum (the product refreshes at every draw). The choice, in both orders: the judge with the highest lower bound of
the 95% interval of its agreement with the expert majority (``annotation.labelling.active.choose_by_lower_bound``,
which the report shows for active sets); the report's general suggestion ranks by the lower bound of alpha with the
judge instead, which is too slow to bootstrap 200 x 300 times here. A comparison matters to the choice only through
which judges agree with the majority, so the pool is kept as counts of those 2^judges patterns per stratum, which
makes every step exact and cheap.

For each order, the number of labels needed is the smallest budget from which on the truly best judge is chosen in
at least 95% of seeds; its interval resamples seeds (bootstrap). The jury (majority vote of the four judges) is
compared with the best single judge on the same simulation and, unless ``--no-demo``, on the demo data: the demo
calibration run (``demo/calibration.py``) is built in a throwaway database, juries of its judges by majority and by
mean are stored by the product (``calibration.juries.jury_verdicts_store``) and their agreement is read from the
product's report (``calibration_report_compute``).
"""

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import norm

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from annotation.labelling.active import EPSILON, best_probabilities, choose_by_lower_bound, priorities  # noqa: E402

JUDGE_AGREEMENT = np.array([0.62, 0.66, 0.70, 0.71])
EXPERT_ACCURACY = np.array([0.85, 0.78, 0.72])
NOISY_EXPERTS = np.array([0.70, 0.65, 0.60])
STRATA = 10
RHO = 0.5


def patterns_for(n_judges: int) -> np.ndarray:
    """Return the 2^n agreement patterns: row ``c`` has judge ``j`` agreeing with the majority when bit ``j`` is set."""
    return np.array([[(c >> j) & 1 for j in range(n_judges)] for c in range(2**n_judges)])


PATTERNS = patterns_for(JUDGE_AGREEMENT.size)


def judge_accuracies(n_judges: int) -> np.ndarray:
    """Return the judges' accuracies against the truth: the best two 0.80 and 0.76, the others spread below."""
    return np.concatenate([np.linspace(0.64, 0.72, n_judges - 2), [0.76, 0.80]])


def simulate_from_truth(
    n_seeds: int, per_stratum: int, seed: int, *, experts: np.ndarray, judges: np.ndarray, rho: float
) -> np.ndarray:
    """Return pattern counts (seeds x strata x 2^judges) of judges agreeing with a noisy experts' majority.

    A hidden true winner per comparison; every expert is right with its own accuracy, independently; every judge is
    right with its accuracy, its errors sharing a per-comparison difficulty with weight ``rho`` (0: independent).
    """
    rng = np.random.default_rng(seed)
    n_judges = judges.size
    counts = np.empty((n_seeds, STRATA, 2**n_judges), dtype=np.int64)
    bits = 1 << np.arange(n_judges)
    for s in range(n_seeds):
        shape = (STRATA, per_stratum)
        experts_right = rng.random((*shape, experts.size)) < experts
        majority_right = experts_right.sum(axis=-1) * 2 > experts.size
        difficulty = rng.standard_normal(shape)[..., None]
        latent = rho * difficulty + np.sqrt(1 - rho**2) * rng.standard_normal((*shape, n_judges))
        judge_right = norm.cdf(latent) < judges
        agree = judge_right == majority_right[..., None]
        code = (agree * bits).sum(axis=-1)
        counts[s] = np.stack([np.bincount(code[h], minlength=2**n_judges) for h in range(STRATA)])
    return counts


def simulate(n_seeds: int, per_stratum: int, seed: int) -> np.ndarray:
    """Return how many comparisons of each stratum have each agreement pattern: seeds x strata x 16.

    Pattern ``c`` has judge ``j`` agreeing with the expert majority when bit ``j`` of ``c`` is set. A comparison
    matters to the choice only through its pattern (every expert labels every served comparison, and a judge's
    winner is the majority's when it agrees, the other side when not), so the pool is kept as counts.
    """
    rng = np.random.default_rng(seed)
    counts = np.empty((n_seeds, STRATA, PATTERNS.shape[0]), dtype=np.int64)
    bits = 1 << np.arange(JUDGE_AGREEMENT.size)
    for s in range(n_seeds):
        shape = (STRATA, per_stratum)
        truth = np.where(rng.random(shape) < 0.5, 1.0, -1.0)
        experts = np.where(rng.random((*shape, 3)) < EXPERT_ACCURACY, truth[..., None], -truth[..., None])
        majority = np.sign(experts.sum(axis=-1))
        difficulty = rng.standard_normal(shape)[..., None]
        latent = RHO * difficulty + np.sqrt(1 - RHO**2) * rng.standard_normal((*shape, JUDGE_AGREEMENT.size))
        agree = norm.cdf(latent) < JUDGE_AGREEMENT
        # The majority's side does not change the pattern: it is kept only to make the experts' labels real.
        del majority
        code = (agree * bits).sum(axis=-1)
        counts[s] = np.stack([np.bincount(code[h], minlength=PATTERNS.shape[0]) for h in range(STRATA)])
    return counts


def pattern_winners(patterns: np.ndarray = PATTERNS) -> np.ndarray:
    """Return each pattern's judge winners with the majority on side +1 (agreeing judges +1, the others -1)."""
    return np.where(patterns == 1, 1.0, -1.0)


def serve(
    counts: np.ndarray,
    budgets: np.ndarray,
    batch: int,
    rng: np.random.Generator,
    *,
    active: bool,
    epsilon: float = EPSILON,
) -> np.ndarray:
    """Serve comparisons stratum by stratum and return the chosen judge (seeds x budgets).

    Active: the product's draw (``annotation.labelling.active.draw_probabilities`` over priorities) and Raj's estimator.
    Random: every remaining comparison equally likely and the plain mean. Within a pattern all comparisons share
    one priority, so a draw picks a pattern with probability (its remaining count x the per-comparison
    probability), exactly as drawing one comparison.
    """
    n_seeds, n_strata, n_patterns = counts.shape
    patterns = patterns_for(int(np.log2(n_patterns)))
    n_judges = patterns.shape[1]
    population = counts.sum(axis=(1, 2))[:, None].astype(float)
    remaining = counts.astype(float).copy()
    winners = pattern_winners(patterns)
    choices = np.empty((n_seeds, budgets.size), dtype=int)
    best = np.full((n_seeds, n_judges), 1.0 / n_judges)
    rows, cols = np.arange(n_seeds)[:, None], np.arange(n_strata)[None, :]
    # Running sums per stratum and judge: labelled agreement, and Raj's T_t (sum and sum of squares).
    seen = np.zeros((n_seeds, n_strata, n_judges))
    t_sum = np.zeros((n_seeds, n_strata, n_judges))
    t_squares = np.zeros((n_seeds, n_strata, n_judges))
    b = 0
    for t in range(int(budgets.max())):
        if active and t % batch == 0:
            if t >= 1:
                # As the product does: plain means of the labelled served comparisons, a floor on the variance.
                mean = seen.sum(axis=1) / (n_strata * t)
                se = np.sqrt(np.maximum(mean * (1 - mean), 0.05) / (n_strata * t))
                best = best_probabilities(mean, se, seed=t)
            weights = priorities(winners[None, None], best[:, None, None, :])
        left = remaining.sum(axis=-1, keepdims=True)
        if active:
            # Per-comparison probability of each pattern: weights over the comparisons left, as the product draws.
            w = weights * (remaining > 0)
            total = (w * remaining).sum(axis=-1, keepdims=True)
            share = np.divide(w, total, out=np.broadcast_to(1.0 / left, w.shape).copy(), where=total > 0)
            per = epsilon / left + (1 - epsilon) * share
        else:
            per = np.broadcast_to(1.0 / left, remaining.shape)
        cumulative = np.cumsum(per * remaining, axis=-1)
        u = rng.random((n_seeds, n_strata, 1)) * cumulative[..., -1:]
        index = np.minimum((cumulative < u).sum(axis=-1), n_patterns - 1)
        q = per[rows, cols, index][..., None]
        y = patterns[index].astype(float)
        remaining[rows, cols, index] -= 1
        raj = seen + y / q
        t_sum += raj
        t_squares += raj**2
        seen += y
        if t + 1 == budgets[b]:
            if active:
                estimate, se = _raj(t_sum, t_squares, t + 1, population)
            else:
                estimate = seen.sum(axis=1) / (n_strata * (t + 1))
                se = np.sqrt(estimate * (1 - estimate) / (n_strata * (t + 1)))
            choices[:, b] = choose_by_lower_bound(estimate, se)
            b += 1
    return choices


def _raj(t_sum: np.ndarray, t_squares: np.ndarray, n: int, population: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Stratified Raj estimate and standard error of the mean (seeds x judges) from the running sums of T_t."""
    totals = t_sum / n
    variance = np.clip(t_squares - n * totals**2, 0.0, None) / (n * (n - 1))
    return totals.sum(axis=1) / population, np.sqrt(variance.sum(axis=1)) / population


def labels_needed(correct: np.ndarray, budgets: np.ndarray, level: float = 0.95) -> float:
    """Return the smallest budget (labels) from which on the share of correct choices stays at ``level`` or more."""
    failing = np.flatnonzero(correct.mean(axis=0) < level)
    if failing.size == 0:
        return float(budgets[0])
    if failing[-1] == budgets.size - 1:
        return float("nan")
    return float(budgets[failing[-1] + 1])


def jury_agreement(counts: np.ndarray) -> tuple[float, float]:
    """Return the agreement of the majority-vote jury of the judges (a 2-2 split is a tie) and of the best judge."""
    votes = np.sign(pattern_winners().sum(axis=-1))
    jury = (votes == 1).astype(float)
    share = counts.sum(axis=(0, 1)) / counts.sum()
    return float(share @ jury), float((share @ PATTERNS).max())


def demo_jury() -> str:
    """Build the demo calibration data in a throwaway database and compare a majority-vote jury of its judges.

    The demo judges answer through the LLM simulator, started here on a free port and stopped afterwards.
    """
    import signal
    import subprocess
    import tempfile

    root = Path(__file__).resolve().parent.parent
    folder = Path(tempfile.mkdtemp(prefix="eistudio-bench-jury-"))
    env = {**os.environ, "DEBUG": "1", "DATABASE_URL": f"sqlite:///{folder / 'db.sqlite3'}"}
    os.environ.update({k: env[k] for k in ("DEBUG", "DATABASE_URL")})
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
    log = folder / "simulator.log"
    with log.open("w") as out:
        simulator = subprocess.Popen(
            [sys.executable, "manage.py", "llm_simulator", "--port", "0", "--latency-ms", "2", "--jitter-ms", "1"],
            cwd=root,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        base_url = None
        # Start-up takes seconds, but far longer on a loaded machine (30 s was not always enough).
        deadline = time.monotonic() + 180
        while base_url is None and time.monotonic() < deadline and simulator.poll() is None:
            base_url = next((ln.split()[-3] for ln in log.read_text().splitlines() if "listening on" in ln), None)
            time.sleep(0.05)
        if base_url is None:
            return f"unavailable (the simulator did not start: {log.read_text()[-300:]})"
        import django

        django.setup()
        from django.core.management import call_command

        from calibration import services as calibration_services
        from calibration.services import jury_create, jury_verdicts_store
        from demo.base import demo_seed
        from demo.calibration import demo_calibration
        from llm import services as llm_services

        call_command("migrate", verbosity=0)
        demo_seed()
        llm_services.simulator_endpoints_register(base_url=base_url)
        demo_calibration()
        from calibration.models import CalibrationRun

        run = CalibrationRun.objects.get(name="Demo calibration")
        singles = [jr.judge for jr in run.judge_runs.select_related("judge").order_by("judge__name")]
        juries = {
            method: jury_create(name=f"bench jury by {method}", members=singles, aggregation=method)
            for method in ("majority", "mean")
        }
        run.juries.add(*juries.values())
        jury_verdicts_store(run=run)
        overall = calibration_services.calibration_report_compute(run=run)["strata"][0]["judges"]
        agreement = {name: row["agreement"] for name, row in overall.items()}
        best = max((j.name for j in singles), key=lambda name: agreement[name]["value"] or 0)
        lines = [f"jury by {method} {agreement[jury.name]['value']:.3f}" for method, jury in juries.items()]
        return (
            f"{', '.join(lines)} vs best single judge {agreement[best]['value']:.3f} ({best}); juries of the demo's "
            f"{len(singles)} judges stored and reported by the product (jury_verdicts_store, "
            f"calibration_report_compute), {agreement[juries['mean'].name]['n_units']} comparisons"
        )
    finally:
        simulator.send_signal(signal.SIGTERM)
        try:
            simulator.wait(timeout=10)
        except subprocess.TimeoutExpired:
            simulator.kill()


ERROR_BUDGET = 240  # comparisons per stratum up to which the share of wrong choices is averaged


def efficiency(
    counts: np.ndarray, budgets: np.ndarray, batch: int, boot: int, seed: int, epsilon: float = EPSILON
) -> tuple[float, float, float, float, float, int, float, float]:
    """Return labels needed (random, active), their ratio with a bootstrap interval, failed resamples, and the share
    of wrong choices (random, active) averaged over the budgets up to ``ERROR_BUDGET`` comparisons per stratum.

    The threshold rests on the worst few seeds; the averaged share uses every seed at every budget.
    """
    patterns = patterns_for(int(np.log2(counts.shape[-1])))
    truth = (counts @ patterns).sum(axis=1).argmax(axis=-1)
    rng = np.random.default_rng(seed + 1)
    random_correct = serve(counts, budgets, batch, rng, active=False) == truth[:, None]
    active_correct = serve(counts, budgets, batch, rng, active=True, epsilon=epsilon) == truth[:, None]
    labels = budgets * STRATA * 3
    n_random, n_active = labels_needed(random_correct, labels), labels_needed(active_correct, labels)
    resampler = np.random.default_rng(seed + 2)
    ratios = []
    for _ in range(boot):
        sample = resampler.integers(0, counts.shape[0], counts.shape[0])
        ratios.append(labels_needed(active_correct[sample], labels) / labels_needed(random_correct[sample], labels))
    ratios = np.array(ratios)
    low, high = np.nanquantile(ratios, [0.025, 0.975]) if np.isfinite(ratios).any() else (np.nan, np.nan)
    early = budgets <= ERROR_BUDGET
    wrong_random, wrong_active = 1 - random_correct[:, early].mean(), 1 - active_correct[:, early].mean()
    return (
        n_random, n_active, n_active / n_random, float(low), float(high), int(np.isnan(ratios).sum()),
        float(wrong_random), float(wrong_active),
    )  # fmt: skip


def settings_table(args: argparse.Namespace) -> None:
    """Print the label-efficiency ratio for noisy experts, correlated or independent judges, 3 or 6 judges."""
    started = time.perf_counter()
    seeds = 16 if args.quick else args.settings_seeds
    per_stratum = 400 if args.quick else args.settings_per_stratum
    most = 300 if args.quick else args.settings_max_per_stratum
    budgets = np.arange(args.step * 2, most + 1, args.step * 2)
    print(
        f"settings (hidden truth, noisy experts; {seeds} seeds, {STRATA} strata x {per_stratum} comparisons, budgets "
        f"up to {most * STRATA * 3} labels): ratio = active / random labels for a 95% correct choice"
    )
    print(f"  {'experts':<15} {'judge errors':<12} {'judges':>6} {'random':>8} {'active':>8}  ratio (95% interval)")
    sums = [0.0, 0.0]
    for experts in (EXPERT_ACCURACY, NOISY_EXPERTS):
        for rho, errors in ((RHO, "correlated"), (0.0, "independent")):
            for n_judges in (3, 6):
                counts = simulate_from_truth(
                    seeds, per_stratum, args.seed, experts=experts, judges=judge_accuracies(n_judges), rho=rho
                )
                n_random, n_active, ratio, low, high, failed, wrong_random, wrong_active = efficiency(
                    counts, budgets, args.batch, args.boot // 4 if not args.quick else 20, args.seed, args.epsilon
                )
                sums = [sums[0] + wrong_random, sums[1] + wrong_active]
                label = "/".join(f"{a:.2f}" for a in experts)
                print(
                    f"  {label:<15} {errors:<12} {n_judges:>6} {n_random:>8.0f} {n_active:>8.0f}  {ratio:.2f} "
                    f"({low:.2f}-{high:.2f}; {failed} resamples never reached 95%); wrong choices up to "
                    f"{ERROR_BUDGET} per stratum: random {wrong_random:.3f}, active {wrong_active:.3f}",
                    flush=True,
                )
    print(
        f"  wrong choices summed over the settings (epsilon {args.epsilon}): random {sums[0]:.3f}, active {sums[1]:.3f}"
    )
    print(f"(settings {time.perf_counter() - started:.1f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--per-stratum", type=int, default=5000)
    parser.add_argument("--max-per-stratum", type=int, default=3000)
    parser.add_argument("--step", type=int, default=10, help="budget grid step, comparisons per stratum")
    parser.add_argument("--batch", type=int, default=5, help="draws per stratum between priority refreshes")
    parser.add_argument("--boot", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--no-demo", action="store_true", help="skip the jury on the demo data of the database")
    parser.add_argument("--settings", action="store_true", help="only the table over noisy experts and judges")
    parser.add_argument("--settings-seeds", type=int, default=100)
    parser.add_argument("--settings-per-stratum", type=int, default=2000)
    parser.add_argument("--settings-max-per-stratum", type=int, default=1500)
    parser.add_argument("--quick", action="store_true", help="with --settings: small sizes, for the tests")
    parser.add_argument(
        "--epsilon", type=float, default=EPSILON, help=f"with --settings: uniform share of the draw ({EPSILON})"
    )
    args = parser.parse_args()
    if args.settings:
        settings_table(args)
        return
    started = time.perf_counter()
    counts = simulate(args.seeds, args.per_stratum, args.seed)
    truth = (counts @ PATTERNS).sum(axis=1).argmax(axis=-1)
    budgets = np.arange(args.step, args.max_per_stratum + 1, args.step)
    rng = np.random.default_rng(args.seed + 1)
    random_correct = serve(counts, budgets, args.batch, rng, active=False) == truth[:, None]
    active_correct = serve(counts, budgets, args.batch, rng, active=True) == truth[:, None]
    labels = budgets * STRATA * EXPERT_ACCURACY.size
    n_random, n_active = labels_needed(random_correct, labels), labels_needed(active_correct, labels)
    boot = np.random.default_rng(args.seed + 2)
    ratios = []
    for _ in range(args.boot):
        sample = boot.integers(0, args.seeds, args.seeds)
        r, a = labels_needed(random_correct[sample], labels), labels_needed(active_correct[sample], labels)
        ratios.append(a / r)
    ratios = np.array(ratios)
    low, high = np.nanquantile(ratios, [0.025, 0.975]) if np.isfinite(ratios).any() else (np.nan, np.nan)
    print(
        f"simulation: {args.seeds} seeds, {STRATA} strata x {args.per_stratum} comparisons, 3 experts, judges "
        f"{', '.join(f'{p:.2f}' for p in JUDGE_AGREEMENT)}; truly best = judge 0.71 in "
        f"{np.mean(truth == JUDGE_AGREEMENT.argmax()):.0%} of seeds"
    )
    print(f"labels for 95% correct choice: random {n_random:.0f}, active {n_active:.0f} (budgets up to {labels[-1]})")
    print(
        f"share correct at the largest budget: random {random_correct[:, -1].mean():.3f}, "
        f"active {active_correct[:, -1].mean():.3f}"
    )
    print(
        f"label efficiency: active/random labels for 95% correct choice: {n_active / n_random:.2f} "
        f"(95% bootstrap interval over seeds {low:.2f}-{high:.2f}; {np.isnan(ratios).sum()} of {args.boot} "
        "resamples never reached 95%)"
    )
    jury, best = jury_agreement(counts)
    print(f"jury (majority vote of the 4 judges) agreement {jury:.3f} vs best single judge {best:.3f} (simulation)")
    print(f"(simulation {time.perf_counter() - started:.1f} s)")
    if not args.no_demo:
        started = time.perf_counter()
        print(f"demo data: {demo_jury()} ({time.perf_counter() - started:.1f} s)")


if __name__ == "__main__":
    main()
