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
from llm.embeddings import EmbeddingError, embeddings_fetch
from llm.models import Endpoint

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
    *,
    release: Release,
    name: str,
    data: bytes,
    user: AbstractBaseUser | None,
    inline: bool | None = None,
    embedding_endpoint: Endpoint | None = None,
) -> ContaminationCheck:
    """Record a check of ``release`` against the corpus ``data`` (JSONL) and start it.

    With an ``embedding_endpoint`` (one with an embedding model), every text is also embedded through it and the
    embedding nearest-neighbour cosine is reported beside the TF-IDF one.

    A small corpus is checked at once (``inline``: at most ``INLINE_TEXTS`` texts, unless said otherwise), a large
    one by a worker after the upload commits; either way outside the transaction that records it, so that no write
    waits for the computation. A file that is not a corpus is refused with the line at fault.
    """
    try:
        corpus = contamination.corpus_from_jsonl(data)
    except (contamination.CorpusError, UnicodeDecodeError) as exc:
        raise ValidationError(_("The corpus cannot be read: %(error)s") % {"error": exc}) from exc
    if embedding_endpoint is not None and not (embedding_endpoint.embedding_model and embedding_endpoint.is_active):
        message = _("The endpoint %(name)s has no embedding model (or is not active): name one that embeds texts.")
        raise ValidationError({"embedding_endpoint": message % {"name": embedding_endpoint.name}})
    check = ContaminationCheck(
        release=release,
        name=name.strip() or _("corpus"),
        corpus=data.decode("utf-8"),
        corpus_texts=len(corpus),
        corpus_sha256=hashlib.sha256(data).hexdigest(),
        created_by=user,
        embedding_endpoint=embedding_endpoint,
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


def contamination_check_lost(check_id: int) -> None:
    """Record that the worker running a check stopped (killed, or its machine went away): the check failed
    (``llm.worker.recovery.on_task_lost``)."""
    under_way = (ContaminationCheck.Status.QUEUED, ContaminationCheck.Status.RUNNING)
    ContaminationCheck.objects.filter(pk=check_id, status__in=under_way).update(
        status=ContaminationCheck.Status.FAILED,
        error=_("The worker running this check stopped before it finished: run the check again."),
        finished_at=timezone.now(),
    )


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
    sides: dict[str, list] = {}
    result: dict = {"languages": {}, "skipped": {}}
    for language, texts in sorted(release_texts(check.release).items()):
        side = chinese if language == "zh" else other
        if not side:
            result["skipped"][language] = "the corpus has no texts in this language's script"
            continue
        keys = list(texts)
        sides[language] = side
        result["languages"][language] = contamination.contamination_check(keys, [texts[k] for k in keys], side)
        result["languages"][language]["texts"] = texts
    if check.embedding_endpoint_id is not None and sides:
        _embedding_results(check.embedding_endpoint, result, sides)
    for summary in result["languages"].values():
        del summary["texts"]
    return result


def _embedding_results(endpoint: Endpoint, result: dict, sides: dict[str, list]) -> None:
    """Add each language's embedding nearest-neighbour cosine, against the same corpus texts as its TF-IDF, and
    what the embeddings cost. Each text is embedded once (``llm.embeddings`` drops repeats)."""
    languages = list(sides)
    release_side = [t for lang in languages for t in result["languages"][lang]["texts"].values()]
    corpus_sides = list({id(side): side for side in sides.values()}.values())
    corpus_side = [c.text for side in corpus_sides for c in side]
    try:
        found = embeddings_fetch(endpoint=endpoint, texts=release_side + corpus_side)
    except EmbeddingError as exc:
        raise EmbeddingError(_("The embeddings could not be fetched: %(error)s") % {"error": exc}) from exc
    queries, corpus = found.vectors[: len(release_side)], found.vectors[len(release_side) :]
    offsets, at = {}, 0
    for side in corpus_sides:
        offsets[id(side)] = at
        at += len(side)
    start = 0
    for language in languages:
        texts, side = result["languages"][language]["texts"], sides[language]
        low = offsets[id(side)]
        where, cosine = contamination.dense_nearest_neighbours(
            queries[start : start + len(texts)], corpus[low : low + len(side)]
        )
        summary = contamination.contamination_summary(list(texts), list(texts.values()), side, where, cosine)
        result["languages"][language]["embedding"] = summary
        start += len(texts)
    result["embedding"] = {
        "endpoint": endpoint.name,
        "model": found.model,
        "dimensions": found.dimensions,
        "requests": found.requests,
        "cached": found.cached,
        "input_tokens": found.input_tokens,
        "cost": str(found.cost),
    }
