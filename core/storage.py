"""Static files storage for production: hashed, compressed names once collected, plain names until then."""

from django.contrib.staticfiles.storage import staticfiles_storage
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
