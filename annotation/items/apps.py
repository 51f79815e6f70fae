from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ItemsConfig(AppConfig):
    name = "annotation.items"
    label = "items"
    verbose_name = _("Item bank")

    def ready(self) -> None:
        # Registering the drafting collector and the home page's part.
        from annotation.items import home  # noqa: F401
        from annotation.items.services import drafting  # noqa: F401
