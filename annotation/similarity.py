"""Near-duplicate detection by TF-IDF cosine over character n-grams, so Chinese works too (pure)."""

from dataclasses import dataclass

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer


@dataclass(frozen=True)
class NearDuplicate:
    a: str
    b: str
    score: float


def near_duplicates(texts: dict[str, str], *, threshold: float) -> list[NearDuplicate]:
    """Return every pair of keys whose texts have cosine similarity >= ``threshold``, most similar first."""
    keys = [k for k in sorted(texts) if texts[k].strip()]
    if len(keys) < 2:
        return []
    vectorizer = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), lowercase=True, sublinear_tf=True)
    matrix = vectorizer.fit_transform([texts[k] for k in keys])
    similarity = (matrix @ matrix.T).toarray()
    rows, cols = np.nonzero(np.triu(similarity >= threshold, k=1))
    pairs = [
        NearDuplicate(keys[i], keys[j], round(float(similarity[i, j]), 4)) for i, j in zip(rows, cols, strict=True)
    ]
    return sorted(pairs, key=lambda p: (-p.score, p.a, p.b))
