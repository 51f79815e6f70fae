from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CalibrationConfig(AppConfig):
    name = "calibration"
    verbose_name = _("Judge calibration")

    def ready(self) -> None:
        # Register the order, the parser and the collectors.
        from calibration import allocation, keys, parsers, services, tasks  # noqa: F401
        from llm.worker import recovery

        # A report whose worker dies is marked failed by the sweep, not left "computing".
        recovery.on_task_lost(tasks.report_compute, services.calibration_report_lost)
