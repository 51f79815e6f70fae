"""Turn service errors into clear API responses."""

from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent, ValidationError
from django.http import Http404
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from core.errors import ServiceError, not_found_message
from core.inputs import body_too_big_sentence
from core.tokens import ExpiringTokenAuthentication, TokenRefused


def exception_handler(exc: Exception, context: dict) -> Response | None:
    """Map ``ServiceError`` subclasses to their status and body, ``ValidationError`` to 400 by field, and a body
    Django refused to read (over ``DATA_UPLOAD_MAX_MEMORY_SIZE``: 413; too many fields or files: 400) to JSON.

    A refused API token answers 401 with ``WWW-Authenticate: Token`` (DRF makes it 403, the session coming first).
    """
    if isinstance(exc, TokenRefused):
        exc.status_code = status.HTTP_401_UNAUTHORIZED
        exc.auth_header = ExpiringTokenAuthentication.keyword
    if isinstance(exc, ServiceError):
        return Response(exc.payload(), status=exc.status_code)
    if isinstance(exc, ValidationError):
        detail = exc.message_dict if hasattr(exc, "error_dict") else {"detail": exc.messages}
        return Response(detail, status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, RequestDataTooBig):
        return Response(
            {"detail": body_too_big_sentence(), "code": "too_large"}, status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
        )
    if isinstance(exc, Http404):
        return Response({"detail": not_found_message(exc), "code": "not_found"}, status=status.HTTP_404_NOT_FOUND)
    if isinstance(exc, TooManyFieldsSent | TooManyFilesSent):
        return Response({"detail": str(exc), "code": "too_many_fields"}, status=status.HTTP_400_BAD_REQUEST)
    return drf_exception_handler(exc, context)
