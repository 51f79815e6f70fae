from django.contrib import admin
from django.contrib.admin.utils import unquote
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _

from core.deletion import CountedDeleteMixin
from core.models import UserProfile
from core.pagination import IdsFirstPaginator

User = get_user_model()


class StudioModelAdmin(CountedDeleteMixin, admin.ModelAdmin):
    """The product's ModelAdmin: a delete confirmation that counts instead of listing (core.deletion), and lists
    that cost the same on every page at 100,000 rows: ids first (``core.pagination.IdsFirstPaginator``: a deep page
    skips narrow ids, not wide joined rows; a long result is counted by the planner's estimate on PostgreSQL) and
    no second count of the whole table beside a search or filter."""

    show_full_result_count = False

    def get_paginator(self, request: HttpRequest, queryset: QuerySet, per_page: int, *args: object) -> Paginator:
        return IdsFirstPaginator(queryset, per_page, *args)


class ReadOnlyAdmin(StudioModelAdmin):
    """Rows that change only through services or workers (items, so that every change becomes a revision; LLM
    batches and budgets): shown in the admin site for inspection, never added, edited or deleted there."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


# What only a superuser may set: with either, an admin could give anyone any permission, beyond the roles.
SUPERUSER_ONLY_FIELDS = ("is_superuser", "user_permissions")


@admin.register(UserProfile)
class UserProfileAdmin(StudioModelAdmin):
    list_display = ["user", "language"]


admin.site.unregister(User)


@admin.register(User)
class StudioUserAdmin(CountedDeleteMixin, UserAdmin):
    """Accounts: an admin who is not a superuser assigns roles (groups), but grants no superuser status or
    individual permission, and leaves superusers' accounts alone; only a superuser may do those."""

    def get_readonly_fields(self, request: HttpRequest, obj: object = None) -> tuple[str, ...]:
        readonly = tuple(super().get_readonly_fields(request, obj))
        if request.user.is_superuser:
            return readonly
        return readonly + SUPERUSER_ONLY_FIELDS

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        if obj is not None and obj.is_superuser and not request.user.is_superuser:
            return False
        return super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        if obj is not None and obj.is_superuser and not request.user.is_superuser:
            return False
        return super().has_delete_permission(request, obj)

    def add_view(self, request: HttpRequest, form_url: str = "", extra_context: dict | None = None) -> HttpResponse:
        refuse_superuser_only_fields(request)
        return super().add_view(request, form_url, extra_context)

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: dict | None = None
    ) -> HttpResponse:
        if request.method == "POST":
            refuse_superuser_target(request, self.get_object(request, unquote(object_id)))
            refuse_superuser_only_fields(request)
        return super().change_view(request, object_id, form_url, extra_context)

    def user_change_password(self, request: HttpRequest, id: str, form_url: str = "") -> HttpResponse:
        refuse_superuser_target(request, self.get_object(request, unquote(id)))
        return super().user_change_password(request, id, form_url)


def refuse_superuser_only_fields(request: HttpRequest) -> None:
    """Refuse a non-superuser's POST that sets superuser status or permissions (the form shows neither)."""
    forged = request.method == "POST" and any(field in request.POST for field in SUPERUSER_ONLY_FIELDS)
    if forged and not request.user.is_superuser:
        raise PermissionDenied(
            _("Only a superuser may grant superuser status or individual permissions. Give the account a role instead.")
        )


def refuse_superuser_target(request: HttpRequest, user: object) -> None:
    """Refuse a non-superuser's change to a superuser's account."""
    if user is not None and user.is_superuser and not request.user.is_superuser:
        raise PermissionDenied(_("Only a superuser may change a superuser's account."))
