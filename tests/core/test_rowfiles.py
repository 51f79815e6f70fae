"""Tables streamed as CSV, JSONL or Parquet (``core.rowfiles``), without a database."""

import csv
import io
import json

import pyarrow.parquet as pq
import pytest

from core import rowfiles
from core.rowfiles import Column

COLUMNS = [Column("name"), Column("n", "int"), Column("x", "float"), Column("ok", "bool")]


def _rows(count: int):
    for i in range(count):
        yield {"name": "=cmd" if i == 0 else f"r{i}", "n": -i, "x": i / 2, "ok": i % 2 == 0}


def test_parquet_is_written_in_row_groups_and_keeps_types(monkeypatch):
    monkeypatch.setattr(rowfiles, "PARQUET_BATCH", 7)
    data = b"".join(rowfiles.table_chunks(_rows(30), COLUMNS, "parquet"))
    parquet = pq.ParquetFile(io.BytesIO(data))
    assert parquet.metadata.num_row_groups == 5 and parquet.metadata.num_rows == 30
    table = parquet.read()
    assert [str(t) for t in table.schema.types] == ["string", "int64", "double", "bool"]
    assert table.to_pylist() == list(_rows(30))


def test_csv_cells_are_safe_for_spreadsheets_and_jsonl_is_exact(monkeypatch):
    monkeypatch.setattr(rowfiles, "CSV_CHUNK", 4)
    chunks = list(rowfiles.table_chunks(_rows(10), COLUMNS, "csv"))
    assert len(chunks) == 3  # 4 + 4 + 2 rows: written as read
    rows = list(csv.DictReader(io.StringIO(b"".join(chunks).decode())))
    assert rows[0] == {"name": "'=cmd", "n": "0", "x": "0.0", "ok": "true"}
    assert rows[1]["n"] == "-1" and rows[1]["ok"] == "false"
    lines = b"".join(rowfiles.table_chunks(_rows(3), COLUMNS, "jsonl")).decode().splitlines()
    assert json.loads(lines[0]) == {"name": "=cmd", "n": 0, "x": 0.0, "ok": True}


def test_an_unknown_format_or_language_is_refused():
    with pytest.raises(rowfiles.UnknownFormat, match="expected one of csv, jsonl, parquet"):
        rowfiles.table_chunks([], COLUMNS, "xlsx")
    assert rowfiles.language_param("") is None and rowfiles.language_param("zh") == "zh"
    with pytest.raises(ValueError):
        rowfiles.language_param("fr")
