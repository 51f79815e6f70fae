"""Near-duplicate detection on real EmoBench text, in English and Chinese."""

import json

import pytest

from items.similarity import clusters, near_duplicates, nearest


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
