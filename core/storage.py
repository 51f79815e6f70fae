"""Static files for production: hashed, compressed names once collected, plain names until then; served by
WhiteNoise without the manifest."""

from django.contrib.staticfiles.storage import staticfiles_storage
from whitenoise.middleware import WhiteNoiseMiddleware
from whitenoise.storage import CompressedManifestStaticFilesStorage


class CollectedStaticStorage(CompressedManifestStaticFilesStorage):
    """WhiteNoise's manifest storage that does not break every page before ``collectstatic`` has run.

    With no manifest (static files never collected), the stock storage raises on every ``{% static %}`` tag, so
    every page answers 500. Here a file without a manifest entry keeps its plain name (WhiteNoise then serves it
    from the source folders) and ``manage.py check --deploy`` warns that static files are not collected.
    """

    def stored_name(self, name: str) -> str:
        if not self.hashed_files:
            return name
        return super().stored_name(name)


def static_files_collected() -> bool:
    """Return whether ``collectstatic`` has written the manifest the storage reads."""
    storage = staticfiles_storage
    return not hasattr(storage, "manifest_name") or storage.exists(storage.manifest_name)


class StaticFilesMiddleware(WhiteNoiseMiddleware):
    """WhiteNoise, serving every collected file but the manifest (``staticfiles.json``).

    The manifest maps every static name to its hashed name: of no use to a browser, it lists the site's files for
    whoever asks. Without it in the table, ``/static/staticfiles.json`` goes on to Django, which answers 404.
    """

    def _manifest_url(self, url: str) -> bool:
        manifest = getattr(staticfiles_storage, "manifest_name", "staticfiles.json")
        return url == f"{self.static_prefix}{manifest}"

    def add_file_to_dictionary(self, url: str, path: str, stat_cache: dict | None = None) -> None:
        if not self._manifest_url(url):
            super().add_file_to_dictionary(url, path, stat_cache=stat_cache)

    def find_file(self, url: str) -> object:
        return None if self._manifest_url(url) else super().find_file(url)
