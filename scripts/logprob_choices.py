#!/usr/bin/env python
"""Count how often the option chosen by log-probability scoring changes when the option's first token counts.

    .venv/bin/python scripts/logprob_choices.py                  # the simulator as it is now
    git show HEAD:llm/simulator/simulation.py > /tmp/simulation_old.py
    .venv/bin/python scripts/logprob_choices.py --simulation /tmp/simulation_old.py   # an older simulator

Reads the EmoBench EA items (``../shared/data/external/emobench/EA.jsonl``) through the project's importer,
builds the log-probability prompts of an evaluation run (``evaluation.prompts``), asks the simulator's legacy
completions reply (in process, no server) for each option, and scores every option twice: with the rule used
before issue 12 (tokens whose offset is at least the option's start: the first option token, which holds the
separating space, was dropped) and with ``evaluation.prompts.continuation_score``. Prints, per language and over
``--seeds`` simulator seeds, the share of items whose chosen option differs and the accuracy under each rule.
No database, no network; it asserts nothing.
"""

import argparse
import importlib.util
import json
import statistics
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import django  # noqa: E402
from django.conf import settings  # noqa: E402

settings.configure(USE_I18N=False)
django.setup()

from annotation.items.emobench import emobench_records  # noqa: E402
from evaluation import prompts  # noqa: E402
from llm import parsers  # noqa: E402
from llm.simulator import simulation  # noqa: E402

DEFAULT_PATH = ROOT.parent / "shared/data/external/emobench/EA.jsonl"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--path", type=Path, default=DEFAULT_PATH, help="EmoBench EA.jsonl")
    parser.add_argument("--seeds", type=int, default=10, help="simulator seeds 0..N-1 (default 10)")
    parser.add_argument("--model", default="sim-base", help="simulated model name (default sim-base)")
    parser.add_argument(
        "--simulation", type=Path, help="a simulation module file to use instead of llm/simulator/simulation.py"
    )
    return parser.parse_args()


def load_simulation(path: Path | None) -> ModuleType:
    if path is None:
        return simulation
    spec = importlib.util.spec_from_file_location("simulation_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def legacy_score(parsed: dict, boundary: int) -> float | None:
    """Return the mean log-probability of the tokens starting at or after ``boundary`` (the rule before the fix)."""
    values = [
        v
        for o, v in zip(parsed["text_offset"], parsed["token_logprobs"], strict=True)
        if o >= boundary and v is not None
    ]
    return sum(values) / len(values) if values else None


def best(scores: list[float | None]) -> int | None:
    """Return the first option with the highest score, as the collector picks it; None if any is missing."""
    if any(score is None for score in scores):
        return None
    return max(range(len(scores)), key=lambda o: scores[o])


def main() -> None:
    args = parse_args()
    sim = load_simulation(args.simulation)
    rows = [(n, json.loads(line)) for n, line in enumerate(args.path.read_text(encoding="utf-8").splitlines(), 1)]
    records, _faults = emobench_records(rows)
    print(f"{args.path.name}: {len(records)} items; simulator {args.simulation or 'llm/simulator/simulation.py'}")
    for language in ("en", "zh"):
        versions = [r["content"][language] for _, r in records if language in r["content"]]
        changed_shares, legacy_accuracy, fixed_accuracy, unscored = [], [], [], 0
        for seed in range(args.seeds):
            changed = legacy_right = fixed_right = 0
            for version in versions:
                prefix = prompts.logprob_prefix(kind="mcq", version=version, language=language, turn=0)
                legacy, fixed = [], []
                for option in version["options"]:
                    reply = sim.completion_reply(
                        args.model,
                        prompts.logprob_prompt(prefix, option),
                        seed=seed,
                        max_tokens=0,
                        echo=True,
                        logprobs=1,
                    )
                    parsed = parsers.parse_logprobs(reply["text"], {"choices": [{"logprobs": reply["logprobs"]}]})
                    legacy.append(legacy_score(parsed, prompts.option_start(prefix)))
                    fixed.append(prompts.continuation_score(parsed, prompts.option_start(prefix))[0])
                before, after = best(legacy), best(fixed)
                unscored += before is None or after is None
                changed += before != after
                legacy_right += before == version["answer"]
                fixed_right += after == version["answer"]
            changed_shares.append(changed / len(versions))
            legacy_accuracy.append(legacy_right / len(versions))
            fixed_accuracy.append(fixed_right / len(versions))
        spread = f"{min(changed_shares):.1%}-{max(changed_shares):.1%}"
        print(
            f"  {language}: {len(versions)} items x {args.seeds} seeds: chosen option changed on "
            f"{statistics.mean(changed_shares):.1%} of items (per seed {spread}); "
            f"accuracy {statistics.mean(legacy_accuracy):.1%} before, {statistics.mean(fixed_accuracy):.1%} after; "
            f"{unscored} unscored"
        )


if __name__ == "__main__":
    main()
