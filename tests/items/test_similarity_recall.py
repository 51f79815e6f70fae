"""Recall and precision of the LSH near-duplicate search against the exact N x N computation it replaced.

The reference is scikit-learn's TF-IDF (char_wb 2-4-grams, sublinear tf) with the full similarity matrix: the old
``annotation.items.similarity``. Collections: the real EmoBench items in English and Chinese (scenario and question, as
imported;
its emotion and cause questions share a scenario, so it holds hundreds of real near-duplicate pairs), the same with
paraphrased copies, and synthetic bilingual items with paraphrases of every strength.
"""

import json
import random

import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer

from annotation.items import lsh, synthetic
from annotation.items.emobench import EA_QUESTION, EU_QUESTION, ZH_QUESTION_TYPES
from annotation.items.similarity import near_duplicates

# The threshold of the item page and the release check, and the lowest the near-duplicates page offers.
THRESHOLDS = (0.85, lsh.LOWEST_THRESHOLD)
# Paraphrase strengths giving pairs all around the thresholds: Chinese edits are per character, English per word.
STRENGTH = {"en": 0.35, "zh": 0.1}


def exact_pairs(texts: dict[str, str], threshold: float) -> set[tuple[str, str]]:
    keys = [k for k in sorted(texts) if texts[k].strip()]
    matrix = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), sublinear_tf=True).fit_transform(
        [texts[k] for k in keys]
    )
    rows, cols = np.nonzero(np.triu((matrix @ matrix.T).toarray() >= threshold, k=1))
    return {(keys[i], keys[j]) for i, j in zip(rows, cols, strict=True)}


def measured(texts: dict[str, str], threshold: float) -> tuple[float, float, int]:
    """Return recall and precision of ``near_duplicates`` against the exact pairs, and how many exact pairs."""
    exact = exact_pairs(texts, threshold)
    found = {(p.a, p.b) for p in near_duplicates(texts, threshold=threshold)}
    return len(exact & found) / max(len(exact), 1), len(exact & found) / max(len(found), 1), len(exact)


def emobench_texts(external_data, lang: str) -> dict[str, str]:
    """Return the prose of every EmoBench item as the importer builds it (scenario, then question)."""
    texts = {}
    for line in (external_data / "emobench/EA.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["language"] == lang:
            kind = row["question type"].strip()
            kind = kind.lower() if lang == "en" else ZH_QUESTION_TYPES.get(kind.casefold(), kind)
            question = EA_QUESTION[lang].format(q_type=kind, subject=row["subject"].strip())
            texts[f"ea-{row['qid']}"] = row["scenario"].strip() + "\n" + question
    for line in (external_data / "emobench/EU.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["language"] == lang:
            for part in ("emotion", "cause"):
                question = EU_QUESTION[part][lang].format(subject=row["subject"].strip())
                texts[f"eu-{row['qid']}-{part}"] = row["scenario"].strip() + "\n" + question
    return texts


def with_paraphrases(texts: dict[str, str], lang: str, n: int, *, seed: int) -> dict[str, str]:
    rng = random.Random(seed)
    result = dict(texts)
    for i, key in enumerate(rng.sample(sorted(texts), n)):
        strength = rng.uniform(0, STRENGTH[lang])
        result[f"para-{i}-{key}"] = synthetic.paraphrase(texts[key], lang, strength=strength, seed=i)
    return result


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("threshold", THRESHOLDS)
def test_lsh_finds_the_exact_pairs_of_real_emobench_items(external_data, lang, threshold):
    recall, precision, n = measured(emobench_texts(external_data, lang), threshold)
    assert n >= 400  # the emotion and cause questions of one scenario
    assert recall >= 0.95 and precision >= 0.99, (recall, precision)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("threshold", THRESHOLDS)
def test_lsh_finds_the_exact_pairs_of_paraphrased_emobench_items(external_data, lang, threshold):
    texts = with_paraphrases(emobench_texts(external_data, lang), lang, 300, seed=1)
    recall, precision, n = measured(texts, threshold)
    assert n >= 500
    assert recall >= 0.95 and precision >= 0.99, (recall, precision)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("threshold", THRESHOLDS)
def test_lsh_finds_the_exact_pairs_of_synthetic_paraphrases(lang, threshold):
    items = synthetic.scenarios(1500, seed=7)
    texts = with_paraphrases({f"s{i}": item[lang] for i, item in enumerate(items)}, lang, 500, seed=3)
    recall, precision, n = measured(texts, threshold)
    assert n >= 100
    assert recall >= 0.95 and precision >= 0.99, (recall, precision)
