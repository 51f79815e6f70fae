"""The four roles as groups with permissions, kept in sync after every migrate."""

from django.contrib.auth.models import Group, Permission
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

ADMIN = "admin"
LEAD_EXPERT = "lead_expert"
EXPERT = "expert"
RESEARCHER = "researcher"

ROLE_LABELS = {
    ADMIN: _("Admin"),
    LEAD_EXPERT: _("Lead expert"),
    EXPERT: _("Expert"),
    RESEARCHER: _("Researcher"),
}

_READ = ["annotation.view_item", "annotation.view_itemrevision", "annotation.view_benchmark"]
_AUTHOR = ["annotation.add_item", "annotation.change_item", "annotation.review_item", "calibration.author_judge_prompt"]
_LEAD = ["annotation.adjudicate_item", "annotation.manage_round", "annotation.manage_comparisons"]
_RESEARCH = [
    "calibration.run_judge",
    "evaluation.run_evaluation",
    "llm.view_endpoint",
    "llm.view_run",
    "llm.view_llmcall",
    "llm.run_llm",
]
_ADMIN = [
    "annotation.manage_release",
    "llm.manage_endpoint",
    "llm.add_endpoint",
    "llm.change_endpoint",
    "auth.view_user",
    "auth.add_user",
    "auth.change_user",
    "auth.view_group",
    "annotation.add_benchmark",
    "annotation.change_benchmark",
    "annotation.add_dimension",
    "annotation.change_dimension",
    "annotation.view_dimension",
    "annotation.add_emotioncategory",
    "annotation.change_emotioncategory",
    "annotation.add_scenario",
    "annotation.change_scenario",
    "annotation.add_scenariodomain",
    "annotation.change_scenariodomain",
    "annotation.change_crisislevel",
]

_RELEASE_ADMIN = ["annotation.view_release", "annotation.add_release", "annotation.change_release"]

ROLE_PERMISSIONS: dict[str, list[str]] = {
    RESEARCHER: _READ + _RESEARCH + ["annotation.manage_comparisons"],
    EXPERT: _READ + _AUTHOR,
    LEAD_EXPERT: _READ + _AUTHOR + _LEAD,
    ADMIN: _READ + _AUTHOR + _LEAD + _RESEARCH + _ADMIN + _RELEASE_ADMIN,
}


def roles_sync() -> dict[str, int]:
    """Create the role groups and set exactly their permissions; return permissions per role.

    Permissions of apps that do not define them yet are skipped, so the roles grow with the apps.
    """
    result = {}
    for role, names in ROLE_PERMISSIONS.items():
        group, _created = Group.objects.get_or_create(name=role)
        query = Q(pk__in=[])
        for name in names:
            app_label, codename = name.split(".", 1)
            query |= Q(content_type__app_label=app_label, codename=codename)
        permissions = list(Permission.objects.filter(query))
        group.permissions.set(permissions)
        result[role] = len(permissions)
    return result


def sync_roles_after_migrate(sender: object, **kwargs: object) -> None:
    """Keep role groups current after ``migrate`` (connected to ``post_migrate``)."""
    if getattr(sender, "name", None) in {"llm", "annotation", "calibration", "evaluation"}:
        roles_sync()


def user_roles(user: object) -> list[str]:
    """Return the role names of ``user`` in a stable order."""
    if not getattr(user, "is_authenticated", False):
        return []
    names = set(user.groups.values_list("name", flat=True))
    return [role for role in ROLE_LABELS if role in names]
