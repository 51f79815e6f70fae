from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class LabellingConfig(AppConfig):
    name = "labelling"
    verbose_name = _("Pairwise labelling")

    def ready(self) -> None:
        from labelling import home, services  # noqa: F401  (register collectors and home page parts)
