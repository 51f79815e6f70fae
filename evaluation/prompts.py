"""Prompts for models under test: shuffled lettered options, multi-turn conversations, log-probability prompts.

Pure functions of item content, so that a run can be rebuilt and checked from its stored calls.
"""

import codecs
import hashlib
import random

from llm.parsers import token_bytes

LETTERS = "ABCDEFGHIJKL"
INSTRUCTION = {
    "en": "Read the situation and choose the best option. Reply with the letter of your choice, as 'Answer: X'.",
    "zh": "请阅读情境并选择最合适的选项。请用“答案：X”的格式回复所选选项的字母。",
}
ANSWER_CUE = {"en": "Answer:", "zh": "答案："}


def option_order(*, uid: str, model_code: str, language: str, turn: int, seed: int, n: int) -> list[int]:
    """Return the shuffled order of ``n`` options for one (item, model, language, turn, seed), reproducibly."""
    digest = hashlib.sha256(f"{seed}|{uid}|{model_code}|{language}|{turn}".encode()).hexdigest()
    order = list(range(n))
    random.Random(int(digest[:16], 16)).shuffle(order)
    return order


def lettered(options: list[str], order: list[int]) -> str:
    return "\n".join(f"{LETTERS[i]}. {options[original]}" for i, original in enumerate(order))


def objective_turns(kind: str, version: dict) -> list[dict]:
    """Return the turns of an objective item: an mcq is a single turn."""
    if kind == "mcq":
        return [{"user": version.get("question", ""), "options": version["options"], "answer": version.get("answer")}]
    return list(version.get("turns") or [])


def letter_messages(*, kind: str, version: dict, language: str, turn: int, orders: list[list[int]]) -> list[dict]:
    """Build the chat for one turn: earlier turns are answered with their preferred option (teacher forcing)."""
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
    """Return the text the option continues in the log-probability protocol (no options listed)."""
    turns = objective_turns(kind, version)
    parts = [version.get("context", "")]
    for t in range(turn):
        preferred = turns[t]["answer"] if turns[t].get("answer") is not None else 0
        parts += [turns[t]["user"], f"{ANSWER_CUE[language]} {turns[t]['options'][preferred]}"]
    parts += [turns[turn]["user"], ANSWER_CUE[language]]
    return "\n".join(p for p in parts if p)


def logprob_prompt(prefix: str, option: str) -> str:
    """Return the prompt whose echoed log-probabilities score ``option`` as a continuation of ``prefix``."""
    return f"{prefix} {option}"


def option_start(prefix: str) -> int:
    """Return the character offset at which the option starts in ``logprob_prompt(prefix, option)``."""
    return len(prefix) + 1


def continuation_score(parsed: dict, boundary: int) -> tuple[float | None, float | None]:
    """Return (mean, sum) of the log-probabilities of the tokens of the continuation that starts at ``boundary``.

    ``parsed`` is what the ``logprobs`` parser keeps of an echoed prompt: ``tokens``, ``token_logprobs`` and
    ``text_offset`` (each token's character offset in the echoed text). A token belongs to the continuation when
    it ends after the boundary, so a token that straddles it counts: BPE tokenizers put the space before an
    option inside its first token (`` happy``, `` 开心``). A token ends where the next one starts (the last one
    at its offset plus its length). A partial-character token (``bytes:\\xe5\\xbc``) that shares its offset
    with the token completing the character belongs where that character is, and one that ends on the boundary
    holding the first bytes of the option's first character belongs to the option.
    """
    tokens = parsed.get("tokens") or []
    offsets = parsed.get("text_offset") or []
    values = parsed.get("token_logprobs") or []
    if not tokens or not len(tokens) == len(offsets) == len(values):
        return None, None
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    chosen = []
    for index, (token, start, value) in enumerate(zip(tokens, offsets, values, strict=True)):
        decoder.decode(token_bytes(token))
        holds_next_character = bool(decoder.getstate()[0])
        if index + 1 < len(tokens):
            end = offsets[index + 1]
        else:
            end = start + len(token_bytes(token).decode("utf-8", errors="ignore"))
        inside = start >= boundary or end > boundary or (end == boundary and holds_next_character)
        if inside and value is not None:
            chosen.append(value)
    if not chosen:
        return None, None
    return sum(chosen) / len(chosen), sum(chosen)


def open_messages(*, version: dict) -> list[dict]:
    """The user's message as the model under test sees it."""
    context = version.get("context", "")
    return [{"role": "user", "content": (f"{context}\n\n" if context else "") + version.get("prompt", "")}]
