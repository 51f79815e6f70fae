"""Errors a service raises for a user to read, with the HTTP status and body the API answers them with."""

from rest_framework import status


class ServiceError(Exception):
    """A refusal a user caused; subclasses set the HTTP status, a machine-readable code and extra detail."""

    status_code = status.HTTP_400_BAD_REQUEST
    code = "invalid"

    def payload(self) -> dict:
        """Return the API body: the message, the code and anything a subclass adds."""
        return {"detail": str(self), "code": self.code}
