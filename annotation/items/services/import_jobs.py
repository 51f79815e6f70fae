"""Item imports run by a background worker: the upload is stored and answered at once, a worker imports it.

``items_import`` is all or nothing and takes about a second and a half per megabyte (checks, then every item in one
transaction): a large file would outlive the web server's request timeout, so that the importer sees an error for
an import that went on to succeed. The page (above ``IMPORT_SYNC_MAX_BYTES``) and the API store the file in an
``ItemImportJob`` and queue ``annotation.items.tasks.item_import_run``; the worker reports its progress on the job
and records the outcome: the counts, or every line's error with nothing written.
"""

import hashlib
import logging
import time
import zlib

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import DatabaseError, connections, transaction
from django.db.models import F
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from annotation.items.interchange import LineError
from annotation.items.models import ItemImportJob
from annotation.items.services.imports import IMPORT_FORMATS, ImportFailed, ImportReport, items_import

logger = logging.getLogger(__name__)

# At most this many line errors, flagged items and source faults are kept on a job (its counts are whole).
MAX_LISTED = 1000
# Progress is written at most this often (seconds), and always when a stage ends.
PROGRESS_SECONDS = 0.5


def item_import_runs_in_worker(*, size: int) -> bool:
    """Return whether the import page hands a file of ``size`` bytes to a worker rather than importing it at once."""
    return size > settings.IMPORT_SYNC_MAX_BYTES


def _check_request(*, format: str, data: bytes, benchmark: str | None) -> None:
    if format not in IMPORT_FORMATS:
        message = _("unknown format %(format)s; expected %(expected)s") % {
            "format": repr(format),
            "expected": ", ".join(IMPORT_FORMATS),
        }
        raise ImportFailed([LineError(0, "format", message)])
    if not data.strip():
        raise ImportFailed([LineError(0, "file", _("the file holds no records"))])
    if benchmark and len(benchmark) > ItemImportJob._meta.get_field("benchmark").max_length:
        raise ImportFailed(
            [LineError(0, "benchmark", _("unknown benchmark %(benchmark)s") % {"benchmark": repr(benchmark[:60])})]
        )


@transaction.atomic
def item_import_job_start(
    *,
    data: bytes,
    user: AbstractBaseUser,
    filename: str = "",
    format: str = "eistudio",
    benchmark: str | None = None,
    dry_run: bool = False,
) -> ItemImportJob:
    """Store an uploaded file as a queued import job and queue its import for a worker, once this commits.

    An unknown format or an empty file is refused here (``ImportFailed``, nothing stored); every other check runs
    in the worker, which records the errors on the job. The worker imports as ``user`` and writes its messages in
    the language active now.
    """
    from annotation.items import tasks  # deferred: the tasks module imports this one for the work they run

    _check_request(format=format, data=data, benchmark=benchmark)
    job = ItemImportJob(
        created_by=user,
        filename=filename[:255],
        format=format,
        benchmark=benchmark or "",
        dry_run=dry_run,
        language=translation.get_language() or settings.LANGUAGE_CODE,
        # Compressed (zlib level 1: about a second for 30 MB of JSONL, a fifth of the bytes), as writing the bytes
        # is most of the upload's time.
        data=zlib.compress(data, 1),
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        total=data.count(b"\n") + (0 if data.endswith(b"\n") else 1),
    )
    job.full_clean(exclude=["data", "created_by"])
    job.save()
    transaction.on_commit(lambda: tasks.item_import_run.enqueue(job.pk))
    return job


class _ProgressWriter:
    """Write a job's progress where other connections see it, at most every ``PROGRESS_SECONDS``.

    The checks and the start of the writing stage run outside any transaction: an update on the worker's connection.
    The rest of the writing stage runs inside the import's transaction, where that update would be seen only at
    commit: on PostgreSQL a second connection of its own writes it; on SQLite, which has one writer at a time,
    nothing is written until the import commits (the page says the items are being written, without a count).
    """

    def __init__(self, job_id: int) -> None:
        self.job_id = job_id
        self.last: tuple[str, float] = ("", 0.0)
        self.side = None

    def __call__(self, stage: str, processed: int, total: int) -> None:
        now = time.monotonic()
        if stage == self.last[0] and processed < total and now - self.last[1] < PROGRESS_SECONDS:
            return
        self.last = (stage, now)
        if not (stage == ItemImportJob.Stage.WRITING and processed):
            ItemImportJob.objects.filter(pk=self.job_id).update(stage=stage, processed=processed, total=total)
        elif connections["default"].vendor == "postgresql":
            try:
                if self.side is None:
                    self.side = connections.create_connection("default")
                with self.side.cursor() as cursor:
                    cursor.execute(
                        f"UPDATE {ItemImportJob._meta.db_table} SET stage = %s, processed = %s, total = %s "  # noqa: S608
                        "WHERE id = %s",
                        [stage, processed, total, self.job_id],
                    )
            except DatabaseError:
                logger.warning("Could not record the progress of item import %s", self.job_id, exc_info=True)

    def close(self) -> None:
        if self.side is not None:
            self.side.close()
            self.side = None


def item_import_job_work(*, job_id: int) -> bool:
    """Import a queued job's file (the worker's task); return whether it ran now.

    The job is claimed by one short update, so two workers never import the same file. Errors in the file are
    recorded on the job (every line's, as the page shows them) with nothing written; an unexpected failure is
    recorded too and raised again for the worker's log. Either way the stored file is dropped once it is over.
    """
    claimed = ItemImportJob.objects.filter(pk=job_id, status=ItemImportJob.Status.QUEUED).update(
        status=ItemImportJob.Status.RUNNING, stage=ItemImportJob.Stage.CHECKING, started_at=timezone.now()
    )
    if not claimed:
        return False
    job = ItemImportJob.objects.select_related("created_by").get(pk=job_id)
    progress = _ProgressWriter(job_id)
    try:
        with translation.override(job.language or settings.LANGUAGE_CODE):
            report = items_import(
                data=zlib.decompress(job.data),
                user=job.created_by,
                format=job.format,
                benchmark=job.benchmark or None,
                dry_run=job.dry_run,
                progress=progress,
            )
    except ImportFailed as exc:
        _finish(job_id, status=ItemImportJob.Status.FAILED, **_errors(exc.errors))
        return True
    except Exception as exc:
        _finish(job_id, status=ItemImportJob.Status.FAILED, failure=f"{type(exc).__name__}: {exc}")
        raise
    finally:
        progress.close()
    _finish(job_id, status=ItemImportJob.Status.DONE, processed=F("total"), **_counts(report))
    return True


def item_import_job_lost(job_id: int) -> None:
    """Record that the worker running a job's import stopped (killed, or its machine went away): the job failed and
    nothing was imported, since the items are written in one transaction (``llm.worker.recovery.on_task_lost``)."""
    language = (
        ItemImportJob.objects.filter(pk=job_id, status__in=(ItemImportJob.Status.QUEUED, ItemImportJob.Status.RUNNING))
        .values_list("language", flat=True)
        .first()
    )
    if language is None:
        return
    with translation.override(language or settings.LANGUAGE_CODE):
        failure = _(
            "the worker importing this file stopped (killed, or its machine went away) before it finished; upload "
            "the file again"
        )
    unfinished = (ItemImportJob.Status.QUEUED, ItemImportJob.Status.RUNNING)
    ItemImportJob.objects.filter(pk=job_id, status__in=unfinished).update(
        status=ItemImportJob.Status.FAILED, finished_at=timezone.now(), data=b"", stage="", failure=failure
    )


def _errors(errors: list[LineError]) -> dict:
    listed = [{"line": e.line, "field": e.field, "message": e.message} for e in errors[:MAX_LISTED]]
    return {"errors": listed, "error_count": len(errors)}


def _counts(report: ImportReport) -> dict:
    flagged = dict(list(report.flagged.items())[:MAX_LISTED])
    return {
        "created": len(report.created),
        "revised": len(report.revised),
        "unchanged": len(report.unchanged),
        "flagged": flagged,
        "flagged_count": len(report.flagged),
        "source_faults": report.source_faults[:MAX_LISTED],
    }


def _finish(job_id: int, *, status: str, **fields: object) -> None:
    ItemImportJob.objects.filter(pk=job_id).update(
        status=status, finished_at=timezone.now(), data=b"", stage="", **fields
    )
