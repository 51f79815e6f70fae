"""Reading the near-duplicate index: an item's nearest items and a benchmark's near-duplicate clusters, in a fixed
number of queries whatever the size of the bank (docs/screening.md, *Near-duplicates*).

Candidates come from the stored band keys; every score shown is the exact TF-IDF cosine of the two texts, with the
index's n-gram weights.
"""

from array import array
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache

import numpy as np
from django.db.models import Count, Exists, F, OuterRef, Q, Window
from django.db.models.functions import RowNumber

from annotation.items import lsh, signatures
from annotation.items.content import LANGUAGES, prose_text
from annotation.items.models import Benchmark, Item, ItemSignature, ItemSignatureBand, SimilarityIndex
from annotation.items.similarity import Idf, NearDuplicate, clusters, pair_cosines, score_pairs, vectorise

# Items sharing the most band keys with the item, scored exactly on its page; more than any real cluster.
CANDIDATES = 50
NEAREST = 3
_STREAM = 5000
# Texts of items in pairs read per query: one query up to that many, whatever the size of the benchmark.
_TEXTS = 10_000


@dataclass(frozen=True)
class Neighbour:
    language: str
    uid: str
    score: float
    warn: bool


@dataclass
class Neighbours:
    """The nearest items of one item, and the languages of the item the index does not cover yet."""

    nearest: list[Neighbour] = field(default_factory=list)
    unindexed: list[str] = field(default_factory=list)


@lru_cache(maxsize=32)
def _weights(index_pk: int, built_at: datetime) -> Idf:
    """Return the n-gram weights of an index as counted at ``built_at`` (kept in memory until counted again)."""
    index = SimilarityIndex.objects.only("idf_grams", "idf_df", "idf_documents").get(pk=index_pk)
    return signatures.weights_of(index)


def _indexes(benchmark_id: int, languages: tuple[str, ...] = LANGUAGES) -> dict[str, SimilarityIndex]:
    """Return the current-scheme indexes of a benchmark by language (one query).

    Their weights are kept fresh by the writes (``signatures.signatures_update``, ``signatures.index_build``), so
    a read never counts them.
    """
    found = SimilarityIndex.objects.filter(benchmark_id=benchmark_id, language__in=languages, scheme=lsh.SCHEME)
    return {index.language: index for index in found.defer("idf_grams", "idf_df")}


def item_neighbours(*, item: Item, threshold: float, k: int = NEAREST) -> Neighbours:
    """Return the ``k`` nearest items of ``item`` in each of its languages, with their cosine similarity.

    Nearest among the items sharing band keys with it (any item above ``lsh.LOWEST_THRESHOLD``); a rejected item
    and rejected candidates are left out, as before.
    """
    result = Neighbours()
    revision = item.current_revision
    if revision is None or item.status == Item.Status.REJECTED:
        return result
    texts = {lang: prose_text(revision.content.get(lang)) for lang in LANGUAGES}
    texts = {lang: text for lang, text in texts.items() if text.strip()}
    indexes = _indexes(item.benchmark_id)
    probes = {}
    for lang, text in texts.items():
        if lang not in indexes:
            continue
        values = lsh.signatures([text], signatures.stop_shingles(indexes[lang]))
        probes[lang] = values[0], lsh.band_keys(values)[0]
    # One query for every language: the CANDIDATES signatures sharing the most band keys with the item in each
    # (ranked per language in SQL), with the item's own signatures to tell whether it is indexed.
    probing = Q(pk__in=[])
    for lang, (_values, keys) in probes.items():
        probing |= Q(language=lang, key__in=keys.tolist())
    sharing = (
        ItemSignatureBand.objects.filter(probing, benchmark_id=item.benchmark_id)
        .exclude(signature__item_id=item.pk)
        .exclude(signature__item__status=Item.Status.REJECTED)
        .values("signature_id", "language")
        .annotate(shared=Count("band"))
        .annotate(
            rank=Window(
                RowNumber(), partition_by=[F("language")], order_by=[F("shared").desc(), F("signature_id").asc()]
            )
        )
        .filter(rank__lte=CANDIDATES)
    )
    fields = ("item_id", "item__uid", "language", "revision_id", "minhash", "revision__content")
    # A UNION rather than an OR: PostgreSQL answers "in the candidates or the item's own" with a scan of every
    # signature, each half alone with an index.
    rows = (
        ItemSignature.objects.filter(pk__in=sharing.values("signature_id"))
        .values_list(*fields)
        .union(ItemSignature.objects.filter(item_id=item.pk).values_list(*fields), all=True)
    )
    found: dict[str, list[tuple[str, bytes, str]]] = {lang: [] for lang in probes}
    indexed = set()
    for item_id, uid, lang, revision_id, minhash, content in rows:
        if item_id == item.pk:
            if revision_id == revision.pk:
                indexed.add(lang)
        elif lang in found:
            found[lang].append((uid, minhash, prose_text(content.get(lang))))
    result.unindexed = [lang for lang in texts if lang not in indexed or lang not in indexes]
    for lang, (values, _keys) in probes.items():
        result.nearest += _nearest(lang, texts[lang], values, found[lang], indexes[lang], threshold=threshold, k=k)
    return result


def _nearest(
    lang: str,
    text: str,
    values: np.ndarray,
    candidates: list[tuple[str, bytes, str]],
    index: SimilarityIndex,
    *,
    threshold: float,
    k: int,
) -> list[Neighbour]:
    """Score the candidates that pass the MinHash estimate exactly and return the ``k`` most similar."""
    kept = [
        (uid, other)
        for uid, minhash, other in candidates
        if minhash and lsh.estimated_jaccard(values, np.frombuffer(minhash, dtype=np.uint32)) >= lsh.PRUNE_JACCARD
    ]
    if not kept:
        return []
    vectors = vectorise([text] + [other for _uid, other in kept], _weights(index.pk, index.built_at))
    scores = pair_cosines(vectors, np.zeros(len(kept), dtype=np.int64), np.arange(1, len(kept) + 1))
    ranked = sorted(zip(scores.tolist(), [uid for uid, _other in kept], strict=True), key=lambda s: (-s[0], s[1]))
    return [Neighbour(lang, uid, round(score, 4), score >= threshold) for score, uid in ranked[:k]]


@dataclass
class Report:
    """The near-duplicate clusters of one benchmark and language, largest first, each a list of (uid, best score)."""

    clusters: list[list[tuple[str, float]]] = field(default_factory=list)
    pairs: int = 0
    items: int = 0
    indexed: int = 0

    @property
    def missing(self) -> int:
        return self.items - self.indexed


def near_duplicate_report(*, benchmark: Benchmark, language: str, threshold: float) -> Report:
    """Return the clusters of items whose texts in ``language`` are at least ``threshold`` similar.

    Memory follows the items sharing band keys, not the size of the benchmark: band rows are read in one
    streamed query, pairs are pruned on their MinHash estimate and scored exactly a chunk at a time.
    """
    items = Item.objects.filter(benchmark=benchmark, **{f"has_{language}": True}).exclude(status=Item.Status.REJECTED)
    current = ItemSignature.objects.filter(
        item_id=OuterRef("pk"), language=language, revision_id=OuterRef("current_revision_id")
    )
    report = Report(**items.aggregate(items=Count("pk"), indexed=Count("pk", filter=Q(Exists(current)))))
    index = _indexes(benchmark.pk, (language,)).get(language)
    if index is None:
        return report
    # Rejected items are left out when their texts are read: grouping the keys needs no join that way.
    bands = ItemSignatureBand.objects.filter(benchmark=benchmark, language=language)
    shared = bands.values("key").annotate(n=Count("key")).filter(n__gt=1).values("key")
    in_shared = bands.filter(key__in=shared).order_by()
    # Two streamed reads, each a scan in index order: the band rows of the shared keys (8 bytes each), then one copy
    # of the MinHash values of each signature among them.
    keys, members = array("q"), array("q")
    for key, signature_id in in_shared.values_list("key", "signature_id").iterator(chunk_size=_STREAM):
        keys.append(key)
        members.append(signature_id)
    if not keys:
        return report
    minhashes = {
        pk: np.frombuffer(minhash, dtype=np.uint32)
        for pk, minhash in ItemSignature.objects.filter(pk__in=in_shared.values("signature_id"))
        .values_list("pk", "minhash")
        .iterator(chunk_size=_STREAM)
    }
    ids = np.array(sorted(minhashes), dtype=np.int64)
    matrix = np.stack([minhashes[pk] for pk in ids.tolist()])
    del minhashes
    local = np.searchsorted(ids, np.frombuffer(members, dtype=np.int64))
    pairs = lsh.candidates(np.frombuffer(keys, dtype=np.int64), local, matrix)
    wanted = set(ids[np.unique(pairs)].tolist())
    texts = _texts(sorted(wanted), language)
    position = {pk: i for i, pk in enumerate(texts)}
    remap = np.array([position.get(pk, -1) for pk in ids.tolist()], dtype=np.int64)
    pairs = remap[pairs]
    pairs = pairs[(pairs >= 0).all(axis=1)]
    uids = [uid for uid, _text in texts.values()]
    weights = _weights(index.pk, index.built_at)
    scored = score_pairs([text for _uid, text in texts.values()], pairs, weights, threshold=threshold)
    found = [NearDuplicate(uids[i], uids[j], round(score, 4)) for i, j, score in scored]
    best: dict[str, float] = {}
    for pair in found:
        best[pair.a] = max(best.get(pair.a, 0.0), pair.score)
        best[pair.b] = max(best.get(pair.b, 0.0), pair.score)
    report.pairs = len(found)
    report.clusters = [[(uid, best[uid]) for uid in group] for group in clusters(found)]
    return report


def _texts(pks: list[int], language: str) -> dict[int, tuple[str, str]]:
    """Return (uid, text) of the signatures ``pks`` whose items are not rejected, ``_TEXTS`` signatures a query."""
    texts = {}
    for start in range(0, len(pks), _TEXTS):
        rows = (
            ItemSignature.objects.filter(pk__in=pks[start : start + _TEXTS])
            .exclude(item__status=Item.Status.REJECTED)
            .values_list("pk", "item__uid", f"revision__content__{language}")
        )
        texts.update((pk, (uid, prose_text(version))) for pk, uid, version in rows.iterator(chunk_size=_STREAM))
    return texts
