"""Plain-text measures of a model response in English or Chinese (pure, no ORM).

Markup is not text: list markers and Markdown emphasis are removed before anything is counted, so a response's
length does not depend on whether it was formatted as a list. ``response_length`` is the one definition of a
response's length, used by the judge calibration's length bias and by evaluation's style metrics.
"""

import re
import unicodedata
from typing import Literal

from annotation.items.content import LANGUAGES

Language = Literal["en", "zh"]

_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "`": "'", "＇": "'"})
_MARKUP = re.compile(r"(\*\*|__|\*|`+|^#{1,6}\s*)", re.MULTILINE)
LIST_LINE = re.compile(
    r"""^\s*(?:\*\*)?(?:
        [-*+•●○◦▪▫■□‣⁃·–—](?=\s)         # bullet characters followed by a space
      | \d{1,3}[.)．、](?!\d)             # 1.  1)  1、  (not 1.5)
      | [(（]\d{1,3}[)）]                 # (1)
      | [a-zA-Z][.)](?=\s)                # a.  b)
      | [一二三四五六七八九十]{1,3}[、.．]   # 一、
      | [(（][一二三四五六七八九十]{1,3}[)）] # （一）
      | [①-⑳]
    )""",
    re.VERBOSE,
)
_EN_WORD = re.compile(r"[^\W_]+(?:['\-][^\W_]+)*")


def normalise(text: str) -> str:
    """Return text in NFKC form with straight apostrophes and single spaces (what matching works on)."""
    return re.sub(r"[ \t\u3000]+", " ", unicodedata.normalize("NFKC", text).translate(_APOSTROPHES))


def split_list_marker(line: str) -> tuple[bool, str]:
    """Return whether a line starts with a list marker, and the normalised line without that marker.

    The marker is looked for in the line as written first: NFKC turns circled numbers (①) into plain digits
    (1), which no longer read as a marker. Then in the normalised line, where compatibility forms such as ⑴
    or ⒈ have become (1) and 1.
    """
    marker = LIST_LINE.match(line)
    if marker:
        return True, normalise(line[marker.end() :])
    normal = normalise(line)
    marker = LIST_LINE.match(normal)
    if marker:
        return True, normal[marker.end() :]
    return False, normal


def normalised_lines(text: str) -> list[tuple[bool, str]]:
    """Return each non-blank line as (starts with a list marker, normalised line without the marker)."""
    return [split_list_marker(line) for line in text.splitlines() if line.strip()]


def content_lines(text: str) -> list[str]:
    """Return the non-blank lines without list markers and Markdown emphasis."""
    lines = []
    for _, line in normalised_lines(text):
        line = _MARKUP.sub("", line).strip()
        if line:
            lines.append(line)
    return lines


def response_length(text: str, language: Language) -> int:
    """Return the length of a response: English words, or Chinese characters (as FACET measures length).

    English: runs of letters or digits, joined by inner apostrophes or hyphens (``don't``, ``well-being``).
    Chinese: every character whose Unicode category is a letter or a number (CJK ideographs, Latin letters,
    digits), so whitespace, punctuation, symbols (emoji) and Markdown markup do not count.
    """
    if language not in LANGUAGES:
        raise ValueError(f"language must be one of {', '.join(LANGUAGES)}")
    plain = "\n".join(content_lines(text))
    if language == "en":
        return len(_EN_WORD.findall(plain))
    return sum(1 for char in plain if unicodedata.category(char)[0] in "LN")
