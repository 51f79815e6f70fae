from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CalibrationConfig(AppConfig):
    name = "calibration"
    verbose_name = _("Judge calibration")

    def ready(self) -> None:
        # Register the order, the parser and the collectors.
        from calibration import allocation, keys, parsers, services  # noqa: F401
