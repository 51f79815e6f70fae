"""Multiple comparisons: Benjamini-Hochberg false discovery rate control (Benjamini & Hochberg 1995)."""

from dataclasses import dataclass

import numpy as np

from evaluation.stats._common import DEFAULT_FDR, ArrayLike, _Serialisable


@dataclass(frozen=True)
class FdrResult(_Serialisable):
    """Benjamini-Hochberg adjusted p-values (input order) and which hypotheses are rejected at level ``q``."""

    adjusted: list[float]
    rejected: list[bool]
    q: float


def benjamini_hochberg(p_values: ArrayLike, *, q: float = DEFAULT_FDR) -> FdrResult:
    """Adjust p-values for the false discovery rate (Benjamini & Hochberg 1995), like R's ``p.adjust(p, "BH")``.

    With the p-values sorted ascending, ``adjusted_(i) = min over j >= i of (m / j) p_(j)``, capped at 1
    (monotone step-up); hypothesis ``i`` is rejected when its adjusted p-value is at most ``q``.
    """
    if not 0 < q < 1:
        raise ValueError("q must be strictly between 0 and 1")
    p = np.asarray(p_values, dtype=float).ravel()
    if not np.all((p >= 0) & (p <= 1)):
        raise ValueError("p-values must be numbers in [0, 1]")
    m = len(p)
    if m == 0:
        return FdrResult([], [], q)
    order = np.argsort(p, kind="stable")
    # (m / rank) * p in that order, as R computes it, so ties at the threshold round the same way.
    scaled = (m / np.arange(1, m + 1)) * p[order]
    stepped = np.minimum.accumulate(scaled[::-1])[::-1]
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(stepped, 1.0)
    return FdrResult(adjusted.tolist(), (adjusted <= q).tolist(), q)
