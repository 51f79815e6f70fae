"""The one canonical JSON form that every checksum and cache key in the project is computed from (pure)."""

import hashlib
import json


def canonical_json(value: object) -> str:
    """Serialise ``value`` deterministically: sorted keys, no whitespace, non-ASCII text kept as UTF-8.

    Content hashes, release manifests and export files, report digests and LLM request hashes are all SHA-256
    of this text, so changing it changes every stored checksum.
    """
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def canonical_digest(value: object) -> str:
    """Return the SHA-256 (hex) of ``value``'s canonical JSON: the checksum of a calibration or evaluation report."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()
