"""Login with throttling of failed attempts per username and per client address."""

from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.http import HttpRequest
from django.utils.translation import gettext as _
from rest_framework import status
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.exceptions import ValidationError as DRFValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import AnonRateThrottle


def _keys(request: HttpRequest, username: str) -> list[str]:
    address = request.META.get("REMOTE_ADDR", "unknown")
    return [f"login-fail:user:{username.strip().lower()}", f"login-fail:ip:{address}"]


def login_is_locked(request: HttpRequest, username: str) -> bool:
    """Return whether too many recent failures lock this username or address out."""
    limit = settings.LOGIN_MAX_FAILURES
    return any(cache.get(key, 0) >= limit for key in _keys(request, username))


def login_record_failure(request: HttpRequest, username: str) -> None:
    """Count one failed login for the username and for the address."""
    for key in _keys(request, username):
        cache.add(key, 0, timeout=settings.LOGIN_LOCKOUT_SECONDS)
        try:
            cache.incr(key)
        except ValueError:
            cache.set(key, 1, timeout=settings.LOGIN_LOCKOUT_SECONDS)


def login_clear_failures(request: HttpRequest, username: str) -> None:
    """Forget failures after a successful login."""
    cache.delete_many(_keys(request, username))


class ThrottledAuthenticationForm(AuthenticationForm):
    def clean(self) -> dict:
        username = self.data.get("username", "")
        if login_is_locked(self.request, username):
            minutes = max(1, settings.LOGIN_LOCKOUT_SECONDS // 60)
            raise ValidationError(
                _("Too many failed sign-in attempts. Try again in %(minutes)s minutes.") % {"minutes": minutes},
                code="throttled",
            )
        try:
            cleaned = super().clean()
        except ValidationError:
            login_record_failure(self.request, username)
            raise
        login_clear_failures(self.request, username)
        return cleaned


class ThrottledAdminAuthenticationForm(ThrottledAuthenticationForm, AdminAuthenticationForm):
    """The admin site's sign-in form, under the same lockout as the app's."""


class ThrottledObtainAuthToken(ObtainAuthToken):
    """Issue API tokens under the same per-username and per-address lockout as the sign-in page."""

    def post(self, request: Request, *args: object, **kwargs: object) -> Response:
        username = str(request.data.get("username", ""))
        if login_is_locked(request._request, username):
            minutes = max(1, settings.LOGIN_LOCKOUT_SECONDS // 60)
            message = _("Too many failed sign-in attempts. Try again in %(minutes)s minutes.") % {"minutes": minutes}
            return Response({"detail": message}, status=status.HTTP_429_TOO_MANY_REQUESTS)
        try:
            response = super().post(request, *args, **kwargs)
        except DRFValidationError:
            login_record_failure(request._request, username)
            raise
        login_clear_failures(request._request, username)
        return response


class LoginView(auth_views.LoginView):
    form_class = ThrottledAuthenticationForm
    template_name = "registration/login.html"
    redirect_authenticated_user = True


class TokenThrottle(AnonRateThrottle):
    def get_rate(self) -> str:
        return f"{settings.LOGIN_MAX_FAILURES * 2}/min"
