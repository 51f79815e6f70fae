"""Frozen releases made through the release services."""

from django.contrib.auth.models import AbstractBaseUser

from annotation.items.models import Benchmark
from annotation.releases import services
from annotation.releases.models import Release


def make_frozen_release(
    *,
    benchmark: str = "facet",
    version: str = "1.0.0",
    title: str | None = None,
    user: AbstractBaseUser | None = None,
    filters: dict | None = None,
    override_reason: str = "test release",
    **fields: str,
) -> Release:
    """Pin the items matching ``filters`` (accepted ones by default) and freeze the release.

    ``override_reason`` is recorded when the checklist fails, as it does for any release short of the
    per-dimension targets; ``fields`` (description, licence, citation) go to ``release_create``.
    """
    release = services.release_create(
        benchmark=Benchmark.objects.get(slug=benchmark),
        version=version,
        title=title or f"{benchmark} {version}",
        user=user,
        filters=filters,
        **fields,
    )
    return services.release_freeze(release=release, user=user, override_reason=override_reason)
