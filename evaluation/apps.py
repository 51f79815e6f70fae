from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class EvaluationConfig(AppConfig):
    name = "evaluation"
    verbose_name = _("Evaluation runs")

    def ready(self) -> None:
        # Deferred to ready(): the apps' modules need the app registry. Registers collectors, home page parts and
        # the lost-task handler (a contamination check whose worker dies is marked failed by the sweep).
        from evaluation import home, services, tasks  # noqa: F401
        from evaluation.services import contamination
        from llm.worker import recovery

        recovery.on_task_lost(tasks.contamination_check_run, contamination.contamination_check_lost)
