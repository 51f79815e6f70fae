"""Reads of releases shared by pages and the API: lists and lookups by benchmark and version."""

from django.db.models import QuerySet

from annotation.releases.models import Release


def release_list() -> QuerySet[Release]:
    """Return every release with its benchmark, by benchmark and newest first."""
    return Release.objects.select_related("benchmark").order_by("benchmark__slug", "-created_at")


def release_by_version(*, slug: str, version: str) -> Release | None:
    """Return the release of a benchmark by version, with who created and froze it; None if there is none."""
    return (
        Release.objects.select_related("benchmark", "created_by", "frozen_by")
        .filter(benchmark__slug=slug, version=version)
        .first()
    )


def benchmark_releases(*, slug: str) -> QuerySet[Release]:
    """Return every release of a benchmark, newest first."""
    return Release.objects.filter(benchmark__slug=slug).select_related("benchmark").order_by("-created_at")


def release_others(*, release: Release) -> QuerySet[Release]:
    """Return the other releases of the same benchmark, newest first."""
    return Release.objects.filter(benchmark=release.benchmark).exclude(pk=release.pk).order_by("-created_at")
