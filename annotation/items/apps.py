from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ItemsConfig(AppConfig):
    name = "annotation.items"
    label = "items"
    verbose_name = _("Item bank")

    def ready(self) -> None:
        from annotation.items import drafting, home  # noqa: F401  (register collectors and home page parts)
