from django.contrib import admin
from django.http import HttpRequest

from annotation.releases.models import Release, ReleaseItem


class ReleaseItemInline(admin.TabularInline):
    model = ReleaseItem
    fields = ["item", "revision"]
    raw_id_fields = ["item", "revision"]
    extra = 0

    def has_add_permission(self, request: HttpRequest, obj: Release | None = None) -> bool:
        return obj is None or not obj.is_frozen

    def has_change_permission(self, request: HttpRequest, obj: Release | None = None) -> bool:
        return obj is None or not obj.is_frozen

    def has_delete_permission(self, request: HttpRequest, obj: Release | None = None) -> bool:
        return obj is None or not obj.is_frozen


@admin.register(Release)
class ReleaseAdmin(admin.ModelAdmin):
    """Frozen releases are read-only here too; freezing itself happens on the release page (it validates)."""

    list_display = ["benchmark", "version", "title", "status", "frozen_at", "frozen_by"]
    list_filter = ["benchmark", "status"]
    readonly_fields = [
        "status",
        "frozen_at",
        "frozen_by",
        "validation",
        "override_reason",
        "content_checksum",
        "created_by",
        "updated_by",
    ]
    inlines = [ReleaseItemInline]

    def has_change_permission(self, request: HttpRequest, obj: Release | None = None) -> bool:
        if obj is not None and obj.is_frozen:
            return False
        return super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Release | None = None) -> bool:
        if obj is not None and obj.is_frozen:
            return False
        return super().has_delete_permission(request, obj)
