"""The item bank's data: taxonomy, items with immutable revisions, editor drafts, templates and drafting jobs."""

from items.models.decisions import StatusDecision
from items.models.drafting import DraftingJob, ItemTemplate
from items.models.items import Item, ItemDraft, ItemRevision, ItemRevisionQuerySet
from items.models.taxonomy import (
    Benchmark,
    BilingualNamed,
    CrisisLevel,
    Dimension,
    EmotionCategory,
    Scenario,
    ScenarioDomain,
)

__all__ = [
    "Benchmark",
    "BilingualNamed",
    "CrisisLevel",
    "Dimension",
    "DraftingJob",
    "EmotionCategory",
    "Item",
    "ItemDraft",
    "ItemRevision",
    "ItemRevisionQuerySet",
    "ItemTemplate",
    "Scenario",
    "ScenarioDomain",
    "StatusDecision",
]
