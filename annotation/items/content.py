"""Bilingual item content: shape validation, parity checks and hashing (pure, no ORM).

Content is a mapping from language code to that language's version of the item:

- ``mcq``: ``{"context": str, "question": str, "options": [str, ...], "answer": int}``
- ``multi_turn_choice``: ``{"context": str, "turns": [{"user": str, "options": [str, ...], "answer": int}, ...]}``
- ``open_prompt``: ``{"context": str, "prompt": str}``

Answer keys are 0-based option indices and belong to each language, because option order may differ.
Shape errors (wrong types, unknown fields, oversize text, a NUL character) make content unusable and are refused.
Parity issues (a language missing, versions that disagree structurally, a missing or out-of-range key)
are real states of work in progress: they are stored with the revision and shown to experts.
"""

import hashlib
import re
from dataclasses import asdict, dataclass
from functools import partial

from django.utils.translation import gettext as _

from core.canonical import canonical_json
from core.inputs import NUL, nul_reason

LANGUAGES = ("en", "zh")
LANGUAGE_NAMES = {"en": "English", "zh": "Chinese"}
KINDS = ("mcq", "multi_turn_choice", "open_prompt")

FIELDS = {
    "mcq": {"context", "question", "options", "answer"},
    "multi_turn_choice": {"context", "turns"},
    "open_prompt": {"context", "prompt"},
}
TURN_FIELDS = {"user", "options", "answer"}
MIN_OPTIONS = 2
MAX_OPTIONS = 12
MAX_TURNS = 20


@dataclass(frozen=True)
class ContentError:
    """A refused piece of content: where it is and what is wrong."""

    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


@dataclass(frozen=True)
class ParityIssue:
    """A stored problem of bilingual parity, shown next to the item."""

    code: str
    message: str
    language: str | None = None
    params: dict | None = None

    def as_dict(self) -> dict:
        """Return a JSON-serialisable dict."""
        return asdict(self)


def validate_content(kind: str, content: object, *, max_chars: int) -> list[ContentError]:
    """Return every shape error in ``content`` for an item of ``kind`` (empty when usable)."""
    if kind not in KINDS:
        return [
            ContentError(
                "kind",
                _("unknown kind %(kind)s; expected one of %(kinds)s") % {"kind": repr(kind), "kinds": ", ".join(KINDS)},
            )
        ]
    if not isinstance(content, dict):
        return [ContentError("content", _("must be an object keyed by language (en, zh)"))]
    errors: list[ContentError] = []
    for lang in content:
        if lang not in LANGUAGES:
            errors.append(ContentError(f"content.{lang}", _("unknown language; expected en or zh")))
    for lang in LANGUAGES:
        version = content.get(lang)
        if version is None:
            continue
        errors.extend(_validate_version(kind, version, f"content.{lang}", max_chars))
    return errors


def _validate_version(kind: str, version: object, path: str, max_chars: int) -> list[ContentError]:
    if not isinstance(version, dict):
        return [ContentError(path, _("must be an object"))]
    errors: list[ContentError] = []
    if infer_kind(version) == kind:
        unknown = _("unknown field for a %(kind)s item") % {"kind": kind}
        errors += [ContentError(f"{path}.{key}", unknown) for key in version if key not in FIELDS[kind]]
    return errors + _check_fields(version, VERSION_CHECKS, path, max_chars)


def _check_fields(fields: dict, checked: tuple[str, ...], path: str, max_chars: int) -> list[ContentError]:
    """Check the fields named in ``checked`` that ``fields`` holds, in that order (``FIELD_CHECKS``)."""
    errors: list[ContentError] = []
    for key in checked:
        if key in fields:
            errors += FIELD_CHECKS[key](fields[key], f"{path}.{key}", max_chars)
    return errors


def _check_turns(turns: object, path: str, max_chars: int) -> list[ContentError]:
    if not isinstance(turns, list):
        return [ContentError(path, _("must be a list of turns"))]
    if len(turns) > MAX_TURNS:
        return [ContentError(path, _("at most %(max)s turns, got %(n)s") % {"max": MAX_TURNS, "n": len(turns)})]
    errors: list[ContentError] = []
    for i, turn in enumerate(turns):
        tpath = f"{path}[{i}]"
        if not isinstance(turn, dict):
            errors.append(ContentError(tpath, _("must be an object")))
            continue
        errors += [
            ContentError(f"{tpath}.{key}", _("unknown field for a turn")) for key in turn if key not in TURN_FIELDS
        ]
        errors += _check_fields(turn, TURN_CHECKS, tpath, max_chars)
    return errors


def _check_text(value: object, path: str, max_chars: int, *, allow_empty: bool) -> list[ContentError]:
    if not isinstance(value, str):
        return [ContentError(path, _("must be text, got %(type)s") % {"type": type(value).__name__})]
    if len(value) > max_chars:
        return [
            ContentError(
                path, _("text too long: %(n)s characters (limit %(max)s)") % {"n": len(value), "max": max_chars}
            )
        ]
    if not allow_empty and not value.strip():
        return [ContentError(path, _("must not be empty"))]
    if NUL in value:
        return [ContentError(path, nul_reason())]
    return []


def _check_options(value: object, path: str, max_chars: int) -> list[ContentError]:
    if not isinstance(value, list):
        return [ContentError(path, _("must be a list of option texts"))]
    if not MIN_OPTIONS <= len(value) <= MAX_OPTIONS:
        return [
            ContentError(
                path,
                _("needs %(min)s to %(max)s options, got %(n)s")
                % {"min": MIN_OPTIONS, "max": MAX_OPTIONS, "n": len(value)},
            )
        ]
    errors: list[ContentError] = []
    for i, option in enumerate(value):
        errors.extend(_check_text(option, f"{path}[{i}]", max_chars, allow_empty=False))
    return errors


def _check_answer_type(value: object, path: str, max_chars: int = 0) -> list[ContentError]:
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return []
    message = _("must be a 0-based option index (integer) or null, got %(value)s") % {"value": repr(value)}
    return [ContentError(path, message)]


# How each field of a language version and of a turn is checked: ``check(value, path, max_chars)``. The fields of a
# version and of a turn are checked in the order of ``VERSION_CHECKS`` and ``TURN_CHECKS``, and so are their errors.
FIELD_CHECKS = {
    "context": partial(_check_text, allow_empty=True),
    "question": partial(_check_text, allow_empty=False),
    "prompt": partial(_check_text, allow_empty=False),
    "user": partial(_check_text, allow_empty=False),
    "options": _check_options,
    "answer": _check_answer_type,
    "turns": _check_turns,
}
VERSION_CHECKS = ("context", "question", "prompt", "options", "answer", "turns")
TURN_CHECKS = ("user", "options", "answer")


def infer_kind(version: dict) -> str | None:
    """Guess which kind a language version is shaped like, from its fields."""
    if "turns" in version:
        return "multi_turn_choice"
    if "options" in version or "question" in version:
        return "mcq"
    if "prompt" in version:
        return "open_prompt"
    return None


def check_parity(kind: str, content: dict) -> list[ParityIssue]:
    """Return the bilingual parity issues of shape-valid ``content`` (empty when both languages agree)."""
    present = [lang for lang in LANGUAGES if content.get(lang)]
    issues = [
        ParityIssue("missing_language", f"The {LANGUAGE_NAMES[lang]} version is missing.", lang, {})
        for lang in LANGUAGES
        if lang not in present
    ]
    shape_issues = _shape_issues(kind, content, present)
    issues += shape_issues
    if shape_issues:
        return issues
    for lang in present:
        issues.extend(_required_fields(kind, content[lang], lang))
    if kind == "mcq":
        issues += _mcq_parity(content, present)
    elif kind == "multi_turn_choice":
        issues += _turns_parity(content, present)
    return issues


def _shape_issues(kind: str, content: dict, present: list[str]) -> list[ParityIssue]:
    """Return a kind mismatch for each language version not shaped like ``kind``."""
    issues = []
    for lang in present:
        shape = infer_kind(content[lang])
        if shape != kind:
            issues.append(
                ParityIssue(
                    "kind_mismatch",
                    f"The {LANGUAGE_NAMES[lang]} version is shaped like {shape or 'nothing known'}, "
                    f"but the item is {kind}.",
                    lang,
                    {"shape": shape or "", "kind": kind},
                )
            )
    return issues


def _mcq_parity(content: dict, present: list[str]) -> list[ParityIssue]:
    """Return the answers out of range and a difference in the number of options between languages."""
    issues = []
    for lang in present:
        issues.extend(_answer_issue(content[lang], lang, "answer"))
    counts = {lang: len(content[lang].get("options") or []) for lang in present}
    if len(set(counts.values())) > 1:
        message = _counts_message("options", counts)
        issues.append(ParityIssue("option_count_mismatch", message, None, {"counts": counts}))
    return issues


def _turns_parity(content: dict, present: list[str]) -> list[ParityIssue]:
    """Return differences in the number of turns and of each turn's options between languages, and bad answers."""
    issues = []
    turns = {lang: content[lang].get("turns") or [] for lang in present}
    counts = {lang: len(t) for lang, t in turns.items()}
    if len(set(counts.values())) > 1:
        issues.append(ParityIssue("turn_count_mismatch", _counts_message("turns", counts), None, {"counts": counts}))
    for lang, lang_turns in turns.items():
        for i, turn in enumerate(lang_turns):
            issues.extend(_answer_issue(turn, lang, f"turn {i + 1} answer"))
    for i in range(min(counts.values(), default=0)):
        per_turn = {lang: len(turns[lang][i].get("options") or []) for lang in present}
        if len(set(per_turn.values())) > 1:
            issues.append(
                ParityIssue(
                    "option_count_mismatch",
                    _counts_message(f"options in turn {i + 1}", per_turn),
                    None,
                    {"counts": per_turn, "turn": i + 1},
                )
            )
    return issues


def _required_fields(kind: str, version: dict, lang: str) -> list[ParityIssue]:
    required = {"mcq": ("question", "options"), "multi_turn_choice": ("turns",), "open_prompt": ("prompt",)}[kind]
    issues = []
    for key in required:
        if not version.get(key):
            issues.append(
                ParityIssue("missing_field", f"The {LANGUAGE_NAMES[lang]} version has no {key}.", lang, {"field": key})
            )
    if kind == "multi_turn_choice":
        for i, turn in enumerate(version.get("turns") or []):
            for key in ("user", "options"):
                if not turn.get(key):
                    issues.append(
                        ParityIssue(
                            "missing_field",
                            f"The {LANGUAGE_NAMES[lang]} turn {i + 1} has no {key}.",
                            lang,
                            {"field": key, "turn": i + 1},
                        )
                    )
    return issues


def _answer_issue(version: dict, lang: str, label: str) -> list[ParityIssue]:
    answer = version.get("answer")
    n_options = len(version.get("options") or [])
    if answer is None:
        return [
            ParityIssue("missing_answer", f"The {LANGUAGE_NAMES[lang]} {label} key is missing.", lang, {"label": label})
        ]
    if not 0 <= answer < n_options:
        return [
            ParityIssue(
                "answer_out_of_range",
                f"The {LANGUAGE_NAMES[lang]} {label} key {answer} is out of range (0 to {n_options - 1}).",
                lang,
                {"label": label, "answer": answer, "max": n_options - 1},
            )
        ]
    return []


def _counts_message(what: str, counts: dict[str, int]) -> str:
    parts = ", ".join(f"{LANGUAGE_NAMES[lang]} {n}" for lang, n in counts.items())
    return f"The languages have different numbers of {what}: {parts}."


def content_hash(content: dict, attributes: dict) -> str:
    """Return the SHA-256 of the canonical form of an item state."""
    payload = canonical_json({"attributes": attributes, "content": content})
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def normalise_content(kind: str, content: dict) -> dict:
    """Drop empty languages and fill optional fields so equal items serialise equally."""
    result = {}
    for lang in LANGUAGES:
        version = content.get(lang)
        if not version:
            continue
        version = dict(version)
        version.setdefault("context", "")
        if kind == "mcq":
            version.setdefault("answer", None)
        if kind == "multi_turn_choice":
            version["turns"] = [{"answer": None, **turn} for turn in version.get("turns") or []]
        result[lang] = version
    return result


def searchable_text(content: dict) -> str:
    """Return all text of an item's content in its search form (``search_form``), for substring search."""
    parts: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, list):
            for v in value:
                walk(v)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)

    walk(content)
    return search_form("\n".join(parts))


def search_form(text: str) -> str:
    """Return ``text`` as search_text stores it and a query is matched against it: case-folded, Han spelled out.

    Each Han character spelled as ASCII lets one trigram index serve English and Chinese substrings of any length;
    folding case when written makes the match a plain (case-sensitive) LIKE, three times cheaper per row to check
    than comparing UPPER() of both sides (docs/performance.md).
    """
    return cjk_search_form(text).casefold()


CJK_CHAR = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]")


def cjk_search_form(text: str) -> str:
    """Return ``text`` with every Han character written as ``z`` and five hex digits of its code point.

    Trigram indexes in the C locale skip non-ASCII characters, and a Chinese query of one or two characters has no
    trigram at all; spelled out, one character is six ASCII letters and digits, enough for an indexed lookup.
    """
    return CJK_CHAR.sub(lambda m: f"z{ord(m.group()):05x}", text)


def prose_text(version: dict | None) -> str:
    """Return the scenario and question text of one language version (options excluded), for similarity."""
    if not version:
        return ""
    parts = [version.get("context", ""), version.get("question", ""), version.get("prompt", "")]
    parts += [turn.get("user", "") for turn in version.get("turns") or []]
    return "\n".join(p for p in parts if p)
