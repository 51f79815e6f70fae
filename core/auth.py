"""Signing in: the sign-in page, the admin's sign-in form and the API token endpoint, under one throttle.

django-axes refuses and counts the attempts (``core.throttle``); these views tell a locked-out client how long to
wait: on the form, or as JSON with 429.
"""

from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.exceptions import ValidationError as DRFValidationError
from rest_framework.fields import DateTimeField
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import AnonRateThrottle

from core import services, throttle
from core.tokens import token_expires_at


class ThrottledAuthenticationForm(AuthenticationForm):
    """Django's sign-in form; when the throttle refuses, it says how long to wait instead of "wrong password"."""

    def clean(self) -> dict:
        try:
            return super().clean()
        except ValidationError:
            username = self.cleaned_data.get("username", self.data.get("username"))
            seconds = throttle.sign_in_wait(self.request, username)
            if not seconds:
                raise
            throttle.mark_throttled(self.request, seconds)
            raise ValidationError(throttle.wait_message(seconds), code="throttled") from None


class ThrottledAdminAuthenticationForm(ThrottledAuthenticationForm, AdminAuthenticationForm):
    """The admin site's sign-in form, under the same throttle as the site's."""


class ThrottledObtainAuthToken(ObtainAuthToken):
    """Issue the user's API token (a new one once it has expired) under the same throttle as the sign-in page."""

    def post(self, request: Request, *args: object, **kwargs: object) -> Response:
        serializer = self.get_serializer(data=request.data)
        try:
            serializer.is_valid(raise_exception=True)
        except DRFValidationError:
            data = request.data if hasattr(request.data, "get") else {}
            seconds = throttle.sign_in_wait(request, data.get("username"))
            if not seconds:
                raise
            response = Response({"detail": throttle.wait_message(seconds)})
            return throttle.throttled(response, seconds)
        token = services.api_token_issue(user=serializer.validated_data["user"])
        return Response({"token": token.key, "expires": DateTimeField().to_representation(token_expires_at(token))})


class LoginView(auth_views.LoginView):
    form_class = ThrottledAuthenticationForm
    template_name = "registration/login.html"
    redirect_authenticated_user = True

    def form_valid(self, form: AuthenticationForm) -> HttpResponse:
        """Sign in; a language chosen on the sign-in page (the browser's language cookie) becomes the user's."""
        response = super().form_valid(form)
        language = self.request.COOKIES.get(settings.LANGUAGE_COOKIE_NAME)
        if language in dict(settings.LANGUAGES):
            services.user_set_language(user=form.get_user(), language=language)
        return response


class TokenThrottle(AnonRateThrottle):
    """At most twice ``LOGIN_MAX_FAILURES`` token requests a minute per client address, right or wrong."""

    def get_rate(self) -> str:
        return f"{settings.LOGIN_MAX_FAILURES * 2}/min"

    def get_ident(self, request: Request) -> str:
        return throttle.client_address(request) or ""
