from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class EvaluationConfig(AppConfig):
    name = "evaluation"
    verbose_name = _("Evaluation runs")

    def ready(self) -> None:
        from evaluation import home, services  # noqa: F401  (register collectors and home page parts)
