#!/usr/bin/env python
"""Does a larger margin ever lower the winner's TrueSkill mu? Counted over simulated tournaments.

    .venv/bin/python scripts/bench_monotonicity.py [--tournaments 200] [--passes 10]

For each tournament one verdict is set to ``+`` and then to ``+++++`` (same winner), and the winner's mu is
compared, for two kinds of tournament (random pairs of 3-8 models with margins -5..+5, as the test suite draws
them; round robins of 3-9 models played 1-3 times with margins from latent skills), both margin mappings and
three pass seeds. Prints how many tournaments lowered the winner's mu and the largest drop. It asserts nothing.
"""

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evaluation import ratings  # noqa: E402


def random_pairs(rng: random.Random) -> list[tuple[str, str, int]]:
    models = [f"m{i}" for i in range(rng.randint(3, 8))]
    n = rng.randint(len(models), 6 * len(models))
    return [(*rng.sample(models, 2), rng.choice(range(-5, 6))) for _ in range(n)]


def round_robin(rng: random.Random) -> list[tuple[str, str, int]]:
    models = [f"q{i}" for i in range(rng.randint(3, 9))]
    skill = {m: rng.gauss(0, 1) for m in models}
    return [
        (a, b, max(-5, min(5, round(2 * (skill[a] - skill[b] + rng.gauss(0, 1))))))
        for _ in range(rng.randint(1, 3))
        for a in models
        for b in models
        if a < b
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tournaments", type=int, default=200)
    parser.add_argument("--passes", type=int, default=ratings.DEFAULT_PASSES)
    args = parser.parse_args()
    print(f"{'tournaments':<14}{'mapping':<10}{'pass seed':>10}{'lowered':>10}{'largest drop of mu':>20}")
    for generate in (random_pairs, round_robin):
        for mapping in ("linear", ratings.DEFAULT_MARGIN_MAPPING):
            for pass_seed in (0, 1, 7):
                lowered, drop = 0, 0.0
                for seed in range(args.tournaments):
                    rng = random.Random(seed * 31 + 5)
                    verdicts = generate(rng)
                    index = rng.randrange(len(verdicts))
                    winner, loser, _margin = verdicts[index]
                    mu = []
                    for margin in (1, 5):
                        verdicts[index] = (winner, loser, margin)
                        result = ratings.rate_verdicts(
                            verdicts, margin_mapping=mapping, seed=pass_seed, n_passes=args.passes
                        )
                        mu.append(result.by_model()[winner].mu)
                    if mu[1] < mu[0]:
                        lowered += 1
                        drop = max(drop, mu[0] - mu[1])
                print(
                    f"{generate.__name__:<14}{mapping:<10}{pass_seed:>10}{f'{lowered}/{args.tournaments}':>10}"
                    f"{drop:>20.4f}"
                )


if __name__ == "__main__":
    main()
