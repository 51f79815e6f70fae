from django.apps import AppConfig
from django.db.models.signals import post_migrate
from django.utils.translation import gettext_lazy as _


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = _("Item bank")

    def ready(self) -> None:
        from annotation.roles import sync_roles_after_migrate

        # Groups need the permissions that migrate creates, so roles are synced after every migrate.
        post_migrate.connect(sync_roles_after_migrate, dispatch_uid="annotation.sync_roles")
