"""Background tasks of the releases app: thin wrappers taking ids (run them with ``manage.py db_worker``)."""

from django.tasks import task
from django.utils import translation

from annotation.releases import comparisons, drafts
from annotation.releases.models import Release


@task()
def draft_checks_compute(release_id: int, language: str) -> bool:
    """Check a large draft release as it stands and keep the result (``annotation.releases.drafts``)."""
    release = Release.objects.select_related("benchmark").filter(pk=release_id).first()
    if release is None or release.is_frozen:
        return False
    with translation.override(language):
        drafts.draft_checks_compute(release)
    return True


@task()
def release_comparison_compute(old_id: int, new_id: int) -> bool:
    """Compare two large releases as they stand and store the result (``annotation.releases.comparisons``)."""
    found = {r.pk: r for r in Release.objects.filter(pk__in=[old_id, new_id])}
    if old_id not in found or new_id not in found:
        return False
    comparisons.comparison_compute(old=found[old_id], new=found[new_id])
    return True
