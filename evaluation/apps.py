from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class EvaluationConfig(AppConfig):
    name = "evaluation"
    verbose_name = _("Evaluation runs")

    def ready(self) -> None:
        from evaluation import home, services, tasks  # noqa: F401  (register collectors and home page parts)
        from evaluation.services import contamination
        from llm.worker import recovery

        # A contamination check whose worker dies is marked failed by the sweep, not left "running".
        recovery.on_task_lost(tasks.contamination_check_run, contamination.contamination_check_lost)
