"""Disjointness and contamination: the TF-IDF nearest-neighbour cosine from a benchmark's texts to another corpus
(a second benchmark, a training set), as EiCAP reports 0.13 for its benchmark against its SFT corpus (pure).

Texts are TF-IDF vectors (scikit-learn's ``TfidfVectorizer`` defaults: word unigrams, smoothed idf, L2 norm) fitted
on both sides together; Chinese text, which has no spaces between words, is read as character unigrams and bigrams.
For each benchmark text the most similar corpus text is found by sparse products of a block of benchmark rows
with a block of corpus rows, keeping only the best per row, so nothing N x N is ever held: memory is bounded by the
vectors themselves and one block (``ROW_BLOCK`` x ``COLUMN_BLOCK`` cells) whatever the sizes. Embeddings (unit
float32 vectors an endpoint's embedding model returns, ``llm.embeddings``) are compared the same way, block by block
(``dense_nearest_neighbours``), and summarised alike.
"""

import json
import re
from dataclasses import dataclass

import numpy as np
from django.utils.translation import gettext as _
from sklearn.feature_extraction.text import TfidfVectorizer

ROW_BLOCK = 512
COLUMN_BLOCK = 8192
HISTOGRAM_EDGES = [round(0.05 * i, 2) for i in range(21)]
CLOSEST = 20
CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


class CorpusError(ValueError):
    """The uploaded corpus is not what the check reads; the message names the line."""


@dataclass(frozen=True)
class CorpusText:
    key: str
    text: str


def corpus_from_jsonl(data: bytes, *, max_texts: int = 200_000) -> list[CorpusText]:
    """Read a corpus uploaded as JSONL: one object per line with a ``text`` (or ``prompt``/``messages``) and an
    optional ``id``, or an item in the interchange format (``export_items``: one text per language of its
    ``content``); blank lines are skipped. Raise ``CorpusError`` naming the first bad line."""
    texts = []
    for number, line in enumerate(data.decode("utf-8", errors="strict").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CorpusError(_("line %(n)s: not JSON (%(error)s)") % {"n": number, "error": exc.msg}) from exc
        if not isinstance(record, dict):
            raise CorpusError(_("line %(n)s: expected an object with a text field") % {"n": number})
        if isinstance(record.get("content"), dict):  # an item in the interchange format: each language's text
            key = str(record.get("uid") or record.get("id") or number)
            found = [
                CorpusText(f"{key}:{language}", text)
                for language, version in sorted(record["content"].items())
                if (text := version_text(version))
            ]
            if not found:
                raise CorpusError(_("line %(n)s: the item has no text in any language") % {"n": number})
            texts.extend(found)
        else:
            text = _record_text(record)
            if not text.strip():
                raise CorpusError(
                    _("line %(n)s: no text (expected a text, prompt or messages field, or an item's content)")
                    % {"n": number}
                )
            texts.append(CorpusText(str(record.get("id", number)), text))
        if len(texts) > max_texts:
            raise CorpusError(_("line %(n)s: more than %(max)s texts") % {"n": number, "max": max_texts})
    if not texts:
        raise CorpusError(_("the file holds no texts"))
    return texts


def version_text(version: object) -> str:
    """Return an item's text in one language (scenario, question, prompt, options and every turn), one part a line."""
    if not isinstance(version, dict):
        return ""
    parts = [version.get(k, "") for k in ("context", "question", "prompt")] + list(version.get("options") or [])
    for turn in version.get("turns") or []:
        if isinstance(turn, dict):
            parts += [turn.get("user", ""), *(turn.get("options") or [])]
    return "\n".join(p for p in parts if isinstance(p, str) and p)


def _record_text(record: dict) -> str:
    for field in ("text", "prompt"):
        if isinstance(record.get(field), str):
            return record[field]
    messages = record.get("messages")
    if isinstance(messages, list):
        return "\n".join(
            m.get("content", "") for m in messages if isinstance(m, dict) and isinstance(m.get("content"), str)
        )
    return ""


def is_chinese(texts: list[str]) -> bool:
    """Say whether most of the texts' letters are CJK characters (then words are read as characters)."""
    sample = "".join(texts[:2000])
    letters = sum(ch.isalpha() for ch in sample)
    return letters > 0 and len(CJK.findall(sample)) / letters > 0.3


def vectoriser(chinese: bool) -> TfidfVectorizer:
    """Return the TF-IDF vectoriser: scikit-learn's defaults, or character 1-2-grams for Chinese."""
    if chinese:
        return TfidfVectorizer(analyzer="char", ngram_range=(1, 2), dtype=np.float32)
    return TfidfVectorizer(dtype=np.float32)


def nearest_neighbours(
    queries: list[str], corpus: list[str], *, row_block: int = ROW_BLOCK, column_block: int = COLUMN_BLOCK
) -> tuple[np.ndarray, np.ndarray]:
    """Return, for each query text, the index of its most similar corpus text and that cosine (TF-IDF).

    The vectoriser is fitted on both sides. Products are taken a block of rows by a block of columns at a time and
    only each row's best is kept (ties: the lowest corpus index).
    """
    if not queries or not corpus:
        raise ValueError("both sides need at least one text")
    vectors = vectoriser(is_chinese(queries + corpus[:2000])).fit_transform(queries + corpus).tocsr()
    left, right = vectors[: len(queries)], vectors[len(queries) :].T.tocsc()
    best = np.full(len(queries), -1.0, dtype=np.float64)
    where = np.zeros(len(queries), dtype=np.int64)
    for start in range(0, len(queries), row_block):
        rows = left[start : start + row_block]
        for column in range(0, len(corpus), column_block):
            block = (rows @ right[:, column : column + column_block]).toarray()
            found = block.argmax(axis=1)
            value = block[np.arange(len(found)), found]
            better = value > best[start : start + len(found)]
            best[start : start + len(found)][better] = value[better]
            where[start : start + len(found)][better] = found[better] + column
    return where, np.clip(best, 0.0, 1.0)


def dense_nearest_neighbours(
    queries: np.ndarray, corpus: np.ndarray, *, row_block: int = ROW_BLOCK, column_block: int = COLUMN_BLOCK
) -> tuple[np.ndarray, np.ndarray]:
    """Return, for each query vector, the index of its most similar corpus vector and that cosine (embeddings).

    Both sides are unit vectors (float32 rows), so a cosine is a dot product; blocks of ``row_block`` x
    ``column_block`` products are taken at a time and only each row's best kept (ties: the lowest corpus index), as
    in ``nearest_neighbours``. Cosines lie in [-1, 1].
    """
    if not len(queries) or not len(corpus):
        raise ValueError("both sides need at least one vector")
    if queries.shape[1] != corpus.shape[1]:
        raise ValueError(f"vectors of {queries.shape[1]} and {corpus.shape[1]} dimensions cannot be compared")
    best = np.full(len(queries), -np.inf, dtype=np.float64)
    where = np.zeros(len(queries), dtype=np.int64)
    for start in range(0, len(queries), row_block):
        rows = queries[start : start + row_block]
        for column in range(0, len(corpus), column_block):
            block = rows @ corpus[column : column + column_block].T
            found = block.argmax(axis=1)
            value = block[np.arange(len(found)), found]
            better = value > best[start : start + len(found)]
            best[start : start + len(found)][better] = value[better]
            where[start : start + len(found)][better] = found[better] + column
    return where, np.clip(best, -1.0, 1.0)


def contamination_summary(
    keys: list[str], texts: list[str], corpus: list[CorpusText], where: np.ndarray, cosine: np.ndarray
) -> dict:
    """Summarise nearest-neighbour cosines (TF-IDF or embeddings): mean, quantiles, histogram, and the closest pairs
    with their texts."""
    # A negative cosine (embeddings) counts in the first bin, [0, 0.05).
    counts = np.bincount(
        np.clip(np.searchsorted(HISTOGRAM_EDGES, cosine, side="right") - 1, 0, len(HISTOGRAM_EDGES) - 2),
        minlength=len(HISTOGRAM_EDGES) - 1,
    )
    order = np.lexsort((np.arange(len(cosine)), -cosine))[:CLOSEST]
    quantiles = np.quantile(cosine, [0.5, 0.9, 0.99])
    return {
        "n": len(cosine),
        "corpus_n": len(corpus),
        "mean": float(cosine.mean()),
        "median": float(quantiles[0]),
        "p90": float(quantiles[1]),
        "p99": float(quantiles[2]),
        "max": float(cosine.max()),
        "above_08": int(np.sum(cosine >= 0.8)),
        "histogram": [
            {"low": low, "high": high, "count": int(count), "percent": round(100 * int(count) / len(cosine))}
            for low, high, count in zip(HISTOGRAM_EDGES[:-1], HISTOGRAM_EDGES[1:], counts, strict=True)
        ],
        "closest": [
            {
                "key": keys[i],
                "text": texts[i][:500],
                "corpus_key": corpus[where[i]].key,
                "corpus_text": corpus[where[i]].text[:500],
                "cosine": float(cosine[i]),
            }
            for i in order
        ],
    }


def contamination_check(keys: list[str], texts: list[str], corpus: list[CorpusText]) -> dict:
    """Return the nearest-neighbour cosine summary of ``texts`` (keyed by ``keys``) against ``corpus``."""
    where, cosine = nearest_neighbours(texts, [c.text for c in corpus])
    return contamination_summary(keys, texts, corpus, where, cosine)
