"""The pairing benchmark's sweep prints the rule "auto" against round-robin stopped early (small sizes)."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_sweep_prints_a_row_with_paired_differences_and_a_verdict_per_setting():
    result = subprocess.run(
        [sys.executable, "scripts/bench_pairing.py", "--sweep", "--quick"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=True,
    )
    settings = re.findall(
        r"^  (\d+) models, noise ([\d.]+): round-robin stopped early [\d.]+.* / [\d.]+", result.stdout, flags=re.M
    )
    # 6 and 10 models at two noise levels.
    assert settings == [("6", "93.4"), ("10", "93.4"), ("6", "186.8"), ("10", "186.8")]
    interval = r"([+-][\d.]+) \(([+-][\d.]+) to ([+-][\d.]+)\)"
    rows = re.findall(
        rf"^    auto \(default\)\s+.*minus round-robin: {interval} / {interval}  (better|no difference|WORSE)$",
        result.stdout,
        flags=re.M,
    )
    assert len(rows) == 4
    for *numbers, verdict in rows:
        mean, low, high = (float(x) for x in numbers[:3])
        assert low <= mean <= high
        assert verdict in {"better", "no difference", "WORSE"}
