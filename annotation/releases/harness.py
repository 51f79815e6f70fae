"""Harness task files of an export (layout 2): Inspect AI, lm-evaluation-harness and OpenAI evals (no ORM).

- ``inspect_task.py``: an Inspect AI task over ``items.bilingual.jsonl``, the app's letter protocol (shuffled
  lettered options per item, model code, language, turn and seed; teacher-forced turns; the minimum across turns);
- ``lm_eval.<lang>.yaml`` with ``lm_eval.<lang>.jsonl``: a ``multiple_choice`` task scored by log-likelihood of
  each option after the log-probability protocol's prefix, one document per objective turn;
- ``evals.<lang>.jsonl``: OpenAI evals ``Match`` samples (``input`` chat, ``ideal`` answers), options shuffled
  once with ``EVALS_SEED`` and model code ``EVALS_MODEL_CODE``.

Only objective versions whose every turn has a key in range are written: without one there is nothing to score.
"""

import re
from pathlib import Path

import yaml

from annotation.items.content import LANGUAGES
from annotation.releases import protocol
from core.canonical import canonical_json

EVALS_SEED = 0
EVALS_MODEL_CODE = "evals"
PROTOCOL_SOURCE = Path(protocol.__file__).read_text(encoding="utf-8")

INSPECT_GLUE = '''

# --- Inspect AI task (above: the objective protocol, as the app runs it) ---------------------------------------

import json  # noqa: E402
from pathlib import Path  # noqa: E402

from inspect_ai import Task, task  # noqa: E402
from inspect_ai.dataset import MemoryDataset, Sample  # noqa: E402
from inspect_ai.model import (  # noqa: E402
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
)
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer, stderr  # noqa: E402
from inspect_ai.solver import Generate, TaskState, solver  # noqa: E402

DATA = Path(__file__).resolve().parent / "items.bilingual.jsonl"
ROLES = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}


def _chat(messages):
    return [ROLES[m["role"]](content=m["content"]) for m in messages]


def samples(languages, seed, model_code):
    """One sample per objective item and language, its options shuffled as the app shuffles them."""
    result = []
    for line in DATA.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        for language, version, turns in objective_versions(record, languages):
            orders = [
                option_order(
                    uid=record["uid"], model_code=model_code, language=language, turn=t, seed=seed, n=len(s["options"])
                )
                for t, s in enumerate(turns)
            ]
            first = letter_messages(kind=record["kind"], version=version, language=language, turn=0, orders=orders)
            result.append(
                Sample(
                    id=f"{record['uid']}/{language}",
                    input=_chat(first),
                    target=[LETTERS[orders[t].index(s["answer"])] for t, s in enumerate(turns)],
                    metadata={
                        "uid": record["uid"],
                        "language": language,
                        "kind": record["kind"],
                        "dimension": record["dimension"],
                        "version": version,
                        "orders": orders,
                    },
                )
            )
    return result


@solver
def letter_turns():
    """Ask every turn in its own chat, earlier turns answered with their key; keep each turn's chosen option."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        meta = state.metadata
        turns = objective_turns(meta["kind"], meta["version"])
        chosen, replies = [], []
        for t in range(len(turns)):
            state.messages = _chat(
                letter_messages(
                    kind=meta["kind"], version=meta["version"], language=meta["language"], turn=t, orders=meta["orders"]
                )
            )
            state = await generate(state)
            text = state.output.completion
            replies.append(text)
            chosen.append(chosen_option(text, meta["orders"][t]))
        state.metadata["chosen"] = chosen
        state.metadata["replies"] = replies
        return state

    return solve


@scorer(metrics=[accuracy(), stderr()])
def minimum_across_turns():
    """Correct when every turn chose its keyed option (one turn for an mcq), as the app scores objective items."""

    async def score(state: TaskState, target: Target) -> Score:
        turns = objective_turns(state.metadata["kind"], state.metadata["version"])
        chosen = state.metadata.get("chosen") or []
        right = [c is not None and c == s["answer"] for c, s in zip(chosen, turns, strict=False)]
        ok = len(right) == len(turns) and all(right)
        letters = [LETTERS[o.index(c)] if c is not None else "?" for c, o in zip(chosen, state.metadata["orders"])]
        return Score(value=CORRECT if ok else INCORRECT, answer=" ".join(letters), explanation=str(right))

    return score


@task
def eistudio(languages: str = "en,zh", seed: int = 0, model_code: str = "M01", max_tokens: int = 16) -> Task:
    """The release's objective items; ``seed`` and ``model_code`` give the option order of an app run's model."""
    chosen = [lang.strip() for lang in languages.split(",") if lang.strip()]
    return Task(
        dataset=MemoryDataset(samples(chosen, seed, model_code), name=NAME),
        solver=letter_turns(),
        scorer=minimum_across_turns(),
        config=GenerateConfig(max_tokens=max_tokens),
    )
'''


def _task_name(meta: dict) -> str:
    return re.sub(r"[^0-9a-z]+", "_", f"{meta['benchmark']}_{meta['version']}".lower()).strip("_")


def inspect_task(meta: dict) -> bytes:
    """Return ``inspect_task.py``: a header, the protocol module's source, the Inspect task."""
    header = (
        f"# Inspect AI task of {meta['benchmark']} {meta['version']}, written at freeze by EI Studio.\n"
        "# Run from anywhere: inspect eval inspect_task.py --model openai/<model> [-T languages=en -T seed=0]\n"
        "# ruff: noqa\n"
    )
    return (header + PROTOCOL_SOURCE + INSPECT_GLUE + f"\nNAME = {_task_name(meta)!r}\n").encode("utf-8")


def lm_eval_docs(records: list[dict], language: str) -> list[dict]:
    """Return one lm-eval document per objective turn of ``language``: prefix, options, key."""
    docs = []
    for record in records:
        for _, version, turns in protocol.objective_versions(record, [language]):
            for t, spec in enumerate(turns):
                prefix = protocol.logprob_prefix(kind=record["kind"], version=version, language=language, turn=t)
                docs.append(
                    {
                        "uid": record["uid"],
                        "turn": t,
                        "turns": len(turns),
                        "dimension": record["dimension"],
                        "prefix": prefix,
                        "options": spec["options"],
                        "answer": spec["answer"],
                    }
                )
    return docs


def lm_eval_yaml(meta: dict, language: str) -> bytes:
    """Return the lm-evaluation-harness task of one language: multiple choice by log-likelihood."""
    config = {
        "task": f"eistudio_{_task_name(meta)}_{language}",
        "dataset_path": "json",
        "dataset_kwargs": {"data_files": {"test": f"lm_eval.{language}.jsonl"}},
        "test_split": "test",
        "output_type": "multiple_choice",
        "doc_to_text": "prefix",
        "doc_to_choice": "options",
        "doc_to_target": "answer",
        "target_delimiter": " ",
        "metric_list": [
            {"metric": "acc", "aggregation": "mean", "higher_is_better": True},
            {"metric": "acc_norm", "aggregation": "mean", "higher_is_better": True},
        ],
        "metadata": {"version": 1.0, "release": f"{meta['benchmark']} {meta['version']}", "language": language},
    }
    return yaml.safe_dump(config, sort_keys=False, allow_unicode=True, width=1000).encode("utf-8")


def evals_samples(records: list[dict], language: str) -> list[dict]:
    """Return the OpenAI evals ``Match`` samples of one language: one chat per objective turn, the keyed letter."""
    samples = []
    cue = protocol.ANSWER_CUE[language]
    for record in records:
        for _, version, turns in protocol.objective_versions(record, [language]):
            orders = [
                protocol.option_order(
                    uid=record["uid"],
                    model_code=EVALS_MODEL_CODE,
                    language=language,
                    turn=t,
                    seed=EVALS_SEED,
                    n=len(spec["options"]),
                )
                for t, spec in enumerate(turns)
            ]
            for t, spec in enumerate(turns):
                letter = protocol.LETTERS[orders[t].index(spec["answer"])]
                samples.append(
                    {
                        "input": protocol.letter_messages(
                            kind=record["kind"], version=version, language=language, turn=t, orders=orders
                        ),
                        "ideal": [f"{cue} {letter}", f"{cue}{letter}", letter],
                        "uid": record["uid"],
                        "turn": t,
                    }
                )
    return samples


def _jsonl(rows: list[dict]) -> bytes:
    return "".join(canonical_json(r) + "\n" for r in rows).encode("utf-8")


def harness_files(meta: dict, records: list[dict]) -> dict[str, bytes]:
    """Return every harness file by name; ``records`` are the interchange records, sorted by uid."""
    files = {"inspect_task.py": inspect_task(meta)}
    for lang in LANGUAGES:
        files[f"lm_eval.{lang}.yaml"] = lm_eval_yaml(meta, lang)
        files[f"lm_eval.{lang}.jsonl"] = _jsonl(lm_eval_docs(records, lang))
        files[f"evals.{lang}.jsonl"] = _jsonl(evals_samples(records, lang))
    return files
