"""Coverage counts, near-duplicate detection on real text, and editor autosave."""

import json

import pytest

from items import selectors, services
from items.models import Benchmark, EmotionCategory, Item, ItemDraft, Scenario
from items.similarity import clusters, near_duplicates, nearest
from tests.factories import make_item, mcq_content

pytestmark = pytest.mark.django_db


def test_coverage_counts_per_language_domain_valence_and_difficulty(taxonomy, lead):
    scenario = Scenario.objects.get(code="academic_anxiety")
    joy = EmotionCategory.objects.filter(valence="positive").first()
    fear = EmotionCategory.objects.filter(valence="negative").first()
    accepted = make_item(uid="cov-1", user=lead, status="accepted")
    services.item_revise(
        item=accepted,
        state=services.ItemState(
            dimension=accepted.dimension,
            content=mcq_content(),
            scenario=scenario,
            emotions=[joy, fear],
            difficulty="hard",
        ),
        user=lead,
    )
    english_only = mcq_content()
    del english_only["zh"]
    make_item(uid="cov-2", content=english_only, user=lead, status="draft")
    make_item(uid="cov-3", user=lead, status="rejected")
    data = selectors.coverage(benchmark=Benchmark.objects.get(slug="facet"))
    row = data["table"][accepted.dimension_id]
    assert row["lang"] == {"en": {"accepted": 1, "candidate": 1}, "zh": {"accepted": 1, "candidate": 0}}
    domain = scenario.domain.code
    assert row["domain"][("en", domain)] == {"accepted": 1, "candidate": 0}
    assert row["valence"][("zh", "positive")]["accepted"] == 1 and row["valence"][("zh", "negative")]["accepted"] == 1
    assert row["valence"][("en", "neutral")]["accepted"] == 0
    assert row["difficulty"][("en", "hard")]["accepted"] == 1 and row["difficulty"][("en", "none")]["candidate"] == 1


def test_coverage_page_highlights_gaps_and_links_cells_to_items(taxonomy, lead, researcher, login):
    make_item(uid="cov-1", user=lead, status="accepted")
    html = login(researcher).get("/coverage/?benchmark=facet&by=valence&lang=zh").content.decode()
    assert 'class="gap"' in html and "−47" in html
    link = "/items/?benchmark=facet&amp;dimension=hidden_emotion_recognition&amp;status=accepted&amp;lang=en"
    assert link in html
    listed = login(researcher).get(
        "/items/?benchmark=facet&dimension=hidden_emotion_recognition&status=accepted&lang=en"
    )
    assert b"cov-1" in listed.content


def test_candidate_status_filter_lists_drafts_and_items_in_screening(taxonomy, lead):
    make_item(uid="c-draft", user=lead, status="draft")
    make_item(uid="c-screen", user=lead, status="in_screening")
    make_item(uid="c-acc", user=lead, status="accepted")
    uids = list(selectors.item_list(filters={"status": "candidate"}).values_list("uid", flat=True))
    assert uids == ["c-draft", "c-screen"]


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


def test_item_detail_warns_about_a_near_duplicate(taxonomy, lead, researcher, login):
    make_item(uid="orig", user=lead)
    make_item(uid="twin", user=lead)
    html = login(researcher).get("/items/twin/").content.decode()
    assert "Possible near-duplicate" in html and "/items/orig/" in html


def test_editor_autosaves_and_restores_a_draft_until_the_revision_is_saved(taxonomy, expert, login):
    make_item(uid="auto-1", user=expert)
    client = login(expert)
    form = client.get("/items/auto-1/edit/")
    assert form.status_code == 200
    data = {
        "en-question": "Autosaved wording?",
        "dimension": str(Item.objects.get(uid="auto-1").dimension_id),
        "base_revision": "1",
    }
    response = client.post("/items/auto-1/autosave/", data)
    assert response.status_code == 200 and "Draft autosaved" in response.content.decode()
    assert ItemDraft.objects.get(item__uid="auto-1").data["en-question"] == ["Autosaved wording?"]
    restored = client.get("/items/auto-1/edit/").content.decode()
    assert "Restored your unsaved draft" in restored and "Autosaved wording?" in restored
    client.get("/items/auto-1/edit/?draft=discard")
    assert not ItemDraft.objects.exists()
