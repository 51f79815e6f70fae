"""Near-duplicate detection by TF-IDF cosine over character n-grams, so Chinese works too (pure).

A text is the bag of its ``char_wb`` 2-4-grams (``annotation.items.ngrams``) weighted by sublinear term frequency and
smoothed
inverse document frequency, L2-normalised: the vectors of scikit-learn's ``TfidfVectorizer(analyzer="char_wb",
ngram_range=(2, 4), sublinear_tf=True)``, to rounding. The document frequencies (``Idf``) come from the texts
compared, or from ``IDF_SAMPLE`` of them when there are more, so two texts can be scored without the rest.

Nothing builds an N x N matrix: ``near_duplicates`` scores exactly only the pairs MinHash LSH proposes
(``annotation.items.lsh``), a chunk at a time, and ``nearest`` scores one text against the others a block at a time.
"""

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from annotation.items import lsh
from annotation.items.ngrams import GRAM_BITS, count_grams, stable_hash

# Document frequencies are counted on at most this many texts, those whose key hashes lowest (``sample``): a sample
# that size weighs n-grams as the whole collection does to within a few thousandths of cosine (docs/screening.md),
# and bounds the work and the stored table whatever the size of the benchmark.
IDF_SAMPLE = 10000
# Texts vectorised together and candidate pairs scored together: what bounds the memory of ``near_duplicates``.
CHUNK = 500
PAIR_CHUNK = 1000


@dataclass(frozen=True)
class NearDuplicate:
    a: str
    b: str
    score: float


def sample(keys: Iterable[str], size: int = IDF_SAMPLE) -> list[str]:
    """Return the ``size`` keys with the smallest ``stable_hash``: a fixed pseudo-random sample that new keys seldom
    change."""
    return sorted(keys, key=stable_hash)[:size]


@dataclass(frozen=True)
class Idf:
    """Document frequencies of n-grams over ``documents`` texts: ``grams`` sorted, ``df`` aligned with them."""

    grams: np.ndarray
    df: np.ndarray
    documents: int

    @classmethod
    def from_texts(cls, texts: Iterable[str]) -> "Idf":
        """Count document frequencies over ``texts`` (blank ones left out), merging a chunk at a time so that memory
        follows the distinct n-grams, not the texts."""
        grams, df, documents = np.zeros(0, np.uint64), np.zeros(0, np.int64), 0
        batch: list[str] = []

        def merge() -> None:
            nonlocal grams, df, documents
            chunk, counts = np.unique(count_grams(batch).hashes, return_counts=True)
            grams, at = np.unique(np.concatenate((grams, chunk)), return_inverse=True)
            df = np.bincount(at, weights=np.concatenate((df, counts)), minlength=len(grams)).astype(np.int64)
            documents += len(batch)
            batch.clear()

        for text in texts:
            if text.strip():
                batch.append(text)
            if len(batch) == CHUNK:
                merge()
        if batch:
            merge()
        return cls(grams, df.astype(np.uint32), documents)

    def weights(self, hashes: np.ndarray) -> np.ndarray:
        """Return the smoothed inverse document frequency of each n-gram, as scikit-learn computes it."""
        df = np.zeros(len(hashes))
        if len(self.grams):
            at = np.minimum(np.searchsorted(self.grams, hashes), len(self.grams) - 1)
            df = np.where(self.grams[at] == hashes, self.df[at], 0)
        return np.log((1 + self.documents) / (1 + df)) + 1

    def stop_shingles(self) -> np.ndarray:
        """Return the n-grams too common to tell texts apart (``lsh.stop_shingles``)."""
        return lsh.stop_shingles(self.grams, self.df, self.documents)


@dataclass(frozen=True)
class Vectors:
    """L2-normalised TF-IDF vectors of a batch of texts: text i has weights ``weights[indptr[i]:indptr[i + 1]]`` on
    the n-grams ``hashes[indptr[i]:indptr[i + 1]]`` (sorted)."""

    indptr: np.ndarray
    hashes: np.ndarray
    weights: np.ndarray

    def __len__(self) -> int:
        return len(self.indptr) - 1


def vectorise(texts: list[str], idf: Idf) -> Vectors:
    """Return the TF-IDF vector of each text (the zero vector for a blank text)."""
    grams = count_grams(texts)
    weights = (1 + np.log(grams.counts)) * idf.weights(grams.hashes)
    text = grams.text_of_each()
    norms = np.sqrt(np.bincount(text, weights=weights**2, minlength=len(grams)))
    return Vectors(grams.indptr, grams.hashes, weights / np.where(norms > 0, norms, 1)[text])


def pair_cosines(vectors: Vectors, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Return the cosine similarity of each pair of rows ``(left[i], right[i])`` of ``vectors``."""
    if not len(left):
        return np.zeros(0)
    # One sparse product for all pairs; the n-gram hashes themselves are the (sorted) column indices.
    from scipy import sparse

    matrix = sparse.csr_matrix(
        (vectors.weights, vectors.hashes.astype(np.int64), vectors.indptr), shape=(len(vectors), 2**GRAM_BITS)
    )
    matrix.has_sorted_indices = True
    return np.asarray(matrix[left].multiply(matrix[right]).sum(axis=1)).ravel()


def score_pairs(texts: list[str], pairs: np.ndarray, idf: Idf, *, threshold: float) -> list[tuple[int, int, float]]:
    """Return ``(i, j, cosine)`` for the ``pairs`` of indices into ``texts`` scoring at least ``threshold``."""
    found = []
    for start in range(0, len(pairs), PAIR_CHUNK):
        chunk = pairs[start : start + PAIR_CHUNK]
        rows, local = np.unique(chunk, return_inverse=True)
        local = local.reshape(chunk.shape)
        scores = pair_cosines(vectorise([texts[i] for i in rows], idf), local[:, 0], local[:, 1])
        # Rounding, not the last bit of floating point, decides a pair exactly at the threshold.
        keep = np.flatnonzero(np.round(scores, 9) >= threshold)
        found += [(int(chunk[k, 0]), int(chunk[k, 1]), float(scores[k])) for k in keep]
    return found


def near_duplicates(texts: dict[str, str], *, threshold: float) -> list[NearDuplicate]:
    """Return every pair of keys whose texts have cosine similarity >= ``threshold``, most similar first.

    Candidates come from MinHash LSH over the texts (missing a pair above 0.85 with a probability well under 1%,
    docs/screening.md); every score reported is exact. Memory stays bounded by ``CHUNK`` and ``PAIR_CHUNK`` rather
    than growing with the square of the number of texts.
    """
    keys = [k for k in sorted(texts) if texts[k].strip()]
    if len(keys) < 2:
        return []
    idf = Idf.from_texts(texts[k] for k in sample(keys))
    stop = idf.stop_shingles()
    signatures = np.concatenate(
        [lsh.signatures([texts[k] for k in keys[i : i + CHUNK]], stop) for i in range(0, len(keys), CHUNK)]
    )
    pairs = lsh.candidate_pairs(lsh.band_keys(signatures), signatures)
    scored = score_pairs([texts[k] for k in keys], pairs, idf, threshold=threshold)
    found = [NearDuplicate(keys[i], keys[j], round(score, 4)) for i, j, score in scored]
    return sorted(found, key=lambda p: (-p.score, p.a, p.b))


def nearest(texts: dict[str, str], key: str, *, k: int = 3) -> list[tuple[str, float]]:
    """Return the ``k`` texts most similar to ``texts[key]`` with their cosine similarity (exact, in blocks)."""
    keys = [x for x in sorted(texts) if texts[x].strip()]
    if key not in keys:
        return []
    idf = Idf.from_texts(texts[x] for x in sample(keys))
    scores = []
    for start in range(0, len(keys), CHUNK):
        block = [texts[x] for x in keys[start : start + CHUNK]]
        vectors = vectorise([*block, texts[key]], idf)
        scores.append(pair_cosines(vectors, np.arange(len(block)), np.full(len(block), len(block))))
    row = np.concatenate(scores)
    order = [i for i in np.argsort(-row, kind="stable") if keys[i] != key][:k]
    return [(keys[i], round(float(row[i]), 4)) for i in order]


def clusters(pairs: list[NearDuplicate]) -> list[list[str]]:
    """Group near-duplicate pairs into connected clusters, largest first."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for pair in pairs:
        parent[find(pair.a)] = find(pair.b)
    groups: dict[str, list[str]] = {}
    for key in parent:
        groups.setdefault(find(key), []).append(key)
    return sorted((sorted(g) for g in groups.values()), key=lambda g: (-len(g), g))
