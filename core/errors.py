"""Errors a service raises for a user to read, with the HTTP status and body the API answers them with."""

import re

from django.apps import apps
from django.utils.translation import gettext as _
from rest_framework import status


class ServiceError(Exception):
    """A refusal a user caused; subclasses set the HTTP status, a machine-readable code and extra detail."""

    status_code = status.HTTP_400_BAD_REQUEST
    code = "invalid"

    def payload(self) -> dict:
        """Return the API body: the message, the code and anything a subclass adds."""
        return {"detail": str(self), "code": self.code}


NOT_FOUND_PATTERN = re.compile(r"No (\w+) matches the given query\.")


def not_found_message(exc: Exception) -> str:
    """Return the message of a 404 for a user to read, in their language.

    ``get_object_or_404`` says "No ScreeningRound matches the given query." in English with the class name; that
    becomes the model's translated name ("There is no such screening round."). Other messages are kept, and a 404 of
    the URL resolver (which carries the patterns tried, not a message) gives "".
    """
    message = exc.args[0] if exc.args and isinstance(exc.args[0], str) else ""
    if match := NOT_FOUND_PATTERN.fullmatch(message):
        names = {m._meta.object_name: m._meta.verbose_name for m in apps.get_models()}
        thing = names.get(match.group(1))
        return _("There is no such %(thing)s.") % {"thing": thing} if thing else _("There is no such object.")
    return message
