"""Krippendorff's alpha (nominal) from counts of value patterns, so the database can do the counting (no ORM)."""

from collections.abc import Mapping


def nominal_alpha(patterns: Mapping[tuple[int, ...], int]) -> float | None:
    """Return nominal alpha from ``{(n_value_1, ..., n_value_k): units}``, or None when it is undefined.

    Each key counts, for one unit, how many coders gave each value; the value is how many units share that pattern.
    Units with fewer than two values are not pairable and are skipped, as in Krippendorff (2011), so equal patterns
    give the same result as the full reliability matrix.
    """
    if not patterns:
        return None
    k = len(next(iter(patterns)))
    coincidences = [[0.0] * k for _ in range(k)]
    for pattern, units in patterns.items():
        m = sum(pattern)
        if m < 2:
            continue
        for c in range(k):
            for d in range(k):
                pairs = pattern[c] * (pattern[d] - (1 if c == d else 0))
                coincidences[c][d] += units * pairs / (m - 1)
    totals = [sum(row) for row in coincidences]
    n = sum(totals)
    if n <= 1:
        return None
    observed = sum(coincidences[c][d] for c in range(k) for d in range(k) if c != d)
    expected = sum(totals[c] * totals[d] for c in range(k) for d in range(k) if c != d)
    if expected == 0:
        return None
    return 1.0 - (n - 1) * observed / expected
