from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CalibrationConfig(AppConfig):
    name = "calibration"
    verbose_name = _("Judge calibration")

    def ready(self) -> None:
        from calibration import allocation, parsers, services  # noqa: F401  (register the order, parser, collector)
