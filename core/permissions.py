"""Permission checks for pages and the API that refuse with a reason a user can act on.

A page refused raises ``PermissionDenied`` with a message; Django renders it with ``403.html`` (the site's
navigation and the reason). An API call refused answers JSON whose ``detail`` is the same message. The message
names the roles that hold the permission, read from the roles every app declares, so it cannot drift from them.
"""

from collections.abc import Callable
from functools import wraps

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.utils.functional import Promise
from django.utils.translation import gettext as _
from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from core.roles import ROLE_LABELS, declared_permissions

View = Callable[..., HttpResponse]


def roles_holding(permission: str) -> list[str]:
    """Return the labels of the roles that hold ``permission``, in the order of ``core.roles.ROLES``."""
    declared = declared_permissions()
    return [str(label) for role, label in ROLE_LABELS.items() if permission in declared.get(role, [])]


def refusal(permission: str, why: str | Promise | None = None) -> str:
    """Return why a user without ``permission`` is refused: ``why`` (if given) and the roles that hold it."""
    roles = roles_holding(permission)
    if roles:
        who = _("Roles that may do this: %(roles)s (permission “%(permission)s”).") % {
            "roles": ", ".join(roles),
            "permission": permission,
        }
    else:
        who = _("No role may do this (permission “%(permission)s”); ask an admin.") % {"permission": permission}
    return f"{why} {who}" if why else who


def require_permission(user: object, permission: str, *, why: str | Promise | None = None) -> None:
    """Raise ``PermissionDenied`` with the reason unless ``user`` holds ``permission``."""
    if not user.has_perm(permission):
        raise PermissionDenied(refusal(permission, why))


def permission_required(permission: str, *, why: str | Promise | None = None) -> Callable[[View], View]:
    """Decorate a page so that a user without ``permission`` gets the 403 page saying who may use it and why."""

    def decorator(view: View) -> View:
        @wraps(view)
        def checked(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
            require_permission(request.user, permission, why=why)
            return view(request, *args, **kwargs)

        return checked

    return decorator


def api_permission(permission: str, *, why: str | Promise | None = None) -> type[BasePermission]:
    """Return a DRF permission class requiring ``permission``; a refusal's ``detail`` says who may and why."""

    class HasPermission(BasePermission):
        def has_permission(self, request: Request, view: object) -> bool:
            user = request.user
            if user and user.is_authenticated and user.has_perm(permission):
                return True
            self.message = refusal(permission, why)
            return False

    HasPermission.__name__ = f"Needs_{permission.replace('.', '_')}"
    return HasPermission
