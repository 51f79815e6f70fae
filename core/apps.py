from django.apps import AppConfig
from django.conf import settings
from django.contrib.admin import apps as admin_apps
from django.core.management import call_command
from django.db.models.signals import post_migrate, post_save, pre_save
from django.utils.translation import gettext_lazy as _


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = _("Accounts and roles")

    def ready(self) -> None:
        # deferred: these import models, which the app registry allows from ready() on
        from core import checks  # noqa: F401  (registers the deployment checks)
        from core.roles import sync_roles_after_migrate

        # Groups need the permissions that migrate creates, so roles are synced after every migrate.
        post_migrate.connect(sync_roles_after_migrate, dispatch_uid="core.sync_roles")
        # The database cache's table is no migration's: every migrated database gets it, so that the processes
        # sharing it (web, workers, commands) never meet a missing table (``createcachetable`` skips it if present).
        post_migrate.connect(create_cache_table_after_migrate, sender=self, dispatch_uid="core.cache_table")

        # deferred: imports models (see above)
        from core.signals import note_password_change, revoke_tokens_after_password_change

        # A password change revokes the user's API tokens, whatever path changed it (see core.signals).
        pre_save.connect(note_password_change, sender=settings.AUTH_USER_MODEL, dispatch_uid="core.password_change")
        post_save.connect(
            revoke_tokens_after_password_change, sender=settings.AUTH_USER_MODEL, dispatch_uid="core.revoke_tokens"
        )


def create_cache_table_after_migrate(*, using: str = "default", **kwargs: object) -> None:
    """Create the database cache's table in the database just migrated, if the settings use it."""
    call_command("createcachetable", database=using, verbosity=0)


class StudioAdminConfig(admin_apps.AdminConfig):
    """The admin app with ``core.sites.StudioAdminSite`` as its site (not the default config of ``core``)."""

    default = False
    default_site = "core.sites.StudioAdminSite"
