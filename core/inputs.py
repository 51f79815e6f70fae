"""Limits on what users send, shared by pages, the API and imports: JSON depth, NUL characters, body size.

- JSON is checked for depth before it is parsed, by an iterative scan of its brackets outside strings, so a
  document nested 100,000 deep is refused with a message instead of exhausting the parser's recursion.
- NUL (``\\u0000``) cannot be stored in PostgreSQL text or ``jsonb``; text holding one is refused, naming where it
  is (a dotted path such as ``content.en.options[2]``; ``$`` for the whole document).
- A request body over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` is answered 413: JSON on ``/api/`` (``core.api_errors``), a
  page elsewhere (``InputLimitsMiddleware``).

The limits are settings read when used: ``JSON_MAX_DEPTH`` and Django's ``DATA_UPLOAD_MAX_MEMORY_SIZE``.
"""

import json
import re
from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.translation import gettext as _

NUL = "\x00"
# The largest id a database column holds (a signed 64-bit integer); a bigger number matches no row.
ID_MAX = 2**63 - 1
# The last page a ``?page=`` reaches; a bigger number is that page (empty), never an offset the database refuses.
PAGE_MAX = 1_000_000
_DIGITS = re.compile(r"[0-9]+")
_SURROGATE = re.compile("[\ud800-\udfff]")
ROOT = "$"
_STRUCTURE = re.compile(r'["\\\[\]{}]')


class InputRefused(ValueError):
    """Input the app does not accept. ``str()`` is a sentence for the API and pages; ``reason`` is the fragment
    that follows a line and field in an import error; ``field`` is where the input is at fault ("" if nowhere)."""

    def __init__(self, sentence: str, *, reason: str, code: str, field: str = "") -> None:
        super().__init__(sentence)
        self.reason = reason
        self.code = code
        self.field = field


def whole_number(value: str | None, *, maximum: int = ID_MAX) -> int | None:
    """Return ``value`` as an int if it is ASCII digits no bigger than ``maximum`` (an id by default), else None.

    ``str.isdigit`` accepts ``"²"`` and numbers of any length, which ``int()`` or the database then refuse with an
    exception; this never raises.
    """
    if value is None or not _DIGITS.fullmatch(value):
        return None
    digits = value.lstrip("0") or "0"
    if len(digits) > len(str(maximum)):
        return None
    number = int(digits)
    return number if number <= maximum else None


def page_number(value: str | None) -> int | None:
    """Return the page ``?page=`` asks for: 1 when absent, at most ``PAGE_MAX``; None unless whole and from 1."""
    if value is None or value == "":
        return 1
    if not _DIGITS.fullmatch(value) or not value.strip("0"):
        return None
    return whole_number(value, maximum=PAGE_MAX) or PAGE_MAX


def json_too_deep_at(text: str, limit: int) -> int | None:
    """Return the offset of the first bracket nesting ``text`` deeper than ``limit``, or None; never recurses."""
    if text.count("[") + text.count("{") <= limit:
        return None
    depth, in_string, escaped = 0, False, -1
    for match in _STRUCTURE.finditer(text):
        position, char = match.start(), match.group()
        if in_string:
            if position == escaped:
                continue
            if char == "\\":
                escaped = position + 1
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limit:
                return position
        elif char in "]}":
            depth -= 1
    return None


def nul_path(value: object) -> str | None:
    """Return where the first text (or object key) holding a NUL character is in ``value``, or None.

    The path is dotted, with list indexes in brackets (``content.en.options[2]``); ``$`` is ``value`` itself.
    """
    return _path_of(value, lambda text: NUL in text)


def surrogate_path(value: object) -> str | None:
    """Return where the first text (or key) holding a lone surrogate (``\\ud800``..``\\udfff``) is, or None.

    JSON's ``\\ud800`` escape parses into a code point that UTF-8 (the database's encoding) cannot hold.
    """
    return _path_of(value, lambda text: _SURROGATE.search(text) is not None)


def _path_of(value: object, holds: Callable[[str], bool]) -> str | None:
    stack: list[tuple[object, str]] = [(value, "")]
    while stack:
        current, path = stack.pop()
        if isinstance(current, str):
            if holds(current):
                return path or ROOT
        elif isinstance(current, dict):
            children = []
            for key, child in current.items():
                child_path = f"{path}.{key}" if path else str(key)
                if holds(str(key)):
                    return _printable(child_path)
                children.append((child, child_path))
            stack.extend(reversed(children))
        elif isinstance(current, list | tuple):
            stack.extend(reversed([(child, f"{path or ROOT}[{i}]") for i, child in enumerate(current)]))
    return None


def _printable(path: str) -> str:
    """Write NUL and lone surrogates in a path as JSON escapes, so the path can be shown and encoded."""
    path = path.replace(NUL, "\\u0000")
    return _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", path)


def refuse_surrogate(value: object, *, prefix: str = "") -> None:
    """Raise ``InputRefused`` naming the field if any text in ``value`` holds a lone surrogate."""
    path = surrogate_path(value)
    if path is not None:
        field = f"{prefix}.{path}" if prefix and path != ROOT else prefix or path
        reason = _("contains a lone surrogate (a \\ud800-\\udfff escape not in a pair), which is not text")
        raise InputRefused(
            _("The field %(field)s %(reason)s.") % {"field": field, "reason": reason},
            reason=reason,
            code="lone_surrogate",
            field=field,
        )


def nul_reason() -> str:
    """Return the refusal of text holding a NUL character, to follow the name of its field."""
    return _("contains a NUL character (\\u0000), which cannot be stored")


def nul_sentence(field: str) -> str:
    """Return the refusal of text holding a NUL character, naming the field."""
    return _("The field %(field)s contains a NUL character (\\u0000), which cannot be stored.") % {"field": field}


def refuse_nul(value: object, *, prefix: str = "") -> None:
    """Raise ``InputRefused`` naming the field (after ``prefix``) if any text in ``value`` holds a NUL character."""
    path = nul_path(value)
    if path is not None:
        field = f"{prefix}.{path}" if prefix and path != ROOT else prefix or path
        raise InputRefused(nul_sentence(field), reason=nul_reason(), code="nul_character", field=field)


def parse_json(text: str, *, max_depth: int | None = None, **loads_options: object) -> object:
    """Parse user JSON, refusing it if nested deeper than ``max_depth`` or if any text in it holds a NUL.

    Raises ``InputRefused`` for those (code ``too_deep`` or ``nul_character``; ``lone_surrogate`` for text holding
    a ``\\ud800``-style escape not in a pair, which no UTF-8 database stores) and ``json.JSONDecodeError`` for
    malformed JSON. A raw NUL byte in a string (invalid JSON) is reported as a NUL in its field too, so that the
    message says what to fix. ``max_depth`` defaults to the ``JSON_MAX_DEPTH`` setting.
    """
    limit = settings.JSON_MAX_DEPTH if max_depth is None else max_depth
    position = json_too_deep_at(text, limit)
    if position is not None:
        values = {"limit": limit, "position": position + 1}
        raise InputRefused(
            _("The request body is JSON nested more than %(limit)s levels deep (at character %(position)s).") % values,
            reason=_("JSON nested more than %(limit)s levels deep (at character %(position)s)") % values,
            code="too_deep",
        )
    try:
        value = json.loads(text, **loads_options)
    except json.JSONDecodeError:
        if NUL in text:
            try:
                lenient = json.loads(text, **{**loads_options, "strict": False})
            except json.JSONDecodeError:
                lenient = None
            refuse_nul(lenient)
        raise
    refuse_nul(value)
    refuse_surrogate(value)
    return value


def body_too_big_sentence() -> str:
    """Return the refusal of a request body over ``DATA_UPLOAD_MAX_MEMORY_SIZE``, naming the limit."""
    return _("The request body is over the %(limit)s-byte limit; send less at once.") % {
        "limit": settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    }


def _nul_in_request(request: HttpRequest) -> InputRefused | None:
    """Return the refusal of a request whose address, query or form fields hold a NUL character, if any."""
    if NUL in request.path:
        message = _("The address contains a NUL character (\\u0000), which is not accepted.")
        return InputRefused(message, reason=nul_reason(), code="nul_character")
    # request.POST is empty, without reading the body, unless the request is a POST of a form.
    for data in (request.GET, request.POST):
        for key, values in data.lists():
            if NUL in key or any(NUL in value for value in values):
                field = key.replace(NUL, "\\u0000")
                return InputRefused(nul_sentence(field), reason=nul_reason(), code="nul_character", field=field)
    return None


class CookieNulMiddleware:
    """Drop, before the session is read, any cookie whose name or value holds a NUL character.

    No cookie the app sets can hold one; a crafted session cookie would otherwise reach the session table's query,
    which PostgreSQL answers with an error (a 500). Without the cookie the request is simply not signed in.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if any(NUL in name or NUL in value for name, value in request.COOKIES.items()):
            request.COOKIES = {n: v for n, v in request.COOKIES.items() if NUL not in n and NUL not in v}
        return self.get_response(request)


class InputLimitsMiddleware:
    """Refuse, before any view, a request with a NUL character in its address, query or form fields (400), or a
    form body over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` (413): as JSON on ``/api/``, as a page elsewhere.

    Reading the form here means nothing downstream (the CSRF check, views, the database) meets these as a generic
    400 page or a 500. JSON bodies are checked by the API's parsers (``core.parsers``).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            refusal = _nul_in_request(request)
        except RequestDataTooBig:
            # As Django's own handler does, so that nothing on the way out reads the refused body again.
            request._mark_post_parse_error()
            refusal = InputRefused(body_too_big_sentence(), reason="", code="too_large")
            return _refusal(request, refusal, status=413)
        if refusal is not None:
            return _refusal(request, refusal, status=400)
        return self.get_response(request)


def _refusal(request: HttpRequest, refusal: InputRefused, *, status: int) -> HttpResponse:
    if request.path_info.startswith("/api/"):
        body = {"detail": str(refusal), "code": refusal.code, **({"field": refusal.field} if refusal.field else {})}
        return JsonResponse(body, status=status)
    return render(request, "input_refused.html", {"message": str(refusal)}, status=status)
