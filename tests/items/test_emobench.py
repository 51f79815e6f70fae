"""Tests for the EmoBench converter (pure Python: no database, no Django)."""

import copy
import json
import random
from pathlib import Path

import pytest

from annotation.items.content import check_parity, validate_content
from annotation.items.emobench import FORMAT, SourceFault, detect_source, dimension_code, emobench_records, match_label

PROJECT = Path(__file__).parents[2]
EMOBENCH_DIR = PROJECT.parent / "shared/data/external/emobench"
TAXONOMY = PROJECT / "fixtures/emobench_taxonomy.json"


def ea_row(qid="1", lang="en", **overrides):
    rows = {
        "en": {
            "qid": qid,
            "language": "en",
            "category": "Personal-Others",
            "question type": "Action",
            "scenario": "Sarah's brother is bullied at school and begs her not to tell their parents.",
            "subject": "Sarah",
            "choices": [
                "Keep the secret",
                "Tell their parents",
                "Confront the bullies",
                "Suggest a counselor",
            ],
            "label": "Suggest a counselor",
        },
        "zh": {
            "qid": qid,
            "language": "zh",
            "category": "Personal-Others",
            "question type": "Action",
            "scenario": "萨拉的弟弟在学校受欺负，他恳求她不要告诉爸妈。",
            "subject": "萨拉",
            "choices": ["保守秘密", "告诉父母", "自己应对欺凌者", "建议找辅导员"],
            "label": "建议找辅导员",
        },
    }
    return {**rows[lang], **overrides}


def eu_row(qid="1", lang="en", **overrides):
    rows = {
        "en": {
            "qid": qid,
            "language": "en",
            "coarse_category": "complex_emotions",
            "finegrained_category": "emotion_transition",
            "scenario": "Dorea's baklava was ruined, but her daughter tasted it and gave a thumbs-up.",
            "subject": "Dorea",
            "emotion_choices": ["Delight", "Anger", "Embarrassment", "Pride"],
            "emotion_label": "Delight",
            "cause_choices": ["Her daughter enjoyed it", "It was not ruined", "Her daughter came home"],
            "cause_label": "Her daughter enjoyed it",
        },
        "zh": {
            "qid": qid,
            "language": "zh",
            "coarse_category": "complex_emotions",
            "finegrained_category": "emotion_transition",
            "scenario": "多瑞的千层酥做坏了，但女儿尝了一口，竖起了大拇指。",
            "subject": "多瑞",
            # Same choices as English, in another order: answers must be matched by text.
            "emotion_choices": ["生气", "尴尬", "自豪", "惊喜"],
            "emotion_label": "惊喜",
            "cause_choices": ["千层酥没有做坏", "女儿回家了", "女儿喜欢吃"],
            "cause_label": "女儿喜欢吃",
        },
    }
    return {**rows[lang], **overrides}


def numbered(*rows):
    return [(i, row) for i, row in enumerate(rows, start=1)]


def read_rows(path):
    with path.open(encoding="utf-8") as f:
        return [(i, json.loads(line)) for i, line in enumerate(f, start=1) if line.strip()]


def by_uid(records):
    return {record["uid"]: record for _, record in records}


def assert_valid(record):
    assert validate_content(record["kind"], record["content"], max_chars=20_000) == []


# --- detection -----------------------------------------------------------------------------------------


def test_detect_source_from_keys():
    assert detect_source(numbered(ea_row())) == "EA"
    assert detect_source(numbered(eu_row())) == "EU"
    # A damaged row is still recognised by the keys it keeps.
    assert detect_source(numbered({"qid": "1", "language": "en", "label": "x"})) == "EA"


@pytest.mark.parametrize(
    ("rows", "fragment"),
    [
        ([], "no rows"),
        (numbered({"id": 1, "text": "hello"}), "not EmoBench"),
        (numbered(ea_row(), eu_row()), "mix"),
    ],
)
def test_detect_source_refuses_other_rows(rows, fragment):
    with pytest.raises(ValueError, match=fragment):
        detect_source(rows)


def test_dimension_code():
    assert dimension_code("EA", "Personal-Others") == "ea_personal_others"
    assert dimension_code("EU", "personal_beliefs_and_experiences") == "eu_personal_beliefs_and_experiences"
    assert dimension_code("EU", "Perspective-taking") == "eu_perspective_taking"


def test_match_label_is_exact_then_normalised_and_nothing_fuzzier():
    options = ["Delight", "  Anger ", "Pride"]
    assert match_label("Delight", options) == (0, "exact")
    assert match_label("anger", options) == (1, "normalised")
    assert match_label("Delighted", options) == (None, "not_found")
    assert match_label("Joy", ["Joy", "joy "]) == (0, "exact")
    assert match_label("JOY", ["Joy", "joy "]) == (None, "ambiguous")


# --- EA ------------------------------------------------------------------------------------------------


def test_ea_pairs_english_and_chinese_into_one_item():
    records, faults = emobench_records(numbered(ea_row(lang="en"), ea_row(lang="zh")))
    assert faults == []
    assert len(records) == 1
    line, record = records[0]
    assert line == 1
    assert record["format"] == FORMAT
    assert record["uid"] == "emobench-ea-1"
    assert record["benchmark"] == "emobench"
    assert record["dimension"] == "ea_personal_others"
    assert record["kind"] == "mcq"
    assert record["scenario"] is None
    assert record["emotions"] == []
    assert record["crisis_level"] is None
    assert record["difficulty"] == ""
    assert "status" not in record, "new items start as draft; re-importing must not reset an accepted item"
    assert record["origin"] == "imported"
    en, zh = record["content"]["en"], record["content"]["zh"]
    assert en["question"] == "In this scenario, what is the most effective action for Sarah?"
    assert zh["question"] == "在这个场景中，萨拉最有效的行动是什么？"
    assert en["context"] == ea_row()["scenario"]
    assert en["options"] == ea_row()["choices"]
    assert (en["answer"], zh["answer"]) == (3, 3)
    meta = record["metadata"]
    assert meta["qid"] == "1"
    assert meta["source_file"] == "EA.jsonl"
    assert meta["category"] == "Personal-Others"
    assert meta["question_type"] == "Action"
    assert meta["subject"] == {"en": "Sarah", "zh": "萨拉"}
    assert meta["source_lines"] == {"en": 1, "zh": 2}
    assert_valid(record)
    assert check_parity("mcq", record["content"]) == []


def test_ea_response_question_type_in_both_languages():
    rows = numbered(
        ea_row(lang="en", **{"question type": "Response"}), ea_row(lang="zh", **{"question type": "Response"})
    )
    ((_, record),) = emobench_records(rows)[0]
    assert record["content"]["en"]["question"] == "In this scenario, what is the most effective response for Sarah?"
    assert record["content"]["zh"]["question"] == "在这个场景中，萨拉最有效的回应是什么？"
    assert record["metadata"]["question_type"] == "Response"


def test_unknown_chinese_question_type_is_kept_raw_and_reported():
    rows = numbered(ea_row(lang="en", **{"question type": "Plan"}), ea_row(lang="zh", **{"question type": "Plan"}))
    records, faults = emobench_records(rows)
    assert records[0][1]["content"]["zh"]["question"] == "在这个场景中，萨拉最有效的Plan是什么？"
    assert [(f.line, f.field) for f in faults] == [(2, "question type")]


def test_label_not_in_choices_leaves_answer_empty_and_is_reported():
    rows = numbered(ea_row(lang="en"), ea_row(lang="zh", label="建议找老师"))
    records, faults = emobench_records(rows)
    record = records[0][1]
    assert record["content"]["en"]["answer"] == 3
    assert record["content"]["zh"]["answer"] is None
    assert record["metadata"]["answer_match"] == {"en": "exact", "zh": "not_found"}
    assert len(faults) == 1
    fault = faults[0]
    assert (fault.line, fault.field) == (2, "label")
    assert "qid 1" in fault.message and "(zh)" in fault.message and "建议找老师" in fault.message
    assert [issue.code for issue in check_parity("mcq", record["content"])] == ["missing_answer"]


def test_label_matched_after_stripping_and_case_folding_without_a_fault():
    rows = numbered(ea_row(lang="en", label="  suggest a COUNSELOR "), ea_row(lang="zh"))
    records, faults = emobench_records(rows)
    assert faults == []
    assert records[0][1]["content"]["en"]["answer"] == 3
    assert records[0][1]["metadata"]["answer_match"]["en"] == "normalised"


def test_missing_chinese_row_keeps_english_only_and_is_reported():
    records, faults = emobench_records(numbered(ea_row(qid="7", lang="en")))
    record = records[0][1]
    assert list(record["content"]) == ["en"]
    assert [(f.line, f.field) for f in faults] == [(1, "language")]
    assert "qid 7" in faults[0].message and "zh" in faults[0].message
    assert [issue.code for issue in check_parity("mcq", record["content"])] == ["missing_language"]


def test_duplicate_row_keeps_the_first_and_is_reported():
    rows = numbered(ea_row(lang="en"), ea_row(lang="zh"), ea_row(lang="en", scenario="A different scenario."))
    records, faults = emobench_records(rows)
    assert len(records) == 1
    assert records[0][1]["content"]["en"]["context"] == ea_row()["scenario"]
    assert [(f.line, f.field) for f in faults] == [(3, "qid")]
    assert "duplicate" in faults[0].message and "line 1" in faults[0].message


def test_qids_are_canonical_so_padded_duplicates_are_caught():
    records, faults = emobench_records(numbered(ea_row(qid="3"), ea_row(qid=3, lang="zh"), ea_row(qid="03")))
    assert [r["uid"] for _, r in records] == ["emobench-ea-3"]
    assert [(f.line, f.field) for f in faults] == [(3, "qid")]


@pytest.mark.parametrize(
    ("zh_row", "field"),
    [
        (ea_row(lang="zh", language="fr"), "language"),
        ({k: v for k, v in ea_row(lang="zh").items() if k != "language"}, "language"),
        ({k: v for k, v in ea_row(lang="zh").items() if k != "qid"}, "qid"),
        (ea_row(lang="zh", qid="one"), "qid"),
        (ea_row(lang="zh", qid=None), "qid"),
        ({k: v for k, v in ea_row(lang="zh").items() if k != "scenario"}, "scenario"),
        (ea_row(lang="zh", subject=["萨拉"]), "subject"),
        (ea_row(lang="zh", category=None), "category"),
        (ea_row(lang="zh", choices="保守秘密"), "choices"),
        (ea_row(lang="zh", choices=["保守秘密", 2]), "choices"),
        (ea_row(lang="zh", choices=["保守秘密"]), "choices"),
        (ea_row(lang="zh", label=3), "label"),
        ({k: v for k, v in ea_row(lang="zh").items() if k != "label"}, "label"),
    ],
)
def test_broken_row_is_reported_and_its_language_left_out(zh_row, field):
    records, faults = emobench_records(numbered(ea_row(lang="en"), zh_row))
    assert [r["uid"] for _, r in records] == ["emobench-ea-1"]
    assert list(records[0][1]["content"]) == ["en"]
    assert (2, field) in [(f.line, f.field) for f in faults]
    assert all(isinstance(f, SourceFault) and f.message for f in faults)


def test_row_that_is_not_an_object_is_reported():
    records, faults = emobench_records(numbered(ea_row(lang="en"), ["not", "an", "object"], ea_row(lang="zh")))
    assert list(records[0][1]["content"]) == ["en", "zh"]
    assert [(f.line, f.field) for f in faults] == [(2, "row")]


def test_languages_disagreeing_on_category_are_reported_and_english_wins():
    rows = numbered(ea_row(lang="en"), ea_row(lang="zh", category="Social-Self"))
    records, faults = emobench_records(rows)
    assert records[0][1]["dimension"] == "ea_personal_others"
    assert [(f.line, f.field) for f in faults] == [(1, "category")]


def test_different_option_counts_are_kept_and_reported():
    rows = numbered(ea_row(lang="en"), ea_row(lang="zh", choices=["保守秘密", "告诉父母", "建议找辅导员"]))
    records, faults = emobench_records(rows)
    content = records[0][1]["content"]
    assert (len(content["en"]["options"]), len(content["zh"]["options"])) == (4, 3)
    assert content["zh"]["answer"] == 2
    assert [(f.line, f.field) for f in faults] == [(1, "choices")]
    assert "4 in en" in faults[0].message and "3 in zh" in faults[0].message


def test_items_are_ordered_by_numeric_qid_with_the_line_of_their_first_row():
    rows = numbered(
        ea_row(qid="10"),
        ea_row(qid="9"),
        ea_row(qid="2", lang="zh"),
        ea_row(qid="10", lang="zh"),
        ea_row(qid="2"),
    )
    records, _ = emobench_records(rows)
    assert [(line, r["uid"]) for line, r in records] == [
        (3, "emobench-ea-2"),
        (2, "emobench-ea-9"),
        (1, "emobench-ea-10"),
    ]


def test_benchmark_slug_is_used_in_records():
    records, _ = emobench_records(numbered(ea_row(), ea_row(lang="zh")), benchmark="emobench-pilot")
    assert records[0][1]["benchmark"] == "emobench-pilot"
    assert records[0][1]["uid"] == "emobench-pilot-ea-1"


# --- EU ------------------------------------------------------------------------------------------------


def test_eu_row_becomes_emotion_and_cause_items_matched_by_text_per_language():
    records, faults = emobench_records(numbered(eu_row(lang="en"), eu_row(lang="zh")))
    assert faults == []
    assert [r["uid"] for _, r in records] == ["emobench-eu-1-emotion", "emobench-eu-1-cause"]
    emotion, cause = (r for _, r in records)
    assert emotion["dimension"] == cause["dimension"] == "eu_complex_emotions"
    assert emotion["content"]["en"]["answer"] == 0
    assert emotion["content"]["zh"]["answer"] == 3
    assert cause["content"]["en"]["answer"] == 0
    assert cause["content"]["zh"]["answer"] == 2
    assert emotion["content"]["en"]["question"] == "What emotion(s) would Dorea ultimately feel in this situation?"
    assert emotion["content"]["zh"]["question"] == "在这种情况下，多瑞最终会感受到什么情绪？"
    assert cause["content"]["en"]["question"] == "Why would Dorea feel these emotions in this situation?"
    assert cause["content"]["zh"]["question"] == "多瑞为什么会在这种情况下感受到这些情绪？"
    assert emotion["content"]["zh"]["options"] == eu_row(lang="zh")["emotion_choices"]
    assert cause["content"]["en"]["options"] == eu_row()["cause_choices"]
    assert emotion["metadata"]["finegrained_category"] == "emotion_transition"
    assert emotion["metadata"]["question"] == "emotion"
    assert emotion["metadata"]["paired_uid"] == "emobench-eu-1-cause"
    assert cause["metadata"]["paired_uid"] == "emobench-eu-1-emotion"
    assert cause["metadata"]["emotion_label"] == {"en": "Delight", "zh": "惊喜"}
    for record in (emotion, cause):
        assert_valid(record)
        assert check_parity("mcq", record["content"]) == []


def test_eu_missing_emotion_label_still_builds_the_cause_question():
    zh = {k: v for k, v in eu_row(lang="zh").items() if k != "emotion_label"}
    records, faults = emobench_records(numbered(eu_row(lang="en"), zh))
    emotion, cause = by_uid(records)["emobench-eu-1-emotion"], by_uid(records)["emobench-eu-1-cause"]
    assert list(emotion["content"]) == ["en"]
    assert list(cause["content"]) == ["en", "zh"]
    assert cause["content"]["zh"]["answer"] == 2
    assert [(f.line, f.field) for f in faults] == [(2, "emotion_label")]
    assert "qid 1 (zh)" in faults[0].message


def test_eu_cause_label_not_found_is_reported_for_that_question_only():
    records, faults = emobench_records(numbered(eu_row(lang="en", cause_label="It was ruined"), eu_row(lang="zh")))
    emotion, cause = by_uid(records)["emobench-eu-1-emotion"], by_uid(records)["emobench-eu-1-cause"]
    assert emotion["content"]["en"]["answer"] == 0
    assert cause["content"]["en"]["answer"] is None
    assert [(f.line, f.field) for f in faults] == [(1, "cause_label")]


# --- determinism ---------------------------------------------------------------------------------------


def messy_rows():
    return numbered(
        ea_row(qid="2", lang="zh"),
        ea_row(qid="1"),
        ea_row(qid="1", lang="zh", label="not there"),
        ea_row(qid="1", language="xx"),
        ea_row(qid="3"),
        ea_row(qid="2"),
        ea_row(qid="1"),
    )


def test_output_is_deterministic_and_independent_of_the_input_objects():
    rows = messy_rows()
    first = emobench_records(rows)
    second = emobench_records(copy.deepcopy(rows))
    assert first == second
    assert json.dumps(first[0], ensure_ascii=False, sort_keys=True) == json.dumps(
        second[0], ensure_ascii=False, sort_keys=True
    )
    rows[1][1]["choices"].append("mutated")
    assert emobench_records(messy_rows()) == first
    assert first[0][0][1]["uid"] == "emobench-ea-1"
    assert "mutated" not in first[0][0][1]["content"]["en"]["options"]


def test_row_order_changes_neither_items_nor_faults_beyond_line_numbers():
    rows = messy_rows()
    shuffled = rows[:]
    random.Random(4).shuffle(shuffled)
    # Duplicates keep the first row in file order, so only compare inputs without duplicates here.
    unique = [(line, row) for line, row in rows if line != 7]
    unique_shuffled = [(line, row) for line, row in shuffled if line != 7]
    assert emobench_records(unique) == emobench_records(unique_shuffled)


# --- taxonomy ------------------------------------------------------------------------------------------


def taxonomy_codes():
    data = json.loads(TAXONOMY.read_text(encoding="utf-8"))
    (benchmark,) = data["benchmarks"]
    assert benchmark["slug"] == "emobench"
    codes = {}
    for module in benchmark["dimensions"]:
        assert module["level"] == "module"
        codes[module["code"]] = module
        for child in module["children"]:
            assert child["level"] == "dimension"
            assert child["children"] == []
            for key in ("name_en", "name_zh", "definition_en", "definition_zh"):
                assert child[key].strip(), (child["code"], key)
            assert {"subjective", "provisional", "target_items"} <= set(child)
            assert child["code"] not in codes
            codes[child["code"]] = child
    return codes


def test_taxonomy_fixture_is_well_formed():
    codes = taxonomy_codes()
    assert {"emotional_understanding", "emotional_application"} <= set(codes)
    assert all(len(code) <= 80 for code in codes)


# --- the real EmoBench files ---------------------------------------------------------------------------

needs_data = pytest.mark.skipif(
    not EMOBENCH_DIR.is_dir(), reason=f"EmoBench data not found at {EMOBENCH_DIR} (../shared is absent)"
)


@needs_data
@pytest.mark.parametrize(
    ("name", "task", "items", "fault_count"),
    [("EA.jsonl", "EA", 200, 0), ("EU.jsonl", "EU", 400, 2)],
)
def test_real_file(name, task, items, fault_count):
    rows = read_rows(EMOBENCH_DIR / name)
    assert detect_source(rows) == task
    records, faults = emobench_records(rows)
    print(f"\n{name}: {len(records)} items, {len(faults)} faults")
    for fault in faults:
        print(f"  {fault}")
    assert len(records) == items
    assert len({r["uid"] for _, r in records}) == items
    assert len(faults) == fault_count
    codes = taxonomy_codes()
    for _, record in records:
        assert record["dimension"] in codes, record["dimension"]
        assert_valid(record)
        assert set(record["content"]) == {"en", "zh"}
        assert all(version["answer"] is not None for version in record["content"].values())
    assert emobench_records(read_rows(EMOBENCH_DIR / name)) == (records, faults)


@needs_data
def test_real_eu_faults_are_the_two_option_count_mismatches():
    _, faults = emobench_records(read_rows(EMOBENCH_DIR / "EU.jsonl"))
    assert [(f.line, f.field) for f in faults] == [(73, "cause_choices"), (74, "cause_choices")]
    assert "4 in en (line 73), 6 in zh (line 273)" in faults[0].message
    assert "6 in en (line 74), 7 in zh (line 274)" in faults[1].message


@needs_data
def test_taxonomy_has_a_dimension_for_every_category_in_the_data():
    codes = taxonomy_codes()
    for name, task, field in (("EA.jsonl", "EA", "category"), ("EU.jsonl", "EU", "coarse_category")):
        categories = {row[field] for _, row in read_rows(EMOBENCH_DIR / name)}
        for category in categories:
            assert dimension_code(task, category) in codes, (name, category)
