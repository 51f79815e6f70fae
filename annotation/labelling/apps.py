from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class LabellingConfig(AppConfig):
    name = "annotation.labelling"
    label = "labelling"
    verbose_name = _("Pairwise labelling")

    def ready(self) -> None:
        from annotation.labelling import home, services  # noqa: F401  (register collectors and home page parts)
