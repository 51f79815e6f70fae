"""Word-level (English) and character-level (Chinese) diffs of item revisions (pure)."""

import difflib
import re
from dataclasses import dataclass

_WORDS = re.compile(r"\s+|\w+|[^\w\s]", re.UNICODE)


@dataclass(frozen=True)
class Segment:
    """A run of text that is equal, inserted or deleted between two versions."""

    op: str  # "equal" | "insert" | "delete"
    text: str


def tokenize(text: str, language: str) -> list[str]:
    """Split English into words, spaces and punctuation; Chinese into characters."""
    if language == "zh":
        return list(text)
    return _WORDS.findall(text)


def diff_text(old: str, new: str, language: str) -> list[Segment]:
    """Return the segments that turn ``old`` into ``new``."""
    a, b = tokenize(old, language), tokenize(new, language)
    segments: list[Segment] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            segments.append(Segment("equal", "".join(a[i1:i2])))
            continue
        if i2 > i1:
            segments.append(Segment("delete", "".join(a[i1:i2])))
        if j2 > j1:
            segments.append(Segment("insert", "".join(b[j1:j2])))
    return segments


def flatten_version(kind: str, version: dict | None) -> list[tuple[str, str]]:
    """Return (field label, text) pairs of one language version, in reading order."""
    if not version:
        return []
    letters = "ABCDEFGHIJKL"
    rows: list[tuple[str, str]] = [("context", version.get("context") or "")]
    if kind == "mcq":
        rows.append(("question", version.get("question") or ""))
        rows += [(f"option {letters[i]}", text) for i, text in enumerate(version.get("options") or [])]
        rows.append(("answer", _answer_letter(version.get("answer"))))
    elif kind == "multi_turn_choice":
        for t, turn in enumerate(version.get("turns") or [], start=1):
            rows.append((f"turn {t} user", turn.get("user") or ""))
            rows += [(f"turn {t} option {letters[i]}", text) for i, text in enumerate(turn.get("options") or [])]
            rows.append((f"turn {t} answer", _answer_letter(turn.get("answer"))))
    else:
        rows.append(("prompt", version.get("prompt") or ""))
    return rows


def _answer_letter(answer: int | None) -> str:
    return "ABCDEFGHIJKL"[answer] if isinstance(answer, int) and 0 <= answer < 12 else "—"


def diff_versions(kind: str, old: dict | None, new: dict | None, language: str) -> list[dict]:
    """Diff two language versions field by field; unchanged fields are marked so they can be folded."""
    old_rows = dict(flatten_version(kind, old))
    new_rows = flatten_version(kind, new)
    labels = [label for label, _ in new_rows] + [label for label in old_rows if label not in dict(new_rows)]
    new_map = dict(new_rows)
    result = []
    for label in labels:
        before, after = old_rows.get(label, ""), new_map.get(label, "")
        result.append({"field": label, "changed": before != after, "segments": diff_text(before, after, language)})
    return result
