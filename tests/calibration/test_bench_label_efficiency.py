"""The label-efficiency benchmark runs end to end and prints the line ``make bench`` promises (small sizes)."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_prints_the_label_efficiency_ratio_with_its_interval():
    result = subprocess.run(
        [
            sys.executable, "scripts/bench_label_efficiency.py", "--seeds", "12", "--per-stratum", "300",
            "--max-per-stratum", "200", "--step", "20", "--boot", "30", "--no-demo",
        ],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=True,
    )
    line = re.search(
        r"label efficiency: active/random labels for 95% correct choice: (\S+) \(95% bootstrap interval over seeds "
        r"(\S+)-(\S+);",
        result.stdout,
    )
    assert line, result.stdout
    jury = r"jury \(majority vote of the 4 judges\) agreement 0\.\d+ vs best single judge 0\.\d+"
    assert re.search(jury, result.stdout)


def test_settings_table_prints_a_ratio_for_every_setting_of_noisy_experts_and_judges():
    result = subprocess.run(
        [sys.executable, "scripts/bench_label_efficiency.py", "--settings", "--quick"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=True,
    )
    rows = re.findall(
        r"^\s+([\d./]+)\s+(correlated|independent)\s+(\d)\s+\S+\s+\S+\s+(\S+) \((\S+)-(\S+); \d+ resamples",
        result.stdout,
        flags=re.MULTILINE,
    )
    settings = {(experts, errors, judges) for experts, errors, judges, *_ in rows}
    assert len(rows) == 8 and len(settings) == 8
    assert ("0.70/0.65/0.60", "independent", "6") in settings


def test_active_order_chooses_the_best_judge_no_less_often_than_random_order_with_six_independent_judges():
    # The setting where active order was weakest (strong experts, six judges with independent errors), small and
    # seeded: over budgets of 10-200 comparisons per stratum it errs less often on the whole than random order.
    import importlib.util

    import numpy as np

    spec = importlib.util.spec_from_file_location("bench_label_efficiency", ROOT / "scripts/bench_label_efficiency.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    counts = bench.simulate_from_truth(
        40, 400, 7, experts=bench.EXPERT_ACCURACY, judges=bench.judge_accuracies(6), rho=0.0
    )
    truth = (counts @ bench.patterns_for(6)).sum(axis=1).argmax(axis=-1)
    budgets = np.arange(10, 201, 10)
    rng = np.random.default_rng(8)
    random_errors = 1 - (bench.serve(counts, budgets, 5, rng, active=False) == truth[:, None]).mean(axis=0)
    active_errors = 1 - (bench.serve(counts, budgets, 5, rng, active=True) == truth[:, None]).mean(axis=0)
    assert active_errors.mean() <= random_errors.mean()
    assert active_errors[10:].sum() <= random_errors[10:].sum()
