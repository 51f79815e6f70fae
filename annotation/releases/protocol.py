"""The objective protocol as the exported harness files run it: standard library only, copied verbatim into them.

``inspect_task.py`` of an export carries this module's source, so a lab runs the benchmark without this app;
``tests/releases/test_harness.py`` checks that every function here gives what ``evaluation.prompts`` and
``llm.parsers.parse_mcq_letter`` give (the app's own runs), option for option and letter for letter.
"""

import hashlib
import random
import re

LETTERS = "ABCDEFGHIJKL"
INSTRUCTION = {
    "en": "Read the situation and choose the best option. Reply with the letter of your choice, as 'Answer: X'.",
    "zh": "请阅读情境并选择最合适的选项。请用“答案：X”的格式回复所选选项的字母。",
}
ANSWER_CUE = {"en": "Answer:", "zh": "答案："}
ANSWER_RE = re.compile(r"(?:answer|choice|option|答案|选项|选择)\s*(?:is|:|：|为|是)?\s*\(?\[?([A-L])\b", re.IGNORECASE)
LONE_LETTER_RE = re.compile(r"^\W*([A-L])\W*$", re.IGNORECASE)


def option_order(*, uid: str, model_code: str, language: str, turn: int, seed: int, n: int) -> list[int]:
    """Return the shuffled order of ``n`` options for one (item, model, language, turn, seed), reproducibly."""
    digest = hashlib.sha256(f"{seed}|{uid}|{model_code}|{language}|{turn}".encode()).hexdigest()
    order = list(range(n))
    random.Random(int(digest[:16], 16)).shuffle(order)
    return order


def objective_turns(kind: str, version: dict) -> list[dict]:
    """Return the turns of an objective item: an mcq is a single turn."""
    if kind == "mcq":
        return [{"user": version.get("question", ""), "options": version["options"], "answer": version.get("answer")}]
    return list(version.get("turns") or [])


def lettered(options: list[str], order: list[int]) -> str:
    return "\n".join(f"{LETTERS[i]}. {options[original]}" for i, original in enumerate(order))


def letter_messages(*, kind: str, version: dict, language: str, turn: int, orders: list[list[int]]) -> list[dict]:
    """Build the chat for one turn: earlier turns are answered with their keyed option (teacher forcing)."""
    turns = objective_turns(kind, version)
    messages = [{"role": "system", "content": INSTRUCTION[language]}]
    context = version.get("context", "")
    for t in range(turn + 1):
        spec = turns[t]
        text = (
            f"{context}\n\n" if t == 0 and context else ""
        ) + f"{spec['user']}\n\n{lettered(spec['options'], orders[t])}"
        messages.append({"role": "user", "content": text})
        if t < turn:
            preferred = spec["answer"] if spec.get("answer") is not None else 0
            messages.append({"role": "assistant", "content": f"{ANSWER_CUE[language]} {spec['options'][preferred]}"})
    return messages


def logprob_prefix(*, kind: str, version: dict, language: str, turn: int) -> str:
    """Return the text each option continues in the log-probability protocol (no options listed)."""
    turns = objective_turns(kind, version)
    parts = [version.get("context", "")]
    for t in range(turn):
        preferred = turns[t]["answer"] if turns[t].get("answer") is not None else 0
        parts += [turns[t]["user"], f"{ANSWER_CUE[language]} {turns[t]['options'][preferred]}"]
    parts += [turns[turn]["user"], ANSWER_CUE[language]]
    return "\n".join(p for p in parts if p)


def parse_letter(text: str) -> str | None:
    """Return the option letter (A-L) a reply names ("Answer: B", "答案：B" or a lone "B"), or None."""
    if m := ANSWER_RE.search(text):
        return m.group(1).upper()
    first_line = text.strip().splitlines()[0] if text.strip() else ""
    if m := LONE_LETTER_RE.match(first_line):
        return m.group(1).upper()
    return None


def chosen_option(text: str, order: list[int]) -> int | None:
    """Return the original index of the option a reply chose from options shown in ``order``, or None."""
    letter = parse_letter(text)
    if letter is None or LETTERS.index(letter) >= len(order):
        return None
    return order[LETTERS.index(letter)]


def objective_versions(record: dict, languages: list[str]) -> list[tuple[str, dict, list[dict]]]:
    """Return (language, version, turns) of a bilingual record's objective versions with every key given."""
    if record["kind"] not in ("mcq", "multi_turn_choice"):
        return []
    found = []
    for language in languages:
        version = (record.get("content") or {}).get(language)
        if not version:
            continue
        turns = objective_turns(record["kind"], version)
        if turns and all(t.get("answer") is not None and 0 <= t["answer"] < len(t["options"]) for t in turns):
            found.append((language, version, turns))
    return found
