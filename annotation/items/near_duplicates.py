"""A benchmark's near-duplicate clusters, computed by a worker and stored for the state of the bank they came from.

Clustering a benchmark reads every band key of its index (40 s for 100,000 items), so the near-duplicates page
never does it: it reads the stored report of the benchmark, language and threshold (``NearDuplicateReport``) and
one page of its clusters, in a fixed number of queries. The report's ``inputs_key`` names what the clusters depend
on (the index and its weights, the newest signature of the benchmark and language, the newest revision and status
decision anywhere), read in one query; when no report is stored or its key is not the current one, the page queues
``annotation.items.tasks.near_duplicates_compute`` (once per key) and shows the stored clusters, marked as out of
date, while it polls.
"""

import hashlib
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from django.core.cache import cache
from django.db import connection, transaction
from django.utils import timezone

from annotation.items import lsh
from annotation.items.models import (
    Benchmark,
    ItemRevision,
    ItemSignature,
    NearDuplicateCluster,
    NearDuplicateReport,
    SimilarityIndex,
    StatusDecision,
)
from annotation.items.neighbours import near_duplicate_report

# How long a worker has to compute a queued report before a page queues it again.
QUEUED_SECONDS = 900


def threshold_rounded(value: float) -> Decimal:
    """Return ``value`` as the report stores it: two decimals, within what the index finds (``LOWEST_THRESHOLD``)."""
    bounded = min(max(value, lsh.LOWEST_THRESHOLD), 1.0)
    return Decimal(str(bounded)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def inputs_key(*, benchmark_id: int, language: str) -> str:
    """Return the key of what a benchmark's clusters in ``language`` depend on (one query, each part an index read).

    A revision saved anywhere, a status decision anywhere (a rejected item leaves the clusters), a signature written
    for the benchmark and language (the index built for items it lacked) or weights counted again change it.
    """
    quote = connection.ops.quote_name
    signatures, index = quote(ItemSignature._meta.db_table), quote(SimilarityIndex._meta.db_table)
    sql = (
        f"SELECT (SELECT MAX(id) FROM {quote(ItemRevision._meta.db_table)}),"
        f" (SELECT MAX(id) FROM {quote(StatusDecision._meta.db_table)}),"
        f" (SELECT MAX(id) FROM {signatures} WHERE benchmark_id = %s AND language = %s),"
        f" (SELECT id FROM {index} WHERE benchmark_id = %s AND language = %s),"
        f" (SELECT scheme FROM {index} WHERE benchmark_id = %s AND language = %s),"
        f" (SELECT built_at FROM {index} WHERE benchmark_id = %s AND language = %s)"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [benchmark_id, language] * 4)
        state = cursor.fetchone()
    parts = (benchmark_id, language, lsh.SCHEME, *(str(part) for part in state))
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def report_compute(*, benchmark: Benchmark, language: str, threshold: Decimal) -> NearDuplicateReport:
    """Cluster the benchmark's items in ``language`` at ``threshold`` and store the result (the worker's task).

    The key is read before the clusters, so a change made while they are computed leaves them out of date. The
    computation runs outside any transaction (bounded memory: ``neighbours.near_duplicate_report``); the report
    and its clusters are replaced in one short transaction.
    """
    key = inputs_key(benchmark_id=benchmark.pk, language=language)
    found = near_duplicate_report(benchmark=benchmark, language=language, threshold=float(threshold))
    with transaction.atomic():
        report, _created = NearDuplicateReport.objects.update_or_create(
            benchmark=benchmark,
            language=language,
            threshold=threshold,
            defaults={
                "inputs_key": key,
                "computed_at": timezone.now(),
                "pairs": found.pairs,
                "items": found.items,
                "indexed": found.indexed,
                "cluster_count": len(found.clusters),
            },
        )
        report.clusters.all().delete()
        NearDuplicateCluster.objects.bulk_create(
            [
                NearDuplicateCluster(report=report, rank=rank, members=[[uid, score] for uid, score in group])
                for rank, group in enumerate(found.clusters)
            ],
            batch_size=1000,
        )
    cache.delete(_queued_key(benchmark.pk, language, threshold, key))
    return report


def _queued_key(benchmark_id: int, language: str, threshold: Decimal, key: str) -> str:
    return f"near-duplicates-queued:{benchmark_id}:{language}:{threshold}:{key}"


class StoredClusters:
    """The clusters of a stored report as a sequence a ``Paginator`` pages through: its length is stored, and a
    slice is one query on (report, rank)."""

    def __init__(self, report: NearDuplicateReport | None) -> None:
        self.report = report

    def count(self) -> int:
        return self.report.cluster_count if self.report else 0

    def __len__(self) -> int:
        return self.count()

    def __getitem__(self, chosen: slice) -> list[list[list]]:
        if not isinstance(chosen, slice):
            raise TypeError("StoredClusters are read a page (a slice) at a time")
        if self.report is None:
            return []
        start, stop = chosen.start or 0, chosen.stop if chosen.stop is not None else self.count()
        rows = NearDuplicateCluster.objects.filter(report=self.report, rank__gte=start, rank__lt=stop)
        return list(rows.order_by("rank").values_list("members", flat=True))


@dataclass(frozen=True)
class Clusters:
    """The stored report of a benchmark, language and threshold (None: none yet), and whether it is current."""

    report: NearDuplicateReport | None
    current: bool

    @property
    def stored(self) -> StoredClusters:
        return StoredClusters(self.report)


def clusters_stored(*, benchmark: Benchmark, language: str, threshold: Decimal) -> Clusters:
    """Return the stored clusters (two queries), queueing a worker to compute them when none or stale ones are."""
    key = inputs_key(benchmark_id=benchmark.pk, language=language)
    report = NearDuplicateReport.objects.filter(benchmark=benchmark, language=language, threshold=threshold).first()
    current = report is not None and report.inputs_key == key
    if not current and cache.add(_queued_key(benchmark.pk, language, threshold, key), True, QUEUED_SECONDS):
        from annotation.items import tasks  # deferred: tasks imports this module for its work

        tasks.near_duplicates_compute.enqueue(benchmark.pk, language, str(threshold))
    return Clusters(report, current)
