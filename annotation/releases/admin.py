from django.contrib import admin
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotation.releases.models import Release, ReleaseItem
from core.admin import StudioModelAdmin


@admin.register(Release)
class ReleaseAdmin(StudioModelAdmin):
    """Frozen releases are read-only here too; freezing itself happens on the release page (it validates).

    The pinned items are not edited here: a release holds up to every item of its benchmark, and the release page
    adds, removes and re-pins them through the services that check each entry (the form shows their number and
    links there)."""

    list_display = ["benchmark", "version", "title", "status", "frozen_at", "frozen_by"]
    list_filter = ["benchmark", "status"]
    list_select_related = ["benchmark", "frozen_by"]
    readonly_fields = [
        "pinned_items",
        "status",
        "frozen_at",
        "frozen_by",
        "validation",
        "override_reason",
        "content_checksum",
        "created_by",
        "updated_by",
    ]

    @admin.display(description=gettext_lazy("Pinned items"))
    def pinned_items(self, obj: Release) -> str:
        if obj.pk is None:
            return _("Add items on the release page once the release is saved.")
        url = reverse("releases:release-detail", args=[obj.benchmark.slug, obj.version])
        count = ReleaseItem.objects.filter(release=obj).count()
        return format_html(
            '{} · <a href="{}">{}</a>', _("%(count)d items") % {"count": count}, url, _("edit them on the release page")
        )

    def has_change_permission(self, request: HttpRequest, obj: Release | None = None) -> bool:
        if obj is not None and obj.is_frozen:
            return False
        return super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Release | None = None) -> bool:
        if obj is not None and obj.is_frozen:
            return False
        return super().has_delete_permission(request, obj)
