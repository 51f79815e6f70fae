"""Every write a user can trigger on taxonomy and items: called by views, the API and commands alike.

- ``taxonomy``: loading taxonomy documents;
- ``items``: creating and revising items, the editor's autosaved drafts;
- ``statuses``: ``item_status_decide``, the only writer of an item's status, recording every decision;
- ``imports``: JSONL imports, all or nothing;
- ``drafting``: item templates and LLM drafting jobs (imported as a module: ``services.drafting``).
"""

from annotation.items.services.imports import IMPORT_FORMATS, ImportFailed, ImportReport, TaxonomyIndex, items_import
from annotation.items.services.items import (
    ItemState,
    RevisionConflict,
    item_create,
    item_create_with_status,
    item_draft_discard,
    item_draft_save,
    item_revise,
    unaccepted_reason,
)
from annotation.items.services.statuses import (
    DECIDE_STATUS,
    LEAD_DECISION_STATUSES,
    StatusDecisionForbidden,
    item_status_decide,
    user_may_decide_status,
)
from annotation.items.services.taxonomy import FIXTURES, taxonomy_load, taxonomy_load_fixture

__all__ = [
    "DECIDE_STATUS",
    "FIXTURES",
    "IMPORT_FORMATS",
    "LEAD_DECISION_STATUSES",
    "ImportFailed",
    "ImportReport",
    "ItemState",
    "RevisionConflict",
    "StatusDecisionForbidden",
    "TaxonomyIndex",
    "item_create",
    "item_create_with_status",
    "item_draft_discard",
    "item_draft_save",
    "item_revise",
    "unaccepted_reason",
    "item_status_decide",
    "items_import",
    "taxonomy_load",
    "taxonomy_load_fixture",
    "user_may_decide_status",
]
