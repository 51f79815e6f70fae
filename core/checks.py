"""Deployment checks of our own, shown by ``manage.py check --deploy``."""

from django.conf import settings
from django.core.checks import Tags, Warning, register

from core.storage import static_files_collected


@register(Tags.staticfiles, deploy=True)
def check_static_files_collected(app_configs: object = None, **kwargs: object) -> list[Warning]:
    """Warn when static files were never collected: pages then use unhashed names that browsers cache badly."""
    if settings.DEBUG or static_files_collected():
        return []
    return [
        Warning(
            f"Static files are not collected in {settings.STATIC_ROOT}: pages work, but without hashed names, "
            "compression or long caching.",
            hint="Run `manage.py collectstatic --noinput` (make serve does).",
            id="core.W001",
        )
    ]


@register(Tags.caches, deploy=True)
def check_shared_cache(app_configs: object = None, **kwargs: object) -> list[Warning]:
    """Warn when the cache is per process: API throttles would then count per server process."""
    backend = settings.CACHES["default"]["BACKEND"]
    if settings.DEBUG or not backend.endswith("LocMemCache"):
        return []
    return [
        Warning(
            "The cache is per process (locmem), so API request limits are multiplied by the number of server "
            "processes.",
            hint="Leave CACHE_BACKEND unset (the database cache) in production.",
            id="core.W002",
        )
    ]
