"""Byte-reproducible export files of a release, and their verification (no ORM).

Every file is a pure function of the data recorded at freeze: records are sorted in Python (never by the
database's collation), JSON is canonical, timestamps inside archives are fixed. The same release therefore
exports to identical bytes on SQLite and PostgreSQL alike. The files are written once, when the release is
frozen, and kept (``ReleaseFile``); later exports return the kept bytes.
"""

import hashlib
import io
import json
import zipfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from annotation.items.content import LANGUAGES
from annotation.releases.card import card_markdown
from core.canonical import canonical_json
from core.csvsafe import csv_text

MANIFEST = "manifest.json"
ZIP_CONTENT_TYPE = "application/zip"
ZIP_DATE = (1980, 1, 1, 0, 0, 0)
CSV_COLUMNS = [
    "uid",
    "language",
    "benchmark",
    "module",
    "dimension",
    "kind",
    "scenario",
    "scenario_domain",
    "emotions",
    "crisis_level",
    "difficulty",
    "revision",
    "context",
    "question",
    "prompt",
    "options",
    "answer",
    "turns",
]


def _language_rows(meta: dict, entries: list[dict]) -> dict[str, list[dict]]:
    rows: dict[str, list[dict]] = {lang: [] for lang in LANGUAGES}
    for entry in entries:
        for lang in LANGUAGES:
            version = entry["content"].get(lang)
            if not version:
                continue
            rows[lang].append(
                {
                    "uid": entry["uid"],
                    "language": lang,
                    "benchmark": meta["benchmark"],
                    "module": entry["module"],
                    "dimension": entry["dimension"],
                    "kind": entry["kind"],
                    "scenario": entry["scenario"],
                    "scenario_domain": entry["domain"],
                    "emotions": entry["emotions"],
                    "crisis_level": entry["crisis_level"],
                    "difficulty": entry["difficulty"],
                    "revision": entry["revision"],
                    **version,
                }
            )
    return rows


def _jsonl(records: list[dict]) -> bytes:
    return "".join(canonical_json(r) + "\n" for r in records).encode("utf-8")


def _flat(row: dict) -> dict:
    return {
        "uid": row["uid"],
        "language": row["language"],
        "benchmark": row["benchmark"],
        "module": row["module"] or "",
        "dimension": row["dimension"],
        "kind": row["kind"],
        "scenario": row["scenario"] or "",
        "scenario_domain": row["scenario_domain"] or "",
        "emotions": ";".join(row["emotions"]),
        "crisis_level": "" if row["crisis_level"] is None else str(row["crisis_level"]),
        "difficulty": row["difficulty"] or "",
        "revision": str(row["revision"]),
        "context": row.get("context", ""),
        "question": row.get("question", ""),
        "prompt": row.get("prompt", ""),
        "options": canonical_json(row["options"]) if "options" in row else "",
        "answer": "" if row.get("answer") is None else str(row["answer"]),
        "turns": canonical_json(row["turns"]) if "turns" in row else "",
    }


def _csv(rows: list[dict]) -> bytes:
    # Every cell is text here: quoted, and escaped where a spreadsheet would run it (core.csvsafe). The JSONL and
    # Parquet files keep the exact text.
    return csv_text((_flat(row) for row in rows), CSV_COLUMNS).encode("utf-8")


def _parquet(rows: list[dict]) -> bytes:
    columns: dict[str, list[str]] = {col: [] for col in CSV_COLUMNS}
    for row in rows:
        for col, value in _flat(row).items():
            columns[col].append(value)
    table = pa.table({col: pa.array(columns.pop(col), type=pa.string()) for col in CSV_COLUMNS})
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd", use_dictionary=False, write_statistics=False, store_schema=False)
    return sink.getvalue()


def export_files(meta: dict, entries: list[dict], facts: dict) -> dict[str, bytes]:
    """Return every export file by name (manifest included), built only from the given plain data.

    ``facts`` are the dataset card's (``annotation.releases.record.card_facts``).
    """
    entries = sorted(entries, key=lambda e: e["uid"])
    by_lang = _language_rows(meta, entries)
    files: dict[str, bytes] = {}
    for lang in LANGUAGES:
        files[f"items.{lang}.jsonl"] = _jsonl(by_lang[lang])
    files["items.bilingual.jsonl"] = _jsonl([e["interchange"] for e in entries])
    all_rows = [row for lang in LANGUAGES for row in by_lang[lang]]
    all_rows.sort(key=lambda r: (r["uid"], r["language"]))
    files["items.csv"] = _csv(all_rows)
    files["items.parquet"] = _parquet(all_rows)
    files["README.md"] = card_markdown(meta, facts).encode("utf-8")
    files[MANIFEST] = manifest_bytes(meta, files)
    return dict(sorted(files.items()))


def file_checksums(files: dict[str, bytes]) -> list[tuple[str, int, str]]:
    """Return (name, size in bytes, SHA-256) of every file, in the order given."""
    return [(name, len(data), hashlib.sha256(data).hexdigest()) for name, data in files.items()]


def manifest_bytes(meta: dict, files: dict[str, bytes]) -> bytes:
    """Return the manifest: release identity plus size and SHA-256 of every other file."""
    listing = {
        name: {"bytes": size, "sha256": digest}
        for name, size, digest in file_checksums(dict(sorted(files.items())))
        if name != MANIFEST
    }
    return (
        json.dumps({"release": meta, "files": listing}, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
    ).encode()


def zip_bytes(files: dict[str, bytes], folder: str) -> bytes:
    """Pack files into a zip with fixed timestamps and permissions, so equal files give an equal archive."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in sorted(files.items()):
            info = zipfile.ZipInfo(f"{folder}/{name}", date_time=ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            info.create_system = 3
            archive.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
    return buffer.getvalue()


def read_manifest(path: Path) -> tuple[dict | None, list[str]]:
    """Return the manifest in ``path`` as {"release", "files"}, or None and why it cannot be read."""
    manifest_path = path / MANIFEST
    if not manifest_path.is_file():
        return None, [f"{MANIFEST} is missing from {path}"]
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        listing = manifest["files"]
        release = manifest.get("release") or {}
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        return None, [f"{MANIFEST} is not a valid manifest: {exc}"]
    if not isinstance(listing, dict) or not isinstance(release, dict):
        return None, [f"{MANIFEST} is not a valid manifest: no file listing"]
    return {"release": release, "files": listing}, []


def verify_directory(path: Path, expected: dict[str, dict] | None = None) -> list[str]:
    """Check an unpacked export against a listing of {name: {"bytes", "sha256"}}; return one message per problem.

    Without ``expected``, the directory's own manifest is the listing (and is itself not checked); a listing
    recorded elsewhere (at freeze, in the database) includes the manifest.
    """
    if expected is None:
        manifest, problems = read_manifest(path)
        if manifest is None:
            return problems
        expected = manifest["files"]
    problems = []
    for name, listed in sorted(expected.items()):
        file = path / name
        if not file.is_file():
            problems.append(f"{name}: missing")
            continue
        data = file.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        if digest != listed.get("sha256"):
            problems.append(f"{name}: SHA-256 {digest} does not match the manifest's {listed.get('sha256')}")
        elif len(data) != listed.get("bytes"):
            problems.append(f"{name}: {len(data)} bytes, the manifest says {listed.get('bytes')}")
    extra = sorted(p.name for p in path.iterdir() if p.is_file() and p.name != MANIFEST and p.name not in expected)
    problems += [f"{name}: not listed in the manifest" for name in extra]
    return problems
