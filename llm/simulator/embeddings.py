"""The simulator's embeddings (``POST /v1/embeddings``, OpenAI's shape): deterministic vectors from a text's words.

A text is read as a bag of features (English: lower-cased words without a few stop words; Chinese: each CJK
character and each pair of neighbouring ones), each weighted ``1 + log(count)`` and added, with a sign, into four
of the vector's dimensions picked by its SHA-256 (a sparse random projection of the hashed bag of words); the sum is
normalised to unit length. Texts that share words get similar vectors, unrelated texts nearly orthogonal ones, the
same text always the same vector, whatever else the request holds. A text with no features at all (only stop words
or punctuation) gets a vector drawn from its own hash.

The model's name may give the default size (``sim-embed-384``; ``sim-embed``: 256); ``dimensions`` overrides it
(1-4096); ``encoding_format`` is ``float`` (the default) or ``base64`` (little-endian float32, as OpenAI sends it).
"""

import base64
import hashlib
import math
import re
from collections import Counter
from functools import lru_cache

import numpy as np

from llm.simulator import simulation

DEFAULT_DIMENSIONS = 256
MAX_DIMENSIONS = 4096
MAX_INPUTS = 2048
SLOTS = 4
WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
CJK_RUN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
STOP_WORDS = "a an and are as at be but by for from had has have he her his i i'm in is it it's its me my of on or our "
STOP = frozenset((STOP_WORDS + "she so that the their them they this to was we were what with you your").split(" "))


def features(text: str) -> Counter:
    """Return the text's features and their counts: English words (no stop words), CJK characters and pairs."""
    found = Counter(word for word in WORD.findall(text.lower()) if word not in STOP)
    for run in CJK_RUN.findall(text):
        found.update(run)
        found.update(run[i : i + 2] for i in range(len(run) - 1))
    return found


@lru_cache(maxsize=100_000)
def _slots(feature: str, dimensions: int) -> tuple[tuple[int, ...], tuple[float, ...]]:
    digest = hashlib.sha256(f"{dimensions}:{feature}".encode()).digest()
    indices = tuple(int.from_bytes(digest[4 * k : 4 * k + 4], "little") % dimensions for k in range(SLOTS))
    signs = tuple(1.0 if digest[16 + k] & 1 else -1.0 for k in range(SLOTS))
    return indices, signs


def embed(text: str, dimensions: int = DEFAULT_DIMENSIONS) -> np.ndarray:
    """Return the text's unit vector of ``dimensions`` float32 values."""
    vector = np.zeros(dimensions, dtype=np.float64)
    for feature, count in features(text).items():
        indices, signs = _slots(feature, dimensions)
        weight = 1.0 + math.log(count)
        for index, sign in zip(indices, signs, strict=True):
            vector[index] += sign * weight
    norm = float(np.linalg.norm(vector))
    if norm == 0.0:  # nothing to go by: a vector of the text's own
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
        vector = np.random.default_rng(seed).standard_normal(dimensions)
        norm = float(np.linalg.norm(vector))
    return (vector / norm).astype(np.float32)


def model_dimensions(model: str) -> int:
    """Return the default size of a model's vectors: ``sim-embed-384`` gives 384, any other model 256."""
    found = re.fullmatch(r"sim-embed-(\d{1,4})", model)
    return min(max(int(found.group(1)), 1), MAX_DIMENSIONS) if found else DEFAULT_DIMENSIONS


def inputs_of(data: dict) -> list[str]:
    """Return the request's texts: ``input`` as a string, a list of strings, or token arrays (read as their ids)."""
    given = data.get("input")
    items = [given] if isinstance(given, str) or (given and isinstance(given[0], int)) else given
    return [item if isinstance(item, str) else " ".join(f"t{token}" for token in item) for item in items]


def problem(data: dict) -> str:
    """Say what is wrong with an embeddings request, as OpenAI would refuse it (400); "" when it is fine."""
    return _input_problem(data.get("input")) or _options_problem(data)


def _input_problem(given: object) -> str:
    """Say what is wrong with a request's ``input``: a non-empty string, or a list of strings or token arrays."""
    tokens = isinstance(given, list) and given and all(isinstance(t, int) for t in given)
    items = [given] if isinstance(given, str) or tokens else given
    if not isinstance(items, list) or not items:
        return "'input' must be a non-empty string or array of strings."
    if len(items) > MAX_INPUTS:
        return f"'input' may hold at most {MAX_INPUTS} items; got {len(items)}."
    for index, item in enumerate(items):
        if not (tokens and isinstance(item, int)) and not _one_input(item):
            return f"'input[{index}]' must be a non-empty string or array of token ids."
    return ""


def _one_input(item: object) -> bool:
    """Whether one of a list's inputs is a text with content or a non-empty array of token ids."""
    if isinstance(item, str):
        return bool(item.strip())
    return isinstance(item, list) and bool(item) and all(isinstance(t, int) and t >= 0 for t in item)


def _options_problem(data: dict) -> str:
    """Say what is wrong with a request's ``dimensions`` or ``encoding_format``."""
    dimensions = data.get("dimensions")
    if dimensions is not None and (not isinstance(dimensions, int) or not 1 <= dimensions <= MAX_DIMENSIONS):
        return f"'dimensions' must be an integer from 1 to {MAX_DIMENSIONS}."
    if data.get("encoding_format", "float") not in {"float", "base64"}:
        return "'encoding_format' must be 'float' or 'base64'."
    return ""


def payload(data: dict) -> dict:
    """Return the reply to a valid embeddings request: ``{"object": "list", "data": [...], "model", "usage"}``."""
    model, texts = data["model"], inputs_of(data)
    dimensions = data.get("dimensions") or model_dimensions(model)
    as_base64 = data.get("encoding_format") == "base64"
    items = []
    for index, text in enumerate(texts):
        vector = embed(text, dimensions)
        encoded = base64.b64encode(vector.astype("<f4").tobytes()).decode() if as_base64 else vector.tolist()
        items.append({"object": "embedding", "index": index, "embedding": encoded})
    tokens = sum(simulation.count_tokens(text) for text in texts)
    return {
        "object": "list",
        "data": items,
        "model": model,
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }
