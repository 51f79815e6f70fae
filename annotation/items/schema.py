"""The published item schema (``docs/item-schema.json``) as the importer applies it (pure, no ORM).

Every interchange record is validated with the schema first; its errors become line errors naming the field, worded
like the rest of the importer's. The schema states the default text limit (20,000 characters); the app serves and
applies it with the instance's ``ITEM_MAX_TEXT_CHARS`` instead (``item_schema``).
"""

import json
from functools import lru_cache
from pathlib import Path

import jsonschema_rs
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError as SchemaError

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "docs" / "item-schema.json"
SCHEMA_MAX_CHARS = 20000
# The wording of every error of these fields, whichever rule of the schema the value breaks.
FIELD_MESSAGES = {
    "crisis_level": gettext_noop("must be an integer from 1 to 5 or null, got %(value)s"),
    "answer": gettext_noop("must be a 0-based option index (integer from 0 to 11) or null, got %(value)s"),
    "revision": gettext_noop("must be a revision number (an integer from 1), got %(value)s"),
}


def _with_limit(node: object, max_chars: int) -> object:
    if isinstance(node, dict):
        return {
            k: (max_chars if k == "maxLength" and v == SCHEMA_MAX_CHARS else _with_limit(v, max_chars))
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_with_limit(v, max_chars) for v in node]
    return node


@lru_cache(maxsize=4)
def _schema_text(max_chars: int) -> str:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return json.dumps(_with_limit(schema, max_chars), ensure_ascii=False, indent=2) + "\n"


def item_schema(max_chars: int = SCHEMA_MAX_CHARS) -> dict:
    """Return the published schema with texts limited to ``max_chars`` characters."""
    return json.loads(_schema_text(max_chars))


def item_schema_text(max_chars: int = SCHEMA_MAX_CHARS) -> str:
    """Return the schema as the app serves it (``/schema/item.json``)."""
    return _schema_text(max_chars)


@lru_cache(maxsize=4)
def _validator(max_chars: int) -> Draft202012Validator:
    return Draft202012Validator(item_schema(max_chars))


@lru_cache(maxsize=4)
def _fast_validator(max_chars: int) -> object:
    # jsonschema-rs: 4 µs a record where ``jsonschema`` takes 470 µs (100,000 records: 0.4 s, not 47 s).
    return jsonschema_rs.validator_for(item_schema(max_chars))


def _conforms(record: object, max_chars: int) -> bool | None:
    """Return whether ``record`` conforms, by the fast validator; None when it cannot say (an integer too large)."""
    try:
        return _fast_validator(max_chars).is_valid(record)
    except (ValueError, OverflowError, TypeError):
        return None


def field_name(path: list) -> str:
    """Return ``content.en.turns[0].options[1]`` for the path ``["content", "en", "turns", 0, "options", 1]``."""
    name = ""
    for part in path:
        name += f"[{part}]" if isinstance(part, int) else (f".{part}" if name else str(part))
    return name or "record"


def _type_name(value: object) -> str:
    return "null" if value is None else type(value).__name__


def _message(error: SchemaError, key: str) -> str:
    """Return the reader's wording of a schema error at the field ``key`` (the schema's message as a last resort)."""
    value, limit, keyword = error.instance, error.validator_value, error.validator
    if keyword == "const":
        return _("unsupported format %(format)s; expected %(expected)s") % {
            "format": repr(value),
            "expected": repr(limit),
        }
    if keyword == "enum":
        return _("must be one of %(choices)s, got %(value)s") % {
            "choices": ", ".join(repr(c) if c == "" else str(c) for c in limit),
            "value": repr(value),
        }
    return (
        _field_message(key, value)
        or _size_message(keyword, key, value, limit)
        or _type_message(keyword, value, limit)
        or error.message
    )


def _field_message(key: str, value: object) -> str | None:
    """Return the wording for a field whose every error reads alike (a crisis level, an answer, a revision)."""
    return _(FIELD_MESSAGES[key]) % {"value": repr(value)} if key in FIELD_MESSAGES else None


def _size_message(keyword: str, key: str, value: object, limit: object) -> str | None:
    """Return the wording for too few or too many options or turns, too long or empty text."""
    if keyword in ("minItems", "maxItems") and key in ("options",):
        return _("needs %(min)s to %(max)s options, got %(n)s") % {"min": 2, "max": 12, "n": len(value)}
    if keyword in ("minItems", "maxItems") and key == "turns":
        return _("needs 1 to %(max)s turns, got %(n)s") % {"max": 20, "n": len(value)}
    if keyword == "maxLength":
        return _("text too long: %(n)s characters (limit %(max)s)") % {"n": len(value), "max": limit}
    if keyword == "pattern" and key == "uid":
        return _("must be at most %(max)s characters without spaces") % {"max": 100}
    if keyword in ("pattern", "minLength"):
        return _("must not be empty or only white space")
    return None


def _type_message(keyword: str, value: object, limit: object) -> str | None:
    """Return the wording for a value of the wrong type: text, a list or an object expected."""
    if keyword != "type":
        return None
    if limit in ("string", ["string", "null"]):
        return _("must be text, got %(type)s") % {"type": _type_name(value)}
    if limit == "array":
        return _("must be a list, got %(type)s") % {"type": _type_name(value)}
    if limit == "object":
        return _("must be an object, got %(type)s") % {"type": _type_name(value)}
    return None


REQUIRED = {
    "uid": lambda: _("required text"),
    "benchmark": lambda: _("required benchmark slug (or pass --benchmark)"),
    "dimension": lambda: _("required dimension code"),
    "kind": lambda: _("required: one of mcq, multi_turn_choice, open_prompt"),
    "content": lambda: _("required object keyed by language (en, zh)"),
}


def _errors(error: SchemaError) -> list[tuple[str, str]]:
    path = list(error.absolute_path)
    if error.validator == "required":
        present = error.instance if isinstance(error.instance, dict) else {}
        return [
            (field_name([*path, name]), REQUIRED[name]() if not path and name in REQUIRED else _("required field"))
            for name in error.validator_value
            if name not in present
        ]
    if error.validator == "additionalProperties":
        allowed = set(error.schema.get("properties", {}))
        unknown = _("unknown language; expected en or zh") if path == ["content"] else _("unknown field")
        return [(field_name([*path, name]), unknown) for name in error.instance if name not in allowed]
    key = next((p for p in reversed(path) if isinstance(p, str)), "")
    return [(field_name(path), _message(error, key))]


def schema_errors(record: object, *, max_chars: int) -> list[tuple[str, str]]:
    """Return (field, message) for every way ``record`` breaks the published schema (empty when it conforms).

    A conforming record is recognised by jsonschema-rs; the errors of any other are worded from ``jsonschema``'s
    (both implement draft 2020-12; should they ever disagree, the refusal stands, in jsonschema-rs's words).
    """
    conforms = _conforms(record, max_chars)
    if conforms:
        return []
    found: list[tuple[str, str]] = []
    for error in _validator(max_chars).iter_errors(record):
        for problem in _errors(error):
            if problem not in found:
                found.append(problem)
    if not found and conforms is False:
        found = [(field_name(list(e.instance_path)), e.message) for e in _fast_validator(max_chars).iter_errors(record)]
    return found


def integral(value: object) -> object:
    """Return ``value`` with every integral number written as a float (``2.0``) made an int.

    JSON has one number type: the schema's ``integer`` accepts ``2.0``, so the importer stores it as ``2``. Applied
    to the numeric fields only (``crisis_level``, ``revision``, the content's answer keys), never to metadata.
    """
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: integral(v) for k, v in value.items()}
    if isinstance(value, list):
        return [integral(v) for v in value]
    return value
