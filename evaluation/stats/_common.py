"""Shared pieces of the statistics package: defaults, input checks and JSON-ready result dataclasses.

Every result dataclass derives from ``_Serialisable``, whose ``as_dict()`` turns it into plain Python values
(NumPy scalars unwrapped, mapping keys made strings). Not part of the public API except through
``evaluation.stats``.
"""

from collections.abc import Mapping
from dataclasses import fields

import numpy as np
import numpy.typing as npt

ArrayLike = npt.ArrayLike
DEFAULT_CONFIDENCE = 0.95
DEFAULT_RESAMPLES = 10_000
DEFAULT_FDR = 0.05


def _plain(value: object) -> object:
    if isinstance(value, _Serialisable):
        return value.as_dict()
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


class _Serialisable:
    def as_dict(self) -> dict[str, object]:
        """Return the result as plain, JSON-serialisable Python values."""
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self)}  # type: ignore[arg-type]


def _check_confidence(confidence: float) -> float:
    if not 0 < confidence < 1:
        raise ValueError("confidence must be strictly between 0 and 1")
    return confidence


def _binary(values: ArrayLike, name: str) -> npt.NDArray[np.float64]:
    array = np.asarray(values, dtype=float)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional")
    if not np.all((array == 0) | (array == 1)):
        raise ValueError(f"{name} must hold only 0/1 or False/True")
    return array
