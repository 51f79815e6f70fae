"""Editing that fits the content: sentence-level diffs, multi-line options, searchable pickers, drafting that keeps
its targets' labels and skips exact duplicates."""

import pytest

from annotation.items.diff import diff_text, split_sentences
from annotation.items.models import Dimension, EmotionCategory, Item, Scenario
from annotation.items.services import drafting
from tests.factories import make_item, work_llm_run
from tests.items.test_views import editor_form


def ops(segments):
    return [(s.op, s.text) for s in segments]


# --- diff -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("She is sad. He left! Why?  Nobody knows", "en"),
        ("Line one\nLine two.\n\nLine three", "en"),
        ("她很难过。他走了！为什么？没人知道", "zh"),
        ("“你还好吗？”她问。", "zh"),
        ("", "en"),
    ],
)
def test_sentences_join_back_to_the_text(text, language):
    assert "".join(split_sentences(text, language)) == text


def test_chinese_sentences_split_on_full_stops_and_marks():
    assert split_sentences("她很难过。他走了！为什么？好", "zh") == ["她很难过。", "他走了！", "为什么？", "好"]


def test_a_rewritten_sentence_is_one_replaced_block_not_interleaved_words():
    old = "Mia waited at the station for an hour. Her friend never came to meet her."
    new = "Mia waited at the station for an hour. Nobody had told her that the meeting moved to Friday."
    assert ops(diff_text(old, new, "en")) == [
        ("equal", "Mia waited at the station for an hour. "),
        ("delete", "Her friend never came to meet her."),
        ("insert", "Nobody had told her that the meeting moved to Friday."),
    ]


def test_a_sentence_with_a_few_words_changed_keeps_the_word_diff():
    old = "Mia waited at the station for an hour. Her friend never came."
    new = "Mia waited at the station for two hours. Her friend never came."
    assert ops(diff_text(old, new, "en")) == [
        ("equal", "Mia waited at the station for "),
        ("delete", "an"),
        ("insert", "two"),
        ("equal", " "),
        ("delete", "hour"),
        ("insert", "hours"),
        ("equal", ". Her friend never came."),
    ]


def test_a_rewritten_chinese_sentence_is_one_block():
    segments = ops(diff_text("她今天很难过。朋友没来。", "她今天很难过。会议改到了周五却没人告诉她。", "zh"))
    rewritten = ("insert", "会议改到了周五却没人告诉她。")
    assert segments == [("equal", "她今天很难过。"), ("delete", "朋友没来。"), rewritten]


def test_added_and_removed_sentences_show_whole():
    assert ops(diff_text("One. Two.", "One. Two. Three.", "en")) == [("equal", "One. Two."), ("insert", " Three.")]


# --- editor -----------------------------------------------------------------------------------------------


def test_option_fields_are_multi_line_and_keep_line_breaks(taxonomy, expert, login):
    item = make_item(uid="multi-line", user=expert)
    client = login(expert)
    html = client.get(f"/items/{item.uid}/edit/").content.decode()
    assert '<textarea id="en-option-0" name="en-option-0" rows="2" class="option-text">' in html
    data = editor_form(item, **{"en-option-0": "Relieved,\nbut still a little anxious"})
    assert client.post(f"/items/{item.uid}/edit/", data).status_code == 302
    item.refresh_from_db()
    assert item.current_revision.content["en"]["options"][0] == "Relieved,\nbut still a little anxious"


def test_emotions_and_scenario_use_the_searchable_picker_with_both_names(taxonomy, expert, login):
    item = make_item(uid="picker", user=expert)
    html = login(expert).get(f"/items/{item.uid}/edit/").content.decode()
    emotion = EmotionCategory.objects.order_by("position").first()
    assert 'name="emotions" data-picker' in html and 'name="scenario" data-picker' in html
    assert f'data-search="{emotion.name_en} {emotion.name_zh} {emotion.code} {emotion.valence}"' in html
    assert 'data-remove-label="Remove"' in html


def test_template_form_picks_scenarios_emotions_and_seed_items(taxonomy, expert, login):
    html = login(expert).get("/drafting/").content.decode()
    assert 'name="t-scenarios" data-picker' in html and 'name="t-emotions" data-picker' in html
    assert 'data-picker-remote="/api/items/?page_size=8&amp;q="' in html


def test_the_seed_item_picker_finds_items_through_the_api_it_calls(taxonomy, expert, login):
    make_item(uid="seed-findable", user=expert)
    data = login(expert).get("/api/items/?page_size=8&q=findable").json()
    assert [r["uid"] for r in data["results"]] == ["seed-findable"]
    assert data["results"][0]["content"]["en"]["context"]


# --- drafting ---------------------------------------------------------------------------------------------


@pytest.fixture
def template(transactional_db, taxonomy, lead):
    return drafting.item_template_save(
        dimension=Dimension.objects.get(benchmark__slug="facet", code="hidden_emotion_recognition"),
        kind="mcq",
        instructions="Write a short scenario where the feeling is implied, not named.",
        user=lead,
        scenarios=list(Scenario.objects.order_by("code")[:2]),
        emotions=list(EmotionCategory.objects.order_by("code")[:3]),
    )


def run_job(template, endpoint, lead, count=6):
    job = drafting.drafting_job_start(
        template=template, endpoint=endpoint, count=count, languages=["en"], translate=True, user=lead, start=False
    )
    work_llm_run(job.llm_run_id)
    return drafting.drafting_job_collect(job=job, user=lead)


def test_drafted_items_keep_the_scenario_and_emotion_their_batch_targets(template, make_endpoint, lead):
    job = run_job(template, make_endpoint("sim-drafter", for_drafting=True), lead, count=10)
    assert job.created_uids
    scenarios = list(template.scenarios.all())
    emotions = list(template.emotions.all())
    for uid in job.created_uids:
        item = Item.objects.get(uid=uid)
        assert item.scenario in scenarios
        assert len(item.emotions.all()) == 1 and item.emotions.get() in emotions
    # Each batch of five rotates to the next target: the first batch's items carry the first targets.
    first = Item.objects.get(uid=job.created_uids[0])
    refs = {ri.ref["batch"]: ri.ref for ri in job.llm_run.items.all()}
    assert first.scenario_id == refs[1]["scenario"] and first.emotions.get().pk == refs[1]["emotion"]


def test_an_exact_duplicate_of_an_existing_item_is_skipped_and_reported(template, make_endpoint, lead, login):
    endpoint = make_endpoint("sim-drafter", for_drafting=True)
    first = run_job(template, endpoint, lead, count=5)
    assert first.created_uids
    # The simulator answers the same prompt the same way: the second job drafts exact copies of the first's items.
    second = run_job(template, endpoint, lead, count=5)
    duplicates = [f for f in second.failures if f.get("kind") == drafting.DUPLICATE]
    assert second.created_uids == [] and len(duplicates) == 5
    assert {f["uid"] for f in duplicates} <= set(first.created_uids)
    html = login(lead).get(f"/drafting/jobs/{second.pk}/").content.decode()
    assert 'id="skipped-duplicates"' in html and "malformed" not in html.split('id="skipped-duplicates"')[1]
    assert "5 exact duplicates of existing items, skipped" in html


def test_the_editor_selects_the_items_emotions_and_reads_its_choices_once(taxonomy, lead, login):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from annotation.items import services
    from annotation.items.models import EmotionCategory
    from tests.factories import make_item

    item = make_item(user=lead)
    chosen = list(EmotionCategory.objects.order_by("code")[:2])
    services.item_revise(
        item=item,
        state=services.ItemState(dimension=item.dimension, content=item.current_revision.content, emotions=chosen),
        user=lead,
    )
    client = login(lead)
    client.get(f"/items/{item.uid}/edit/")
    with CaptureQueriesContext(connection) as queries:
        page = client.get(f"/items/{item.uid}/edit/").content.decode()
    assert len(queries) <= 10
    assert sum('"items_emotioncategory"' in q["sql"] for q in queries.captured_queries) == 1
    select = page[page.index('name="emotions"') :].split("</select>", 1)[0]
    for emotion in EmotionCategory.objects.all():
        option = select[select.index(f'<option value="{emotion.pk}"') :].split(">", 1)[0]
        assert ("selected" in option) == (emotion in chosen), emotion.code
