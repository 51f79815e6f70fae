"""Contamination checks: a release's texts against an uploaded corpus, computed by a worker for large inputs."""

import hashlib
import logging

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.releases.models import Release
from annotation.releases.selectors import release_entries
from evaluation import contamination
from evaluation.models import ContaminationCheck

logger = logging.getLogger(__name__)

# Corpora of at most this many texts are checked at once in the request; larger ones by a worker.
INLINE_TEXTS = 2000


def release_texts(release: Release) -> dict[str, dict[str, str]]:
    """Return each pinned revision's text per language (scenario, turns, question, prompt and options), by uid."""
    texts: dict[str, dict[str, str]] = {}
    for entry in release_entries(release):
        for language, version in (entry.revision.content or {}).items():
            text = contamination.version_text(version)
            if text:
                texts.setdefault(language, {})[entry.item.uid] = text
    return texts


def contamination_check_create(
    *, release: Release, name: str, data: bytes, user: AbstractBaseUser | None, inline: bool | None = None
) -> ContaminationCheck:
    """Record a check of ``release`` against the corpus ``data`` (JSONL) and start it.

    A small corpus is checked at once (``inline``: at most ``INLINE_TEXTS`` texts, unless said otherwise), a large
    one by a worker after the upload commits; either way outside the transaction that records it, so that no write
    waits for the computation. A file that is not a corpus is refused with the line at fault.
    """
    try:
        corpus = contamination.corpus_from_jsonl(data)
    except (contamination.CorpusError, UnicodeDecodeError) as exc:
        raise ValidationError(_("The corpus cannot be read: %(error)s") % {"error": exc}) from exc
    check = ContaminationCheck(
        release=release,
        name=name.strip() or _("corpus"),
        corpus=data.decode("utf-8"),
        corpus_texts=len(corpus),
        corpus_sha256=hashlib.sha256(data).hexdigest(),
        created_by=user,
    )
    check.full_clean()
    with transaction.atomic():
        check.save()
    if inline if inline is not None else len(corpus) <= INLINE_TEXTS:
        _compute(check)
    else:
        from evaluation import tasks  # deferred: the tasks module imports this one for the work it runs

        transaction.on_commit(lambda: tasks.contamination_check_run.enqueue(check.pk))
    return check


def contamination_check_work(*, check_id: int) -> str:
    """Run a queued check (the worker's task): compute outside any transaction, store the result in a short one."""
    with transaction.atomic():
        check = ContaminationCheck.objects.select_for_update().get(pk=check_id)
        if check.status != ContaminationCheck.Status.QUEUED:
            return check.status
        check.status = ContaminationCheck.Status.RUNNING
        check.save(update_fields=["status"])
    _compute(check)
    return check.status


def _compute(check: ContaminationCheck) -> None:
    try:
        result = _result(check)
    except Exception as exc:  # noqa: BLE001 (recorded on the check, shown on its page)
        logger.exception("Contamination check %s failed", check.pk)
        check.status, check.error = ContaminationCheck.Status.FAILED, str(exc)
    else:
        check.status, check.result, check.corpus = ContaminationCheck.Status.DONE, result, ""
    check.finished_at = timezone.now()
    with transaction.atomic():
        check.save(update_fields=["status", "result", "error", "corpus", "finished_at"])


def _result(check: ContaminationCheck) -> dict:
    """Compare each language's texts of the release with the corpus texts written in the same script."""
    corpus = contamination.corpus_from_jsonl(check.corpus.encode("utf-8"))
    chinese = [c for c in corpus if contamination.is_chinese([c.text])]
    other = [c for c in corpus if not contamination.is_chinese([c.text])]
    result: dict = {"languages": {}, "skipped": {}}
    for language, texts in sorted(release_texts(check.release).items()):
        side = chinese if language == "zh" else other
        if not side:
            result["skipped"][language] = "the corpus has no texts in this language's script"
            continue
        keys = list(texts)
        result["languages"][language] = contamination.contamination_check(keys, [texts[k] for k in keys], side)
    return result
