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
from annotation.releases.harness import harness_files
from annotation.releases.hf import LANGUAGE_FEATURES, hf_files, language_row, parquet_bytes
from core.canonical import canonical_json
from core.csvsafe import csv_text

MANIFEST = "manifest.json"
# The export layout new freezes write. 1: JSONL, CSV, Parquet of text columns, card, manifest (no ``layout`` key in
# the manifest); 2: adds the Hugging Face layout (typed Parquet per configuration, the card's YAML block) and the
# harness task files, and records ``"layout": 2`` in the manifest. A frozen release keeps the files of its layout.
LAYOUT = 2
LAYOUTS = (1, 2)
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


def export_files(meta: dict, entries: list[dict], facts: dict, *, layout: int = LAYOUT) -> dict[str, bytes]:
    """Return every export file by name (manifest included), built only from the given plain data.

    ``facts`` are the dataset card's (``annotation.releases.record.card_facts``); ``layout`` one of ``LAYOUTS``.
    """
    if layout not in LAYOUTS:
        raise ValueError(f"unknown export layout {layout!r}")
    entries = sorted(entries, key=lambda e: e["uid"])
    by_lang = _language_rows(meta, entries)
    interchange = [e["interchange"] for e in entries]
    files: dict[str, bytes] = {}
    for lang in LANGUAGES:
        files[f"items.{lang}.jsonl"] = _jsonl(by_lang[lang])
    files["items.bilingual.jsonl"] = _jsonl(interchange)
    all_rows = [row for lang in LANGUAGES for row in by_lang[lang]]
    all_rows.sort(key=lambda r: (r["uid"], r["language"]))
    files["items.csv"] = _csv(all_rows)
    card = card_markdown(meta, facts, layout=layout)
    if layout == 1:
        files["items.parquet"] = _parquet(all_rows)
    else:
        typed, front_matter = hf_files(meta, by_lang, interchange)
        files.update(typed)
        files["items.parquet"] = parquet_bytes([language_row(r) for r in all_rows], LANGUAGE_FEATURES)
        files.update(harness_files(meta, interchange))
        card = front_matter + card
    files["README.md"] = card.encode("utf-8")
    files[MANIFEST] = manifest_bytes(meta, files, layout=layout)
    return dict(sorted(files.items()))


def file_checksums(files: dict[str, bytes]) -> list[tuple[str, int, str]]:
    """Return (name, size in bytes, SHA-256) of every file, in the order given."""
    return [(name, len(data), hashlib.sha256(data).hexdigest()) for name, data in files.items()]


def manifest_bytes(meta: dict, files: dict[str, bytes], *, layout: int = LAYOUT) -> bytes:
    """Return the manifest: release identity plus size and SHA-256 of every other file (and the layout, from 2)."""
    listing = {
        name: {"bytes": size, "sha256": digest}
        for name, size, digest in file_checksums(dict(sorted(files.items())))
        if name != MANIFEST
    }
    manifest = {"release": meta, "files": listing, **({"layout": layout} if layout > 1 else {})}
    return (json.dumps(manifest, ensure_ascii=False, indent=2, sort_keys=True) + "\n").encode()


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


def layout_files(layout: int) -> list[str]:
    """Return the names every export of ``layout`` holds (manifest included)."""
    names = [f"items.{lang}.jsonl" for lang in LANGUAGES]
    names += ["items.bilingual.jsonl", "items.csv", "items.parquet", "README.md", MANIFEST]
    if layout >= 2:
        names += [f"items.{config}.parquet" for config in (*LANGUAGES, "bilingual")]
        names += ["inspect_task.py"]
        names += [
            f"{prefix}.{lang}.{ext}"
            for lang in LANGUAGES
            for prefix, ext in (("lm_eval", "yaml"), ("lm_eval", "jsonl"), ("evals", "jsonl"))
        ]
    return sorted(names)


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
    layout = manifest.get("layout", 1)
    if layout not in LAYOUTS:
        known = ", ".join(str(n) for n in LAYOUTS)
        return None, [f"{MANIFEST} names export layout {layout!r}; this version reads layouts {known}"]
    return {"release": release, "files": listing, "layout": layout}, []


def verify_directory(path: Path, expected: dict[str, dict] | None = None) -> list[str]:
    """Check an unpacked export against a listing of {name: {"bytes", "sha256"}}; return one message per problem.

    Without ``expected``, the directory's own manifest is the listing (and is itself not checked); a listing
    recorded elsewhere (at freeze, in the database) includes the manifest.
    """
    problems = []
    if expected is None:
        manifest, problems = read_manifest(path)
        if manifest is None:
            return problems
        expected = manifest["files"]
        problems = [
            f"{name}: part of export layout {manifest['layout']} but not listed in the manifest"
            for name in layout_files(manifest["layout"])
            if name != MANIFEST and name not in expected
        ]
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
