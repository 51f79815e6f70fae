"""Activate the interface language a signed-in user chose, on every request."""

from collections.abc import Callable

from django.contrib.auth import middleware as auth_middleware
from django.http import HttpRequest, HttpResponse
from django.utils import translation


class UserLanguageMiddleware:
    """Prefer the language stored in the user's profile over the browser's."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            profile = getattr(user, "profile", None) if hasattr(user, "profile") else None
            if profile is not None:
                translation.activate(profile.language)
                request.LANGUAGE_CODE = translation.get_language()
        response = self.get_response(request)
        response.headers.setdefault("Content-Language", translation.get_language())
        return response


class LoginRequiredMiddleware(auth_middleware.LoginRequiredMiddleware):
    """Require login for every page; the API answers 401/403 itself, so token clients are not redirected."""

    def process_view(
        self, request: HttpRequest, view_func: Callable, view_args: tuple, view_kwargs: dict
    ) -> HttpResponse | None:
        if request.path_info.startswith("/api/"):
            return None
        return super().process_view(request, view_func, view_args, view_kwargs)
