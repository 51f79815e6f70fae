"""Tables written as CSV, JSONL or Parquet while they are read, so that memory does not grow with the table.

A table is a list of ``Column``s (name and type) and an iterable of rows (dicts keyed by column name), typically
read from the database with ``QuerySet.iterator()``. CSV and JSONL are produced a chunk of rows at a time; Parquet
is written in row groups of ``PARQUET_BATCH`` rows to a temporary file (spilled to disk past a few megabytes) that
is then read back in chunks. CSV cells are made safe for spreadsheets as every CSV the app writes
(``core.csvsafe``); JSONL and Parquet hold the exact values.
"""

import csv
import io
import json
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from django.http import StreamingHttpResponse
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from rest_framework import status
from rest_framework.response import Response

from core.csvsafe import csv_safe_cell

FORMATS = ("csv", "jsonl", "parquet")
CONTENT_TYPES = {
    "csv": "text/csv; charset=utf-8",
    "jsonl": "application/x-ndjson; charset=utf-8",
    "parquet": "application/vnd.apache.parquet",
}
CSV_CHUNK = 500
PARQUET_BATCH = 5000
READ_CHUNK = 1 << 16
TYPES = ("str", "int", "float", "bool")


@dataclass(frozen=True)
class Column:
    """A column of an exported table: its name and the type of its values (``str``, ``int``, ``float``, ``bool``;
    every value may also be None)."""

    name: str
    type: str = "str"


def media_type_responses(content_types: Iterable[str], code: int = 200) -> dict:
    """Return the OpenAPI answers (``extend_schema(responses=...)``) of a download in any of ``content_types``."""
    media_types = [content_type.split(";")[0] for content_type in content_types]
    return {
        (code, media): OpenApiTypes.OBJECT if media == "application/json" else OpenApiTypes.BINARY
        for media in media_types
    }


TABLE_RESPONSES = media_type_responses(CONTENT_TYPES.values())


def unknown_format_response(choices: Iterable[str]) -> Response:
    """The 404 of a download asked for in a format it does not offer: the reason, and the formats it offers."""
    reason = _("Unknown format.")
    return Response(
        {"detail": reason, "code": "not_found", "fmt": [reason], "choices": list(choices)},
        status=status.HTTP_404_NOT_FOUND,
    )


class UnknownFormat(ValueError):
    """The format asked for is not one of ``FORMATS``."""


def check_format(fmt: str) -> str:
    """Return ``fmt`` if it is a known format; raise ``UnknownFormat`` naming the known ones otherwise."""
    if fmt not in FORMATS:
        raise UnknownFormat(f"unknown format {fmt!r}: expected one of {', '.join(FORMATS)}")
    return fmt


def _csv_cell(value: object) -> object:
    if isinstance(value, bool):
        return "true" if value else "false"
    return csv_safe_cell(value)


def csv_chunks(rows: Iterable[Mapping[str, object]], columns: list[Column]) -> Iterator[bytes]:
    """Yield the table as UTF-8 CSV: a header line, then rows, ``CSV_CHUNK`` rows a chunk."""
    names = [column.name for column in columns]
    buffer = io.StringIO(newline="")
    csv.writer(buffer, lineterminator="\n").writerow(names)
    writer = csv.writer(buffer, lineterminator="\n", quoting=csv.QUOTE_STRINGS)
    pending = 0
    for row in rows:
        writer.writerow([_csv_cell(row.get(name)) for name in names])
        pending += 1
        if pending >= CSV_CHUNK:
            yield buffer.getvalue().encode("utf-8")
            buffer.seek(0)
            buffer.truncate()
            pending = 0
    yield buffer.getvalue().encode("utf-8")


def jsonl_chunks(rows: Iterable[Mapping[str, object]], columns: list[Column]) -> Iterator[bytes]:
    """Yield the table as JSON Lines, one object per row with the columns in order."""
    names = [column.name for column in columns]
    lines: list[str] = []
    for row in rows:
        lines.append(json.dumps({name: row.get(name) for name in names}, ensure_ascii=False) + "\n")
        if len(lines) >= CSV_CHUNK:
            yield "".join(lines).encode("utf-8")
            lines = []
    yield "".join(lines).encode("utf-8")


def _arrow_schema(columns: list[Column]):  # noqa: ANN202  (a pyarrow schema; pyarrow is imported lazily)
    import pyarrow as pa  # deferred: pyarrow is heavy and only Parquet needs it

    types = {"str": pa.string(), "int": pa.int64(), "float": pa.float64(), "bool": pa.bool_()}
    return pa.schema([pa.field(column.name, types[column.type]) for column in columns])


def parquet_chunks(rows: Iterable[Mapping[str, object]], columns: list[Column]) -> Iterator[bytes]:
    """Yield the table as one Parquet file, written in row groups of ``PARQUET_BATCH`` rows."""
    # deferred: pyarrow is heavy and only Parquet needs it
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = _arrow_schema(columns)
    names = [column.name for column in columns]
    with tempfile.SpooledTemporaryFile(max_size=8 << 20) as spool:
        with pq.ParquetWriter(spool, schema) as writer:
            batch: list[dict] = []
            for row in rows:
                batch.append({name: row.get(name) for name in names})
                if len(batch) >= PARQUET_BATCH:
                    writer.write_table(pa.Table.from_pylist(batch, schema=schema))
                    batch = []
            if batch:
                writer.write_table(pa.Table.from_pylist(batch, schema=schema))
        spool.seek(0)
        while chunk := spool.read(READ_CHUNK):
            yield chunk


WRITERS = {"csv": csv_chunks, "jsonl": jsonl_chunks, "parquet": parquet_chunks}


def table_chunks(rows: Iterable[Mapping[str, object]], columns: list[Column], fmt: str) -> Iterator[bytes]:
    """Yield the table in ``fmt`` (one of ``FORMATS``)."""
    return WRITERS[check_format(fmt)](rows, columns)


def table_response(
    rows: Iterable[Mapping[str, object]],
    columns: list[Column],
    fmt: str,
    *,
    filename: str,
    headers: Mapping[str, object] | None = None,
) -> StreamingHttpResponse:
    """Return a download of the table in ``fmt``, streamed as it is read; ``headers`` are added to the answer."""
    response = StreamingHttpResponse(table_chunks(rows, columns, fmt), content_type=CONTENT_TYPES[fmt])
    response["Content-Disposition"] = f'attachment; filename="{filename}.{fmt}"'
    for name, value in (headers or {}).items():
        response[name] = str(value)
    return response


def write_table(
    rows: Iterable[Mapping[str, object]], columns: list[Column], fmt: str, stream: io.BufferedIOBase
) -> None:
    """Write the table in ``fmt`` to a binary stream (a file, or standard output's buffer)."""
    for chunk in table_chunks(rows, columns, fmt):
        stream.write(chunk)


def pair_headers(counts: Mapping[str, int]) -> dict[str, int]:
    """Return the headers of a preference-pair download: the pairs written and the pairs left out, by reason."""
    return {
        "X-Preference-Pairs": counts.get("pair", 0),
        "X-Left-Out-Ties": counts.get("tie", 0),
        "X-Left-Out-Inconsistent": counts.get("inconsistent", 0),
        "X-Left-Out-Unparsed": counts.get("unparsed", 0),
    }


def write_table_file(rows: Iterable[Mapping[str, object]], columns: list[Column], fmt: str, out: str) -> int:
    """Write the table in ``fmt`` to the path ``out`` (through a ``.partial`` file, replaced when complete), or to
    standard output when ``out`` is ``-``; return the number of rows written."""
    written = 0

    def counted() -> Iterator[Mapping[str, object]]:
        nonlocal written
        for row in rows:
            written += 1
            yield row

    if out == "-":
        write_table(counted(), columns, fmt, sys.stdout.buffer)
        sys.stdout.buffer.flush()
        return written
    path = Path(out)
    partial = path.with_name(path.name + ".partial")
    try:
        with partial.open("wb") as file:
            write_table(counted(), columns, fmt, file)
        partial.replace(path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return written


def language_param(value: str | None) -> str | None:
    """Return the ``language`` filter of a download (``en``, ``zh`` or None for both); raise ValueError otherwise."""
    if value in (None, ""):
        return None
    if value not in ("en", "zh"):
        raise ValueError(value)
    return value
