"""The OpenAPI schema's error answers, declared once for every operation (``DEFAULT_SCHEMA_CLASS``).

Every view answers errors the same way (``core.api_errors``), so the schema declares them here rather than view by
view: ``401`` (a token sent and refused) and ``403`` (no credentials, or a role without the permission) for every
operation that needs a signed-in user; ``404`` for an operation with an id in its path or query (a paginated
list: a page past the last); ``400`` for one that reads a body or query parameters (a list refuses unknown ones:
``core.query_params``); ``409`` for a write that a state conflict can refuse; ``413`` for a body over
``DATA_UPLOAD_MAX_MEMORY_SIZE`` and ``415`` for one in a media type it does not read; ``429`` for a throttled
view. A status an operation's own ``extend_schema`` declares keeps its description, and gets the error body when it
declares none (``409: None``).

Fields are also described as they answer: a read-only field whose source crosses a nullable relation
(``created_by.username``) or that defaults to ``None`` is nullable, and a choice field of a model field that may be
blank (``difficulty``, ``error_kind``) lists ``""`` among its values.
"""

from django.core.exceptions import FieldDoesNotExist
from django.db import models
from drf_spectacular import openapi
from drf_spectacular.plumbing import ResolvedComponent
from rest_framework import serializers
from rest_framework.fields import empty
from rest_framework.permissions import AllowAny

from core.inputs import ID_MAX

DIGITS = frozenset({"^[0-9]+$", r"^\d+$"})
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})

ERROR = {
    "type": "object",
    "description": "An error: the reason, in the user's language, and a machine-readable code.",
    "properties": {"detail": {"type": "string"}, "code": {"type": "string"}},
    "required": ["detail"],
}
VALIDATION_ERROR = {
    "type": "object",
    "description": (
        "What was refused: each field of the body or query parameter with its messages (``non_field_errors`` for "
        "the body as a whole), or ``detail`` with a message or a list of them and a ``code``; an import adds "
        "``errors``, each with its line, field and message."
    ),
    "properties": {
        "detail": {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
        "code": {"type": "string"},
        "errors": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "line": {"type": "integer", "nullable": True},
                    "field": {"type": "string", "nullable": True},
                    "message": {"type": "string"},
                },
            },
        },
    },
    "additionalProperties": {},
}
STATUSES = {
    "400": ("The request was refused: see the fields named.", "ValidationError", VALIDATION_ERROR),
    "401": ("The API token sent is unknown, revoked or expired.", "Error", ERROR),
    "403": ("Not signed in, or the role may not do this: the detail says which roles may.", "Error", ERROR),
    "404": ("No such object, or no such page of the list.", "Error", ERROR),
    "409": ("The object's state does not allow this now.", "Error", ERROR),
    "413": ("The request body is too large.", "Error", ERROR),
    "415": ("The body's media type is not one the operation reads.", "Error", ERROR),
    "429": ("Too many requests: wait the seconds of Retry-After.", "Error", ERROR),
}


class AutoSchema(openapi.AutoSchema):
    """drf-spectacular's schema with the error answers of ``STATUSES`` added to each operation that can give them."""

    def _get_response_bodies(self, direction: str = "response") -> dict:
        responses = super()._get_response_bodies(direction)
        declared = {code for code in responses if code in STATUSES and not responses[code].get("content")}
        for code in sorted(declared | {code for code in self.error_statuses() if code not in responses}):
            description, name, schema = STATUSES[code]
            component = ResolvedComponent(name=name, type=ResolvedComponent.SCHEMA, schema=schema, object=name)
            self.registry.register_on_missing(component)
            responses[code] = {
                "content": {"application/json": {"schema": component.ref}},
                "description": responses.get(code, {}).get("description") or description,
            }
        return responses

    def error_statuses(self) -> list[str]:
        """Return the error statuses this operation can answer."""
        is_list = self._is_list_view() and self.method == "GET"
        has_query = is_list or any(getattr(p, "location", "query") == "query" for p in self.get_override_parameters())
        has_body = self.method in BODY_METHODS
        signed_in = not all(isinstance(permission, AllowAny) for permission in self.view.get_permissions())
        answers = (
            ("400", has_body or has_query or self.method == "DELETE"),
            ("401", signed_in),
            ("403", signed_in),
            # An id in the path or the query, or a page past the last.
            ("404", "{" in self.path or has_query),
            ("409", self.method in WRITE_METHODS),
            ("413", has_body),
            ("415", has_body),
            ("429", bool(self.view.get_throttles())),
        )
        return [code for code, answered in answers if answered]

    def _resolve_path_parameters(self, variables: list[str]) -> list[dict]:
        """Path ids the router takes as digits only (``core.routing.IntegerLookupRouter``) are integers."""
        parameters = super()._resolve_path_parameters(variables)
        for parameter in parameters:
            if parameter["schema"].get("pattern") in DIGITS:
                parameter["schema"] = {"type": "integer", "minimum": 0, "maximum": ID_MAX}
        return parameters

    def _map_serializer_field(self, field: serializers.Field, direction: str, bypass_extensions: bool = False) -> dict:
        # A component serves both directions unless split: read-only fields are described as they answer in both.
        if direction != "response" and not field.read_only:
            return super()._map_serializer_field(field, direction, bypass_extensions)
        saved = field.allow_null, getattr(field, "allow_blank", None)
        path = model_fields_along(field)
        if field.default is None or any(getattr(f, "null", False) for f in path):
            field.allow_null = True
        if isinstance(field, serializers.ChoiceField) and path and path[-1].blank and path[-1].choices:
            field.allow_blank = True
        try:
            return super()._map_serializer_field(field, direction, bypass_extensions)
        finally:
            field.allow_null = saved[0]
            if saved[1] is not None:
                field.allow_blank = saved[1]


def model_fields_along(field: serializers.Field) -> list[models.Field]:
    """Return the model fields ``field``'s source goes through, from its ``ModelSerializer``'s model (or [])."""
    model = getattr(getattr(field.parent, "Meta", None), "model", None)
    if model is None or field.source in (None, "*") or field.default is not empty and field.default is not None:
        return []
    found = []
    for attribute in field.source.split("."):
        try:
            model_field = model._meta.get_field(attribute)
        except FieldDoesNotExist:
            break
        if not model_field.concrete or model_field.many_to_many:
            break  # a reverse relation or a many-to-many (``entries.count``): no null along it
        found.append(model_field)
        model = model_field.related_model
        if model is None:
            break
    return found
