"""API tokens that expire: ``API_TOKEN_TTL_DAYS`` after they were issued, a token is refused with the reason.

Tokens are also revoked (deleted) when their user's password changes (``core.signals``). ``POST /api/token/``
issues a new token once the old one has expired (``core.services.api_token_issue``).
"""

from datetime import datetime, timedelta

from django.conf import settings
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from rest_framework.authentication import TokenAuthentication
from rest_framework.authtoken.models import Token
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request


def token_expires_at(token: Token) -> datetime:
    """Return when ``token`` stops being accepted."""
    return token.created + timedelta(days=settings.API_TOKEN_TTL_DAYS)


def token_expired(token: Token) -> bool:
    return token_expires_at(token) <= timezone.now()


class TokenRefused(AuthenticationFailed):
    """A token that was sent and refused (unknown, revoked, expired, malformed).

    DRF answers 403 when the first authentication class (the session) names no scheme; ``core.api_errors`` makes
    this one 401 with ``WWW-Authenticate: Token``, which tells the client to get a new token.
    """


class ExpiringTokenAuthentication(TokenAuthentication):
    """``Authorization: Token <key>``, refused with 401 once the token is older than ``API_TOKEN_TTL_DAYS``."""

    def authenticate(self, request: Request) -> tuple | None:
        try:
            return super().authenticate(request)
        except AuthenticationFailed as exc:
            raise TokenRefused(exc.detail) from None

    def authenticate_credentials(self, key: str) -> tuple:
        # A key is 40 characters; one holding a NUL or control character (which PostgreSQL refuses in a query
        # with an exception) or longer than any key is refused before it reaches the database.
        if len(key) > Token._meta.get_field("key").max_length or not key.isprintable():
            raise AuthenticationFailed(_("Invalid token."))
        user, token = super().authenticate_credentials(key)
        if token_expired(token):
            expired = timezone.localtime(token_expires_at(token)).strftime("%Y-%m-%d %H:%M %Z")
            raise AuthenticationFailed(
                _("This API token expired on %(date)s. Get a new one by posting your username and password to %(url)s.")
                % {"date": expired, "url": reverse("api-token")}
            )
        return user, token
