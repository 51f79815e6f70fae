from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ScreeningConfig(AppConfig):
    name = "annotation.screening"
    label = "screening"
    verbose_name = _("Screening")

    def ready(self) -> None:
        from annotation.screening import home  # noqa: F401  (registers the home page's and item page's parts)
