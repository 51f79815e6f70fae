"""Item imports that a background worker runs: the uploaded file, where the import stands and what it found."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class ItemImportJob(models.Model):
    """One uploaded JSONL file imported by a worker (``annotation.items.tasks.item_import_run``), all or nothing.

    The upload answers at once; the worker checks every line, then writes every item in one transaction, so until
    the job is done no item of the file exists, and a job that failed wrote nothing. The file is kept in the row
    until the import has finished (a worker on another machine reads it from the database), then dropped: the job
    keeps its size and SHA-256.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", _("queued")
        RUNNING = "running", _("running")
        DONE = "done", _("done")
        FAILED = "failed", _("failed")

    class Stage(models.TextChoices):
        CHECKING = "checking", _("checking every line")
        WRITING = "writing", _("writing the items")

    FINISHED = (Status.DONE, Status.FAILED)

    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    filename = models.CharField(_("file"), max_length=255, blank=True)
    format = models.CharField(_("format"), max_length=20)
    benchmark = models.CharField(_("benchmark (overrides the file)"), max_length=50, blank=True)
    dry_run = models.BooleanField(_("dry run"), default=False)
    # The language the importer reads: the worker writes the errors and messages in it.
    language = models.CharField(max_length=10, blank=True)
    data = models.BinaryField(default=b"", help_text="the uploaded file, zlib-compressed; emptied once imported")
    size = models.PositiveBigIntegerField(_("bytes"), default=0)
    sha256 = models.CharField(_("SHA-256"), max_length=64)
    status = models.CharField(_("status"), max_length=10, choices=Status.choices, default=Status.QUEUED)
    stage = models.CharField(_("stage"), max_length=10, choices=Stage.choices, blank=True)
    processed = models.PositiveIntegerField(_("processed"), default=0)
    total = models.PositiveIntegerField(_("lines"), default=0)
    created = models.PositiveIntegerField(_("created"), default=0)
    revised = models.PositiveIntegerField(_("revised"), default=0)
    unchanged = models.PositiveIntegerField(_("unchanged"), default=0)
    # uid -> parity issues, and faults of an EmoBench source file (at most ``IMPORT_JOB_MAX_LISTED`` each).
    flagged = models.JSONField(default=dict, blank=True)
    flagged_count = models.PositiveIntegerField(default=0)
    source_faults = models.JSONField(default=list, blank=True)
    # [{"line", "field", "message"}]: why nothing was imported (at most ``IMPORT_JOB_MAX_LISTED``; the count is whole).
    errors = models.JSONField(default=list, blank=True)
    error_count = models.PositiveIntegerField(default=0)
    # An unexpected failure of the worker (not a line of the file), for the page and the log.
    failure = models.TextField(blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        verbose_name = _("item import")
        verbose_name_plural = _("item imports")
        constraints = [
            models.CheckConstraint(
                condition=models.Q(status__in=["queued", "running", "done", "failed"]),
                name="item_import_job_status_valid",
            ),
            models.CheckConstraint(
                condition=models.Q(stage__in=["", "checking", "writing"]), name="item_import_job_stage_valid"
            ),
        ]

    def __str__(self) -> str:
        return _("import %(pk)s of %(file)s") % {"pk": self.pk, "file": self.filename or "-"}

    @property
    def finished(self) -> bool:
        return self.status in self.FINISHED

    @property
    def percent(self) -> int:
        """Return how far the current stage has got, 0 to 100."""
        if not self.total:
            return 0
        return min(100, round(100 * self.processed / self.total))
