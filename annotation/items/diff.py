"""Diffs of item revisions (pure): sentence by sentence, then word by word (English) or character (Chinese).

A sentence an expert rewrote shows as one replaced block (old sentence struck, new one inserted) rather than
interleaved words; a sentence with a few words changed shows those words.
"""

import difflib
import re
from dataclasses import dataclass

_WORDS = re.compile(r"\s+|\w+|[^\w\s]", re.UNICODE)
# A sentence ends after its closing punctuation (and any closing quotes or brackets) and the spaces that follow;
# Chinese sentences end on 。！？ with no space after them. Line breaks end a sentence too.
_SENTENCES = {
    "en": re.compile(r"[^\n]*?(?:[.!?…]+[\"'”’)\]]*(?:\s+|$)|\n+|$)", re.UNICODE),
    "zh": re.compile(r"[^\n]*?(?:[。！？!?…]+[”’」』）)]*\s*|\n+|$)", re.UNICODE),
}
# Below this share of unchanged words (difflib's ratio), a sentence counts as rewritten and shows as one block.
REWRITE_RATIO = 0.5


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


def split_sentences(text: str, language: str) -> list[str]:
    """Split text into sentences that join back to exactly ``text`` (trailing spaces stay with their sentence)."""
    pattern = _SENTENCES["zh" if language == "zh" else "en"]
    return [part for part in pattern.findall(text) if part]


def _word_segments(old: str, new: str, language: str) -> list[Segment]:
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


def _rewritten(old: str, new: str, language: str) -> bool:
    """Return whether most words (characters in Chinese) of a sentence changed."""
    a = [t for t in tokenize(old, language) if not t.isspace()]
    b = [t for t in tokenize(new, language) if not t.isspace()]
    if not a or not b:
        return True
    return difflib.SequenceMatcher(a=a, b=b, autojunk=False).ratio() < REWRITE_RATIO


def _replaced(old: str, new: str, language: str) -> list[Segment]:
    if _rewritten(old, new, language):
        return [Segment("delete", old), Segment("insert", new)]
    return _word_segments(old, new, language)


def _merge(segments: list[Segment]) -> list[Segment]:
    merged: list[Segment] = []
    for segment in segments:
        if not segment.text:
            continue
        if merged and merged[-1].op == segment.op:
            merged[-1] = Segment(segment.op, merged[-1].text + segment.text)
        else:
            merged.append(segment)
    return merged


def diff_text(old: str, new: str, language: str) -> list[Segment]:
    """Return the segments that turn ``old`` into ``new``.

    Sentences are aligned first; a changed sentence is diffed word by word (character by character in Chinese)
    unless most of it changed, in which case it shows as one deleted and one inserted block.
    """
    a, b = split_sentences(old, language), split_sentences(new, language)
    segments: list[Segment] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            segments.append(Segment("equal", "".join(a[i1:i2])))
        elif op == "delete":
            segments.append(Segment("delete", "".join(a[i1:i2])))
        elif op == "insert":
            segments.append(Segment("insert", "".join(b[j1:j2])))
        elif i2 - i1 == j2 - j1:
            for before, after in zip(a[i1:i2], b[j1:j2], strict=True):
                segments += _replaced(before, after, language)
        else:
            segments += _replaced("".join(a[i1:i2]), "".join(b[j1:j2]), language)
    return _merge(segments)


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
