"""The batched import writes exactly what the per-item services write, in a number of queries set by batches."""

import copy
import json
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import translation
from django.utils.translation import gettext as _

from annotation.items import services
from annotation.items.interchange import parse_records, read_jsonl
from annotation.items.models import Item, ItemRevision, StatusDecision
from annotation.items.services import bulk_import
from annotation.items.services.imports import TaxonomyIndex
from tests.factories import mcq_content

DEMO = Path(settings.BASE_DIR) / "fixtures" / "demo_items.jsonl"


def demo_records(prefix: str) -> list[dict]:
    records = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines() if line.strip()]
    for record in records:
        record["uid"] = prefix + record["uid"]
    return records


def jsonl(records: list[dict]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")


def import_per_item(data: bytes, *, user) -> None:
    """Import as the per-item path did before batching: item_create / item_revise / item_status_decide per record."""
    rows, errors = read_jsonl(data, max_line_bytes=settings.IMPORT_MAX_LINE_BYTES)
    records, parse_errors = parse_records(rows, max_chars=settings.ITEM_MAX_TEXT_CHARS)
    assert not errors and not parse_errors
    taxonomy = TaxonomyIndex()
    for record in records:
        state = taxonomy.resolve(record)
        item = Item.objects.filter(uid=record.uid).first()
        if item is None:
            item = services.item_create(
                benchmark=taxonomy.benchmarks[record.benchmark],
                uid=record.uid,
                kind=record.kind,
                state=state,
                user=user,
                message=record.message or _("Imported"),
                origin=record.origin,
            )
        else:
            was_accepted = item.status == Item.Status.ACCEPTED
            revision = services.item_revise(
                item=item, state=state, user=user, message=record.message or _("Re-imported")
            )
            if was_accepted and revision is not None and record.status in (None, Item.Status.ACCEPTED):
                continue  # the new text sent the item back to draft, and item_revise recorded why
        if record.status is not None and record.status != item.status:
            services.item_status_decide(
                item=item,
                status=record.status,
                user=user,
                reason=_("Imported with status %(status)s (line %(line)s).")
                % {"status": record.status, "line": record.line},
                source=StatusDecision.Source.IMPORT,
                reference={"format": "eistudio", "line": record.line},
            )


def snapshot(prefix: str) -> dict:
    """Every row an import writes for the items under ``prefix``, with ids and times left out and keys by uid."""
    items = Item.objects.filter(uid__startswith=prefix)
    uid = {item.pk: item.uid.removeprefix(prefix) for item in items}
    skip = {"id", "uid", "created_at", "updated_at", "current_revision"}
    return {
        "items": {
            uid[item.pk]: {
                **{f.attname: getattr(item, f.attname) for f in Item._meta.concrete_fields if f.name not in skip},
                "current_revision": item.current_revision.number,
                "emotions": sorted(item.emotions.values_list("code", flat=True)),
            }
            for item in items.select_related("current_revision")
        },
        "revisions": {
            (uid[rev.item_id], rev.number): {
                f.attname: getattr(rev, f.attname)
                for f in ItemRevision._meta.concrete_fields
                if f.name not in {"id", "item", "created_at"}
            }
            for rev in ItemRevision.objects.filter(item__in=items)
        },
        "decisions": [
            (uid[d.item_id], d.from_status, d.to_status, d.source, d.reason, d.reference, d.decided_by_id)
            for d in StatusDecision.objects.filter(item__in=items).order_by("item__uid", "created_at", "id")
        ],
    }


def changed_file(prefix: str) -> list[dict]:
    """A second import of the demo file: some items revised, some restatused, some unchanged."""
    records = demo_records(prefix)
    records[0]["content"]["en"]["context"] += " (revised)"
    records[1]["emotions"] = ["anger"]
    records[2]["status"] = "rejected"
    records[3]["content"]["zh"]["question"] += "？"
    records[3]["status"] = "draft"
    records[4]["message"] = "a message that changes nothing"
    return records


def test_batched_import_writes_the_rows_of_the_per_item_import(taxonomy, lead):
    import_per_item(jsonl(demo_records("old-")), user=lead)
    services.items_import(data=jsonl(demo_records("new-")), user=lead)
    assert snapshot("new-") == snapshot("old-")

    import_per_item(jsonl(changed_file("old-")), user=lead)
    report = services.items_import(data=jsonl(changed_file("new-")), user=lead)
    assert snapshot("new-") == snapshot("old-")
    assert [uid.removeprefix("new-") for uid in report.revised] == [
        r["uid"] for r in demo_records("")[:2] + demo_records("")[3:4]
    ]
    assert len(report.unchanged) == len(demo_records("")) - 3


def test_batched_import_as_the_operator_matches_too(taxonomy):
    import_per_item(jsonl(demo_records("old-")), user=None)
    services.items_import(data=jsonl(demo_records("new-")), user=None)
    assert snapshot("new-") == snapshot("old-")


def test_batches_split_a_large_file_and_write_every_item(taxonomy, lead, monkeypatch):
    monkeypatch.setattr(bulk_import, "BATCH_SIZE", 7)
    import_per_item(jsonl(demo_records("old-")), user=lead)
    services.items_import(data=jsonl(demo_records("new-")), user=lead)
    assert snapshot("new-") == snapshot("old-")


def bulk_file(n: int, prefix: str = "bulk-") -> bytes:
    records = []
    for i in range(n):
        content = mcq_content()
        content["en"]["context"] = f"Scene {i}: " + content["en"]["context"]
        content["zh"]["context"] = f"场景{i}：" + content["zh"]["context"]
        records.append(
            {
                "uid": f"{prefix}{i:05d}",
                "benchmark": "facet",
                "dimension": "hidden_emotion_recognition",
                "kind": "mcq",
                "scenario": "academic_anxiety",
                "emotions": ["anxiety"],
                "status": "accepted",
                "content": content,
            }
        )
    return jsonl(records)


def count_queries(data: bytes, user) -> int:
    with CaptureQueriesContext(connection) as queries:
        services.items_import(data=data, user=user)
    return len(queries)


def test_import_queries_do_not_grow_with_the_number_of_items(taxonomy, lead):
    count_queries(bulk_file(1, "warm-up-"), lead)  # the user's permissions are read once and cached
    small = count_queries(bulk_file(5, "a-"), lead)
    large = count_queries(bulk_file(60, "b-"), lead)
    assert large == small
    # Re-importing changed content: revisions, not more queries per item.
    assert count_queries(bulk_file(60, "b-").replace(b"Scene", b"Scena"), lead) <= small + 3


def test_import_queries_grow_only_by_batches(taxonomy, lead, monkeypatch):
    monkeypatch.setattr(bulk_import, "BATCH_SIZE", 10)
    count_queries(bulk_file(1, "warm-up-"), lead)
    one, two, three = (count_queries(bulk_file(n, f"{n}-"), lead) for n in (10, 20, 30))
    assert three - two == two - one <= 8


def test_reimporting_an_unchanged_file_writes_nothing(taxonomy, lead):
    data = bulk_file(40)
    services.items_import(data=data, user=lead)
    before = snapshot("bulk-")
    stamps = list(Item.objects.order_by("uid").values_list("updated_at", flat=True))
    with CaptureQueriesContext(connection) as queries:
        report = services.items_import(data=data, user=lead)
    assert len(report.unchanged) == 40 and not report.created and not report.revised
    writes = [q["sql"] for q in queries if q["sql"].lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE"))]
    assert writes == []
    assert snapshot("bulk-") == before
    assert list(Item.objects.order_by("uid").values_list("updated_at", flat=True)) == stamps


def test_an_error_on_any_line_names_line_and_field_and_writes_nothing(taxonomy, monkeypatch):
    monkeypatch.setattr(bulk_import, "BATCH_SIZE", 5)
    records = [json.loads(line) for line in bulk_file(30).decode().splitlines()]
    bad = copy.deepcopy(records)
    bad[2]["content"]["zh"]["options"] = ["只有一个"]
    bad[25]["dimension"] = "no_such_dimension"
    with pytest.raises(services.ImportFailed) as excinfo:
        services.items_import(data=jsonl(bad), user=None)
    assert [str(e) for e in excinfo.value.errors] == [
        "line 3: content.zh.options: needs 2 to 12 options, got 1",
    ]
    assert Item.objects.count() == 0 and ItemRevision.objects.count() == 0 and StatusDecision.objects.count() == 0

    bad[2] = records[2]
    with pytest.raises(services.ImportFailed) as excinfo:
        services.items_import(data=jsonl(bad), user=None)
    assert [(e.line, e.field) for e in excinfo.value.errors] == [(26, "dimension")]
    assert Item.objects.count() == 0 and ItemRevision.objects.count() == 0 and StatusDecision.objects.count() == 0


def test_a_status_error_late_in_a_file_writes_nothing_of_the_batches_before_it(taxonomy, expert, monkeypatch):
    monkeypatch.setattr(bulk_import, "BATCH_SIZE", 5)
    records = [json.loads(line) for line in bulk_file(20).decode().splitlines()]
    for record in records:
        record["status"] = "draft"
    records[17]["status"] = "accepted"
    with pytest.raises(services.ImportFailed) as excinfo:
        services.items_import(data=jsonl(records), user=expert)
    assert [(e.line, e.field) for e in excinfo.value.errors] == [(18, "status")]
    assert Item.objects.count() == 0


def test_a_uid_created_meanwhile_is_an_error_naming_its_line(taxonomy, monkeypatch):
    def taken(**kwargs):
        raise bulk_import.UidsTaken({"bulk-00003": 4})

    monkeypatch.setattr(bulk_import, "write_records", taken)
    with pytest.raises(services.ImportFailed) as excinfo:
        services.items_import(data=bulk_file(5), user=None)
    assert [str(e) for e in excinfo.value.errors] == ["line 4: record: An item with uid bulk-00003 already exists."]


def test_dry_run_checks_and_writes_nothing(taxonomy):
    report = services.items_import(data=bulk_file(12), user=None, dry_run=True)
    assert len(report.created) == 12 and report.dry_run
    assert Item.objects.count() == 0


def test_default_revision_messages_are_in_the_importers_language(taxonomy):
    with translation.override("zh-hans"):
        services.items_import(data=bulk_file(2), user=None)
        expected = _("Imported")
    assert expected != "Imported"
    assert set(ItemRevision.objects.values_list("message", flat=True)) == {expected}


def test_imported_items_are_signed_for_near_duplicates_in_the_import(taxonomy, lead):
    from django.db.models import F

    from annotation.items.models import ItemSignature
    from annotation.items.neighbours import item_neighbours

    report = services.items_import(data=bulk_file(12), user=lead)
    assert len(report.created) == 12
    current = ItemSignature.objects.filter(item__uid__startswith="bulk-", revision_id=F("item__current_revision_id"))
    assert current.filter(language="en").count() == 12 and current.filter(language="zh").count() == 12
    # The files' items differ by a scene number only: each is its neighbours' near-duplicate.
    near = item_neighbours(item=Item.objects.get(uid="bulk-00003"), threshold=settings.NEAR_DUPLICATE_THRESHOLD)
    assert {n.uid for n in near.nearest} & {f"bulk-{i:05d}" for i in range(12)} - {"bulk-00003"}


def test_a_dry_run_signs_nothing(taxonomy, lead):
    from annotation.items.models import ItemSignature

    services.items_import(data=bulk_file(3), user=lead, dry_run=True)
    assert not ItemSignature.objects.filter(item__uid__startswith="bulk-").exists()
