"""The admin site: a signed-in user who is not an admin gets the site's 403 page with the reason.

Django's admin sends such a user to its own sign-in form, which reads as if signing in had failed.
``core.apps.StudioAdminConfig`` (in ``INSTALLED_APPS`` instead of ``django.contrib.admin``) makes it the default.
"""

from collections.abc import Callable
from functools import wraps

from django.contrib import admin
from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext_lazy

REFUSAL = gettext_lazy(
    "The admin site manages accounts, API tokens, endpoints and the taxonomy, so it is for admins only, and your "
    "account is not an admin account."
)


class StudioAdminSite(admin.AdminSite):
    def admin_view(self, view: Callable[..., HttpResponse], cacheable: bool = False) -> Callable[..., HttpResponse]:
        inner = super().admin_view(view, cacheable)

        @wraps(inner)
        def refuse_signed_in_non_admins(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
            if request.user.is_authenticated and not self.has_permission(request):
                raise PermissionDenied(REFUSAL)
            return inner(request, *args, **kwargs)

        return refuse_signed_in_non_admins

    @login_not_required
    def login(self, request: HttpRequest, extra_context: dict | None = None) -> HttpResponse:
        """Refuse a signed-in non-admin too, rather than offer the admin's sign-in form over their session."""
        if request.user.is_authenticated and not self.has_permission(request):
            raise PermissionDenied(REFUSAL)
        return super().login(request, extra_context)
