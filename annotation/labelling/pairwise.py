"""Canonical orientation of pairwise verdicts (pure).

A comparison has a canonical response A and B. A rater sees them left/right in some order ("AB": A on the left).
Verdicts are stored as a signed score: +k when A wins by k pluses (1..5), 0 for a tie, -k when B wins by k.
"""

import re

MARGINS = range(1, 6)
WINNERS = ("left", "right", "tie")


def canonical_score(*, shown_order: str, winner: str, margin: int | None) -> int:
    """Turn what a rater chose on screen into the canonical signed score; raise ValueError on bad input."""
    if shown_order not in ("AB", "BA"):
        raise ValueError(f"shown order must be AB or BA, got {shown_order!r}")
    if winner not in WINNERS:
        raise ValueError(f"winner must be left, right or tie, got {winner!r}")
    if winner == "tie":
        if margin not in (None, 0):
            raise ValueError("a tie has no margin")
        return 0
    if margin not in MARGINS:
        raise ValueError(f"margin must be 1 to 5 pluses, got {margin!r}")
    left_is_a = shown_order == "AB"
    a_wins = (winner == "left") == left_is_a
    return margin if a_wins else -margin


def shown_choice(*, shown_order: str, score: int) -> tuple[str, int]:
    """Return (winner on screen, margin) for a canonical score, the inverse of ``canonical_score``."""
    if score == 0:
        return "tie", 0
    a_wins = score > 0
    left_is_a = shown_order == "AB"
    return ("left" if a_wins == left_is_a else "right"), abs(score)


def plus_string(margin: int) -> str:
    """Return the margin as pluses, e.g. 3 -> '+++'."""
    return "+" * margin


_SELF_IDENTIFYING = [
    r"\bas an AI (?:language )?model(?: (?:developed|created|trained|made) by [\w .-]+?)?(?=[,.;:!?]|\s|$)",
    r"\bI(?: am|'m) (?:an AI (?:assistant|model)|a large language model)"
    r"(?: (?:developed|created|trained|made) by [\w .-]+?)?(?=[,.;:!?]|$)",
    r"作为(?:一个)?(?:由[\w\s.-]+?(?:开发|训练)的)?(?:AI|人工智能)(?:语言模型|助手|模型)",
    r"我是(?:一个)?(?:由[\w\s.-]+?(?:开发|训练)的)?(?:AI|人工智能)(?:语言模型|助手|模型)",
]
_KNOWN_VENDORS = [
    "OpenAI",
    "ChatGPT",
    "GPT-4o",
    "GPT-4",
    "GPT-5",
    "Anthropic",
    "Claude",
    "Gemini",
    "Google DeepMind",
    "DeepSeek",
    "Qwen",
    "通义千问",
    "Kimi",
    "Moonshot",
    "月之暗面",
    "Doubao",
    "豆包",
    "GLM",
    "智谱",
    "Llama",
    "Meta AI",
    "Mistral",
]
PLACEHOLDER = "[model]"


def anonymise(text: str, model_names: list[str] | tuple[str, ...] = ()) -> str:
    """Remove model names and self-identifying phrases from a response before a rater or judge sees it."""
    result = text
    for pattern in _SELF_IDENTIFYING:
        result = re.sub(pattern, PLACEHOLDER, result, flags=re.IGNORECASE)
    names = sorted({n for n in [*model_names, *_KNOWN_VENDORS] if n and n.strip()}, key=len, reverse=True)
    for name in names:
        # Word boundaries only make sense for Latin names; Chinese has no spaces between words.
        before = r"(?<![A-Za-z0-9-])" if name[0].isascii() else ""
        after = r"(?![A-Za-z0-9-])" if name[-1].isascii() else ""
        result = re.sub(before + re.escape(name) + after, PLACEHOLDER, result, flags=re.IGNORECASE)
    return result
