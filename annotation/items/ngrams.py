"""Hashed character n-grams of texts, vectorised over a batch (pure).

An n-gram is one of scikit-learn's ``char_wb`` n-grams (the text lower-cased, split on whitespace, each word padded
with one space on each side, n-grams taken inside the padded words) and is named by a 64-bit hash of its
characters and length, the same in every process, so that n-grams counted apart (when a revision is saved, in a
sample of a benchmark) can be matched later.
"""

import hashlib
from dataclasses import dataclass

import numpy as np

# An n-gram is named by 53 bits: two of ten million distinct n-grams share a name with odds of about 1 in 200
# (and would only count as one), and 11 bits are left to pack the index of a text (of at most 2,048 sorted
# together) into one 64-bit sort key.
GRAM_BITS = 53
_TEXTS_PER_SORT = 500
_GRAM_MASK = np.uint64(2**GRAM_BITS - 1)
_BASE = np.uint64(0x100000001B3)
_LENGTH_SALT = 0x9E3779B97F4A7C15


def mix64(values: np.ndarray) -> np.ndarray:
    """Return the splitmix64 finaliser of ``values`` (uint64): a fixed, well-spread 64-bit hash."""
    z = values.astype(np.uint64, copy=True)
    z ^= z >> np.uint64(30)
    z *= np.uint64(0xBF58476D1CE4E5B9)
    z ^= z >> np.uint64(27)
    z *= np.uint64(0x94D049BB133111EB)
    z ^= z >> np.uint64(31)
    return z


def stable_hash(key: str) -> int:
    """Return a signed 64-bit hash of ``key`` that is the same in every process (Python's ``hash`` is not)."""
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "big", signed=True)


@dataclass(frozen=True)
class Grams:
    """The n-grams of a batch of texts: text i has ``hashes[indptr[i]:indptr[i + 1]]`` (sorted, distinct), each
    occurring ``counts`` times."""

    indptr: np.ndarray
    hashes: np.ndarray
    counts: np.ndarray

    def __len__(self) -> int:
        return len(self.indptr) - 1

    def row(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """Return the n-grams of text ``i`` and their counts."""
        return self.hashes[self.indptr[i] : self.indptr[i + 1]], self.counts[self.indptr[i] : self.indptr[i + 1]]

    def text_of_each(self) -> np.ndarray:
        """Return, for each entry of ``hashes``, the index of its text."""
        return np.repeat(np.arange(len(self)), np.diff(self.indptr))


def _padded_words(text: str) -> str:
    words = text.lower().split()
    return " " + "  ".join(words) + " " if words else ""


def count_grams(texts: list[str], sizes: tuple[int, ...] = (2, 3, 4)) -> Grams:
    """Count the hashed ``char_wb`` n-grams of the given ``sizes`` in each text."""
    parts = [_count(texts[i : i + _TEXTS_PER_SORT], sizes) for i in range(0, len(texts), _TEXTS_PER_SORT)]
    if len(parts) == 1:
        return parts[0]
    offsets = np.cumsum([0] + [len(p.hashes) for p in parts[:-1]])
    indptr = np.concatenate([[0]] + [p.indptr[1:] + o for p, o in zip(parts, offsets, strict=True)])
    return Grams(indptr, np.concatenate([p.hashes for p in parts]), np.concatenate([p.counts for p in parts]))


def grams_in_order(texts: list[str], size: int) -> tuple[np.ndarray, np.ndarray]:
    """Return the hashed ``char_wb`` n-grams of one ``size`` of all ``texts`` in reading order, repeats included,
    with the index of the text of each (non-decreasing)."""
    padded = [_padded_words(t) for t in texts]
    lengths = np.fromiter((len(p) for p in padded), dtype=np.int64, count=len(padded))
    chars = np.frombuffer("".join(padded).encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    if len(chars) < size:
        return np.zeros(0, np.uint64), np.zeros(0, np.int64)
    space = chars == 32
    # Padded words follow each other without a gap: a word ends just after a space that follows a non-space.
    ends = np.flatnonzero(space[1:] & ~space[:-1]) + 2
    marks = np.zeros(len(chars) + 1, dtype=np.int64)
    marks[ends] = 1
    word_end = ends[np.cumsum(marks[:-1])]
    rolling = chars[: len(chars) - size + 1].copy()
    for k in range(1, size):
        rolling = rolling * _BASE + chars[k : len(chars) - size + 1 + k]
    # An n-gram never runs past the end of its word; scikit-learn's rule for words shorter than n (the padded word
    # counted once, as the n-gram of its own length) comes out of the same test.
    at = np.flatnonzero(np.arange(len(rolling)) + size <= word_end[: len(rolling)])
    hashes = mix64(rolling[at] + np.uint64(size * _LENGTH_SALT % 2**64)) >> np.uint64(64 - GRAM_BITS)
    return hashes, np.repeat(np.arange(len(texts), dtype=np.int64), lengths)[at]


def _count(texts: list[str], sizes: tuple[int, ...]) -> Grams:
    keys = []
    for size in sizes:
        hashes, text = grams_in_order(texts, size)
        keys.append(text.astype(np.uint64) << np.uint64(GRAM_BITS) | hashes)
    # One sort of (text, n-gram) packed in 64 bits groups each text's n-grams and counts repeats.
    key, counts = np.unique(np.concatenate(keys), return_counts=True)
    text = (key >> np.uint64(GRAM_BITS)).astype(np.int64)
    indptr = np.searchsorted(text, np.arange(len(texts) + 1), side="left").astype(np.int64)
    return Grams(indptr, key & _GRAM_MASK, counts.astype(np.uint32))


def contains(sorted_values: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Return, for each of ``values``, whether it is in ``sorted_values`` (sorted, as ``np.isin`` but unsorted
    ``values`` are not sorted)."""
    if not len(sorted_values):
        return np.zeros(len(values), dtype=bool)
    at = np.minimum(np.searchsorted(sorted_values, values), len(sorted_values) - 1)
    return sorted_values[at] == values
