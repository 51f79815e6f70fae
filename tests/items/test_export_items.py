"""``export_items`` streams: records come from a chunked query and are written one line at a time."""

import json

from django.core.management import call_command
from django.db import connection
from django.db.models import QuerySet
from django.test.utils import CaptureQueriesContext

from annotation.items import selectors, services
from annotation.items.interchange import dump_jsonl
from annotation.items.models import Item
from tests.items.test_import_bulk import bulk_file


def test_export_writes_the_same_bytes_as_the_canonical_dump(taxonomy, tmp_path):
    services.items_import(data=bulk_file(25), user=None)
    out = tmp_path / "items.jsonl"
    call_command("export_items", "--out", str(out))
    expected = dump_jsonl(selectors.item_export_records(items=Item.objects.all()))
    assert out.read_bytes() == expected.encode("utf-8")
    assert not (tmp_path / "items.jsonl.partial").exists()


def test_export_queries_do_not_grow_with_the_number_of_items(taxonomy, tmp_path):
    services.items_import(data=bulk_file(3, "a-"), user=None)
    with CaptureQueriesContext(connection) as few:
        call_command("export_items", "--out", str(tmp_path / "few.jsonl"), "--benchmark", "facet")
    services.items_import(data=bulk_file(60, "b-"), user=None)
    with CaptureQueriesContext(connection) as many:
        call_command("export_items", "--out", str(tmp_path / "many.jsonl"), "--benchmark", "facet")
    assert len(many) == len(few)
    assert len((tmp_path / "many.jsonl").read_text(encoding="utf-8").splitlines()) == 63


def test_export_reads_items_through_a_chunked_iterator(taxonomy, tmp_path, monkeypatch):
    services.items_import(data=bulk_file(5), user=None)
    chunk_sizes = []
    original = QuerySet.iterator

    def iterator(self, chunk_size=None):
        chunk_sizes.append(chunk_size)
        return original(self, chunk_size=chunk_size)

    monkeypatch.setattr(QuerySet, "iterator", iterator)
    call_command("export_items", "--out", str(tmp_path / "out.jsonl"))
    assert chunk_sizes and all(size is not None and size <= 2000 for size in chunk_sizes)


class LineSink:
    """Stands in for stdout, recording each write."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def write(self, text: str) -> int:
        self.lines.append(text)
        return len(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)


def test_export_writes_each_line_before_reading_the_next_record(taxonomy, monkeypatch):
    services.items_import(data=bulk_file(12), user=None)
    sink = LineSink()
    monkeypatch.setattr("sys.stdout", sink)
    records = selectors.item_export_records
    written_before = []

    def watched(*, items):
        for n, record in enumerate(records(items=items)):
            written_before.append((n, len(sink.lines)))
            yield record

    monkeypatch.setattr(selectors, "item_export_records", watched)
    call_command("export_items", "--out", "-")
    assert written_before == [(n, n) for n in range(12)]
    assert [json.loads(line)["uid"] for line in sink.lines] == [f"bulk-{i:05d}" for i in range(12)]
