"""A layout-2 export loads with Hugging Face ``datasets`` (offline), every configuration typed as the release says;
layout-1 exports still verify."""

import json
import os

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

# datasets and huggingface_hub read these when imported: no test may reach the Hub.
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ["HF_HUB_OFFLINE"] = "1"

import datasets  # noqa: E402
from datasets import List, Value  # noqa: E402
from huggingface_hub import DatasetCard  # noqa: E402

from annotation.releases import export  # noqa: E402
from annotation.releases import services as releases  # noqa: E402
from annotation.releases.export import layout_files, verify_directory  # noqa: E402
from tests.factories import make_frozen_release, make_item  # noqa: E402

pytestmark = pytest.mark.django_db

TURNS = {
    "en": {
        "context": "Lena tells you her project was cancelled.",
        "turns": [
            {"user": "How might Lena feel?", "options": ["Relieved", "Frustrated", "Bored"], "answer": 1},
            {"user": "What do you say first?", "options": ["Ask what happened", "Change the topic"], "answer": 0},
        ],
    },
    "zh": {
        "context": "莉娜告诉你她的项目被取消了。",
        "turns": [
            {"user": "莉娜可能有什么感受？", "options": ["如释重负", "沮丧", "无聊"], "answer": 1},
            {"user": "你先说什么？", "options": ["问问发生了什么", "换个话题"], "answer": 0},
        ],
    },
}
STRING, INT = Value("string"), Value("int64")
TURN = List({"user": STRING, "options": List(STRING), "answer": INT})
VERSION = {
    "context": STRING,
    "question": STRING,
    "prompt": STRING,
    "options": List(STRING),
    "answer": INT,
    "turns": TURN,
}
LANGUAGE_FEATURES = {
    "uid": STRING,
    "language": STRING,
    "benchmark": STRING,
    "module": STRING,
    "dimension": STRING,
    "kind": STRING,
    "scenario": STRING,
    "scenario_domain": STRING,
    "emotions": List(STRING),
    "crisis_level": INT,
    "difficulty": STRING,
    "revision": INT,
    **VERSION,
}


@pytest.fixture
def release_dir(accepted_items, fixed_clock, lead, tmp_path, monkeypatch):
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True, raising=False)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True, raising=False)
    make_item(uid="rel-turns", kind="multi_turn_choice", content=TURNS, user=lead, status="accepted")
    release = make_frozen_release(version="1.0.0", title="FACET 1.0.0", licence="CC BY 4.0")
    out = tmp_path / "export"
    releases.release_export_to_directory(release=release, out=out)
    return release, out


def load(path, name, tmp_path):
    return datasets.load_dataset(str(path), name, cache_dir=str(tmp_path / "hf-cache"))


def test_every_configuration_loads_with_the_release_row_counts_and_types(release_dir, tmp_path):
    release, out = release_dir
    entries = list(release.entries.select_related("item", "revision"))
    per_language = {lang: sum(1 for e in entries if e.revision.content.get(lang)) for lang in ("en", "zh")}
    assert per_language == {"en": 5, "zh": 5}
    for lang in ("en", "zh"):
        split = load(out, lang, tmp_path)["test"]
        assert split.num_rows == per_language[lang]
        assert dict(split.features) == LANGUAGE_FEATURES
        rows = {row["uid"]: row for row in split}
        assert rows["rel-turns"]["turns"] == TURNS[lang]["turns"] and rows["rel-turns"]["options"] is None
        assert rows["rel-0"]["answer"] == 1 and rows["rel-0"]["revision"] == 2
        assert rows["rel-open"]["prompt"] and rows["rel-open"]["answer"] is None
    bilingual = load(out, "bilingual", tmp_path)["test"]
    assert bilingual.num_rows == len(entries) == 5
    assert bilingual.features["content"] == {"en": VERSION, "zh": VERSION}
    assert bilingual.features["revision"] == INT and bilingual.features["emotions"] == List(STRING)
    record = next(r for r in bilingual if r["uid"] == "rel-turns")
    assert record["content"]["zh"]["turns"][1]["options"] == ["问问发生了什么", "换个话题"]
    assert json.loads(record["metadata"]) == {}
    # Without a name, the default configuration (bilingual) loads: the JSONL files no longer land in one split.
    assert load(out, None, tmp_path)["test"].num_rows == 5


def test_the_card_yaml_declares_what_datasets_finds(release_dir, tmp_path):
    _, out = release_dir
    card = DatasetCard.load(out / "README.md")
    data = card.data.to_dict()
    assert data["license"] == "cc-by-4.0" and data["language"] == ["en", "zh"]
    assert data["size_categories"] == ["n<1K"] and data["task_categories"] == ["multiple-choice", "text-generation"]
    assert [c["config_name"] for c in data["configs"]] == ["en", "zh", "bilingual"]
    for info in data["dataset_info"]:
        loaded = load(out, info["config_name"], tmp_path)["test"]
        # The features the card declares are the ones datasets reads, in its own YAML form.
        assert info["features"] == loaded.features._to_yaml_list()
        assert info["splits"] == [{"name": "test", "num_examples": loaded.num_rows}]
    assert "## English" in card.text and "## 中文" in card.text


def test_layout_1_and_layout_2_exports_both_verify(frozen_layout_1, tmp_path, capsys, monkeypatch):
    old = tmp_path / "old"
    releases.release_export_to_directory(release=frozen_layout_1, out=old)
    assert sorted(p.name for p in old.iterdir()) == layout_files(1)
    assert verify_directory(old) == []
    call_command("verify_release", str(old))
    call_command("verify_release", str(old), "--offline")
    out = capsys.readouterr().out
    assert out.count("own-manifest: passed") == 2 and out.count("recorded-manifest: passed") == 1
    monkeypatch.setattr(export, "LAYOUT", 2)  # this version's freezes; the old release keeps its files
    new_release = make_frozen_release(version="1.1.0", title="FACET 1.1.0")
    new = tmp_path / "new"
    releases.release_export_to_directory(release=new_release, out=new)
    assert sorted(p.name for p in new.iterdir()) == layout_files(2)
    call_command("verify_release", str(new))
    assert sorted(
        releases.release_export_to_directory(release=frozen_layout_1, out=tmp_path / "again")
    ) == layout_files(1)


def test_a_layout_2_manifest_that_drops_a_file_of_the_layout_fails_offline(release_dir, capsys):
    _, out = release_dir
    manifest = json.loads((out / "manifest.json").read_text())
    del manifest["files"]["items.zh.parquet"]
    (out / "items.zh.parquet").unlink()
    (out / "manifest.json").write_text(json.dumps(manifest))
    assert verify_directory(out) == ["items.zh.parquet: part of export layout 2 but not listed in the manifest"]
    manifest["layout"] = 9
    (out / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(CommandError, match="1 problem"):
        call_command("verify_release", str(out), "--offline")
    assert "manifest.json names export layout 9; this version reads layouts 1, 2" in capsys.readouterr().err
