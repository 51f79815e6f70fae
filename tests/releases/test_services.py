"""Releases: building, validation checklist, irreversible freeze, reproducible export, verification."""

import hashlib
import io
import json
import zipfile

import jsonschema
import pyarrow.parquet as pq
import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import IntegrityError, connection, transaction
from django.utils import translation

from annotation.items import services
from annotation.items.models import Benchmark, Item
from annotation.items.schema import SCHEMA_PATH
from annotation.releases import selectors as release_selectors
from annotation.releases import services as releases
from annotation.releases.export import layout_files, verify_directory
from annotation.releases.models import FrozenReleaseError, Release, ReleaseItem
from tests.factories import make_item, mcq_content
from tests.releases.conftest import FIXED_NOW

pytestmark = pytest.mark.django_db


def build(version="1.0.0", **kwargs):
    return releases.release_create(
        benchmark=Benchmark.objects.get(slug="facet"), version=version, title=f"FACET {version}", user=None, **kwargs
    )


def test_release_pins_current_revision_of_every_accepted_item(accepted_items):
    release = build()
    pinned = {e.item.uid: e.revision.number for e in release.entries.select_related("item", "revision")}
    assert pinned == {"rel-0": 2, "rel-1": 2, "rel-2": 2, "rel-open": 1}
    assert release.filters == {"status": "accepted"}


def test_same_version_twice_and_bad_version_are_refused(accepted_items):
    build("1.0.0")
    with pytest.raises(ValidationError, match="Release 1.0.0 of facet already exists"):
        build("1.0.0")
    with pytest.raises(ValidationError, match="semantic version"):
        build("v1")
    assert Release.objects.count() == 1


def test_checklist_names_each_failure_and_its_items(taxonomy, lead):
    make_item(uid="ok-1", user=lead, status="accepted")
    make_item(uid="dup-1", user=lead, status="accepted")  # same text as ok-1: near-duplicate
    broken = mcq_content(zh_answer=9)
    del broken["en"]
    make_item(uid="broken-1", content=broken, user=lead, status="in_screening")
    release = build(filters={})
    checks = {c.code: c for c in release_selectors.release_validate(release=release)}
    assert checks["all_accepted"].offenders == ["broken-1"] and not checks["all_accepted"].passed
    assert checks["bilingual_parity"].offenders == ["broken-1"]
    assert "broken-1: The English version is missing." in checks["bilingual_parity"].details
    assert checks["answer_keys"].offenders == ["broken-1"]
    assert not checks["near_duplicates"].passed and {"ok-1", "dup-1"} <= set(checks["near_duplicates"].offenders)
    assert "hidden_emotion_recognition [en]: 2 of 48" in checks["dimension_targets"].details
    assert checks["not_empty"].passed


def test_freezing_with_failed_checks_needs_a_recorded_reason(accepted_items, admin_user, fixed_clock):
    release = build()
    with pytest.raises(ValidationError, match="Validation failed \\(Per-dimension counts meet targets"):
        releases.release_freeze(release=release, user=admin_user)
    # The refusal names the checks, not their codes, in the reader's language.
    with translation.override("zh-hans"), pytest.raises(ValidationError) as refused:
        releases.release_freeze(release=release, user=admin_user)
    assert "dimension_targets" not in str(refused.value) and "各维度题目数达到目标" in str(refused.value)
    assert Release.objects.get(pk=release.pk).status == "draft"
    frozen = releases.release_freeze(release=release, user=admin_user, override_reason="pilot subset")
    assert (frozen.status, frozen.frozen_by, frozen.frozen_at) == ("frozen", admin_user, FIXED_NOW)
    assert frozen.override_reason == "pilot subset"
    assert "dimension_targets" in frozen.validation["failed"]
    assert len(frozen.content_checksum) == 64


def test_an_empty_release_cannot_be_frozen_even_with_a_reason(taxonomy):
    release = build(filters={"status": "rejected"})
    with pytest.raises(ValidationError, match="has no items"):
        releases.release_freeze(release=release, user=None, override_reason="whatever")


def test_frozen_release_refuses_every_service(frozen):
    for attempt in (
        lambda: releases.release_update(release=frozen, user=None, title="new"),
        lambda: releases.release_items_change(release=frozen, user=None, remove=["rel-0"]),
        lambda: releases.release_rebuild(release=frozen, user=None),
        lambda: releases.release_freeze(release=frozen, user=None, override_reason="again"),
    ):
        with pytest.raises(ValidationError, match="frozen"):
            attempt()
    assert frozen.entries.count() == 4


def test_frozen_release_refuses_the_orm(frozen):
    entry = frozen.entries.first()
    other_revision = Item.objects.get(uid="rel-0").revisions.get(number=1)
    attempts = [
        lambda: Release.objects.filter(pk=frozen.pk).update(title="x"),
        lambda: Release.objects.filter(pk=frozen.pk).delete(),
        lambda: Release.objects.get(pk=frozen.pk).save(),
        lambda: Release.objects.get(pk=frozen.pk).delete(),
        lambda: ReleaseItem.objects.filter(release=frozen).delete(),
        lambda: ReleaseItem.objects.filter(release=frozen).update(revision=other_revision),
        lambda: entry.delete(),
        lambda: ReleaseItem(
            release=frozen,
            item=Item.objects.get(uid="rel-draft"),
            revision=Item.objects.get(uid="rel-draft").current_revision,
        ).save(),
        lambda: ReleaseItem.objects.bulk_create(
            [ReleaseItem(release=frozen, item=entry.item, revision=other_revision)]
        ),
    ]
    for attempt in attempts:
        with pytest.raises(FrozenReleaseError):
            attempt()
    assert Release.objects.get(pk=frozen.pk).title == "FACET 1.0.0" and frozen.entries.count() == 4


def test_frozen_release_refuses_raw_sql_through_database_triggers(frozen):
    for sql in (
        "UPDATE releases_release SET title = 'hacked'",
        "UPDATE releases_releaseitem SET revision_id = revision_id",
        "UPDATE items_itemrevision SET message = 'rewritten'",
    ):
        with (
            pytest.raises(IntegrityError, match="frozen release cannot change|immutable"),
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            cursor.execute(sql)
    assert Release.objects.get(pk=frozen.pk).title == "FACET 1.0.0"


def test_editing_an_item_after_freezing_does_not_change_the_release(frozen, lead):
    before = release_selectors.release_export_files(release=frozen)
    item = Item.objects.get(uid="rel-0")
    content = mcq_content()
    content["en"]["question"] = "A later wording"
    services.item_revise(item=item, state=services.ItemState(dimension=item.dimension, content=content), user=lead)
    assert Item.objects.get(uid="rel-0").current_revision.number == 3
    assert release_selectors.release_export_files(release=Release.objects.get(pk=frozen.pk)) == before


def test_export_of_a_draft_is_refused_and_leaves_nothing(accepted_items, tmp_path):
    release = build()
    with pytest.raises(ValidationError, match="is a draft; only frozen releases can be exported"):
        releases.release_export_to_directory(release=release, out=tmp_path / "out")
    assert list(tmp_path.iterdir()) == []


def test_export_is_byte_identical_and_matches_its_manifest(frozen, tmp_path):
    first = release_selectors.release_export_zip(release=frozen)
    second = release_selectors.release_export_zip(release=Release.objects.get(pk=frozen.pk))
    assert first == second
    names = zipfile.ZipFile(io.BytesIO(first)).namelist()
    assert names == [f"facet-1.0.0/{n}" for n in layout_files(2)]
    assert "items.en.parquet" in layout_files(2) and "inspect_task.py" in layout_files(2)
    out = tmp_path / "export"
    files = releases.release_export_to_directory(release=frozen, out=out)
    assert verify_directory(out) == []
    manifest = json.loads(files["manifest.json"])
    assert manifest["release"]["content_checksum"] == frozen.content_checksum
    for name, data in files.items():
        if name != "manifest.json":
            assert manifest["files"][name]["sha256"] == hashlib.sha256(data).hexdigest()


# Digests of the export of the `frozen` fixture. They are the same on SQLite and PostgreSQL (CI runs this test on
# PostgreSQL), which is what "byte-identical on any database" means. Parquet is compared by content instead,
# because its bytes also name the pyarrow version that wrote them. README.md (the dataset card) is written in English
# and Chinese through the translation catalogue, so its digest moves when the card's translations change.
EXPECTED_SHA256 = {
    "items.bilingual.jsonl": "5d1d0e9778915d65cf5ec16a1938551e0f3b656ac1e3b50abed7cdd2ed4fe665",
    "items.csv": "2052737f6dafd2ca5c64a781c61ac1a0abadba21e95517a6e254ea7b757b8538",
    "items.en.jsonl": "33e88d3a5957694f1f46dbefda27f33eaff9d2cddc3b617ebc5ab8236ae08947",
    "items.zh.jsonl": "c579768e65bcf790413a6393f60caf896a7af13c8878676bf1622dc8fa0da816",
    "README.md": "77926ee71e6bd16e19c3547776184c9213efb0abc26d3ea228e08f984b9b66f2",
}


def test_export_bytes_are_the_same_on_every_database(frozen_layout_1):
    """Layout 1, as releases frozen before layout 2 have it: the same bytes as then."""
    files = release_selectors.release_export_files(release=frozen_layout_1)
    assert sorted(files) == layout_files(1)
    digests = {name: hashlib.sha256(files[name]).hexdigest() for name in EXPECTED_SHA256}
    assert digests == EXPECTED_SHA256
    assert "layout" not in json.loads(files["manifest.json"])
    table = pq.read_table(io.BytesIO(files["items.parquet"]))
    assert table.num_rows == 8 and table.column("uid").to_pylist()[:2] == ["rel-0", "rel-0"]
    assert {str(t) for t in table.schema.types} == {"string"}


# Layout 2 adds files and a YAML block to the card; the JSONL and CSV files are those of layout 1.
EXPECTED_SHA256_LAYOUT_2 = {
    **{name: digest for name, digest in EXPECTED_SHA256.items() if name != "README.md"},
    "README.md": "8673c4effc4aa06074f6f91a7535be416a9af073ee5bc5c4b766f87a0ad0a95a",
    "evals.en.jsonl": "047ec0c163ae6aac2bc77ea898dedf070f79a68eadf528812d802230366a7e85",
    "evals.zh.jsonl": "0ce4a65cabaf006342bd80e461d51eb6449dd7feb0b1894475d1681f21c26e01",
    "lm_eval.en.jsonl": "6996d641699f677082162f34f39acbfa1cd428bfe599f8b8ea4ed2cbcb506d85",
    "lm_eval.en.yaml": "e6f170e3df6ce75b8a0d7913c2dfd75dffa3ae4d0e4945be1e87547d71ae2642",
    "lm_eval.zh.jsonl": "79a4cecd250b61f736feccc5e3426c8ff3518f45b52f2385a9e3e8a4fcbc2abd",
    "lm_eval.zh.yaml": "adb9d2cdd5bcdbc750249e0bd739c8632deef54b9b9ec18cbb72c77fe3f66533",
}


def test_layout_2_export_bytes_are_the_same_on_every_database(frozen):
    files = release_selectors.release_export_files(release=frozen)
    digests = {name: hashlib.sha256(files[name]).hexdigest() for name in EXPECTED_SHA256_LAYOUT_2}
    assert digests == EXPECTED_SHA256_LAYOUT_2
    assert json.loads(files["manifest.json"])["layout"] == 2
    table = pq.read_table(io.BytesIO(files["items.parquet"]))
    assert table.num_rows == 8 and table.schema.field("revision").type == "int64"


def test_exported_records_follow_the_published_schema_and_reimport_unchanged(frozen):
    files = release_selectors.release_export_files(release=frozen)
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    lines = files["items.bilingual.jsonl"].decode().splitlines()
    for line in lines:
        jsonschema.validate(json.loads(line), schema)
    report = services.items_import(data=files["items.bilingual.jsonl"], user=None)
    assert sorted(report.unchanged) == ["rel-0", "rel-1", "rel-2", "rel-open"]


def test_verify_catches_a_changed_byte_a_missing_file_and_an_extra_file(frozen, tmp_path):
    out = tmp_path / "export"
    releases.release_export_to_directory(release=frozen, out=out)
    data = bytearray((out / "items.csv").read_bytes())
    data[100] ^= 1
    (out / "items.csv").write_bytes(bytes(data))
    (out / "items.parquet").unlink()
    (out / "notes.txt").write_text("added later")
    problems = verify_directory(out)
    assert problems[0].startswith("items.csv: SHA-256 ")
    assert "items.parquet: missing" in problems and "notes.txt: not listed in the manifest" in problems
    with pytest.raises(CommandError, match=r"failed own-manifest \(3 problem\(s\)\), recorded-manifest \(3 "):
        call_command("verify_release", str(out))


def test_export_into_a_non_empty_directory_is_refused(frozen, tmp_path):
    (tmp_path / "keep.txt").write_text("mine")
    with pytest.raises(ValidationError, match="not an empty directory"):
        releases.release_export_to_directory(release=frozen, out=tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_compare_lists_added_removed_and_revised_items(frozen, lead):
    item = Item.objects.get(uid="rel-1")
    content = mcq_content()
    content["zh"]["question"] = "新的问题措辞？"
    services.item_revise(item=item, state=services.ItemState(dimension=item.dimension, content=content), user=lead)
    services.item_status_decide(item=item, status="accepted", user=lead, reason="again", source="lead_decision")
    for uid, status in (("rel-draft", "accepted"), ("rel-2", "rejected")):
        services.item_status_decide(
            item=Item.objects.get(uid=uid), status=status, user=lead, reason="lead's call", source="lead_decision"
        )
    newer = build("1.1.0")
    assert release_selectors.release_compare(old=frozen, new=newer) == {
        "added": ["rel-draft"],
        "removed": ["rel-2"],
        "revised": [{"uid": "rel-1", "old": 2, "new": 3}],
        "unchanged": 2,
    }


def test_commands_freeze_export_and_verify(accepted_items, tmp_path, capsys):
    with pytest.raises(CommandError, match="Validation failed"):
        call_command("freeze_release", "facet", "2.0.0")
    assert not Release.objects.filter(version="2.0.0").exists(), "a refused freeze left a draft behind"
    call_command(
        "freeze_release",
        "facet",
        "2.0.0",
        "--from-filter",
        "status=accepted",
        "--from-filter",
        "kind=mcq",
        "--override-reason",
        "subset",
    )
    release = Release.objects.get(version="2.0.0")
    assert release.is_frozen and release.entries.count() == 3
    out = tmp_path / "x"
    call_command("export_release", "facet", "2.0.0", "--out", str(out), "--zip", str(tmp_path / "x.zip"))
    call_command("verify_release", str(out))
    assert "passed own-manifest, recorded-manifest" in capsys.readouterr().out
    with pytest.raises(CommandError, match="no release 9.9.9"):
        call_command("export_release", "facet", "9.9.9", "--out", str(tmp_path / "y"))


def test_emobench_benchmark_is_frozen_and_exported_end_to_end(taxonomy, external_data, tmp_path):
    services.items_import(data=(external_data / "emobench/EA.jsonl").read_bytes(), user=None, format="emobench")
    call_command(
        "freeze_release",
        "emobench",
        "1.0.0",
        "--from-filter",
        "status=draft",
        "--override-reason",
        "imported items are not screened yet",
    )
    out = tmp_path / "emobench"
    files = releases.release_export_to_directory(release=Release.objects.get(benchmark__slug="emobench"), out=out)
    assert verify_directory(out) == []
    assert len(files["items.en.jsonl"].splitlines()) == 200 and len(files["items.zh.jsonl"].splitlines()) == 200
    assert "| **total** | | 200 | 200 |" in files["README.md"].decode()


def test_freeze_runs_the_same_queries_for_4_or_24_items(accepted_items, lead, fixed_clock):
    """Freezing reads the entries, their facts and near-duplicate signatures in set queries, never one per item."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from annotation.releases.models import Release
    from tests.factories import make_item

    small = releases.release_create(
        benchmark=accepted_items[0].benchmark, version="1.0.0", title="small", user=lead, filters={"status": "accepted"}
    )
    with CaptureQueriesContext(connection) as few:
        releases.release_freeze(release=small, user=lead, override_reason="test")
    for n in range(20):
        make_item(uid=f"grow-{n:02d}", user=lead, status="accepted")
    large = releases.release_create(
        benchmark=accepted_items[0].benchmark, version="2.0.0", title="large", user=lead, filters={"status": "accepted"}
    )
    with CaptureQueriesContext(connection) as many:
        releases.release_freeze(release=large, user=lead, override_reason="test")
    assert Release.objects.get(pk=large.pk).entries.count() == Release.objects.get(pk=small.pk).entries.count() + 20
    assert len(many) == len(few), [q["sql"][:120] for q in many]


def test_the_checklist_links_the_first_offenders_and_counts_the_others():
    from annotation.releases.checks import OFFENDERS_SHOWN, checklist_display

    stored = [{"code": "answer_keys", "passed": False, "summary": "x", "offenders": [f"u{i}" for i in range(120)]}]
    [shown] = checklist_display(stored)
    assert shown["offenders"] == [f"u{i}" for i in range(OFFENDERS_SHOWN)]
    assert shown["offenders_more"] == 120 - OFFENDERS_SHOWN
    assert len(stored[0]["offenders"]) == 120  # the record keeps them all
