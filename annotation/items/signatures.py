"""Writing the near-duplicate index: signatures of revisions as they are saved, the whole index in batches, and the
n-gram weights (docs/screening.md, *Near-duplicates*).

Every write here is a bounded amount of work: one item (``signatures_update``, inside the saving transaction), one
batch of items (``index_build``), or one sample of ``similarity.IDF_SAMPLE`` texts (``weights_refresh``).
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
from django.db import connection, transaction
from django.db.models import Count, Exists, Max, OuterRef
from django.utils import timezone

from annotation.items import lsh
from annotation.items.content import LANGUAGES, prose_text
from annotation.items.models import Benchmark, Item, ItemRevision, ItemSignature, ItemSignatureBand, SimilarityIndex
from annotation.items.ngrams import stable_hash
from annotation.items.similarity import IDF_SAMPLE, Idf

BATCH = 500


@dataclass(frozen=True)
class Text:
    """One language of one item's current revision, as the index needs it."""

    item_id: int
    uid: str
    revision_id: int
    text: str


def stop_shingles(index: SimilarityIndex) -> np.ndarray:
    """Return the stop shingles the signatures of ``index`` are built without."""
    return np.frombuffer(bytes(index.stop_shingles), dtype=np.uint64)


def weights_of(index: SimilarityIndex) -> Idf:
    """Return the n-gram weights stored on ``index`` (its blobs must be loaded)."""
    return Idf(
        np.frombuffer(bytes(index.idf_grams), dtype=np.uint64),
        np.frombuffer(bytes(index.idf_df), dtype=np.uint32),
        index.idf_documents,
    )


def _index(benchmark_id: int, language: str) -> SimilarityIndex:
    index, _created = SimilarityIndex.objects.get_or_create(
        benchmark_id=benchmark_id, language=language, defaults={"scheme": lsh.SCHEME}
    )
    return index


def _write(index: SimilarityIndex, texts: list[Text]) -> None:
    """Store the signatures and band keys of ``texts`` (replacing the items' previous ones in this language)."""
    if not texts:
        return
    values = lsh.signatures([t.text for t in texts], stop_shingles(index))
    keys = lsh.band_keys(values)
    signatures = ItemSignature.objects.bulk_create(
        [
            ItemSignature(
                item_id=t.item_id,
                language=index.language,
                revision_id=t.revision_id,
                benchmark_id=index.benchmark_id,
                sample_rank=stable_hash(t.uid),
                minhash=values[i].tobytes() if t.text.strip() else b"",
            )
            for i, t in enumerate(texts)
        ],
        update_conflicts=True,
        unique_fields=["item", "language"],
        update_fields=["revision", "benchmark", "sample_rank", "minhash"],
    )
    ids = [s.pk for s in signatures]
    ItemSignatureBand.objects.filter(signature_id__in=ids).delete()
    rows = [
        (s.pk, band, index.benchmark_id, index.language, key)
        for s, t, row in zip(signatures, texts, keys.tolist(), strict=True)
        if t.text.strip()
        for band, key in enumerate(row)
    ]
    _insert_bands(rows)


def _insert_bands(rows: list[tuple[int, int, int, str, int]]) -> None:
    """Insert band rows with one prepared statement: building a model instance for each of the millions of rows
    of a full index would cost more than computing them."""
    meta, quote = ItemSignatureBand._meta, connection.ops.quote_name
    columns = ", ".join(
        quote(meta.get_field(name).column) for name in ("signature", "band", "benchmark", "language", "key")
    )
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # COPY streams the rows in one command: several times faster than a prepared INSERT per row.
            with cursor.cursor.copy(f"COPY {quote(meta.db_table)} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            return
        cursor.executemany(f"INSERT INTO {quote(meta.db_table)} ({columns}) VALUES (%s, %s, %s, %s, %s)", rows)


def signatures_update(*, item: Item, revision: ItemRevision) -> None:
    """Index ``revision``, the item's new current revision, in the saving transaction (a few queries)."""
    languages = [lang for lang in LANGUAGES if revision.content.get(lang)]
    ItemSignature.objects.filter(item=item).exclude(language__in=languages).delete()
    indexes = {i.language: i for i in SimilarityIndex.objects.filter(benchmark_id=item.benchmark_id)}
    for lang in languages:
        index = indexes.get(lang) or _index(item.benchmark_id, lang)
        _write(index, [Text(item.pk, item.uid, revision.pk, prose_text(revision.content.get(lang)))])
        if not index.stop_documents:
            _choose_stop_shingles(index)
        # The weights are counted again here, by the write that made them stale, so that reads never do it.
        if stale([index]):
            weights_refresh(index=index)


def _choose_stop_shingles(index: SimilarityIndex) -> None:
    """Choose the index's stop shingles once it has ``lsh.STOP_MIN_DOCUMENTS`` texts, and re-sign them all."""
    signed = ItemSignature.objects.filter(benchmark_id=index.benchmark_id, language=index.language)
    if signed.values("pk")[: lsh.STOP_MIN_DOCUMENTS].count() < lsh.STOP_MIN_DOCUMENTS:
        return
    locked = SimilarityIndex.objects.select_for_update().get(pk=index.pk)
    if locked.stop_documents:
        return
    weights = _sample_weights(locked)
    locked.stop_shingles = weights.stop_shingles().tobytes()
    locked.stop_documents = weights.documents
    locked.save(update_fields=["stop_shingles", "stop_documents", "built_at"])
    _save_weights(locked, weights)
    for batch in _batches(_current_texts(locked.benchmark_id, locked.language)):
        _write(locked, batch)
    index.stop_shingles, index.stop_documents = locked.stop_shingles, locked.stop_documents


def _current_texts(benchmark_id: int, language: str, *, missing_only: bool = False) -> Iterable[Text]:
    """Yield the text of every item of a benchmark having ``language``, in id order, a batch of rows at a time."""
    items = Item.objects.filter(benchmark_id=benchmark_id, current_revision__isnull=False, **{f"has_{language}": True})
    if missing_only:
        current = ItemSignature.objects.filter(
            item_id=OuterRef("pk"), language=language, revision_id=OuterRef("current_revision_id")
        )
        items = items.exclude(Exists(current))
    last = 0
    while True:
        rows = list(
            items.filter(pk__gt=last)
            .order_by("pk")
            .values_list("pk", "uid", "current_revision_id", f"current_revision__content__{language}")[:BATCH]
        )
        if not rows:
            return
        for pk, uid, revision_id, version in rows:
            yield Text(pk, uid, revision_id, prose_text(version))
        last = rows[-1][0]


def _batches(texts: Iterable[Text], size: int = BATCH) -> Iterable[list[Text]]:
    batch: list[Text] = []
    for text in texts:
        batch.append(text)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _sample_weights(index: SimilarityIndex) -> Idf:
    """Count n-gram document frequencies on the ``IDF_SAMPLE`` lowest-ranked current texts of the index."""
    versions = (
        ItemSignature.objects.filter(benchmark_id=index.benchmark_id, language=index.language)
        .exclude(item__status=Item.Status.REJECTED)
        .order_by("sample_rank")
        .values_list(f"revision__content__{index.language}", flat=True)[:IDF_SAMPLE]
    )
    return Idf.from_texts(prose_text(v) for v in versions)


def _item_sample_weights(benchmark_id: int, language: str) -> Idf:
    """Count n-gram document frequencies on the ``IDF_SAMPLE`` current texts whose uids hash lowest, read from the
    items themselves (for an index whose signatures are not written yet)."""
    items = Item.objects.filter(benchmark_id=benchmark_id, **{f"has_{language}": True}).exclude(
        status=Item.Status.REJECTED
    )
    chosen = sorted(items.values_list("uid", "pk"), key=lambda row: stable_hash(row[0]))[:IDF_SAMPLE]
    pks = [pk for _uid, pk in chosen]
    column = f"current_revision__content__{language}"
    versions = [
        v
        for i in range(0, len(pks), BATCH)
        for v in items.filter(pk__in=pks[i : i + BATCH]).values_list(column, flat=True)
    ]
    return Idf.from_texts(prose_text(v) for v in versions)


def _save_weights(index: SimilarityIndex, weights: Idf) -> None:
    """Store ``weights`` on the index (and on the ``index`` object, so that its ``built_at`` names them)."""
    signed = ItemSignature.objects.filter(benchmark_id=index.benchmark_id, language=index.language)
    counted = signed.aggregate(n=Count("pk"), last=Max("pk"))
    fields = {
        "idf_grams": weights.grams.astype(np.uint64).tobytes(),
        "idf_df": weights.df.astype(np.uint32).tobytes(),
        "idf_documents": weights.documents,
        "idf_signatures": counted["n"],
        "idf_watermark": counted["last"] or 0,
        "built_at": timezone.now(),
    }
    SimilarityIndex.objects.filter(pk=index.pk).update(**fields)
    for name, value in fields.items():
        setattr(index, name, value)


def weights_refresh(*, index: SimilarityIndex) -> None:
    """Count the n-gram weights of ``index`` again, on the current sample (a bounded amount of work)."""
    _save_weights(index, _sample_weights(index))


def stale(indexes: list[SimilarityIndex]) -> list[SimilarityIndex]:
    """Return the indexes whose weights predate a tenth or more of their signatures.

    One query per index, reading at most that tenth of an index on (benchmark, language, id): a few index entries
    when the weights are fresh, whatever the size of the index.
    """
    found = []
    for index in indexes:
        allowed = index.idf_signatures // 10
        newer = ItemSignature.objects.filter(
            benchmark_id=index.benchmark_id, language=index.language, pk__gt=index.idf_watermark
        )
        if newer.values("pk")[: allowed + 1].count() > allowed:
            found.append(index)
    return found


def _drop(index: SimilarityIndex) -> None:
    """Delete an index with its signatures, a batch at a time (no model instance for each band row)."""
    ItemSignatureBand.objects.filter(benchmark_id=index.benchmark_id, language=index.language).delete()
    signed = ItemSignature.objects.filter(benchmark_id=index.benchmark_id, language=index.language)
    while pks := list(signed.values_list("pk", flat=True)[:BATCH]):
        ItemSignature.objects.filter(pk__in=pks).delete()
    index.delete()


@dataclass
class BuildReport:
    signed: int = 0
    indexes: int = 0


def index_build(
    *,
    benchmarks: Iterable[Benchmark] | None = None,
    rebuild: bool = False,
    progress: Callable[[str], None] | None = None,
    stale_weights_only: bool = False,
) -> BuildReport:
    """Sign every item whose current revision has no signature yet, a batch per transaction so that memory and locks
    stay bounded, then count the weights again.

    An index without stop shingles gets them first, from a sample of the items, and is then signed whole. ``rebuild``
    starts every index afresh, stop shingles included; an index of an older ``lsh.SCHEME`` is rebuilt anyway.
    ``stale_weights_only`` counts the weights again only when a tenth or more of the signatures are newer than them
    (``stale``), as an import does: a small import then costs its own signatures only.
    """
    report = BuildReport()
    for benchmark in benchmarks if benchmarks is not None else Benchmark.objects.order_by("slug"):
        for lang in LANGUAGES:
            index = SimilarityIndex.objects.filter(benchmark=benchmark, language=lang).first()
            if index is not None and (rebuild or index.scheme != lsh.SCHEME):
                _drop(index)
            index = _index(benchmark.pk, lang)
            missing_only = True
            if not index.stop_documents:
                weights = _item_sample_weights(benchmark.pk, lang)
                if weights.documents >= lsh.STOP_MIN_DOCUMENTS:
                    index.stop_shingles = weights.stop_shingles().tobytes()
                    index.stop_documents = weights.documents
                    index.save(update_fields=["stop_shingles", "stop_documents", "built_at"])
                    missing_only = False
            for batch in _batches(_current_texts(benchmark.pk, lang, missing_only=missing_only)):
                with transaction.atomic():
                    _write(index, batch)
                report.signed += len(batch)
                if progress:
                    progress(f"{benchmark.slug} [{lang}]: {report.signed} signed")
            if not stale_weights_only or stale([index]):
                weights_refresh(index=index)
            report.indexes += 1
    return report
