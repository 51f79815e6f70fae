"""Pages every app shares: the interface-language switch."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponseRedirect
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from core import services


@require_POST
def set_language(request: HttpRequest) -> HttpResponseRedirect:
    language = request.POST.get("language", "")
    try:
        services.user_set_language(user=request.user, language=language)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    nxt = request.POST.get("next", "/")
    safe = url_has_allowed_host_and_scheme(nxt, allowed_hosts={request.get_host()}, require_https=request.is_secure())
    if not safe:
        nxt = "/"
    return HttpResponseRedirect(nxt)
