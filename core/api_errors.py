"""Turn service errors into clear API responses."""

from django.core.exceptions import ValidationError
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from core.errors import ServiceError


def exception_handler(exc: Exception, context: dict) -> Response | None:
    """Map ``ServiceError`` subclasses to their status and body, and ``ValidationError`` to 400 by field."""
    if isinstance(exc, ServiceError):
        return Response(exc.payload(), status=exc.status_code)
    if isinstance(exc, ValidationError):
        detail = exc.message_dict if hasattr(exc, "error_dict") else {"detail": exc.messages}
        return Response(detail, status=status.HTTP_400_BAD_REQUEST)
    return drf_exception_handler(exc, context)
