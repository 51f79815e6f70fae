from django.contrib import admin

from annotation.items.models import (
    Benchmark,
    CrisisLevel,
    Dimension,
    EmotionCategory,
    Item,
    ItemRevision,
    Scenario,
    ScenarioDomain,
    StatusDecision,
)
from core.admin import ReadOnlyAdmin


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


@admin.register(Item)
class ItemAdmin(ReadOnlyAdmin):
    list_display = ["uid", "benchmark", "dimension", "kind", "status", "origin", "parity_ok", "updated_at"]
    list_filter = ["benchmark", "kind", "status", "origin", "parity_ok"]
    search_fields = ["uid", "search_text"]


@admin.register(ItemRevision)
class ItemRevisionAdmin(ReadOnlyAdmin):
    list_display = ["item", "number", "author", "created_at", "message"]
    search_fields = ["item__uid", "message"]


@admin.register(StatusDecision)
class StatusDecisionAdmin(ReadOnlyAdmin):
    list_display = ["item", "from_status", "to_status", "source", "decided_by", "created_at"]
    list_filter = ["source", "to_status"]
    search_fields = ["item__uid", "reason"]
