"""Reads shared by pages, the API, exports and commands."""

from collections import Counter
from collections.abc import Callable, Iterator, Mapping

from django.core.cache import cache
from django.db import connection
from django.db.models import CharField, Count, Exists, F, OuterRef, Prefetch, Q, QuerySet, Subquery, Value
from django.utils.translation import gettext as _

from annotation.items.content import CJK_CHAR, LANGUAGES, prose_text, search_form
from annotation.items.diff import diff_text, flatten_version
from annotation.items.interchange import FORMAT
from annotation.items.models import (
    Benchmark,
    CrisisLevel,
    Dimension,
    DraftingJob,
    EmotionCategory,
    Item,
    ItemImportJob,
    ItemRevision,
    ItemTemplate,
    KeyJudgement,
    KeyValidation,
    Reply,
    ReplyAudit,
    ReplyRevision,
    ReplySet,
    ReplyTurn,
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


# The list filters that take their value as given: name -> the condition the value adds.
_VALUE_FILTERS: dict[str, Callable[[str], Q | Exists]] = {
    "benchmark": lambda value: Q(benchmark__slug=value),
    "dimension": lambda value: Q(dimension__code=value) | Q(dimension__parent__code=value),
    "kind": lambda value: Q(kind=value),
    "status": lambda value: Q(status__in=CANDIDATE_STATUSES) if value == "candidate" else Q(status=value),
    "origin": lambda value: Q(origin=value),
    "domain": lambda value: Q(scenario__domain__code=value),
    "scenario": lambda value: Q(scenario__code=value),
    "valence": lambda value: Exists(
        Item.emotions.through.objects.filter(item_id=OuterRef("pk"), emotioncategory__valence=value)
    ),
    "difficulty": lambda value: Q(difficulty="" if value == "none" else value),
}
# The list filters with a fixed set of choices: name -> {choice: condition}; any other value filters nothing.
_CHOICE_FILTERS: dict[str, dict[str, Q]] = {
    "lang": {"en": Q(has_en=True), "zh": Q(has_zh=True)},
    "languages": {
        "both": Q(has_en=True, has_zh=True),
        "en_only": Q(has_en=True, has_zh=False),
        "zh_only": Q(has_en=False, has_zh=True),
        "missing": Q(has_en=False) | Q(has_zh=False),
    },
    "parity": {"problems": Q(parity_ok=False), "ok": Q(parity_ok=True)},
}


def item_list(*, filters: Mapping[str, str] | None = None) -> QuerySet[Item]:
    """Return items matching the list filters, with what the list page and API show."""
    filters = filters or {}
    qs = Item.objects.select_related("benchmark", "dimension", "current_revision", "scenario", "crisis_level")
    for name, condition in _VALUE_FILTERS.items():
        if value := filters.get(name):
            qs = qs.filter(condition(value))
    for name, choices in _CHOICE_FILTERS.items():
        if (condition := choices.get(filters.get(name) or "")) is not None:
            qs = qs.filter(condition)
    if value := (filters.get("q") or "").strip():
        qs = qs.filter(item_search(value))
    return qs.order_by("uid")


def item_search(value: str) -> Q:
    """Return the condition of an item search for ``value`` (the list page, the API and the admin site).

    search_text is stored in search form (annotation.items.content.search_form: case folded, Han spelled in ASCII),
    which a trigram index serves on PostgreSQL; elsewhere this is a plain substring scan. Uids are ASCII: a Chinese
    query leaves them out, so that it needs no scan of the uid index.
    """
    in_text = Q(search_text__contains=search_form(value))
    return in_text if CJK_CHAR.search(value) else Q(uid__icontains=value) | in_text


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


def item_import_jobs(*, user: object) -> QuerySet[ItemImportJob]:
    """Return the import jobs ``user`` may see, newest first: their own, or every one with
    ``items.view_itemimportjob`` (admins). The stored file is never read."""
    jobs = ItemImportJob.objects.defer("data").select_related("created_by")
    if not user.has_perm("items.view_itemimportjob"):
        jobs = jobs.filter(created_by=user)
    return jobs.order_by("-created_at", "-pk")


# --- EiCAP reply sets and key validation -------------------------------------------------------------------------

REPLY_SET_STATES = ("to_audit", "audited", "expanded")


def reply_set_list(*, dimension: str = "", state: str = "") -> QuerySet[ReplySet]:
    """Reply sets with their counts of replies by audit state (one query), newest first."""
    sets = ReplySet.objects.select_related("dimension").annotate(
        replies_total=Count("turns__replies"),
        replies_pending=Count("turns__replies", filter=Q(turns__replies__audit=Reply.Audit.PENDING)),
        replies_rejected=Count("turns__replies", filter=Q(turns__replies__audit=Reply.Audit.REJECTED)),
        replies_edited=Count("turns__replies", filter=Q(turns__replies__audit=Reply.Audit.EDITED)),
        turn_count=Count("turns", distinct=True),
    )
    if dimension:
        sets = sets.filter(dimension__code=dimension)
    if state == "to_audit":
        sets = sets.filter(replies_pending__gt=0)
    elif state == "audited":
        sets = sets.filter(replies_pending=0, expanded_at__isnull=True)
    elif state == "expanded":
        sets = sets.filter(expanded_at__isnull=False)
    return sets.order_by("-created_at", "-pk")


def reply_diff(old: dict | None, new: dict | None) -> list[dict]:
    """Diff two revisions of a reply, text and principle in each language (the item diff's sentence/word rules)."""
    rows = []
    for lang in LANGUAGES:
        before, after = (old or {}).get(lang) or {}, (new or {}).get(lang) or {}
        if not before and not after:
            continue
        for field in ("text", "principle"):
            a, b = before.get(field, ""), after.get(field, "")
            rows.append({"language": lang, "field": field, "changed": a != b, "segments": diff_text(a, b, lang)})
    return rows


def reply_set_turns(reply_set: ReplySet) -> list[ReplyTurn]:
    """The turns of a reply set with their replies, revisions (each with its diff from the one before) and audits.

    The replies are read with their turns in one query (each turn's ``replies.all()`` is filled from it, as
    ``prefetch_related`` fills it), then their revisions and audits: three queries, whatever the set's size."""
    # Preferred replies first ("preferred" sorts after "distractor").
    replies = (
        Reply.objects.filter(turn__reply_set=reply_set)
        .select_related("turn", "current_revision", "audited_by")
        .prefetch_related(
            Prefetch("revisions", queryset=ReplyRevision.objects.select_related("author").order_by("number")),
            Prefetch("audits", queryset=ReplyAudit.objects.select_related("decided_by").order_by("created_at", "pk")),
        )
        .order_by("turn__number", "-role", "position")
    )
    turns: dict[int, ReplyTurn] = {}
    grouped: dict[int, list[Reply]] = {}
    for reply in replies:
        turn = turns.setdefault(reply.turn_id, reply.turn)
        reply.turn = turn
        grouped.setdefault(turn.pk, []).append(reply)
        revisions = list(reply.revisions.all())
        reply.history = [
            {"revision": rev, "diff": reply_diff(revisions[n - 1].content, rev.content) if n else []}
            for n, rev in enumerate(revisions)
        ]
    # A turn has six replies from its creation (reply_set_create), so no turn is missed by reading them.
    for turn in turns.values():
        cached = turn.replies.all()
        cached._result_cache, cached._prefetch_done = grouped[turn.pk], True
        turn._prefetched_objects_cache = {"replies": cached}
    return list(turns.values())


def key_validation_latest_pk(*, benchmark: Benchmark | None = None) -> QuerySet[KeyValidation]:
    """The primary key of the newest collected key validation (of a benchmark), as a subquery to filter by."""
    validations = KeyValidation.objects.filter(collected=True)
    if benchmark is not None:
        validations = validations.filter(benchmark=benchmark)
    return validations.order_by("-collected_at", "-pk").values("pk")[:1]


def key_validation_latest(*, benchmark: Benchmark | None = None) -> KeyValidation | None:
    """The newest collected key validation (of a benchmark)."""
    validations = KeyValidation.objects.filter(collected=True)
    if benchmark is not None:
        validations = validations.filter(benchmark=benchmark)
    return validations.order_by("-collected_at", "-pk").first()


def key_disagreements(
    *, validation: KeyValidation | Subquery, review: str = "", item_prefix: str = ""
) -> QuerySet[KeyJudgement]:
    """The probe turns on which the validation's judge did not choose the key (or named no option); ``validation``
    may be a subquery of its primary key (``key_validation_latest_pk``)."""
    found = (
        KeyJudgement.objects.filter(validation=validation)
        .exclude(chosen=F("key"))
        .select_related("item", "revision", "reviewed_by")
        .order_by("item__uid", "language", "turn")
    )
    if review:
        found = found.filter(review=review)
    if item_prefix:
        found = found.filter(item__uid__startswith=item_prefix)
    return found
