"""Near-duplicate detection: on real EmoBench text in English and Chinese, and its pieces against scikit-learn."""

import json
import tracemalloc

import numpy as np
import pytest
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer

from annotation.items import lsh, synthetic
from annotation.items.ngrams import count_grams
from annotation.items.similarity import Idf, clusters, near_duplicates, nearest, pair_cosines, vectorise


def emobench_scenarios(external_data, lang):
    rows = [json.loads(line) for line in (external_data / "emobench/EA.jsonl").read_text(encoding="utf-8").splitlines()]
    return {f"ea-{r['qid']}": r["scenario"] for r in rows if r["language"] == lang}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_near_duplicates_find_a_lightly_edited_copy_among_real_emobench_text(external_data, lang):
    texts = emobench_scenarios(external_data, lang)
    original = texts["ea-1"]
    texts["copy"] = original.replace("Sarah", "Sara") if lang == "en" else original.replace("。", "，") + "她很为难。"
    pairs = near_duplicates(texts, threshold=0.8)
    assert [(p.a, p.b) for p in pairs] == [("copy", "ea-1")]
    assert nearest(texts, "copy", k=1)[0][0] == "ea-1"
    assert clusters(pairs) == [["copy", "ea-1"]]


# --- the pieces: n-grams, weights, MinHash LSH ------------------------------------------------------------------

MIXED = [
    "Mia's best friend forgot her birthday and apologised the next day.",
    "MIA's best  friend\tforgot her birthday, and apologised the next day!",
    "A  b cd éÉ İstanbul — x",
    "米娅最好的朋友忘了她的生日，第二天才道歉。",
    "米娅最好的朋友忘了她的生日。第二天才道歉！",
    "I",
    "",
    "   ",
]


def sklearn_cosines(texts):
    matrix = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), sublinear_tf=True).fit_transform(texts)
    return (matrix @ matrix.T).toarray()


def test_ngrams_are_scikit_learns_char_wb_ngrams_counted_alike():
    texts = [t for t in MIXED if t.strip()]
    grams = count_grams(texts)
    for i, text in enumerate(texts):
        vectorizer = CountVectorizer(analyzer="char_wb", ngram_range=(2, 4))
        counts = vectorizer.fit_transform([text])
        assert sorted(grams.row(i)[1].tolist()) == sorted(counts.data.tolist())
        assert len(grams.row(i)[0]) == len(vectorizer.vocabulary_)


def test_scores_are_scikit_learns_tfidf_cosines():
    texts = [t for t in MIXED if t.strip()]
    vectors = vectorise(texts, Idf.from_texts(texts))
    left, right = np.triu_indices(len(texts), 1)
    expected = sklearn_cosines(texts)[left, right]
    assert np.allclose(pair_cosines(vectors, left, right), expected, atol=1e-9)


def test_nearest_scores_one_text_against_all_exactly():
    texts = {f"t{i}": t for i, t in enumerate(MIXED)}
    keys = [k for k in sorted(texts) if texts[k].strip()]
    row = sklearn_cosines([texts[k] for k in keys])[keys.index("t0")]
    scored = [(k, round(float(s), 4)) for k, s in zip(keys, row, strict=True) if k != "t0"]
    expected = sorted(scored, key=lambda x: -x[1])
    assert nearest(texts, "t0", k=3) == expected[:3]


def test_blank_and_single_texts_have_no_near_duplicates():
    assert near_duplicates({"a": "", "b": "  "}, threshold=0.5) == []
    assert near_duplicates({"a": "same text", "b": ""}, threshold=0.5) == []
    assert [(p.a, p.b, p.score) for p in near_duplicates({"a": "same", "b": "same"}, threshold=1.0)] == [
        ("a", "b", 1.0)
    ]


def test_a_text_of_stop_shingles_only_keeps_them_rather_than_an_empty_signature():
    texts = ["the same question?", "the same question?", "something else entirely"]
    stop = Idf.from_texts(texts * 100).stop_shingles()
    assert len(stop)
    values = lsh.signatures(texts, stop)
    assert (values[0] == values[1]).all() and (values[0] != 0xFFFFFFFF).any()


def test_a_bucket_shared_by_very_many_texts_links_them_to_its_first_only():
    members = np.arange(lsh.MAX_BUCKET + 5)
    pairs = lsh.bucket_pairs(np.full(len(members), 7, dtype=np.int64), members)
    assert len(pairs) == len(members) - 1 and set(pairs[:, 0].tolist()) == {0}
    small = lsh.bucket_pairs(np.array([3, 3, 3, lsh.NO_KEY, lsh.NO_KEY], dtype=np.int64), np.arange(5))
    assert sorted(map(tuple, small.tolist())) == [(0, 1), (0, 2), (1, 2)]


def test_near_duplicates_of_thousands_of_texts_need_no_square_matrix():
    texts = {f"s{i}": item["en"] for i, item in enumerate(synthetic.scenarios(4000, seed=5))}
    texts["copy"] = texts["s1"] + " Really."
    tracemalloc.start()
    try:
        pairs = near_duplicates(texts, threshold=0.85)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert ("copy", "s1") in {(p.a, p.b) for p in pairs}
    # The dense 4001 x 4001 matrix of the old code alone took 128 MB.
    assert peak < 64 * 2**20, peak
