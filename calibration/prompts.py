"""Judge prompts as messages, and the judge's verdict parsed back (pure, no ORM).

The judge sees the user's message and two anonymised responses labelled A and B (in the order under test), must
analyse step by step, and ends with a strict verdict line: ``Verdict: [[A]] +++`` (winner and 1 to 5 pluses) or
``Verdict: [[TIE]]``.
"""

import re
from dataclasses import dataclass

from annotation.labelling.pairwise import canonical_score

OUTPUT_FORMAT = (
    "Finish with exactly one line in this form, and nothing after it:\n"
    "Verdict: [[A]] +++   (the better response, A or B, followed by 1 to 5 plus signs for how much better)\n"
    "or\n"
    "Verdict: [[TIE]]   (when neither is better)"
)

VERDICT_RE = re.compile(
    r"(?:verdict|结论|裁决)\s*[:：]\s*\[\[\s*(A|B|TIE|平局)\s*\]\]\s*([+＋]{0,5})(?![+＋])", re.IGNORECASE
)


class VerdictError(ValueError):
    """The judge's reply has no verdict line in the required form."""


@dataclass(frozen=True)
class Verdict:
    winner: str  # "A", "B" or "TIE" as presented to the judge
    margin: int  # 0 for a tie, else 1..5


def parse_verdict(text: str) -> Verdict:
    """Read the last verdict line of a judge's reply; raise ``VerdictError`` when it is missing or malformed."""
    matches = list(VERDICT_RE.finditer(text or ""))
    if not matches:
        raise VerdictError("no 'Verdict: [[A]] +++' line found")
    winner, pluses = matches[-1].group(1).upper(), matches[-1].group(2)
    if winner in ("TIE", "平局"):
        if pluses:
            raise VerdictError("a tie must not have plus signs")
        return Verdict("TIE", 0)
    if not 1 <= len(pluses) <= 5:
        raise VerdictError(f"the winner needs 1 to 5 plus signs, got {len(pluses)}")
    return Verdict(winner, len(pluses))


def canonical_from_order(verdict: Verdict, order: str) -> int:
    """Map a verdict on the shown order (AB: A shown first as 'A'; BA: B shown first as 'A') to canonical +A."""
    winner = {"A": "left", "B": "right", "TIE": "tie"}[verdict.winner]
    return canonical_score(shown_order=order, winner=winner, margin=verdict.margin or None)


def canonical_from_result(result: dict, order: str) -> int:
    """Map a reply parsed by the verdict parser (``{"winner", "margin"}``) on the shown order to canonical +A."""
    return canonical_from_order(Verdict(result["winner"], int(result["margin"])), order)


def system_message(
    *,
    dimension_name: str,
    definition: str,
    criteria: str,
    analysis_steps: str,
    length_penalty: str,
    few_shot: list[dict],
) -> str:
    """Compose the judge's instructions for one dimension."""
    parts = [
        "You are an experienced psychologist judging which of two replies to a distressed person is better on one "
        f"dimension: {dimension_name}.",
        f"Definition: {definition}" if definition else "",
        f"Criteria, in priority order:\n{criteria}",
    ]
    for n, example in enumerate(few_shot, start=1):
        parts.append(
            f"Example {n}. User: {example.get('user', '')}\nExemplary reply: {example.get('exemplary', '')}\n"
            f"Poor reply: {example.get('poor', '')}\nWhy: {example.get('why', '')}"
        )
    parts += [f"Before deciding, analyse step by step:\n{analysis_steps}", f"Length: {length_penalty}", OUTPUT_FORMAT]
    return "\n\n".join(p for p in parts if p)


def user_message(*, context: str, prompt: str, first: str, second: str) -> str:
    """Present the user's message and the two anonymised responses, labelled A and B in the order given."""
    situation = f"{context}\n\n" if context else ""
    return (
        f"[User message]\n{situation}{prompt}\n[End of user message]\n\n"
        f"[Response A]\n{first}\n[End of Response A]\n\n"
        f"[Response B]\n{second}\n[End of Response B]"
    )
