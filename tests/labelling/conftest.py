"""Open prompts with three models' responses in both languages, shared by the labelling tests."""

import json

import pytest

from annotation.labelling import services as comparisons
from tests.factories import make_item


@pytest.fixture
def prompts(taxonomy, lead):
    items = []
    for i, dim in enumerate(["emotion_matching", "emotion_deepening"]):
        items.append(make_item(uid=f"op-{i}", kind="open_prompt", dimension=dim, user=lead, status="accepted"))
    rows = [
        {"item": item.uid, "language": lang, "model": model, "text": f"{model} answers {item.uid} in {lang}."}
        for item in items
        for lang in ("en", "zh")
        for model in ("m-alpha", "m-beta", "m-gamma")
    ]
    assert comparisons.responses_import(
        data="".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode(), user=lead
    ) == {"created": 12, "unchanged": 0}
    return items
