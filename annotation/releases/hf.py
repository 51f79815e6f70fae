"""The Hugging Face layout of an export (layout 2): typed Parquet per configuration and the card's YAML block (no ORM).

``datasets.load_dataset(DIR, NAME)`` loads the configurations ``en``, ``zh`` (one row per item in that language)
and ``bilingual`` (one row per item, both languages nested), each a ``test`` split declared in the YAML block of
``README.md`` with its features. The feature types are written once, here, and give both the Parquet schema and
the YAML, so the two cannot disagree. Everything is a pure function of the data recorded at freeze.
"""

import io
from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from annotation.items.content import LANGUAGES
from core.canonical import canonical_json

SPLIT = "test"
CONFIGS = (*LANGUAGES, "bilingual")
STRING, INT = "string", "int64"

# A feature type is a dtype name, ("list", type) or ("struct", [(name, type), ...]).
Feature = str | tuple


def _list(inner: Feature) -> tuple:
    return ("list", inner)


def _struct(*fields: tuple[str, Feature]) -> tuple:
    return ("struct", list(fields))


TURN = _struct(("user", STRING), ("options", _list(STRING)), ("answer", INT))
# Every field any kind of item has in one language; a field the kind does not have is null.
VERSION = [
    ("context", STRING),
    ("question", STRING),
    ("prompt", STRING),
    ("options", _list(STRING)),
    ("answer", INT),
    ("turns", _list(TURN)),
]
LANGUAGE_FEATURES = [
    ("uid", STRING),
    ("language", STRING),
    ("benchmark", STRING),
    ("module", STRING),
    ("dimension", STRING),
    ("kind", STRING),
    ("scenario", STRING),
    ("scenario_domain", STRING),
    ("emotions", _list(STRING)),
    ("crisis_level", INT),
    ("difficulty", STRING),
    ("revision", INT),
    *VERSION,
]
BILINGUAL_FEATURES = [
    ("format", STRING),
    ("uid", STRING),
    ("benchmark", STRING),
    ("dimension", STRING),
    ("kind", STRING),
    ("scenario", STRING),
    ("emotions", _list(STRING)),
    ("crisis_level", INT),
    ("difficulty", STRING),
    ("status", STRING),
    ("origin", STRING),
    ("metadata", STRING),  # free-form object: canonical JSON text
    ("revision", INT),
    ("content", _struct(*[(lang, _struct(*VERSION)) for lang in LANGUAGES])),
]
FEATURES = {**{lang: LANGUAGE_FEATURES for lang in LANGUAGES}, "bilingual": BILINGUAL_FEATURES}
# Hugging Face licence identifiers, by the spellings a release's free-text licence is likely to use.
LICENCES = {
    "cc-by-4.0",
    "cc-by-sa-4.0",
    "cc-by-nc-4.0",
    "cc-by-nc-sa-4.0",
    "cc-by-nd-4.0",
    "cc-by-nc-nd-4.0",
    "cc0-1.0",
    "mit",
    "apache-2.0",
    "odc-by",
    "odbl",
    "pddl",
    "cdla-permissive-2.0",
    "cdla-sharing-1.0",
    "gpl-3.0",
    "bsd-3-clause",
}


def parquet_name(config: str) -> str:
    return f"items.{config}.parquet"


def arrow_type(feature: Feature) -> pa.DataType:
    if feature == STRING:
        return pa.string()
    if feature == INT:
        return pa.int64()
    kind, inner = feature
    if kind == "list":
        return pa.list_(arrow_type(inner))
    return pa.struct([pa.field(name, arrow_type(sub)) for name, sub in inner])


def arrow_schema(features: list[tuple[str, Feature]]) -> pa.Schema:
    return pa.schema([pa.field(name, arrow_type(feature)) for name, feature in features])


def yaml_features(features: list[tuple[str, Feature]]) -> list[dict]:
    """Return the features as ``dataset_info.features`` of a card lists them (``datasets.Features._to_yaml_list``)."""
    result = []
    for name, feature in features:
        if isinstance(feature, str):
            result.append({"name": name, "dtype": feature})
        elif feature[0] == "list":
            inner = feature[1]
            result.append({"name": name, "list": inner if isinstance(inner, str) else yaml_features(inner[1])})
        else:
            result.append({"name": name, "struct": yaml_features(feature[1])})
    return result


def _shaped(value: object, feature: Feature) -> object:
    """Return ``value`` with exactly the fields of ``feature`` (missing ones null), for a typed column."""
    if value is None or isinstance(feature, str):
        return value
    kind, inner = feature
    if kind == "list":
        return [_shaped(v, inner) for v in value]
    return {name: _shaped(value.get(name), sub) for name, sub in inner}


def _version(version: dict | None) -> dict | None:
    return _shaped(version, _struct(*VERSION)) if version else None


def language_row(row: dict) -> dict:
    """Return one row of a language configuration from an export row (``export._language_rows``)."""
    return _shaped({**row, "module": row["module"], "difficulty": row["difficulty"] or ""}, _struct(*LANGUAGE_FEATURES))


def bilingual_row(record: dict) -> dict:
    """Return one row of the bilingual configuration from an interchange record."""
    content = record["content"]
    return {
        **{name: record.get(name) for name, _ in BILINGUAL_FEATURES if name not in ("metadata", "content")},
        "metadata": canonical_json(record.get("metadata") or {}),
        "content": {lang: _version(content.get(lang)) for lang in LANGUAGES},
    }


def parquet_bytes(rows: list[dict], features: list[tuple[str, Feature]]) -> bytes:
    table = pa.Table.from_pylist(rows, schema=arrow_schema(features))
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd", use_dictionary=False, write_statistics=False, store_schema=False)
    return sink.getvalue()


def size_category(n: int) -> str:
    """Return the Hugging Face size category of ``n`` rows."""
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if n < limit:
            return name
    return "1M<n<10M"


def licence_fields(licence: str) -> dict:
    """Return the card's licence fields: a Hugging Face identifier, or ``other`` with the licence as written."""
    text = (licence or "").strip()
    if not text:
        return {"license": "unknown"}
    slug = "-".join(text.lower().replace("_", " ").split())
    if slug in LICENCES:
        return {"license": slug}
    return {"license": "other", "license_name": text}


def card_yaml(meta: dict, counts: dict[str, int], kinds: Counter) -> str:
    """Return the YAML block that opens the card: configurations, features, licence, languages, size, tasks.

    ``counts``: rows per configuration; ``kinds``: items per kind.
    """
    tasks, task_ids = [], []
    if kinds.get("mcq") or kinds.get("multi_turn_choice"):
        tasks.append("multiple-choice")
        task_ids.append("multiple-choice-qa")
    if kinds.get("open_prompt"):
        tasks.append("text-generation")
    block = {
        "pretty_name": meta["title"],
        **licence_fields(meta.get("licence", "")),
        "language": [lang for lang in LANGUAGES if counts.get(lang)],
        "multilinguality": "multilingual" if sum(1 for lang in LANGUAGES if counts.get(lang)) > 1 else "monolingual",
        "size_categories": [size_category(counts.get("bilingual", 0))],
        "task_categories": tasks,
        "task_ids": task_ids,
        "tags": ["emotional-intelligence", "benchmark", meta["benchmark"]],
        "configs": [
            {
                "config_name": config,
                "data_files": [{"split": SPLIT, "path": parquet_name(config)}],
                **({"default": True} if config == "bilingual" else {}),
            }
            for config in CONFIGS
        ],
        "dataset_info": [
            {
                "config_name": config,
                "features": yaml_features(FEATURES[config]),
                "splits": [{"name": SPLIT, "num_examples": counts.get(config, 0)}],
            }
            for config in CONFIGS
        ],
    }
    text = yaml.safe_dump(block, sort_keys=False, allow_unicode=True, default_flow_style=False, width=1000)
    return f"---\n{text}---\n\n"


def hf_files(meta: dict, by_lang: dict[str, list[dict]], interchange: list[dict]) -> tuple[dict[str, bytes], str]:
    """Return the typed Parquet file of every configuration and the card's YAML block."""
    files = {
        parquet_name(lang): parquet_bytes([language_row(r) for r in by_lang[lang]], FEATURES[lang])
        for lang in LANGUAGES
    }
    files[parquet_name("bilingual")] = parquet_bytes([bilingual_row(r) for r in interchange], BILINGUAL_FEATURES)
    counts = {**{lang: len(by_lang[lang]) for lang in LANGUAGES}, "bilingual": len(interchange)}
    return files, card_yaml(meta, counts, Counter(r["kind"] for r in interchange))
