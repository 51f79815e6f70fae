"""The API's request parsers (``REST_FRAMEWORK["DEFAULT_PARSER_CLASSES"]``): DRF's, with the input limits of
``core.inputs`` (JSON depth, NUL characters) answered as a 400 that names the body or the field."""

import codecs

from django.http import QueryDict
from rest_framework import parsers
from rest_framework.exceptions import ParseError
from rest_framework.settings import api_settings
from rest_framework.utils import json

from core.inputs import NUL, InputRefused, nul_reason, nul_sentence, parse_json


def _refused(exc: InputRefused) -> ParseError:
    return ParseError({"detail": str(exc), "code": exc.code, **({"field": exc.field} if exc.field else {})})


def _refuse_nul_in_form(data: QueryDict) -> None:
    for key, values in data.lists():
        if NUL in key or any(isinstance(value, str) and NUL in value for value in values):
            field = key.replace(NUL, "\\u0000")
            raise _refused(InputRefused(nul_sentence(field), reason=nul_reason(), code="nul_character", field=field))


class JSONParser(parsers.JSONParser):
    """Parse a JSON body, refusing one nested deeper than ``JSON_MAX_DEPTH`` or holding a NUL in any text."""

    def parse(self, stream: object, media_type: str | None = None, parser_context: dict | None = None) -> object:
        encoding = parsers.get_encoding(parser_context or {})
        try:
            text = codecs.getreader(encoding)(stream).read()
            constant = json.strict_constant if api_settings.STRICT_JSON else None
            return parse_json(text, parse_constant=constant)
        except InputRefused as exc:
            raise _refused(exc) from exc
        except ValueError as exc:
            # DRF's own wording for malformed JSON.
            raise ParseError(f"JSON parse error - {exc}") from exc


class FormParser(parsers.FormParser):
    """Parse a URL-encoded form, refusing a NUL character in any field."""

    def parse(self, stream: object, media_type: str | None = None, parser_context: dict | None = None) -> QueryDict:
        data = super().parse(stream, media_type, parser_context)
        _refuse_nul_in_form(data)
        return data


class MultiPartParser(parsers.MultiPartParser):
    """Parse a multipart form, refusing a NUL character in any field (uploaded files are checked by their import)."""

    def parse(
        self, stream: object, media_type: str | None = None, parser_context: dict | None = None
    ) -> parsers.DataAndFiles:
        result = super().parse(stream, media_type, parser_context)
        _refuse_nul_in_form(result.data)
        return result
