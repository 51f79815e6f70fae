"""The JSONL interchange format ``eistudio-item/1``: reading, checking and writing records (no ORM).

One item per line, both languages in one record. The JSON Schema is ``docs/item-schema.json``.
"""

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from django.utils.translation import gettext as _

from annotation.items.schema import integral, schema_errors
from core.canonical import canonical_json
from core.inputs import InputRefused, parse_json

FORMAT = "eistudio-item/1"
STATUSES = ("draft", "in_screening", "accepted", "rejected")
ORIGINS = ("expert", "llm_draft", "imported")
DIFFICULTIES = ("", "easy", "medium", "hard")
RECORD_FIELDS = {
    "format",
    "uid",
    "benchmark",
    "dimension",
    "kind",
    "scenario",
    "emotions",
    "crisis_level",
    "difficulty",
    "status",
    "origin",
    "metadata",
    "content",
    "revision",
    "message",
}
UID_MAX = 100


@dataclass(frozen=True)
class LineError:
    """An import error that names the line and the field at fault."""

    line: int
    field: str
    message: str

    def __str__(self) -> str:
        return _("line %(line)s: %(field)s: %(message)s") % {
            "line": self.line,
            "field": self.field,
            "message": self.message,
        }


def json_error_text(message: str) -> str:
    """Return Python's JSON parser message in the active language (the parser's own text when not known)."""
    known = {
        "Expecting value": _("a value was expected"),
        "Expecting property name enclosed in double quotes": _("a field name in double quotes was expected"),
        "Expecting ',' delimiter": _("a comma was expected"),
        "Expecting ':' delimiter": _("a colon was expected"),
        "Extra data": _("there is text after the JSON object"),
        "Unterminated string starting at": _("a text value is not closed"),
        "Invalid control character at": _("a control character is inside a text value"),
        "Invalid \\escape": _("invalid backslash escape"),
    }
    return known.get(message, message)


@dataclass
class ItemRecord:
    """One checked interchange record; taxonomy references are still codes."""

    line: int
    uid: str
    benchmark: str
    dimension: str
    kind: str
    content: dict
    scenario: str | None = None
    emotions: list[str] = field(default_factory=list)
    crisis_level: int | None = None
    difficulty: str = ""
    # None when the record gives no status: a new item starts as draft, an existing one keeps its status.
    status: str | None = None
    origin: str = "imported"
    metadata: dict = field(default_factory=dict)
    message: str = ""


def iter_jsonl(data: bytes, *, max_line_bytes: int) -> Iterator[tuple[int, dict] | LineError]:
    """Yield (line number, object) for each non-blank line of ``data``, or the ``LineError`` refusing it.

    Lines are read one at a time, so that a large file is never held twice (as bytes and as split lines).
    """
    start, number, size = 0, 0, len(data)
    while start <= size:
        end = data.find(b"\n", start)
        if end < 0:
            end = size
        raw = data[start:end]
        start = end + 1
        number += 1
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        if not raw.strip():
            continue
        yield _read_line(number, raw, max_line_bytes=max_line_bytes)


def _read_line(number: int, raw: bytes, *, max_line_bytes: int) -> tuple[int, dict] | LineError:
    if len(raw) > max_line_bytes:
        message = _("line is %(size)s bytes, over the %(limit)s-byte limit") % {
            "size": len(raw),
            "limit": max_line_bytes,
        }
        return LineError(number, "line", message)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return LineError(number, "line", _("invalid UTF-8 at byte %(byte)s") % {"byte": exc.start})
    try:
        obj = parse_json(text)
    except InputRefused as exc:
        return LineError(number, exc.field or "line", exc.reason)
    except json.JSONDecodeError as exc:
        message = _("malformed JSON: %(error)s at column %(column)s") % {
            "error": json_error_text(exc.msg),
            "column": exc.colno,
        }
        return LineError(number, "line", message)
    if not isinstance(obj, dict):
        message = _("expected a JSON object, got %(type)s") % {"type": type(obj).__name__}
        return LineError(number, "line", message)
    return number, obj


def read_jsonl(data: bytes, *, max_line_bytes: int) -> tuple[list[tuple[int, dict]], list[LineError]]:
    """Split raw bytes into (line number, object) pairs; blank lines are skipped.

    A line nested deeper than ``JSON_MAX_DEPTH`` or with a NUL character in any text is an error naming the line
    (and the field holding the NUL), as a malformed one is (``core.inputs.parse_json``).
    """
    rows: list[tuple[int, dict]] = []
    errors: list[LineError] = []
    for row in iter_jsonl(data, max_line_bytes=max_line_bytes):
        if isinstance(row, LineError):
            errors.append(row)
        else:
            rows.append(row)
    return rows, errors


def parse_record(line: int, obj: dict, *, max_chars: int, benchmark: str | None = None) -> ItemRecord | list[LineError]:
    """Check one interchange object and return a record, or every error found in it.

    The published schema (``docs/item-schema.json``, with the instance's text limit) decides what a record may
    hold; ``benchmark`` (``--benchmark``) fills in or replaces the record's benchmark first. What no schema can
    express is checked elsewhere: a uid twice in one file (``check_records``), taxonomy codes, a kind that cannot
    change, and who may set a status (``annotation.items.services``).
    """
    if benchmark:
        obj = {**obj, "benchmark": benchmark}
    problems = schema_errors(obj, max_chars=max_chars)
    if problems:
        return [LineError(line, name, message) for name, message in problems]
    return ItemRecord(
        line=line,
        uid=obj["uid"],
        benchmark=obj["benchmark"],
        dimension=obj["dimension"],
        kind=obj["kind"],
        content=integral(obj["content"]),
        scenario=obj.get("scenario"),
        emotions=list(obj.get("emotions", [])),
        crisis_level=integral(obj.get("crisis_level")),
        difficulty=obj.get("difficulty", ""),
        status=obj.get("status"),
        origin=obj.get("origin", "imported"),
        metadata=obj.get("metadata", {}),
        message=obj.get("message", ""),
    )


def check_records(
    rows: Iterable[tuple[int, dict]], *, max_chars: int, benchmark: str | None = None
) -> Iterator[ItemRecord | LineError]:
    """Check objects one at a time, yielding each record or its errors (a duplicate uid: an error on the later line)."""
    first_line: dict[str, int] = {}
    for line, obj in rows:
        parsed = parse_record(line, obj, max_chars=max_chars, benchmark=benchmark)
        if isinstance(parsed, list):
            yield from parsed
            continue
        if parsed.uid in first_line:
            yield LineError(
                line,
                "uid",
                _("duplicate uid %(uid)s (first on line %(line)s)")
                % {"uid": repr(parsed.uid), "line": first_line[parsed.uid]},
            )
            continue
        first_line[parsed.uid] = line
        yield parsed


def parse_records(
    rows: Iterable[tuple[int, dict]], *, max_chars: int, benchmark: str | None = None
) -> tuple[list[ItemRecord], list[LineError]]:
    """Check many objects; duplicate uids within one file are errors on the later line."""
    records: list[ItemRecord] = []
    errors: list[LineError] = []
    for checked in check_records(rows, max_chars=max_chars, benchmark=benchmark):
        (errors if isinstance(checked, LineError) else records).append(checked)
    return records, errors


def dump_lines(records: Iterable[dict]) -> Iterator[str]:
    """Yield records one per line in canonical form, as ``dump_jsonl`` writes them, without joining them."""
    for record in records:
        yield canonical_json(record) + "\n"


def dump_jsonl(records: Iterable[dict]) -> str:
    """Serialise records one per line in canonical form (sorted keys, UTF-8 kept)."""
    return "".join(canonical_json(record) + "\n" for record in records)
