"""Parsers turn a reply into a result, registered by name so that background tasks can refer to them by id.

A parser takes the reply text and the raw reply JSON and returns a JSON-serialisable value, or raises
``ParseError``; the call is then kept with its raw text, marked unparsed, and sent again up to the run's limit.
Apps register their own parsers with ``@register("app.name")`` in a module imported from ``AppConfig.ready``.
"""

import json
import re
from collections.abc import Callable

from django.utils.translation import gettext as _

from core.inputs import json_too_deep_at, nul_path

# JSON from an endpoint nested deeper than this is refused before parsing (Python's parser would overflow its stack).
REPLY_MAX_DEPTH = 512

Parser = Callable[[str, dict], object]

_REGISTRY: dict[str, Parser] = {}


class ParseError(ValueError):
    """The reply does not have the shape the caller asked for."""


def register(name: str) -> Callable[[Parser], Parser]:
    """Register a parser under ``name`` (a decorator); a name can be registered only once."""

    def decorator(function: Parser) -> Parser:
        if name in _REGISTRY and _REGISTRY[name] is not function:
            raise ValueError(f"a parser named {name!r} is already registered")
        _REGISTRY[name] = function
        return function

    return decorator


def get(name: str) -> Parser:
    """Return the parser registered as ``name``; raise ``KeyError`` with the known names if there is none."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown parser {name!r}; known: {', '.join(sorted(_REGISTRY))}") from None


def names() -> list[str]:
    """Return the registered parser names, sorted."""
    return sorted(_REGISTRY)


@register("text")
def parse_text(text: str, response: dict) -> str:
    """Accept any non-empty reply as it is."""
    if not text.strip():
        raise ParseError("the reply is empty")
    return text


FENCE_RE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


@register("json")
def parse_json(text: str, response: dict) -> object:
    """Read a JSON object or array, allowing a Markdown code fence or prose around it."""
    candidates = [m.group(1) for m in FENCE_RE.finditer(text)] + [text]
    for candidate in candidates:
        candidate = candidate.strip()
        try:
            return _loads(candidate)
        except ValueError:
            pass
        starts = [i for i in (candidate.find("{"), candidate.find("[")) if i >= 0]
        if not starts:
            continue
        start = min(starts)
        closing = "}" if candidate[start] == "{" else "]"
        end = candidate.rfind(closing)
        if end > start:
            try:
                return _loads(candidate[start : end + 1])
            except ValueError:
                pass
    raise ParseError("the reply holds no valid JSON object or array")


def _loads(text: str) -> object:
    """``json.loads`` for a model's text: too deep or holding a NUL character is a ValueError, like bad JSON."""
    if json_too_deep_at(text, REPLY_MAX_DEPTH) is not None:
        raise ValueError(f"JSON nested more than {REPLY_MAX_DEPTH} levels deep")
    value = json.loads(text)
    if nul_path(value) is not None:
        raise ValueError("JSON holding a NUL character")
    return value


ANSWER_RE = re.compile(r"(?:answer|choice|option|答案|选项|选择)\s*(?:is|:|：|为|是)?\s*\(?\[?([A-L])\b", re.IGNORECASE)
LONE_LETTER_RE = re.compile(r"^\W*([A-L])\W*$", re.IGNORECASE)


@register("mcq_letter")
def parse_mcq_letter(text: str, response: dict) -> dict:
    """Read the chosen option letter (A-L) from "Answer: B", "答案：B" or a lone "B"."""
    if m := ANSWER_RE.search(text):
        return {"letter": m.group(1).upper()}
    first_line = text.strip().splitlines()[0] if text.strip() else ""
    if m := LONE_LETTER_RE.match(first_line):
        return {"letter": m.group(1).upper()}
    raise ParseError("no option letter found")


VERDICT_RE = re.compile(r"\[\[\s*(A|B|TIE|C)\s*\]\]\s*(\+{1,5})?", re.IGNORECASE)


@register("judge_verdict")
def parse_judge_verdict(text: str, response: dict) -> dict:
    """Read a pairwise verdict ``[[A]] +++`` / ``[[B]] +`` / ``[[TIE]]`` (the last one in the reply counts).

    Return the winner ("A", "B" or "tie"), the margin (1 to 5 pluses; 0 for a tie) and the text before it.
    """
    matches = list(VERDICT_RE.finditer(text))
    if not matches:
        raise ParseError("no verdict like [[A]] ++ found")
    m = matches[-1]
    label = m.group(1).upper()
    if label in {"TIE", "C"}:
        return {"winner": "tie", "margin": 0, "reasoning": text[: m.start()].strip()}
    if not m.group(2):
        raise ParseError("the verdict has no margin (+ to +++++)")
    return {"winner": label, "margin": len(m.group(2)), "reasoning": text[: m.start()].strip()}


BYTES_PREFIX = "bytes:"
_ESCAPED_BYTE_RE = re.compile(r"\\x([0-9a-fA-F]{2})|\\\\|.", re.DOTALL)


def token_bytes(token: str) -> bytes:
    """Return the bytes a reported token stands for.

    A token that is not valid UTF-8 on its own (part of a character) is reported as ``bytes:`` followed by its
    bytes, ``\\xNN`` escaped (OpenAI: ``bytes:\\xe6\\x84``; printable ASCII such as a leading space may appear
    as itself); any other token is its text in UTF-8.
    """
    if not token.startswith(BYTES_PREFIX):
        return token.encode("utf-8")
    parts = []
    for m in _ESCAPED_BYTE_RE.finditer(token, len(BYTES_PREFIX)):
        if m.group(1):
            parts.append(bytes([int(m.group(1), 16)]))
        else:
            parts.append(b"\\" if m.group(0) == "\\\\" else m.group(0).encode("utf-8"))
    return b"".join(parts)


@register("logprobs")
def parse_logprobs(text: str, response: dict) -> dict:
    """Read per-token log-probabilities of a legacy completions reply (``echo`` with ``logprobs``).

    ``text_offset`` (each token's character offset in the echoed text) is kept when the server gives it; it
    must then line up with the tokens, because scoring a continuation depends on it.
    """
    try:
        logprobs = response["choices"][0]["logprobs"]
        tokens = list(logprobs["tokens"])
        values = list(logprobs["token_logprobs"])
        offsets = list(logprobs.get("text_offset") or [])
    except (AttributeError, KeyError, IndexError, TypeError) as exc:
        raise ParseError("the reply has no token log-probabilities (does the server support echo?)") from exc
    if len(tokens) != len(values) or not tokens:
        raise ParseError("tokens and log-probabilities do not line up")
    if offsets and len(offsets) != len(tokens):
        raise ParseError(_("The tokens and their text offsets do not line up."))
    known = [float(v) for v in values if v is not None]
    if not known:
        raise ParseError("no token has a log-probability")
    return {
        "tokens": tokens,
        "token_logprobs": values,
        "text_offset": offsets,
        "sum": sum(known),
        "mean": sum(known) / len(known),
    }
