"""Unknown query parameters on the API's lists answer 400 naming them, instead of being ignored.

``?comparison_set=3`` where a list takes ``set`` used to return every row, which looks like an answer. The filter
backend ``KnownQueryParameters`` (``REST_FRAMEWORK["DEFAULT_FILTER_BACKENDS"]``) checks the query of every list
(``action == "list"``) against what the view declares: the query parameters of its ``extend_schema`` (the ones
the OpenAPI schema documents, so schema and check cannot disagree), the pagination's ``page`` and ``page_size``,
and DRF's ``format``.
"""

from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.filters import BaseFilterBackend
from rest_framework.request import Request
from rest_framework.settings import api_settings
from rest_framework.views import APIView


def declared_query_parameters(view: APIView, method: str = "GET") -> frozenset[str]:
    """Return the query parameters the OpenAPI schema declares for ``view``'s current action."""
    return _declared(type(view), view.action, method, view)


def _declared(view_class: type, action: str, method: str, view: APIView) -> frozenset[str]:
    key = (view_class, action, method)
    if key not in _DECLARED:
        names: set[str] = set()
        handler = getattr(view_class, action, None)
        schema_class = getattr(handler, "kwargs", {}).get("schema")
        if schema_class is not None:
            schema = schema_class()
            schema.view = view
            schema.method = method
            for parameter in schema.get_override_parameters():
                names |= _names(parameter)
        paginator = getattr(view, "paginator", None)
        for attribute in ("page_query_param", "page_size_query_param", "limit_query_param", "offset_query_param"):
            if name := getattr(paginator, attribute, None):
                names.add(name)
        if api_settings.URL_FORMAT_OVERRIDE:
            names.add(api_settings.URL_FORMAT_OVERRIDE)
        _DECLARED[key] = frozenset(names)
    return _DECLARED[key]


_DECLARED: dict[tuple, frozenset[str]] = {}


def _names(parameter: object) -> set[str]:
    if isinstance(parameter, OpenApiParameter):
        return {parameter.name} if parameter.location == OpenApiParameter.QUERY else set()
    if isinstance(parameter, type) and issubclass(parameter, serializers.Serializer):
        parameter = parameter()
    if isinstance(parameter, serializers.Serializer):
        return set(parameter.fields)
    return set()


class KnownQueryParameters(BaseFilterBackend):
    """Refuse (400) a list request with a query parameter the list does not declare, naming each one."""

    def filter_queryset(self, request: Request, queryset: object, view: APIView) -> object:
        if getattr(view, "action", None) != "list":
            return queryset
        known = declared_query_parameters(view, request.method)
        unknown = sorted(set(request.query_params) - known)
        if unknown:
            takes = ", ".join(sorted(known))
            raise ValidationError(
                {
                    name[:100]: [_("Unknown query parameter; this list takes: %(known)s.") % {"known": takes}]
                    for name in unknown
                }
            )
        return queryset
