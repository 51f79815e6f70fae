"""Item pages: list, detail, editor with autosave, history diffs, create, export/import, coverage; who may open
each page and who is recorded for each write."""

import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings

from annotation.items import services
from annotation.items.models import (
    Benchmark,
    CrisisLevel,
    Dimension,
    EmotionCategory,
    Item,
    ItemDraft,
    ItemRevision,
    Scenario,
)
from annotation.items.views.items import PAGE_SIZE
from tests.factories import make_item, mcq_content
from tests.permissions import (
    LOGIN,
    UID,
    assert_page_outcome,
    assert_written_only_if_allowed,
    edited_question_form,
    expand,
    import_record,
    jsonl_file,
    request_as,
)


def editor_form(item: Item, **changes: str) -> dict:
    """Return what the editor posts for the current revision of an mcq ``item``, with ``changes`` applied."""
    revision = item.current_revision
    data = {"dimension": str(item.dimension_id), "base_revision": str(revision.number), "message": "edited"}
    for lang, version in revision.content.items():
        data[f"{lang}-context"] = version["context"]
        data[f"{lang}-question"] = version["question"]
        for index, option in enumerate(version["options"]):
            data[f"{lang}-option-{index}"] = option
        if version["answer"] is not None:
            data[f"{lang}-answer"] = str(version["answer"])
    data.update(changes)
    return data


def result_uids(html: str) -> list[str]:
    return re.findall(r'<td><a href="/items/([^/"]+)/">', html)


# --- list -------------------------------------------------------------------------------------------------


@pytest.fixture
def listed(taxonomy, lead):
    en_only = mcq_content()
    del en_only["zh"]
    make_item(uid="fa-mcq", user=lead)
    make_item(uid="fa-open", dimension="emotion_deepening", kind="open_prompt", status="accepted", user=lead)
    make_item(uid="fa-en-only", dimension="explicit_emotion_recognition", content=en_only, user=lead)
    make_item(uid="ei-mcq", benchmark="eicap", dimension="basic_emotion_labels", user=lead)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("", ["ei-mcq", "fa-en-only", "fa-mcq", "fa-open"]),
        ("benchmark=eicap", ["ei-mcq"]),
        ("dimension=emotion_deepening", ["fa-open"]),
        ("kind=open_prompt", ["fa-open"]),
        ("status=accepted", ["fa-open"]),
        ("languages=missing", ["fa-en-only"]),
        ("parity=problems", ["fa-en-only"]),
        ("q=考砸", ["fa-open"]),
        ("benchmark=facet&kind=mcq", ["fa-en-only", "fa-mcq"]),
    ],
)
def test_item_list_filters_narrow_the_table(listed, researcher, login, query, expected):
    response = login(researcher).get(f"/items/?{query}")

    assert response.status_code == 200
    assert result_uids(response.content.decode()) == expected


def test_item_list_says_when_no_item_matches(listed, researcher, login):
    html = login(researcher).get("/items/?q=no-such-text").content.decode()

    assert "No items match these filters." in html
    assert result_uids(html) == []


def test_item_list_paginates_and_keeps_filters_in_page_links(taxonomy, researcher, login):
    for n in range(PAGE_SIZE + 2):
        make_item(uid=f"page-{n:02d}")
    make_item(uid="other-bench", benchmark="eicap", dimension="basic_emotion_labels")
    client = login(researcher)

    first = client.get("/items/?benchmark=facet").content.decode()
    second = client.get("/items/?benchmark=facet&page=2").content.decode()

    assert f"{PAGE_SIZE + 2} items" in first
    assert "Page 1 of 2" in first
    assert result_uids(first) == [f"page-{n:02d}" for n in range(PAGE_SIZE)]
    assert 'href="?benchmark=facet&amp;page=2"' in first
    assert "Page 2 of 2" in second
    assert result_uids(second) == ["page-25", "page-26"]
    assert 'href="?benchmark=facet&amp;page=1"' in second


def test_item_list_htmx_request_returns_only_the_results_fragment(listed, researcher, login):
    response = login(researcher).get("/items/?benchmark=eicap", HTTP_HX_REQUEST="true")

    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<div id="results">')
    assert "<html" not in html
    assert '<form class="filters"' not in html
    assert result_uids(html) == ["ei-mcq"]


def test_item_list_without_htmx_returns_the_whole_page(listed, researcher, login):
    html = login(researcher).get("/items/?benchmark=eicap").content.decode()

    assert "<html" in html
    assert '<form class="filters"' in html
    assert '<div id="results">' in html


def test_lead_expert_sees_item_list_with_demo_item(taxonomy, lead, login):
    from tests.factories import make_item

    make_item(uid="smoke-1", user=lead)
    client = login(lead)
    response = client.get("/items/")
    assert response.status_code == 200
    assert b"smoke-1" in response.content


# --- detail -----------------------------------------------------------------------------------------------


def test_item_detail_shows_both_languages_side_by_side_with_answer_keys(taxonomy, researcher, login):
    make_item(uid="detail-1")

    html = login(researcher).get("/items/detail-1/").content.decode()

    en = html.index('<section class="card lang-en" lang="en">')
    zh = html.index('<section class="card lang-zh" lang="zh-Hans">')
    assert en < zh
    assert html.index('<div class="bilingual">') < en
    assert "What does Mia most likely feel?" in html[en:zh]
    assert "米娅最可能有什么感受？" in html[zh:]
    assert '<li class="answer" title="Answer key">Disappointment</li>' in html
    assert '<li class="answer" title="Answer key">失望</li>' in html
    assert 'id="parity"' not in html


def test_item_detail_reports_a_missing_chinese_version(taxonomy, researcher, login):
    content = mcq_content()
    del content["zh"]
    make_item(uid="detail-no-zh", content=content)

    html = login(researcher).get("/items/detail-no-zh/").content.decode()

    parity = html[html.index('id="parity"') :]
    assert "Bilingual parity problems" in parity
    assert "The Chinese version is missing." in parity
    zh = html[html.index('<section class="card lang-zh"') :]
    assert "This language version is missing." in zh


def test_item_detail_reports_differing_option_counts(taxonomy, researcher, login):
    content = mcq_content()
    content["zh"]["options"] = ["喜悦", "失望", "恐惧"]
    make_item(uid="detail-counts", content=content)

    html = login(researcher).get("/items/detail-counts/").content.decode()

    assert "The languages have different numbers of options: English 4, Chinese 3." in html


def test_item_detail_of_unknown_uid_is_404(taxonomy, researcher, login):
    assert login(researcher).get("/items/no-such-item/").status_code == 404


def test_item_detail_warns_about_a_near_duplicate(taxonomy, lead, researcher, login):
    make_item(uid="orig", user=lead)
    make_item(uid="twin", user=lead)
    html = login(researcher).get("/items/twin/").content.decode()
    assert "Possible near-duplicate" in html and "/items/orig/" in html


# --- editor -----------------------------------------------------------------------------------------------


def test_edit_page_is_prefilled_with_the_current_revision(taxonomy, expert, login):
    make_item(uid="edit-get")

    html = login(expert).get("/items/edit-get/edit/").content.decode()

    assert 'name="base_revision" value="1"' in html
    assert ">What does Mia most likely feel?</textarea>" in html
    assert 'name="zh-option-2" rows="2" class="option-text">恐惧</textarea>' in html
    assert re.search(r'name="zh-answer" value="1" checked', html)


def test_edit_post_saves_a_revision_and_redirects_to_its_diff(taxonomy, expert, lead, login):
    item = make_item(uid="edit-1", user=lead)
    client = login(expert)

    response = client.post(
        "/items/edit-1/edit/",
        editor_form(
            item,
            **{
                "en-question": "What does Mia probably feel?",
                "en-option-0": "Joyful",
                "zh-question": "米娅此刻可能有什么感受？",
                "zh-option-0": "喜乐",
                "message": "clearer wording",
            },
        ),
    )

    assert response.status_code == 302
    assert response["Location"] == "/items/edit-1/history/?a=1&b=2"
    revision = ItemRevision.objects.get(item=item, number=2)
    assert revision.author == expert
    assert revision.message == "clearer wording"
    assert revision.content["en"]["options"][0] == "Joyful"
    assert revision.content["zh"]["question"] == "米娅此刻可能有什么感受？"
    history = client.get(response["Location"]).content.decode()
    assert "Saved revision 2." in history
    assert "Changes from r1 to r2" in history
    # English is compared word by word, Chinese character by character.
    assert "What does Mia <del>most likely</del><ins>probably</ins> feel?" in history
    assert "<del>Joy</del><ins>Joyful</ins>" in history
    assert "米娅<del>最</del><ins>此刻</ins>可能有什么感受？" in history
    assert "喜<del>悦</del><ins>乐</ins>" in history


def test_edit_post_without_changes_saves_no_revision(taxonomy, expert, login):
    item = make_item(uid="edit-same")
    client = login(expert)

    response = client.post("/items/edit-same/edit/", editor_form(item))

    assert response.status_code == 302
    assert response["Location"] == "/items/edit-same/"
    assert item.revisions.count() == 1
    assert "Nothing changed, so no revision was saved." in client.get(response["Location"]).content.decode()


def test_edit_post_from_a_stale_revision_is_409_and_keeps_the_newer_work(taxonomy, expert, lead, login):
    item = make_item(uid="edit-stale", user=expert)
    stale_form = editor_form(item, **{"en-question": "My stale rewording?"})
    newer = mcq_content()
    newer["en"]["question"] = "Their newer wording?"
    services.item_revise(
        item=item,
        state=services.ItemState(dimension=item.dimension, content=newer),
        user=lead,
        base_revision=1,
    )

    response = login(expert).post("/items/edit-stale/edit/", stale_form)

    assert response.status_code == 409
    html = response.content.decode()
    assert "This item was changed by lead1 (revision 2," in html
    assert "after you opened revision 1. Your text was not saved over theirs" in html
    assert "My stale rewording?</textarea>" in html
    item.refresh_from_db()
    assert item.revisions.count() == 2
    assert item.current_revision.content["en"]["question"] == "Their newer wording?"


def test_edit_post_with_a_dimension_from_another_benchmark_is_400_and_saves_nothing(taxonomy, expert, login):
    item = make_item(uid="edit-bad-dim")
    eicap_dimension = Dimension.objects.get(benchmark__slug="eicap", code="basic_emotion_labels")
    form = editor_form(item, dimension=str(eicap_dimension.pk), **{"en-question": "Changed?"})

    response = login(expert).post("/items/edit-bad-dim/edit/", form)

    assert response.status_code == 400
    assert "Select a valid choice. That choice is not one of the available choices." in response.content.decode()
    item.refresh_from_db()
    assert item.revisions.count() == 1
    assert item.dimension.code == "hidden_emotion_recognition"
    assert item.current_revision.content["en"]["question"] == "What does Mia most likely feel?"


def test_edit_post_with_oversize_text_is_400_naming_the_field(taxonomy, expert, login):
    item = make_item(uid="edit-long")
    form = editor_form(item, **{"en-question": "Why " * 20})

    with override_settings(ITEM_MAX_TEXT_CHARS=50):
        response = login(expert).post("/items/edit-long/edit/", form)

    assert response.status_code == 400
    assert "content.en.question: text too long: 79 characters (limit 50)" in response.content.decode()
    assert item.revisions.count() == 1


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


def test_history_defaults_to_the_diff_of_the_two_newest_revisions(taxonomy, researcher, expert, login):
    item = make_item(uid="hist-2")
    for question in ("Second wording?", "Third wording?"):
        content = mcq_content()
        content["en"]["question"] = question
        services.item_revise(
            item=item, state=services.ItemState(dimension=item.dimension, content=content), user=expert
        )

    html = login(researcher).get("/items/hist-2/history/").content.decode()

    assert "Changes from r2 to r3" in html
    assert "<del>Second</del><ins>Third</ins> wording?" in html
    assert "<td>r1</td>" in html


def test_history_compares_the_revisions_chosen_in_the_query(taxonomy, researcher, expert, login):
    item = make_item(uid="hist-3")
    for question in ("Second wording?", "Third wording?"):
        content = mcq_content()
        content["en"]["question"] = question
        services.item_revise(
            item=item, state=services.ItemState(dimension=item.dimension, content=content), user=expert
        )

    html = login(researcher).get("/items/hist-3/history/?a=1&b=3").content.decode()

    assert "Changes from r1 to r3" in html
    # The whole question was rewritten, so it shows as one replaced block rather than interleaved words.
    assert "<del>What does Mia most likely feel?</del><ins>Third wording?</ins>" in html


def test_history_with_a_single_revision_says_so_instead_of_an_empty_diff(taxonomy, researcher, login):
    make_item(uid="hist-1")

    html = login(researcher).get("/items/hist-1/history/").content.decode()

    assert "This item has a single revision so far." in html
    assert "Changes from r1 to r1" not in html


# --- create -----------------------------------------------------------------------------------------------


def test_create_page_offers_uid_benchmark_and_kind(taxonomy, expert, login):
    html = login(expert).get("/items/new/").content.decode()

    assert 'name="uid"' in html
    assert 'name="benchmark"' in html
    assert '<option value="open_prompt">open prompt</option>' in html


def test_create_page_creates_an_item_and_opens_its_editor(taxonomy, expert, login):
    facet = Benchmark.objects.get(slug="facet")

    response = login(expert).post("/items/new/", {"uid": "new-1", "benchmark": facet.pk, "kind": "open_prompt"})

    assert response.status_code == 302
    assert response["Location"] == "/items/new-1/edit/"
    item = Item.objects.get(uid="new-1")
    assert item.kind == "open_prompt"
    assert item.dimension.code == "explicit_emotion_recognition"
    assert item.current_revision.number == 1


def test_create_page_refuses_a_taken_uid(taxonomy, expert, login):
    make_item(uid="taken")
    facet = Benchmark.objects.get(slug="facet")

    response = login(expert).post("/items/new/", {"uid": "taken", "benchmark": facet.pk, "kind": "mcq"})

    assert response.status_code == 400
    assert "An item with this uid already exists." in response.content.decode()
    assert Item.objects.filter(uid="taken").count() == 1
    assert ItemRevision.objects.count() == 1


# --- export and import ------------------------------------------------------------------------------------


@pytest.fixture
def exportable(taxonomy, lead):
    en_only = mcq_content()
    del en_only["zh"]
    make_item(uid="x-mcq", user=lead, status="accepted")
    make_item(uid="x-open", dimension="emotion_deepening", kind="open_prompt", user=lead)
    make_item(uid="x-en-only", content=en_only, user=lead)
    services.item_create(
        benchmark=Benchmark.objects.get(slug="facet"),
        uid="x-turns",
        kind="multi_turn_choice",
        state=services.ItemState(
            dimension=Dimension.objects.get(benchmark__slug="facet", code="social_adequacy"),
            content={
                "en": {"turns": [{"user": "Hi, I feel low.", "options": ["Cheer up!", "I'm here."], "answer": 1}]},
                "zh": {"turns": [{"user": "我心情不好。", "options": ["开心点！", "我在这儿。"], "answer": 1}]},
            },
            scenario=Scenario.objects.get(code="exam_failure"),
            emotions=list(EmotionCategory.objects.filter(code__in=["joy", "pride"])),
            crisis_level=CrisisLevel.objects.get(level=2),
            difficulty="hard",
            metadata={"source": "workshop"},
        ),
        user=lead,
    )
    make_item(uid="x-eicap", benchmark="eicap", dimension="basic_emotion_labels", user=lead)


def test_export_downloads_one_jsonl_record_per_item(exportable, researcher, login):
    response = login(researcher).get("/items/export.jsonl")

    assert response.status_code == 200
    assert response["Content-Type"] == "application/x-ndjson; charset=utf-8"
    assert re.fullmatch(r'attachment; filename="items-\d{8}-\d{6}\.jsonl"', response["Content-Disposition"])
    records = [json.loads(line) for line in response.content.decode().splitlines()]
    assert [r["uid"] for r in records] == ["x-eicap", "x-en-only", "x-mcq", "x-open", "x-turns"]
    assert {r["format"] for r in records} == {"eistudio-item/1"}
    turns = records[-1]
    assert turns["scenario"] == "exam_failure"
    assert turns["emotions"] == ["joy", "pride"]
    assert turns["crisis_level"] == 2
    assert turns["metadata"] == {"source": "workshop"}
    assert turns["content"]["zh"]["turns"][0]["options"] == ["开心点！", "我在这儿。"]
    assert records[2]["status"] == "accepted"


def test_export_honours_the_list_filters(exportable, researcher, login):
    body = login(researcher).get("/items/export.jsonl?benchmark=eicap").content.decode()

    assert [json.loads(line)["uid"] for line in body.splitlines()] == ["x-eicap"]


def test_exported_file_reimports_with_every_item_unchanged(exportable, researcher, expert, login):
    body = login(researcher).get("/items/export.jsonl").content
    before = list(ItemRevision.objects.order_by("id").values_list("id", flat=True))

    report = services.items_import(data=body, user=expert)

    assert report.created == []
    assert report.revised == []
    assert sorted(report.unchanged) == ["x-eicap", "x-en-only", "x-mcq", "x-open", "x-turns"]
    assert list(ItemRevision.objects.order_by("id").values_list("id", flat=True)) == before
    assert Item.objects.get(uid="x-mcq").status == "accepted"


def jsonl(*lines: object) -> SimpleUploadedFile:
    body = "".join((line if isinstance(line, str) else json.dumps(line, ensure_ascii=False)) + "\n" for line in lines)
    return SimpleUploadedFile("items.jsonl", body.encode("utf-8"), content_type="application/x-ndjson")


def record(uid: str, **overrides: object) -> dict:
    return {
        "format": "eistudio-item/1",
        "uid": uid,
        "benchmark": "facet",
        "dimension": "hidden_emotion_recognition",
        "kind": "mcq",
        "content": mcq_content(),
        **overrides,
    }


def test_import_page_imports_a_good_file_and_reports_it(taxonomy, expert, login):
    en_only = mcq_content()
    del en_only["zh"]

    response = login(expert).post(
        "/items/import/", {"file": jsonl(record("imp-1"), record("imp-2", content=en_only)), "format": "eistudio"}
    )

    assert response.status_code == 200
    html = response.content.decode()
    assert "<h2>Imported</h2>" in html
    assert "<li>Created: 2</li>" in html
    assert "<li>Flagged by the parity check: 1</li>" in html
    assert '<a href="/items/imp-2/">imp-2</a>: The Chinese version is missing.' in html
    assert sorted(Item.objects.values_list("uid", flat=True)) == ["imp-1", "imp-2"]
    assert Item.objects.get(uid="imp-1").created_by == expert


def test_import_page_reports_an_unchanged_reimport(taxonomy, expert, login):
    client = login(expert)
    client.post("/items/import/", {"file": jsonl(record("imp-1")), "format": "eistudio"})

    html = client.post("/items/import/", {"file": jsonl(record("imp-1")), "format": "eistudio"}).content.decode()

    assert "<li>Created: 0</li>" in html
    assert "<li>Unchanged: 1</li>" in html
    assert ItemRevision.objects.filter(item__uid="imp-1").count() == 1


def test_import_page_refuses_a_file_with_malformed_json_on_line_2_and_writes_nothing(taxonomy, expert, login):
    response = login(expert).post(
        "/items/import/", {"file": jsonl(record("imp-1"), '{"uid": "imp-2",', record("imp-3")), "format": "eistudio"}
    )

    assert response.status_code == 400
    html = response.content.decode()
    assert "1 error; nothing was imported" in html
    assert "<code>line 2: line: malformed JSON" in html
    assert Item.objects.count() == 0


def test_import_page_refuses_a_file_with_an_unknown_dimension_on_line_3_and_writes_nothing(taxonomy, expert, login):
    response = login(expert).post(
        "/items/import/",
        {"file": jsonl(record("imp-1"), record("imp-2"), record("imp-3", dimension="nope")), "format": "eistudio"},
    )

    assert response.status_code == 400
    assert "line 3: dimension: unknown dimension code &#x27;nope&#x27;" in response.content.decode()
    assert Item.objects.count() == 0


def test_import_page_dry_run_reports_but_writes_nothing(taxonomy, expert, login):
    response = login(expert).post(
        "/items/import/", {"file": jsonl(record("imp-1"), record("imp-2")), "format": "eistudio", "dry_run": "on"}
    )

    assert response.status_code == 200
    html = response.content.decode()
    assert "Dry run result (nothing written)" in html
    assert "<li>Created: 2</li>" in html
    assert Item.objects.count() == 0
    assert ItemRevision.objects.count() == 0


def test_import_page_without_a_file_asks_for_one(taxonomy, expert, login):
    response = login(expert).post("/items/import/", {"format": "eistudio"})

    assert response.status_code == 400
    assert "Choose a JSONL file to import." in response.content.decode()


# --- coverage ---------------------------------------------------------------------------------------------


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


# --- who may open what ------------------------------------------------------------------------------------


# fmt: off
PAGE_MATRIX = [
    # method  path                        payload    anonymous  researcher   expert       lead_expert  admin
    ("GET",  "/",                         None,      LOGIN,     200,         200,         200,         200),
    ("GET",  "/items/",                   None,      LOGIN,     200,         200,         200,         200),
    ("GET",  f"/items/{UID}/",            None,      LOGIN,     200,         200,         200,         200),
    ("GET",  f"/items/{UID}/edit/",       None,      LOGIN,     403,         200,         200,         200),
    ("POST", f"/items/{UID}/edit/",       "edit",    LOGIN,     403,         302,         302,         302),
    ("GET",  f"/items/{UID}/history/",    None,      LOGIN,     200,         200,         200,         200),
    ("GET",  "/items/new/",               None,      LOGIN,     403,         200,         200,         200),
    ("POST", "/items/new/",               "create",  LOGIN,     403,         302,         302,         302),
    ("GET",  "/items/import/",            None,      LOGIN,     403,         200,         200,         200),
    ("POST", "/items/import/",            "import",  LOGIN,     403,         200,         200,         200),
    ("GET",  "/items/export.jsonl",       None,      LOGIN,     200,         200,         200,         200),
    ("GET",  "/taxonomy/",                None,      LOGIN,     200,         200,         200,         200),
    ("GET",  "/schema/item.json",         None,      LOGIN,     200,         200,         200,         200),
]
# fmt: on


@pytest.mark.parametrize(("method", "path", "payload", "role", "expected"), expand(PAGE_MATRIX))
def test_page_permission_matrix(client, make_user, taxonomy, method, path, payload, role, expected):
    response, before = request_as(client, make_user, role, method, path, payload)

    assert_page_outcome(response, path, expected)
    assert_written_only_if_allowed(method, expected, before)


def test_researcher_is_not_offered_edit_or_import_links(taxonomy, researcher, login):
    make_item(uid="links-1")
    body = login(researcher).get("/items/links-1/").content.decode()

    assert 'href="/items/links-1/history/"' in body
    assert 'href="/items/links-1/edit/"' not in body
    assert 'href="/items/import/"' not in body
    assert 'href="/admin/"' not in body


def test_expert_is_offered_edit_and_import_links_but_not_admin(taxonomy, expert, login):
    make_item(uid="links-2")
    body = login(expert).get("/items/links-2/").content.decode()

    assert 'href="/items/links-2/edit/"' in body
    assert 'href="/items/import/"' in body
    assert 'href="/admin/"' not in body


# --- every write records who made it ----------------------------------------------------------------------


def test_page_edit_records_the_editor_as_revision_author_and_item_updater(taxonomy, lead, expert, login):
    item = make_item(uid="who-edit", user=lead)

    response = login(expert).post("/items/who-edit/edit/", edited_question_form(item))

    assert response.status_code == 302
    item.refresh_from_db()
    assert item.current_revision.number == 2
    assert item.current_revision.author == expert
    assert item.updated_by == expert
    assert item.created_by == lead
    assert ItemRevision.objects.get(item=item, number=1).author == lead


def test_page_create_records_the_creator(taxonomy, expert, login):
    facet = Benchmark.objects.get(slug="facet")

    response = login(expert).post("/items/new/", {"uid": "who-new", "benchmark": facet.pk, "kind": "mcq"})

    assert response.status_code == 302
    item = Item.objects.get(uid="who-new")
    assert item.created_by == expert
    assert item.updated_by == expert
    assert item.current_revision.author == expert


def test_page_import_records_the_importer(taxonomy, expert, login):
    response = login(expert).post(
        "/items/import/", {"file": jsonl_file(import_record("who-imported")), "format": "eistudio"}
    )

    assert response.status_code == 200
    item = Item.objects.get(uid="who-imported")
    assert item.created_by == expert
    assert item.current_revision.author == expert
    assert item.origin == Item.Origin.IMPORTED


def test_the_import_page_names_its_formats_in_the_readers_language(taxonomy, expert, login):
    client = login(expert)
    english = client.get("/items/import/").content.decode()
    assert re.search(r'<option value="emobench">EmoBench(\'|&#x27;)s own files</option>', english)
    client.cookies["django_language"] = "zh-hans"
    chinese = client.get("/items/import/").content.decode()
    assert ">EmoBench 原始文件</option>" in chinese and ">emobench</option>" not in chinese
