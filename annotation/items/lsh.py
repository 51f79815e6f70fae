"""MinHash locality-sensitive hashing: candidate near-duplicate pairs without comparing every pair (pure).

A text's shingles are its ``char_wb`` 3- and 4-grams (``annotation.items.ngrams``), the same for every language, less
the
*stop shingles*: those found in more than ``STOP_SHARE`` of a sample of the collection (question templates,
function words), which TF-IDF weighs down anyway and which would otherwise make unrelated texts of one template
collide. ``BANDS * ROWS`` MinHash values estimate the Jaccard similarity of two shingle sets; they are cut into
``BANDS`` bands of ``ROWS`` values and each band is hashed to one 64-bit key. Two texts become candidates when they
share a key, with probability 1 - (1 - J^ROWS)^BANDS for Jaccard similarity J, and stay candidates when their
estimated Jaccard similarity is at least ``PRUNE_JACCARD``. docs/screening.md gives the measurements behind these
numbers.

Every key depends on these parameters and on the stop shingles: changing a parameter means bumping ``SCHEME`` and
rebuilding the stored index (``manage.py similarity_index --rebuild``).
"""

import numpy as np

from annotation.items.ngrams import GRAM_BITS, contains, grams_in_order, mix64

SCHEME = 1
SHINGLE_SIZES = (3, 4)
BANDS = 25
ROWS = 4
STOP_SHARE = 0.1
# Stop shingles are chosen only from a sample at least this large; below it, no shingle is dropped.
STOP_MIN_DOCUMENTS = 200
PRUNE_JACCARD = 0.4
# The lowest cosine threshold these parameters are tuned for: above it, fewer than 1% of pairs are missed on the
# measured collections (docs/screening.md); the near-duplicates page accepts no lower threshold.
LOWEST_THRESHOLD = 0.75
# A band key shared by more texts than this links each of them to the first only (a star, not every pair).
MAX_BUCKET = 200

_rng = np.random.default_rng(20260514)
# Multiply-shift hashing of 32-bit shingle values: h(x) = ((a * x + b) mod 2^64) >> 32, with a odd.
_A = _rng.integers(0, 2**63, size=BANDS * ROWS, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
_B = _rng.integers(0, 2**63, size=BANDS * ROWS, dtype=np.uint64)
_BAND_SALT = mix64(np.arange(1, BANDS + 1, dtype=np.uint64) + np.uint64(SCHEME << 32))
_EMPTY = np.uint32(0xFFFFFFFF)
NO_KEY = 0


def stop_shingles(grams: np.ndarray, document_frequency: np.ndarray, documents: int) -> np.ndarray:
    """Return the sorted n-grams whose document frequency exceeds ``STOP_SHARE`` of ``documents``.

    ``grams`` and ``document_frequency`` are counted on a sample of ``documents`` texts (2-grams among them, which
    are never shingles and so never matter); there are none when the sample is under ``STOP_MIN_DOCUMENTS``.
    """
    if documents < STOP_MIN_DOCUMENTS:
        return np.zeros(0, np.uint64)
    return np.sort(grams[document_frequency > STOP_SHARE * documents])


def signatures(texts: list[str], stop: np.ndarray, *, chunk: int = 500) -> np.ndarray:
    """Return the MinHash signature of each text: ``BANDS * ROWS`` uint32 values (all 0xFFFFFFFF when blank).

    A text's shingles are its ``SHINGLE_SIZES`` n-grams less ``stop``, or all of them when none would be left.
    """
    out = np.full((len(texts), BANDS * ROWS), _EMPTY, dtype=np.uint32)
    for start in range(0, len(texts), chunk):
        batch = texts[start : start + chunk]
        sizes = [grams_in_order(batch, size) for size in SHINGLE_SIZES]
        kept = [~contains(stop, hashes) for hashes, _text in sizes]
        left = sum(np.bincount(text[keep], minlength=len(batch)) for (_h, text), keep in zip(sizes, kept, strict=True))
        for (hashes, text), keep in zip(sizes, kept, strict=True):
            keep |= left[text] == 0
            # The minimum over all shingles is the smaller of the minimums over each size.
            np.minimum(
                out[start : start + len(batch)],
                _minhash(hashes[keep], text[keep], len(batch)),
                out=out[start : start + len(batch)],
            )
    return out


def _minhash(hashes: np.ndarray, text: np.ndarray, n_texts: int) -> np.ndarray:
    """Return the MinHash values of each text from its shingles (``text`` non-decreasing)."""
    out = np.full((n_texts, BANDS * ROWS), _EMPTY, dtype=np.uint32)
    offsets = np.searchsorted(text, np.arange(n_texts + 1), side="left")
    x = (hashes >> np.uint64(GRAM_BITS - 32))[:, None]
    # A few dozen texts at a time keep the shingles x hash functions matrix to a few megabytes.
    for first in range(0, n_texts, 32):
        last = min(first + 32, n_texts)
        lo, hi = offsets[first], offsets[last]
        if lo == hi:
            continue
        values = ((x[lo:hi] * _A[None, :] + _B[None, :]) >> np.uint64(32)).astype(np.uint32)
        nonempty = first + np.flatnonzero(np.diff(offsets[first : last + 1]) > 0)
        out[nonempty] = np.minimum.reduceat(values, offsets[nonempty] - lo, axis=0)
    return out


def band_keys(signatures: np.ndarray) -> np.ndarray:
    """Return the ``BANDS`` band keys (int64) of each signature; an empty text's keys are all ``NO_KEY``."""
    values = signatures.astype(np.uint64).reshape(len(signatures), BANDS, ROWS)
    key = np.broadcast_to(_BAND_SALT, (len(signatures), BANDS)).copy()
    for r in range(ROWS):
        key = mix64(key * np.uint64(0x100000001B3) + values[:, :, r])
    keys = key.view(np.int64)
    keys[(signatures == _EMPTY).all(axis=1)] = NO_KEY
    return keys


def bucket_pairs(keys: np.ndarray, members: np.ndarray) -> np.ndarray:
    """Return pairs (a, b), a < b, of ``members`` that share a value of ``keys`` (``NO_KEY`` never matches); a pair
    sharing several keys comes once for each (``distinct`` removes the repeats).

    ``keys`` and ``members`` are parallel arrays, one entry per (member, band). Within a bucket of more than
    ``MAX_BUCKET`` members each is paired with the first only, so that one boilerplate text copied a thousand
    times costs a thousand pairs, not half a million.
    """
    order = np.lexsort((members, keys))
    keys, members = keys[order], members[order]
    valid = keys != NO_KEY
    keys, members = keys[valid], members[valid]
    if len(keys) < 2:
        return np.zeros((0, 2), dtype=np.int64)
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    sizes = np.diff(np.append(starts, len(keys)))
    position = np.arange(len(keys)) - np.repeat(starts, sizes)
    size = np.repeat(sizes, sizes)
    # Each member pairs with those after it in its bucket (with the first only in an oversized bucket).
    partners = np.where(size > MAX_BUCKET, np.where(position == 0, size - 1, 0), size - 1 - position)
    left = np.repeat(np.arange(len(keys)), partners)
    right = left + 1 + np.arange(len(left)) - np.repeat(np.cumsum(partners) - partners, partners)
    a, b = members[left], members[right]
    pairs = np.stack((np.minimum(a, b), np.maximum(a, b)), axis=1)
    return pairs[pairs[:, 0] != pairs[:, 1]]


def distinct(pairs: np.ndarray) -> np.ndarray:
    """Return the distinct rows of ``pairs`` (non-negative integer pairs), sorted."""
    if not len(pairs):
        return pairs.reshape(0, 2).astype(np.int64)
    width = int(pairs[:, 1].max()) + 1
    codes = np.unique(pairs[:, 0].astype(np.int64) * width + pairs[:, 1])
    return np.stack((codes // width, codes % width), axis=1)


def candidates(keys: np.ndarray, members: np.ndarray, signatures: np.ndarray, *, rows: int = 20_000) -> np.ndarray:
    """Return the distinct pairs of ``members`` (indices into ``signatures``) sharing a key and passing ``prune``.

    ``keys`` and ``members`` are parallel, one entry per (member, band). They are taken ``rows`` entries at a time,
    whole buckets only, so that memory follows one chunk's pairs rather than all of them.
    """
    order = np.lexsort((members, keys))
    keys, members = keys[order], members[order]
    found, start = [], 0
    while start < len(keys):
        stop = min(start + rows, len(keys))
        if stop < len(keys):
            stop = int(np.searchsorted(keys, keys[stop - 1], side="right"))
        found.append(distinct(prune(bucket_pairs(keys[start:stop], members[start:stop]), signatures)))
        start = stop
    return distinct(np.concatenate(found)) if found else np.zeros((0, 2), dtype=np.int64)


def candidate_pairs(keys: np.ndarray, signatures: np.ndarray) -> np.ndarray:
    """Return the candidate pairs (i, j), i < j, of the texts whose band keys are the rows of ``keys``."""
    members = np.repeat(np.arange(len(keys), dtype=np.int64), keys.shape[1])
    return candidates(keys.reshape(-1), members, signatures)


def estimated_jaccard(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Return the share of equal MinHash values, row by row: an unbiased estimate of Jaccard similarity."""
    return (left == right).mean(axis=-1)


def prune(pairs: np.ndarray, signatures: np.ndarray, *, chunk: int = 20_000) -> np.ndarray:
    """Return the ``pairs`` (indices into ``signatures``) whose estimated Jaccard is at least ``PRUNE_JACCARD``."""
    kept = [
        part[estimated_jaccard(signatures[part[:, 0]], signatures[part[:, 1]]) >= PRUNE_JACCARD]
        for part in (pairs[i : i + chunk] for i in range(0, len(pairs), chunk))
    ]
    return np.concatenate(kept) if kept else pairs
