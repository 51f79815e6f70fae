"""The pairing benchmark's sweep prints adaptive pairing against round-robin stopped early (small sizes)."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_sweep_prints_a_row_with_a_verdict_per_setting():
    result = subprocess.run(
        [sys.executable, "scripts/bench_pairing.py", "--sweep", "--quick"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=True,
    )
    rows = re.findall(
        r"^\s+(\d+)\s+([\d.]+)\s+(\S+) / (\S+)\s+(\S+) / (\S+)\s+(not worse|WORSE|inconclusive)"
        r"\s+(\S+) / (\S+)\s+(not worse|WORSE|inconclusive)$",
        result.stdout,
        flags=re.MULTILINE,
    )
    # 6 and 10 models at two noise levels.
    assert [(m, n) for m, n, *_ in rows] == [("6", "93.4"), ("10", "93.4"), ("6", "186.8"), ("10", "186.8")]
