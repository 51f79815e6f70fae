"""Near-duplicate detection by TF-IDF cosine over character n-grams, so Chinese works too (pure)."""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class NearDuplicate:
    a: str
    b: str
    score: float


def near_duplicates(texts: dict[str, str], *, threshold: float) -> list[NearDuplicate]:
    """Return every pair of keys whose texts have cosine similarity >= ``threshold``, most similar first."""
    keys, similarity = _matrix(texts)
    if len(keys) < 2:
        return []
    rows, cols = np.nonzero(np.triu(similarity >= threshold, k=1))
    pairs = [
        NearDuplicate(keys[i], keys[j], round(float(similarity[i, j]), 4)) for i, j in zip(rows, cols, strict=True)
    ]
    return sorted(pairs, key=lambda p: (-p.score, p.a, p.b))


def _matrix(texts: dict[str, str]) -> tuple[list[str], np.ndarray]:
    # scikit-learn is imported here, not at start-up: it takes seconds to load and most requests never need it.
    from sklearn.feature_extraction.text import TfidfVectorizer

    keys = [k for k in sorted(texts) if texts[k].strip()]
    if len(keys) < 2:
        return keys, np.zeros((len(keys), len(keys)))
    vectorizer = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), lowercase=True, sublinear_tf=True)
    matrix = vectorizer.fit_transform([texts[k] for k in keys])
    return keys, (matrix @ matrix.T).toarray()


def nearest(texts: dict[str, str], key: str, *, k: int = 3) -> list[tuple[str, float]]:
    """Return the ``k`` texts most similar to ``texts[key]`` with their cosine similarity."""
    keys, similarity = _matrix(texts)
    if key not in keys:
        return []
    row = similarity[keys.index(key)]
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
