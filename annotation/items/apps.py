from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ItemsConfig(AppConfig):
    name = "annotation.items"
    label = "items"
    verbose_name = _("Item bank")

    def ready(self) -> None:
        # Registering the drafting collector and the home page's part.
        from annotation.items import home, tasks  # noqa: F401
        from annotation.items.services import drafting, import_jobs  # noqa: F401
        from llm.worker import recovery

        # An import whose worker dies is marked failed by the sweep, not left "running".
        recovery.on_task_lost(tasks.item_import_run, import_jobs.item_import_job_lost)
