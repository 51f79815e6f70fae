from django import forms
from django.contrib import admin
from django.db.models import ForeignKey, QuerySet
from django.http import HttpRequest

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
from annotation.items.selectors import item_search
from core.admin import ReadOnlyAdmin, StudioModelAdmin


class DimensionInline(admin.TabularInline):
    model = Dimension
    fields = ["code", "parent", "level", "name_en", "name_zh", "subjective", "provisional", "target_items", "position"]
    extra = 0

    def formfield_for_foreignkey(self, db_field: ForeignKey, request: HttpRequest, **kwargs: object) -> forms.Field:
        """Read the parent choices once per request, not once per dimension row of the inline."""
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        if db_field.name == "parent" and field is not None:
            cached = request.__dict__.setdefault("_dimension_parent_choices", {})
            if "parent" not in cached:
                cached["parent"] = list(field.choices)
            field.choices = cached["parent"]
        return field


@admin.register(Benchmark)
class BenchmarkAdmin(StudioModelAdmin):
    list_display = ["slug", "name_en", "name_zh"]
    inlines = [DimensionInline]


@admin.register(Dimension)
class DimensionAdmin(StudioModelAdmin):
    list_display = ["code", "benchmark", "level", "name_en", "name_zh", "subjective", "provisional", "target_items"]
    list_filter = ["benchmark", "level", "subjective", "provisional"]
    search_fields = ["code", "name_en", "name_zh"]


@admin.register(EmotionCategory)
class EmotionCategoryAdmin(StudioModelAdmin):
    list_display = ["code", "name_en", "name_zh", "valence", "position"]
    list_filter = ["valence"]
    search_fields = ["code", "name_en", "name_zh"]


class ScenarioInline(admin.TabularInline):
    model = Scenario
    extra = 0


@admin.register(ScenarioDomain)
class ScenarioDomainAdmin(StudioModelAdmin):
    list_display = ["code", "name_en", "name_zh", "position"]
    inlines = [ScenarioInline]


@admin.register(Scenario)
class ScenarioAdmin(StudioModelAdmin):
    list_display = ["code", "domain", "name_en", "name_zh"]
    list_filter = ["domain"]


@admin.register(CrisisLevel)
class CrisisLevelAdmin(StudioModelAdmin):
    list_display = ["level", "name_en", "name_zh"]


@admin.register(Item)
class ItemAdmin(ReadOnlyAdmin):
    list_display = ["uid", "benchmark", "dimension", "kind", "status", "origin", "parity_ok", "updated_at"]
    list_filter = ["benchmark", "kind", "status", "origin", "parity_ok"]
    search_fields = ["uid", "search_text"]

    def get_search_results(self, request: HttpRequest, queryset: QuerySet, search_term: str) -> tuple[QuerySet, bool]:
        """Search as the item list does (selectors.item_search: the indexed search form), not UPPER(...) LIKE."""
        term = search_term.strip()
        return (queryset.filter(item_search(term)) if term else queryset), False


@admin.register(ItemRevision)
class ItemRevisionAdmin(ReadOnlyAdmin):
    list_display = ["item", "number", "author", "created_at", "message"]
    search_fields = ["item__uid", "message"]
    # Newest first, by the primary key's index: the model's order (item uid, number) sorts every revision joined
    # with its item before a deep page (0.2 s at 200,000 revisions).
    ordering = ["-pk"]


@admin.register(StatusDecision)
class StatusDecisionAdmin(ReadOnlyAdmin):
    list_display = ["item", "from_status", "to_status", "source", "decided_by", "created_at"]
    list_filter = ["source", "to_status"]
    search_fields = ["item__uid", "reason"]
