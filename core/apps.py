from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps
from django.db.models.signals import post_migrate
from django.utils.translation import gettext_lazy as _


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = _("Accounts and roles")

    def ready(self) -> None:
        from core.roles import sync_roles_after_migrate

        # Groups need the permissions that migrate creates, so roles are synced after every migrate.
        post_migrate.connect(sync_roles_after_migrate, dispatch_uid="core.sync_roles")


class StudioAdminConfig(admin_apps.AdminConfig):
    """The admin app with ``core.sites.StudioAdminSite`` as its site (not the default config of ``core``)."""

    default = False
    default_site = "core.sites.StudioAdminSite"
