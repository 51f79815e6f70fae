"""Item services: revisions, conflicts, immutability, taxonomy loading; import and export of items, all or nothing
with precise errors, idempotent, EmoBench included, and their commands."""

import json

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings

from annotation.items import selectors, services
from annotation.items.interchange import dump_jsonl
from annotation.items.models import Benchmark, Dimension, EmotionCategory, Item, ItemRevision, Scenario, ScenarioDomain
from tests.factories import make_item, mcq_content

pytestmark = pytest.mark.django_db


def state_for(item, content, **kwargs):
    return services.ItemState(dimension=item.dimension, content=content, **kwargs)


def test_taxonomy_has_the_published_structure(taxonomy):
    facet = Benchmark.objects.get(slug="facet")
    modules = Dimension.objects.filter(benchmark=facet, parent=None)
    assert sorted(m.name_en for m in modules) == ["Emotion Cognition", "Emotion Interaction", "Emotion Perception"]
    leaves = Dimension.objects.filter(benchmark=facet, level="dimension")
    assert leaves.count() == 10
    assert sorted(d.name_en for d in leaves if d.subjective) == [
        "Emotion Deepening",
        "Emotion Matching",
        "Emotion Regulation",
        "Empathetic Understanding",
        "Expression Naturalness",
    ]
    assert {"Hidden Emotion Recognition", "Crisis Recognition", "Social Adequacy"} <= {d.name_en for d in leaves}
    assert sum(d.target_items for d in leaves) == 480
    eicap = Benchmark.objects.get(slug="eicap")
    assert Dimension.objects.filter(benchmark=eicap, level="layer").count() == 6
    assert Dimension.objects.filter(benchmark=eicap, level="subcategory").count() == 24
    assert EmotionCategory.objects.count() == 62
    assert set(EmotionCategory.objects.values_list("valence", flat=True)) == {"positive", "neutral", "negative"}
    assert ScenarioDomain.objects.count() == 6 and Scenario.objects.count() == 48
    assert all(d.name_zh for d in Dimension.objects.all())


def test_loading_the_taxonomy_twice_changes_nothing(taxonomy):
    before = (Dimension.objects.count(), EmotionCategory.objects.count(), Scenario.objects.count())
    services.taxonomy_load_fixture("taxonomy.json")
    assert (Dimension.objects.count(), EmotionCategory.objects.count(), Scenario.objects.count()) == before


def test_every_revise_creates_a_new_numbered_revision_with_author_and_message(taxonomy, expert, lead):
    item = make_item(user=expert)
    content = mcq_content()
    content["zh"]["question"] = "米娅此刻有什么感受？"
    revision = services.item_revise(item=item, state=state_for(item, content), user=lead, message="zh wording")
    assert (revision.number, revision.author, revision.message) == (2, lead, "zh wording")
    item.refresh_from_db()
    assert item.current_revision == revision and item.updated_by == lead and item.created_by == expert
    assert list(item.revisions.values_list("number", flat=True)) == [1, 2]


def test_revising_with_identical_content_saves_nothing(taxonomy, expert):
    item = make_item(user=expert)
    assert services.item_revise(item=item, state=state_for(item, mcq_content()), user=expert) is None
    assert item.revisions.count() == 1


def test_editing_a_stale_revision_is_a_conflict_and_keeps_the_newer_text(taxonomy, expert, lead):
    item = make_item(user=expert)
    first = mcq_content()
    first["en"]["question"] = "Lead's wording"
    services.item_revise(item=item, state=state_for(item, first), user=lead, base_revision=1)
    stale = mcq_content()
    stale["en"]["question"] = "Expert's wording"
    with pytest.raises(services.RevisionConflict, match="changed by lead1 \\(revision 2"):
        services.item_revise(item=item, state=state_for(item, stale), user=expert, base_revision=1)
    item.refresh_from_db()
    assert item.current_revision.number == 2
    assert item.current_revision.content["en"]["question"] == "Lead's wording"


def test_revisions_are_immutable_through_the_orm(taxonomy, expert):
    revision = make_item(user=expert).current_revision
    revision.message = "rewritten history"
    with pytest.raises(ValidationError):
        revision.save()
    with pytest.raises(ValidationError):
        ItemRevision.objects.filter(pk=revision.pk).update(message="x")
    with pytest.raises(ValidationError):
        revision.delete()
    assert ItemRevision.objects.get(pk=revision.pk).message == "created in a test"


def test_parity_problems_are_stored_and_flagged_on_the_item(taxonomy, expert):
    content = mcq_content()
    del content["zh"]
    item = make_item(content=content, user=expert)
    assert (item.has_en, item.has_zh, item.parity_ok) == (True, False, False)
    assert [i["code"] for i in item.current_revision.parity_issues] == ["missing_language"]


def test_dimension_of_another_benchmark_is_refused_and_nothing_is_written(taxonomy, expert):
    item = make_item(user=expert)
    foreign = Dimension.objects.get(
        benchmark__slug="eicap",
        code=Dimension.objects.filter(benchmark__slug="eicap", level="subcategory").first().code,
    )
    with pytest.raises(ValidationError, match="another benchmark"):
        services.item_revise(item=item, state=services.ItemState(dimension=foreign, content=mcq_content()), user=expert)
    assert item.revisions.count() == 1


def test_creating_a_duplicate_uid_is_refused(taxonomy, expert):
    make_item(uid="dup-1", user=expert)
    with pytest.raises(ValidationError, match="already exists"):
        make_item(uid="dup-1", user=expert)
    assert Item.objects.filter(uid="dup-1").count() == 1


# --- import and export ------------------------------------------------------------------------------------


def record(uid="imp-1", **overrides):
    base = {
        "format": "eistudio-item/1",
        "uid": uid,
        "benchmark": "facet",
        "dimension": "hidden_emotion_recognition",
        "kind": "mcq",
        "scenario": "academic_anxiety",
        "emotions": [],
        "difficulty": "medium",
        "status": "draft",
        "origin": "expert",
        "content": mcq_content(),
    }
    base.update(overrides)
    return base


def jsonl(*records) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")


def import_errors(data: bytes, **kwargs) -> list[str]:
    with pytest.raises(services.ImportFailed) as excinfo:
        services.items_import(data=data, user=None, **kwargs)
    assert Item.objects.count() == 0 and ItemRevision.objects.count() == 0, "a failed import wrote something"
    return [str(e) for e in excinfo.value.errors]


def test_import_creates_items_with_first_revision(taxonomy):
    report = services.items_import(data=jsonl(record("a"), record("b")), user=None)
    assert report.created == ["a", "b"] and not report.flagged
    item = Item.objects.get(uid="a")
    assert item.current_revision.number == 1 and item.scenario.code == "academic_anxiety"
    assert item.origin == "expert" and item.parity_ok


def test_reimporting_the_same_file_changes_nothing(taxonomy):
    data = jsonl(record("a"), record("b"))
    services.items_import(data=data, user=None)
    report = services.items_import(data=data, user=None)
    assert report.unchanged == ["a", "b"] and report.created == [] and report.revised == []
    assert ItemRevision.objects.count() == 2


def test_reimporting_changed_content_adds_a_revision_not_an_item(taxonomy):
    services.items_import(data=jsonl(record("a")), user=None)
    changed = record("a")
    changed["content"]["zh"]["question"] = "米娅此刻有什么感受？"
    report = services.items_import(data=jsonl(changed), user=None)
    assert report.revised == ["a"]
    assert Item.objects.count() == 1
    assert list(Item.objects.get(uid="a").revisions.values_list("number", flat=True)) == [1, 2]


def test_one_bad_record_means_nothing_is_imported_and_each_error_names_line_and_field(taxonomy):
    bad = record("b", dimension="no_such_dimension", scenario="no_such_scenario")
    errors = import_errors(jsonl(record("a"), bad))
    assert errors == [
        "line 2: dimension: unknown dimension code 'no_such_dimension' in benchmark 'facet'",
        "line 2: scenario: unknown scenario code 'no_such_scenario'",
    ]


def test_malformed_json_is_reported_with_its_line(taxonomy):
    data = jsonl(record("a")) + b'{"uid": "b", \n'
    assert import_errors(data) == [
        "line 2: line: malformed JSON: a field name in double quotes was expected at column 14"
    ]


def test_invalid_utf8_is_reported_with_its_line(taxonomy):
    data = jsonl(record("a")) + b'{"uid": "caf\xe9"}\n'
    assert import_errors(data) == ["line 2: line: invalid UTF-8 at byte 12"]


def test_duplicate_uid_within_a_file_is_an_error(taxonomy):
    assert import_errors(jsonl(record("a"), record("a"))) == ["line 2: uid: duplicate uid 'a' (first on line 1)"]


def test_wrong_option_count_and_types_are_errors(taxonomy):
    bad = record("a")
    bad["content"]["en"]["options"] = ["only one"]
    bad["content"]["zh"]["answer"] = "B"
    errors = import_errors(jsonl(bad))
    assert "line 1: content.en.options: needs 2 to 12 options, got 1" in errors
    assert any(e.startswith("line 1: content.zh.answer: must be a 0-based option index") for e in errors)


@override_settings(ITEM_MAX_TEXT_CHARS=50)
def test_oversize_text_is_an_error(taxonomy):
    bad = record("a")
    bad["content"]["en"]["context"] = "x" * 51
    assert import_errors(jsonl(bad)) == ["line 1: content.en.context: text too long: 51 characters (limit 50)"]


def test_unknown_fields_kinds_and_missing_required_fields_are_errors(taxonomy):
    bad = record("a", kind="essay", colour="blue")
    del bad["dimension"]
    errors = import_errors(jsonl(bad))
    assert "line 1: colour: unknown field" in errors
    assert "line 1: dimension: required dimension code" in errors
    assert "line 1: kind: must be one of mcq, multi_turn_choice, open_prompt, got 'essay'" in errors


def test_a_missing_language_is_imported_and_flagged_not_refused(taxonomy):
    partial = record("a")
    del partial["content"]["zh"]
    report = services.items_import(data=jsonl(partial), user=None)
    assert report.flagged["a"][0]["code"] == "missing_language"
    assert Item.objects.get(uid="a").has_zh is False


def test_changing_the_kind_of_an_existing_item_is_refused(taxonomy):
    services.items_import(data=jsonl(record("a")), user=None)
    open_prompt = record("a", kind="open_prompt", content={"en": {"prompt": "Hi"}, "zh": {"prompt": "你好"}})
    with pytest.raises(services.ImportFailed) as excinfo:
        services.items_import(data=jsonl(open_prompt), user=None)
    assert [str(e) for e in excinfo.value.errors] == ["line 1: kind: item a is mcq; the kind of an item cannot change"]
    assert Item.objects.get(uid="a").revisions.count() == 1


def test_empty_file_is_an_error(taxonomy):
    assert import_errors(b"\n\n") == ["line 0: file: the file holds no records"]


def test_dry_run_reports_but_writes_nothing(taxonomy):
    report = services.items_import(data=jsonl(record("a")), user=None, dry_run=True)
    assert report.created == ["a"] and report.dry_run
    assert Item.objects.count() == 0


def test_export_then_import_reproduces_identical_content(taxonomy):
    services.items_import(
        data=jsonl(record("a"), record("b", dimension="crisis_recognition", crisis_level=3)), user=None
    )
    exported = dump_jsonl(selectors.item_export_records(items=Item.objects.all()))
    before = {i.uid: (i.current_revision.content, i.current_revision.attributes) for i in Item.objects.all()}
    report = services.items_import(data=exported.encode(), user=None)
    assert report.unchanged == ["a", "b"]
    assert dump_jsonl(selectors.item_export_records(items=Item.objects.all())) == exported
    after = {i.uid: (i.current_revision.content, i.current_revision.attributes) for i in Item.objects.all()}
    assert after == before


def test_import_and_export_commands(taxonomy, tmp_path, capsys):
    path = tmp_path / "items.jsonl"
    path.write_bytes(jsonl(record("a")))
    call_command("import_items", str(path))
    assert "1 records: 1 created" in capsys.readouterr().out
    out = tmp_path / "out.jsonl"
    call_command("export_items", "--out", str(out), "--benchmark", "facet")
    assert json.loads(out.read_text(encoding="utf-8"))["uid"] == "a"
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(jsonl(record("b", dimension="nope")))
    with pytest.raises(CommandError, match="1 error\\(s\\); nothing was imported"):
        call_command("import_items", str(bad))
    assert "line 1: dimension: unknown dimension code 'nope'" in capsys.readouterr().err
    assert not Item.objects.filter(uid="b").exists()


EMOBENCH_SAMPLE = [
    {
        "qid": "1",
        "language": "en",
        "category": "Personal-Others",
        "question type": "Action",
        "scenario": "S",
        "subject": "Sam",
        "choices": ["Wait", "Talk to a counselor"],
        "label": "Talk to a counselor",
    },
    {
        "qid": "1",
        "language": "zh",
        "category": "Personal-Others",
        "question type": "Action",
        "scenario": "场景",
        "subject": "山姆",
        "choices": ["找辅导员谈谈", "等待"],
        "label": "找辅导员谈谈",
    },
]


def test_emobench_rows_are_paired_by_qid_with_answers_per_language(taxonomy):
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in EMOBENCH_SAMPLE).encode()
    report = services.items_import(data=data, user=None, format="emobench")
    assert report.created == ["emobench-ea-1"]
    content = Item.objects.get(uid="emobench-ea-1").current_revision.content
    assert content["en"]["answer"] == 1 and content["zh"]["answer"] == 0


def test_real_emobench_files_import_with_faults_flagged_not_dropped(taxonomy, external_data):
    ea = services.items_import(data=(external_data / "emobench/EA.jsonl").read_bytes(), user=None, format="emobench")
    eu = services.items_import(data=(external_data / "emobench/EU.jsonl").read_bytes(), user=None, format="emobench")
    assert len(ea.created) == 200 and len(eu.created) == 400
    assert Item.objects.filter(benchmark__slug="emobench").count() == 600
    assert sorted(eu.flagged) == ["emobench-eu-73-cause", "emobench-eu-74-cause"]
    assert all(i["code"] == "option_count_mismatch" for issues in eu.flagged.values() for i in issues)
    assert len(eu.source_faults) == 2
    again = services.items_import(data=(external_data / "emobench/EU.jsonl").read_bytes(), user=None, format="emobench")
    assert len(again.unchanged) == 400
