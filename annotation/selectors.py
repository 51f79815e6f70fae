"""Reads shared by pages, the API, exports and commands."""

from collections.abc import Iterator, Mapping

from django.db.models import Prefetch, Q, QuerySet

from annotation.interchange import FORMAT
from annotation.models import Benchmark, Dimension, EmotionCategory, Item, ItemRevision, ScenarioDomain

ITEM_FILTERS = ("benchmark", "dimension", "kind", "status", "origin", "languages", "parity", "q")


def item_list(*, filters: Mapping[str, str] | None = None) -> QuerySet[Item]:
    """Return items matching the list filters, with what the list page and API show."""
    filters = filters or {}
    qs = Item.objects.select_related("benchmark", "dimension", "current_revision", "scenario", "crisis_level")
    if value := filters.get("benchmark"):
        qs = qs.filter(benchmark__slug=value)
    if value := filters.get("dimension"):
        qs = qs.filter(Q(dimension__code=value) | Q(dimension__parent__code=value))
    if value := filters.get("kind"):
        qs = qs.filter(kind=value)
    if value := filters.get("status"):
        qs = qs.filter(status=value)
    if value := filters.get("origin"):
        qs = qs.filter(origin=value)
    match filters.get("languages"):
        case "both":
            qs = qs.filter(has_en=True, has_zh=True)
        case "en_only":
            qs = qs.filter(has_en=True, has_zh=False)
        case "zh_only":
            qs = qs.filter(has_en=False, has_zh=True)
        case "missing":
            qs = qs.filter(Q(has_en=False) | Q(has_zh=False))
    match filters.get("parity"):
        case "problems":
            qs = qs.filter(parity_ok=False)
        case "ok":
            qs = qs.filter(parity_ok=True)
    if value := (filters.get("q") or "").strip():
        qs = qs.filter(Q(uid__icontains=value) | Q(search_text__icontains=value))
    return qs.order_by("uid")


def item_detail(*, uid: str) -> Item:
    """Return one item with its taxonomy and current revision."""
    return (
        Item.objects.select_related(
            "benchmark",
            "dimension",
            "dimension__parent",
            "current_revision",
            "current_revision__author",
            "scenario",
            "scenario__domain",
            "crisis_level",
            "created_by",
            "updated_by",
        )
        .prefetch_related("emotions")
        .get(uid=uid)
    )


def item_revisions(*, item: Item) -> QuerySet[ItemRevision]:
    """Return the revisions of an item, newest first."""
    return item.revisions.select_related("author").order_by("-number")


def item_export_records(*, items: QuerySet[Item]) -> Iterator[dict]:
    """Yield interchange records for the current revision of each item, ordered by uid."""
    items = items.select_related("benchmark", "current_revision").order_by("uid")
    for item in items.iterator(chunk_size=500):
        revision = item.current_revision
        if revision is None:
            continue
        attrs = revision.attributes
        yield {
            "format": FORMAT,
            "uid": item.uid,
            "benchmark": item.benchmark.slug,
            "dimension": attrs["dimension"],
            "kind": item.kind,
            "scenario": attrs.get("scenario"),
            "emotions": attrs.get("emotions", []),
            "crisis_level": attrs.get("crisis_level"),
            "difficulty": attrs.get("difficulty", ""),
            "status": item.status,
            "origin": item.origin,
            "metadata": attrs.get("metadata", {}),
            "revision": revision.number,
            "content": revision.content,
        }


def taxonomy_tree() -> dict:
    """Return benchmarks with their dimension trees, emotions by valence, scenarios by domain, crisis levels."""
    from annotation.models import CrisisLevel

    benchmarks = []
    for benchmark in Benchmark.objects.all():
        dims = list(Dimension.objects.filter(benchmark=benchmark).order_by("position"))
        children: dict[int | None, list[Dimension]] = {}
        for dim in dims:
            children.setdefault(dim.parent_id, []).append(dim)
        benchmarks.append({"benchmark": benchmark, "roots": children.get(None, []), "children": children})
    emotions = {v: [] for v in EmotionCategory.Valence.values}
    for emotion in EmotionCategory.objects.all():
        emotions[emotion.valence].append(emotion)
    domains = ScenarioDomain.objects.prefetch_related(Prefetch("scenarios"))
    return {
        "benchmarks": benchmarks,
        "emotions": emotions,
        "domains": domains,
        "crisis_levels": CrisisLevel.objects.all(),
    }
