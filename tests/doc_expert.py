"""An expert at the terminal of docs/api.md's labelling loop, for tests/test_api_docs.py (no Django needed).

Run as a script it reads the comparison (the ``next/`` answer) as JSON on stdin and prints the verdict as the
document's ``ask`` would read it from the keyboard: ``left 3``, ``right 1`` or ``tie``.
"""

import json
import sys

import numpy as np

from llm.simulator.simulation import quality_score


def expert_verdict(expert: str, comparison: dict) -> tuple[str, int | None]:
    """Return the verdict of an expert who prefers the reply of higher hidden quality, with normal noise (sd 4)
    drawn from their name and the assignment, as seen: ("left" | "right" | "tie", margin)."""
    seed = int.from_bytes(f"{expert}:{comparison['assignment']}".encode()[-8:], "big")
    diff = quality_score(comparison["left"]) - quality_score(comparison["right"])
    diff += np.random.default_rng(seed).normal(0, 4.0)
    if abs(diff) < 3.0:
        return "tie", None
    return ("left" if diff > 0 else "right"), min(5, 1 + int(abs(diff) // 10))


if __name__ == "__main__":
    winner, margin = expert_verdict(sys.argv[1], json.load(sys.stdin)["comparison"])
    print(winner, margin or "")
