"""The four roles as groups with permissions, kept in sync after every migrate.

Each app declares what its permissions mean for the roles in its own ``roles.py``: a ``PERMISSIONS`` dict from
role name to permission names (``"app_label.codename"``). This module knows the roles, not the apps: it collects
the declarations of every installed app, so an app added later brings its permissions with it.
"""

from importlib import import_module

from django.apps import apps
from django.contrib.auth.models import Group, Permission
from django.db.models import Q
from django.utils.module_loading import module_has_submodule
from django.utils.translation import gettext_lazy as _

from core.backends.auth import group_names_of

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
ROLES = tuple(ROLE_LABELS)


# The project-wide permissions of the admin role: managing accounts.
CORE_PERMISSIONS = {ADMIN: ["auth.view_user", "auth.add_user", "auth.change_user", "auth.view_group"]}


def declared_permissions() -> dict[str, list[str]]:
    """Return every role's permission names, gathered from the ``roles`` module of each installed app."""
    result: dict[str, list[str]] = {role: list(CORE_PERMISSIONS.get(role, [])) for role in ROLES}
    for config in apps.get_app_configs():
        if config.name == __package__ or not module_has_submodule(config.module, "roles"):
            continue
        declared = getattr(import_module(f"{config.name}.roles"), "PERMISSIONS", {})
        for role, names in declared.items():
            if role not in result:
                raise ValueError(f"{config.name}.roles names an unknown role {role!r}; known: {', '.join(ROLES)}")
            result[role].extend(name for name in names if name not in result[role])
    return result


def roles_sync() -> dict[str, int]:
    """Create the role groups and set exactly their permissions; return permissions per role.

    Permissions not created yet (an app not migrated) are skipped, so the roles grow with the apps.
    """
    result = {}
    for role, names in declared_permissions().items():
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
    """Keep role groups current after ``migrate`` (connected to ``post_migrate``, which is sent once per app).

    Each sync sets the groups to exactly the permissions that exist, so only the one after the last app that
    declares roles counts: syncing there alone gives the same groups for an eighth of the queries (every ``flush``
    of a transactional test sends the signal too).
    """
    if sender is _last_app_with_roles():
        roles_sync()


def _last_app_with_roles() -> object:
    """The last app config ``post_migrate`` is sent for (one with models) that has a ``roles`` module."""
    declaring = [
        config
        for config in apps.get_app_configs()
        if config.models_module is not None and module_has_submodule(config.module, "roles")
    ]
    return declaring[-1] if declaring else None


def user_roles(user: object) -> list[str]:
    """Return the role names of ``user`` in a stable order."""
    if not getattr(user, "is_authenticated", False):
        return []
    names = group_names_of(user)  # read with a signed-in request's user
    if names is None:
        names = {group.name for group in user.groups.all()}
    return [role for role in ROLE_LABELS if role in names]
