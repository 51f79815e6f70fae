"""Turn service errors into clear API responses."""

from django.core.exceptions import ValidationError
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from annotation.services import ImportFailed, RevisionConflict


def exception_handler(exc: Exception, context: dict) -> Response | None:
    """Map ``ValidationError``, ``RevisionConflict`` and ``ImportFailed`` to 400/409 responses."""
    if isinstance(exc, RevisionConflict):
        return Response({"detail": str(exc), "code": "revision_conflict"}, status=status.HTTP_409_CONFLICT)
    if isinstance(exc, ImportFailed):
        return Response(
            {
                "detail": str(exc),
                "errors": [{"line": e.line, "field": e.field, "message": e.message} for e in exc.errors],
            },
            status=status.HTTP_400_BAD_REQUEST,
        )
    if isinstance(exc, ValidationError):
        detail = exc.message_dict if hasattr(exc, "error_dict") else {"detail": exc.messages}
        return Response(detail, status=status.HTTP_400_BAD_REQUEST)
    return drf_exception_handler(exc, context)
