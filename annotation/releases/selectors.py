"""Reads of releases shared by pages, the API and the freeze checklist: lists, lookups by benchmark and version, and
the facts the checklist is run on."""

from django.db.models import QuerySet

from annotation.items.models import EmotionCategory, Scenario
from annotation.releases.checks import EntryFacts
from annotation.releases.models import Release, ReleaseItem


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


def release_entry_facts(*, release: Release, entries: list[ReleaseItem]) -> list[EntryFacts]:
    """Return what the freeze checklist needs to know about each pinned entry, in the order of ``entries``."""
    dims = {d.code: d for d in release.benchmark.dimensions.select_related("parent")}
    valence = dict(EmotionCategory.objects.values_list("code", "valence"))
    domains = dict(Scenario.objects.values_list("code", "domain__code"))
    facts = []
    for e in entries:
        attrs = e.revision.attributes
        dim = dims.get(attrs.get("dimension"))
        facts.append(
            EntryFacts(
                uid=e.item.uid,
                kind=e.item.kind,
                status=e.item.status,
                dimension=attrs.get("dimension", ""),
                dimension_target=dim.target_items if dim else None,
                content=e.revision.content,
                domain=domains.get(attrs.get("scenario")),
                valences=[valence[c] for c in attrs.get("emotions", []) if c in valence],
            )
        )
    return facts
