from django.contrib import admin
from django.http import HttpRequest

from annotation.models import (
    Benchmark,
    CrisisLevel,
    Dimension,
    EmotionCategory,
    Item,
    ItemRevision,
    Release,
    ReleaseItem,
    Scenario,
    ScenarioDomain,
    UserProfile,
)


class DimensionInline(admin.TabularInline):
    model = Dimension
    fields = ["code", "parent", "level", "name_en", "name_zh", "subjective", "provisional", "target_items", "position"]
    extra = 0


@admin.register(Benchmark)
class BenchmarkAdmin(admin.ModelAdmin):
    list_display = ["slug", "name_en", "name_zh"]
    inlines = [DimensionInline]


@admin.register(Dimension)
class DimensionAdmin(admin.ModelAdmin):
    list_display = ["code", "benchmark", "level", "name_en", "name_zh", "subjective", "provisional", "target_items"]
    list_filter = ["benchmark", "level", "subjective", "provisional"]
    search_fields = ["code", "name_en", "name_zh"]


@admin.register(EmotionCategory)
class EmotionCategoryAdmin(admin.ModelAdmin):
    list_display = ["code", "name_en", "name_zh", "valence", "position"]
    list_filter = ["valence"]
    search_fields = ["code", "name_en", "name_zh"]


class ScenarioInline(admin.TabularInline):
    model = Scenario
    extra = 0


@admin.register(ScenarioDomain)
class ScenarioDomainAdmin(admin.ModelAdmin):
    list_display = ["code", "name_en", "name_zh", "position"]
    inlines = [ScenarioInline]


@admin.register(Scenario)
class ScenarioAdmin(admin.ModelAdmin):
    list_display = ["code", "domain", "name_en", "name_zh"]
    list_filter = ["domain"]


@admin.register(CrisisLevel)
class CrisisLevelAdmin(admin.ModelAdmin):
    list_display = ["level", "name_en", "name_zh"]


class ReadOnlyAdmin(admin.ModelAdmin):
    """Items change only through services, so every change becomes a revision."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(Item)
class ItemAdmin(ReadOnlyAdmin):
    list_display = ["uid", "benchmark", "dimension", "kind", "status", "origin", "parity_ok", "updated_at"]
    list_filter = ["benchmark", "kind", "status", "origin", "parity_ok"]
    search_fields = ["uid", "search_text"]


@admin.register(ItemRevision)
class ItemRevisionAdmin(ReadOnlyAdmin):
    list_display = ["item", "number", "author", "created_at", "message"]
    search_fields = ["item__uid", "message"]


@admin.register(UserProfile)
class UserProfileAdmin(admin.ModelAdmin):
    list_display = ["user", "language"]


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
