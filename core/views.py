"""Pages every app shares: the interface-language switch, the error pages and the favicon."""

import logging
import re

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, HttpResponseServerError, JsonResponse
from django.shortcuts import render
from django.templatetags.static import static
from django.utils.html import escape
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from core import services
from core.errors import not_found_message

logger = logging.getLogger(__name__)


@login_not_required
@require_POST
def set_language(request: HttpRequest) -> HttpResponseRedirect:
    """Switch the interface language: a signed-in user's profile keeps it; the browser's cookie keeps it too, so the
    sign-in page (before anyone is signed in) and the next sign-in follow the choice."""
    language = request.POST.get("language", "")
    valid = language in dict(settings.LANGUAGES)
    if request.user.is_authenticated:
        try:
            services.user_set_language(user=request.user, language=language)
        except ValidationError as exc:
            messages.error(request, " ".join(exc.messages))
    elif not valid:
        messages.error(request, _("Unsupported language %(lang)s.") % {"lang": language})
    nxt = request.POST.get("next", "/")
    safe = url_has_allowed_host_and_scheme(nxt, allowed_hosts={request.get_host()}, require_https=request.is_secure())
    if not safe:
        nxt = "/"
    response = HttpResponseRedirect(nxt)
    if valid:
        response.set_cookie(
            settings.LANGUAGE_COOKIE_NAME,
            language,
            max_age=settings.LANGUAGE_COOKIE_AGE,
            samesite="Lax",
            secure=request.is_secure(),
            httponly=True,
        )
    return response


def _back_link(request: HttpRequest) -> str:
    """Return the page the user came from, when it is on this site and not the page itself; else an empty string."""
    referer = request.headers.get("Referer", "")
    if not referer or referer.endswith(request.get_full_path()):
        return ""
    safe = url_has_allowed_host_and_scheme(
        referer, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    return referer if safe else ""


def forbidden(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """Say why the page is refused, with the site's navigation, the user's roles and a way back."""
    reason = str(exception) if exception is not None and str(exception) else ""
    context = {"exception": reason, "back": _back_link(request)}
    return render(request, "403.html", context, status=403)


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """Say what was not found, with the site's navigation and links to where the user can go on."""
    # A view's own message ("No item with uid x."), Django's "No <Model> matches..." in the user's words; the
    # resolver's 404 carries a dict of the patterns tried, which gives "".
    reason = not_found_message(exception) if exception is not None else ""
    if request.path_info.startswith("/api/"):
        # A path of the API that matches no route (``/api/llm/runs/abc/progress/``: ids are digits) answers as the
        # API's own 404s do (core.api_errors), in JSON, as the OpenAPI schema declares.
        return JsonResponse({"detail": reason or _("There is no such object."), "code": "not_found"}, status=404)
    uid = ""
    if match := re.fullmatch(r"/items/([^/]+)/.*", request.path):
        uid = match.group(1)
    context = {"reason": reason, "request_path": request.path, "uid": uid, "back": _back_link(request)}
    return render(request, "404.html", context, status=404)


def server_error(request: HttpRequest) -> HttpResponse:
    """Render the 500 page with the navigation when possible; if even that fails (a database down), a plain page."""
    try:
        return render(request, "500.html", {"back": _back_link(request)}, status=500)
    except Exception:  # noqa: BLE001  (the error page must not fail: anything here falls back to plain text)
        logger.exception("The 500 page could not be rendered")
        body = _("Something went wrong on our side; the error was logged. Try again in a moment.")
        page = f'<!DOCTYPE html><title>500</title><p>{escape(body)}</p><p><a href="/">EI Studio</a></p>'
        return HttpResponseServerError(page)


@login_not_required
def favicon(request: HttpRequest) -> HttpResponseRedirect:
    """Answer browsers' /favicon.ico with the icon among the static files."""
    return HttpResponseRedirect(static("favicon.ico"))
