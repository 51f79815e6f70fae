"""The item bank's data: taxonomy, items with immutable revisions, editor drafts, templates and drafting jobs, import
jobs, EiCAP reply sets and key validations, and the near-duplicate index."""

from annotation.items.models.decisions import StatusDecision
from annotation.items.models.drafting import DraftingJob, ItemTemplate
from annotation.items.models.imports import ItemImportJob
from annotation.items.models.items import Item, ItemDraft, ItemRevision, ItemRevisionQuerySet
from annotation.items.models.replysets import (
    KeyJudgement,
    KeyValidation,
    Reply,
    ReplyAudit,
    ReplyRevision,
    ReplySet,
    ReplyTurn,
)
from annotation.items.models.similarity import (
    ItemSignature,
    ItemSignatureBand,
    NearDuplicateCluster,
    NearDuplicateReport,
    SimilarityIndex,
)
from annotation.items.models.taxonomy import (
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
    "ItemImportJob",
    "ItemDraft",
    "ItemRevision",
    "ItemRevisionQuerySet",
    "ItemSignature",
    "ItemSignatureBand",
    "ItemTemplate",
    "KeyJudgement",
    "KeyValidation",
    "NearDuplicateCluster",
    "NearDuplicateReport",
    "Reply",
    "ReplyAudit",
    "ReplyRevision",
    "ReplySet",
    "ReplyTurn",
    "Scenario",
    "ScenarioDomain",
    "SimilarityIndex",
    "StatusDecision",
]
