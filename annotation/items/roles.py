"""What the item bank's permissions mean for each role (collected by ``core.roles``)."""

from core.roles import ADMIN, EXPERT, LEAD_EXPERT, RESEARCHER

_READ = ["items.view_item", "items.view_itemrevision", "items.view_benchmark"]
_AUTHOR = ["items.add_item", "items.change_item"]
# Accepting, rejecting or returning an item to draft outside screening, always with a recorded reason.
_DECIDE = ["items.decide_status"]
# Every user's import jobs (their files' errors and counts); everyone sees their own.
_IMPORT_JOBS = ["items.view_itemimportjob"]
_TAXONOMY = [
    "items.add_benchmark",
    "items.change_benchmark",
    "items.add_dimension",
    "items.change_dimension",
    "items.view_dimension",
    "items.add_emotioncategory",
    "items.change_emotioncategory",
    "items.add_scenario",
    "items.change_scenario",
    "items.add_scenariodomain",
    "items.change_scenariodomain",
    "items.change_crisislevel",
]

PERMISSIONS = {
    RESEARCHER: _READ,
    EXPERT: _READ + _AUTHOR,
    LEAD_EXPERT: _READ + _AUTHOR + _DECIDE,
    ADMIN: _READ + _AUTHOR + _DECIDE + _TAXONOMY + _IMPORT_JOBS,
}
