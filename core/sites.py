"""The admin site: a signed-in user who is not an admin gets the site's 403 page with the reason.

Django's admin sends such a user to its own sign-in form, which reads as if signing in had failed.
``core.apps.StudioAdminConfig`` (in ``INSTALLED_APPS`` instead of ``django.contrib.admin``) makes it the default.
"""

from collections.abc import Callable
from functools import wraps

from django import forms
from django.contrib import admin
from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import models
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext_lazy

from core.inputs import nul_path, nul_reason

REFUSAL = gettext_lazy(
    "The admin site manages accounts, API tokens, endpoints and the taxonomy, so it is for admins only, and your "
    "account is not an admin account."
)


class StoredJSONFormField(forms.JSONField):
    """A JSON form field refusing what the database cannot store: a NUL character (``\\u0000``) in any text.

    PostgreSQL's ``jsonb`` refuses ``\\u0000``; without this check the admin answers such a value with a 500.
    """

    def to_python(self, value: object) -> object:
        converted = super().to_python(value)
        where = nul_path(converted)
        if where is not None:
            raise ValidationError(f"{where or '$'}: {nul_reason()}", code="nul_character")
        return converted


class StudioAdminSite(admin.AdminSite):
    def register(self, model_or_iterable: object, admin_class: type | None = None, **options: object) -> None:
        """Register as Django does, every JSON field edited through ``StoredJSONFormField``."""
        admin_class = admin_class or admin.ModelAdmin
        overrides = {**admin_class.formfield_overrides, models.JSONField: {"form_class": StoredJSONFormField}}
        options.setdefault("formfield_overrides", overrides)
        super().register(model_or_iterable, admin_class, **options)

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
