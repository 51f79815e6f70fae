"""Reads shared by pages, the API, exports and commands."""

from collections import Counter
from collections.abc import Iterator, Mapping

from django.core.cache import cache
from django.db.models import CharField, Count, Exists, F, OuterRef, Prefetch, Q, QuerySet, Value
from django.utils.translation import gettext as _

from annotation.items.content import CJK_CHAR, LANGUAGES, prose_text, search_form
from annotation.items.diff import flatten_version
from annotation.items.interchange import FORMAT
from annotation.items.models import (
    Benchmark,
    CrisisLevel,
    Dimension,
    DraftingJob,
    EmotionCategory,
    Item,
    ItemRevision,
    ItemTemplate,
    Scenario,
    ScenarioDomain,
    StatusDecision,
)

ITEM_FILTERS = (
    "benchmark",
    "dimension",
    "kind",
    "status",
    "origin",
    "languages",
    "parity",
    "q",
    "lang",
    "domain",
    "valence",
    "difficulty",
    "scenario",
)
CANDIDATE_STATUSES = ("draft", "in_screening")


HOME_SUMMARY_KEY = "items:bank_summary"
# Counts are kept under the bank's version: a new one is read at once, the old entries expire unread.
BANK_CACHE_TTL_SECONDS = 24 * 3600


def bank_version() -> str:
    """Return a token that changes with every write the counts depend on: an item created, a status decided (every
    status change records a ``StatusDecision``), a revision saved (parity, metadata). One query of three indexed
    maxima, whatever the size of the bank."""
    from django.db import connection

    tables = [model._meta.db_table for model in (Item, StatusDecision, ItemRevision)]
    quote = connection.ops.quote_name
    sql = "SELECT " + ", ".join(f"(SELECT MAX(id) FROM {quote(table)})" for table in tables)
    with connection.cursor() as cursor:
        cursor.execute(sql)
        row = cursor.fetchone()
    return ".".join(str(value or 0) for value in row)


def bank_summary() -> dict:
    """Return the home page's counts: benchmarks with their items, items per status, items out of parity.

    ``status_counts`` holds (label, count, status) for every status, in the order of ``Item.Status``. The counts
    come from one grouped query, cached under ``bank_version()``: the home page does not count the bank per
    request, and a round closed or an item accepted shows in the next page.
    """
    return cache.get_or_set(f"{HOME_SUMMARY_KEY}:{bank_version()}", _bank_summary, BANK_CACHE_TTL_SECONDS)


def benchmark_choices() -> list[tuple[str, str]]:
    """Return (slug, name) of every benchmark, by slug: the benchmark filter of the lists."""
    return [(b.slug, b.name) for b in Benchmark.objects.order_by("slug")]


def _bank_summary() -> dict:
    per_benchmark: Counter = Counter()
    per_status: Counter = Counter()
    parity_problems = 0
    groups = Item.objects.values_list("benchmark_id", "status", "parity_ok").annotate(n=Count("id")).order_by()
    for benchmark_id, status, parity_ok, n in groups:
        per_benchmark[benchmark_id] += n
        per_status[status] += n
        parity_problems += 0 if parity_ok else n
    benchmarks = list(Benchmark.objects.order_by("slug"))
    for benchmark in benchmarks:
        benchmark.n_items = per_benchmark[benchmark.pk]
    return {
        "benchmarks": benchmarks,
        "status_counts": [(label, per_status[value], value) for value, label in Item.Status.choices],
        "parity_problems": parity_problems,
    }


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
        qs = qs.filter(status__in=CANDIDATE_STATUSES) if value == "candidate" else qs.filter(status=value)
    if value := filters.get("origin"):
        qs = qs.filter(origin=value)
    match filters.get("lang"):
        case "en":
            qs = qs.filter(has_en=True)
        case "zh":
            qs = qs.filter(has_zh=True)
    if value := filters.get("domain"):
        qs = qs.filter(scenario__domain__code=value)
    if value := filters.get("scenario"):
        qs = qs.filter(scenario__code=value)
    if value := filters.get("valence"):
        labelled = Item.emotions.through.objects.filter(item_id=OuterRef("pk"), emotioncategory__valence=value)
        qs = qs.filter(Exists(labelled))
    if value := filters.get("difficulty"):
        qs = qs.filter(difficulty="" if value == "none" else value)
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
        # search_text is stored in search form (annotation.items.content.search_form: case folded, Han spelled in
        # ASCII),
        # which a trigram index serves on PostgreSQL; elsewhere this is a plain substring scan.
        # Uids are ASCII: a Chinese query leaves them out, so that it needs no scan of the uid index.
        in_text = Q(search_text__contains=search_form(value))
        qs = qs.filter(in_text if CJK_CHAR.search(value) else Q(uid__icontains=value) | in_text)
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


def item_status_decisions(*, item: Item) -> QuerySet[StatusDecision]:
    """Return the status decisions of an item, oldest first."""
    return item.status_decisions.select_related("decided_by", "item").order_by("created_at", "id")


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
    from annotation.items.models import CrisisLevel

    # Every benchmark's dimensions in one query, whatever the number of benchmarks.
    by_benchmark: dict[int, dict[int | None, list[Dimension]]] = {}
    for dim in Dimension.objects.order_by("position"):
        by_benchmark.setdefault(dim.benchmark_id, {}).setdefault(dim.parent_id, []).append(dim)
    benchmarks = []
    for benchmark in Benchmark.objects.all():
        children = by_benchmark.get(benchmark.pk, {})
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


COVERAGE_TTL_SECONDS = BANK_CACHE_TTL_SECONDS


def coverage(*, benchmark: Benchmark) -> dict:
    """Count accepted and candidate items by dimension x language, scenario domain, valence and difficulty.

    Each count is per language (an item counts once for each language it has); an item labelled with emotions of
    several valence groups counts in each of them. The counts, grouped in the database, still read every item of
    the benchmark, so they are cached under ``bank_version()`` (a write shows at once).
    """
    return cache.get_or_set(
        f"items:coverage:{benchmark.pk}:{bank_version()}", lambda: _coverage(benchmark=benchmark), COVERAGE_TTL_SECONDS
    )


def _coverage(*, benchmark: Benchmark) -> dict:
    from annotation.items.models import ScenarioDomain

    dims = list(Dimension.objects.filter(benchmark=benchmark, children__isnull=True).order_by("position"))
    domains = list(ScenarioDomain.objects.all())
    valences = list(EmotionCategory.Valence.values)
    difficulties = [*Item.Difficulty.values, "none"]
    empty = lambda: {"accepted": 0, "candidate": 0}  # noqa: E731
    table = {
        d.pk: {
            "lang": {lang: empty() for lang in ("en", "zh")},
            "domain": {(lang, dom.code): empty() for lang in ("en", "zh") for dom in domains},
            "valence": {(lang, v): empty() for lang in ("en", "zh") for v in valences},
            "difficulty": {(lang, x): empty() for lang in ("en", "zh") for x in difficulties},
        }
        for d in dims
    }
    # Counted in the database, in one query of two grouped halves: one row per group, however many items there are.
    counted = Item.objects.filter(benchmark=benchmark).exclude(status=Item.Status.REJECTED).order_by()
    keys = ("dimension_id", "status", "has_en", "has_zh")
    none = Value(None, output_field=CharField())
    by_other = counted.annotate(
        g_difficulty=F("difficulty"), g_domain=F("scenario__domain__code"), g_valence=none
    ).values_list(*keys, "g_difficulty", "g_domain", "g_valence")
    by_valence = (
        counted.filter(emotions__isnull=False)
        .annotate(g_difficulty=none, g_domain=none, g_valence=F("emotions__valence"))
        .values_list(*keys, "g_difficulty", "g_domain", "g_valence")
    )
    groups = (
        by_other.annotate(n=Count("id")).union(by_valence.annotate(n=Count("id", distinct=True)), all=True).order_by()
    )
    for dimension_id, status, has_en, has_zh, difficulty, domain, valence, n in groups:
        row = table.get(dimension_id)
        if row is None:
            continue
        bucket = "accepted" if status == Item.Status.ACCEPTED else "candidate"
        for lang in _present(has_en, has_zh):
            if valence is not None:
                row["valence"][(lang, valence)][bucket] += n
                continue
            row["lang"][lang][bucket] += n
            if domain is not None:
                row["domain"][(lang, domain)][bucket] += n
            row["difficulty"][(lang, difficulty or "none")][bucket] += n
    return {"dimensions": dims, "table": table, "domains": domains, "valences": valences, "difficulties": difficulties}


def _present(has_en: bool, has_zh: bool) -> list[str]:
    return [lang for lang, present in (("en", has_en), ("zh", has_zh)) if present]


def benchmark_texts(*, benchmark: Benchmark, lang: str) -> dict[str, str]:
    """Return the current prose of every non-rejected item of a benchmark in one language, by uid."""
    items = (
        Item.objects.filter(benchmark=benchmark).exclude(status=Item.Status.REJECTED).select_related("current_revision")
    )
    return {i.uid: prose_text((i.current_revision.content if i.current_revision else {}).get(lang)) for i in items}


def item_languages(item: Item, revision: ItemRevision | None) -> list[dict]:
    """Return each language's version of ``revision`` with its label and flattened rows, for item templates."""
    content = revision.content if revision else {}
    letters = "ABCDEFGHIJKL"
    result = []
    for lang in LANGUAGES:
        version = content.get(lang)
        result.append(
            {
                "code": lang,
                "label": _("English") if lang == "en" else _("Chinese"),
                "version": version,
                "letters": letters,
                "rows": flatten_version(item.kind, version),
            }
        )
    return result


def item_template_list() -> QuerySet[ItemTemplate]:
    """Return the drafting templates with their dimensions and authors."""
    return ItemTemplate.objects.select_related("dimension", "created_by")


def drafting_job_list() -> QuerySet[DraftingJob]:
    """Return drafting jobs, newest first, with their templates' dimensions and LLM runs."""
    return DraftingJob.objects.select_related("template__dimension", "llm_run")


def revision_classification(revision: ItemRevision | None) -> dict:
    """Return a revision's own classification (as stored with it) with names: scenario, emotions, crisis level and
    difficulty. At most three queries, none for what the revision leaves empty."""
    attributes = getattr(revision, "attributes", None) or {}
    scenario = None
    if attributes.get("scenario"):
        scenario = Scenario.objects.select_related("domain").filter(code=attributes["scenario"]).first()
    emotions = []
    if attributes.get("emotions"):
        emotions = list(EmotionCategory.objects.filter(code__in=attributes["emotions"]))
    crisis = None
    if attributes.get("crisis_level") is not None:
        crisis = CrisisLevel.objects.filter(level=attributes["crisis_level"]).first()
    difficulty = attributes.get("difficulty") or ""
    return {
        "scenario": scenario,
        "emotions": emotions,
        "crisis_level": crisis,
        "difficulty": Item.Difficulty(difficulty).label if difficulty in Item.Difficulty.values else "",
    }
