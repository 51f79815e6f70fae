from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class LabellingConfig(AppConfig):
    name = "annotation.labelling"
    label = "labelling"
    verbose_name = _("Pairwise labelling")

    def ready(self) -> None:
        # Register collectors, home page parts and the drafting exclusion.
        from annotation.labelling import blinding, home, services  # noqa: F401
