from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ReleasesConfig(AppConfig):
    name = "annotation.releases"
    label = "releases"
    verbose_name = _("Releases")

    def ready(self) -> None:
        from annotation.releases import home  # noqa: F401  (registers the item list's bulk action)
