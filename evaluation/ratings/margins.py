"""Margin mapping: how many TrueSkill win updates a verdict's margin ``k`` counts as, ``f(|k|)``."""

import math
from collections.abc import Callable
from typing import Literal

MarginMapping = Literal["linear", "sqrt", "log", "fixed"]
MARGIN_MAPPINGS: tuple[MarginMapping, ...] = ("linear", "sqrt", "log", "fixed")
DEFAULT_MAX_MARGIN = 5
DEFAULT_MARGIN_MAPPING: MarginMapping = "sqrt"


def margin_repeats(margin: float, mapping: MarginMapping | Callable[[float], float] = DEFAULT_MARGIN_MAPPING) -> float:
    """Return how many win updates a decisive margin of size ``|margin|`` counts as (0 for a draw).

    ``linear``: f(k) = k; ``sqrt``: f(k) = sqrt(k); ``log``: f(k) = 1 + ln k; ``fixed``: f(k) = 1. A callable is
    used as f directly and must return a positive finite number. A non-integer count r is applied as floor(r)
    full updates followed by one update scaled by the fractional part (see ``docs/statistics.md``).
    """
    size = abs(float(margin))
    if size == 0:
        return 0.0
    if callable(mapping):
        repeats = float(mapping(size))
    elif mapping == "linear":
        repeats = size
    elif mapping == "sqrt":
        repeats = math.sqrt(size)
    elif mapping == "log":
        repeats = 1.0 + math.log(size) if size >= 1 else size
    elif mapping == "fixed":
        repeats = 1.0
    else:
        raise ValueError(f"unknown margin mapping {mapping!r}; choose one of {', '.join(MARGIN_MAPPINGS)}")
    if not (math.isfinite(repeats) and repeats > 0):
        raise ValueError(f"margin mapping gave {repeats!r} updates for margin {margin!r}; it must be positive")
    return repeats
