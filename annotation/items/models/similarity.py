"""The near-duplicate index: MinHash signatures of items' current revisions, their band keys, and per benchmark and
language the stop shingles and n-gram weights they were built with (docs/screening.md, *Near-duplicates*)."""

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from annotation.items.content import LANGUAGES
from annotation.items.models.items import Item, ItemRevision
from annotation.items.models.taxonomy import Benchmark


class SimilarityIndex(models.Model):
    """What the signatures of one benchmark and language depend on, and the n-gram weights that score them.

    The stop shingles are chosen once, from the first ``lsh.STOP_MIN_DOCUMENTS`` texts, and then kept: every
    signature must be built with the same ones (``manage.py similarity_index --rebuild`` chooses them again). The
    document frequencies are counted again on a sample whenever a tenth of the signatures are newer than them.
    """

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="similarity_indexes")
    language = models.CharField(_("language"), max_length=2)
    # annotation.items.lsh.SCHEME of the signatures: an index of another scheme is not read, and is rebuilt by the
    # command.
    scheme = models.PositiveSmallIntegerField()
    # Sorted uint64 n-gram hashes left out of every signature, and how many texts they were chosen from (0: none yet).
    stop_shingles = models.BinaryField(default=b"")
    stop_documents = models.PositiveIntegerField(default=0)
    # The n-gram weights: sorted uint64 hashes, their uint32 document frequencies and the number of texts counted,
    # with the number of signatures and the newest signature id when they were counted.
    idf_grams = models.BinaryField(default=b"")
    idf_df = models.BinaryField(default=b"")
    idf_documents = models.PositiveIntegerField(default=0)
    idf_signatures = models.PositiveIntegerField(default=0)
    idf_watermark = models.BigIntegerField(default=0)
    built_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "language"], name="similarity_index_unique"),
            models.CheckConstraint(condition=Q(language__in=LANGUAGES), name="similarity_index_language_valid"),
        ]
        verbose_name = _("similarity index")
        verbose_name_plural = _("similarity indexes")

    def __str__(self) -> str:
        return f"{self.benchmark_id} [{self.language}]"


class ItemSignature(models.Model):
    """The MinHash signature of one language of an item's current revision (replaced when a revision is saved)."""

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="signatures")
    language = models.CharField(_("language"), max_length=2)
    revision = models.ForeignKey(ItemRevision, on_delete=models.CASCADE, related_name="+")
    # Copied from the item, so that the index is searched without joining items.
    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="+")
    # annotation.items.ngrams.stable_hash of the uid: the texts with the lowest ranks are the sample weights are
    # counted on.
    sample_rank = models.BigIntegerField()
    # lsh.BANDS * lsh.ROWS uint32 MinHash values; empty for a blank text (which has no band keys).
    minhash = models.BinaryField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["item", "language"], name="item_signature_unique"),
            models.CheckConstraint(condition=Q(language__in=LANGUAGES), name="item_signature_language_valid"),
        ]
        indexes = [
            models.Index(fields=["benchmark", "language", "sample_rank"], name="item_signature_sample"),
            # Counting the signatures newer than an index's weights reads only those.
            models.Index(fields=["benchmark", "language", "id"], name="item_signature_recent"),
        ]
        verbose_name = _("item signature")
        verbose_name_plural = _("item signatures")

    def __str__(self) -> str:
        return f"{self.item_id} [{self.language}] r{self.revision_id}"


class ItemSignatureBand(models.Model):
    """One band key of a signature: items sharing a key in a benchmark and language are candidate near-duplicates."""

    pk = models.CompositePrimaryKey("signature_id", "band")
    # No foreign key constraints in the database: a band row is a derived index entry (``similarity_index --rebuild``
    # writes them all again), written by the million with COPY, and PostgreSQL checked both constraints row by row
    # when an import committed (8 of 60 seconds for 20,000 items). Deleting a signature or benchmark through Django
    # still deletes its bands; the signing code deletes them explicitly before writing new ones.
    signature = models.ForeignKey(
        ItemSignature, on_delete=models.CASCADE, related_name="bands", db_index=False, db_constraint=False
    )
    band = models.PositiveSmallIntegerField()
    benchmark = models.ForeignKey(
        Benchmark, on_delete=models.CASCADE, related_name="+", db_index=False, db_constraint=False
    )
    language = models.CharField(max_length=2)
    key = models.BigIntegerField()

    class Meta:
        # With the signature in the index, reading the items of shared keys needs the index alone.
        indexes = [models.Index(fields=["benchmark", "language", "key", "signature"], name="item_signature_band_cover")]
        verbose_name = _("signature band")
        verbose_name_plural = _("signature bands")

    def __str__(self) -> str:
        return f"{self.signature_id}/{self.band}"


class NearDuplicateReport(models.Model):
    """The near-duplicate clusters of one benchmark, language and threshold, as a worker last computed them.

    ``inputs_key`` names the state of the bank they were computed from (``annotation.items.near_duplicates``): a
    page whose key differs shows them as out of date while a worker computes them again.
    """

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="near_duplicate_reports")
    language = models.CharField(_("language"), max_length=2)
    # Rounded to two decimals, as the page offers it: a bounded number of reports per benchmark and language.
    threshold = models.DecimalField(_("threshold"), max_digits=3, decimal_places=2)
    inputs_key = models.CharField(max_length=64)
    computed_at = models.DateTimeField(_("computed at"))
    pairs = models.PositiveIntegerField(default=0)
    items = models.PositiveIntegerField(default=0)
    indexed = models.PositiveIntegerField(default=0)
    cluster_count = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "language", "threshold"], name="near_duplicate_report_unique"),
            models.CheckConstraint(condition=Q(language__in=LANGUAGES), name="near_duplicate_report_language_valid"),
        ]
        verbose_name = _("near-duplicate report")
        verbose_name_plural = _("near-duplicate reports")

    def __str__(self) -> str:
        return f"{self.benchmark_id} [{self.language}] >= {self.threshold}"

    @property
    def missing(self) -> int:
        return self.items - self.indexed


class NearDuplicateCluster(models.Model):
    """One cluster of a stored report, at its place (largest first): its items' uids with their best score."""

    report = models.ForeignKey(NearDuplicateReport, on_delete=models.CASCADE, related_name="clusters")
    rank = models.PositiveIntegerField()
    # [[uid, best cosine], ...] in the order the page lists them.
    members = models.JSONField(default=list)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["report", "rank"], name="near_duplicate_cluster_rank_unique")]
        verbose_name = _("near-duplicate cluster")
        verbose_name_plural = _("near-duplicate clusters")

    def __str__(self) -> str:
        return f"{self.report_id} #{self.rank}"
