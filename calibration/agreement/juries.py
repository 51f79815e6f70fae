"""Combine a jury's verdict on one comparison from its members' verdicts in both orders (pure, no ORM).

One definition serves calibration and evaluation alike: each member's two orders are combined first, by the run's
rule, as FACET treats a single judge's verdict on a pair; then the members' verdicts are combined by the jury's
aggregation (Verga et al. 2024). A member without a verdict on the pair (an order unparsed, or an inconsistent
pair the rule drops) does not vote.

The product stores verdicts per order and combines the orders when it reads them, so the jury's verdict is stored
as the pair of per-order scores that the run's rule combines back to it (``jury_order_scores``).
"""

from collections.abc import Sequence

import numpy as np

from calibration.agreement.verdicts import combine_facet, combine_summed

MAJORITY = "majority"
MEAN = "mean"
AGGREGATIONS = (MAJORITY, MEAN)
SUMMED = "summed"
FACET_DROP = "facet_drop"
FACET_TIE = "facet_tie"
RULES = (FACET_TIE, FACET_DROP, SUMMED)

MemberOrders = tuple[float | None, float | None]


def combine_orders(rule: str, ab: float | None, ba: float | None) -> int | None:
    """Combine a verdict's two orders by a run's rule (``CombineRule`` values); None when the pair is dropped."""
    if rule not in RULES:
        raise ValueError(f"unknown order combination rule {rule!r}")
    if rule == SUMMED:
        return combine_summed(ab, ba)
    return combine_facet(ab, ba, inconsistent="drop" if rule == FACET_DROP else "tie")


def round_half_away(value: float) -> int:
    """Round to the nearest whole number, halves away from zero (2.5 -> 3, -0.5 -> -1)."""
    return int(np.sign(value) * np.floor(abs(value) + 0.5))


def combine_verdicts(scores: Sequence[int | None], method: str) -> int | None:
    """Combine the members' canonical scores (None: no verdict) into the jury's; None when no member gave one.

    ``majority``: the winner named by most members (a shared top count is a tie), with the median margin of the
    members who named it, rounded toward the tie. ``mean`` (average pooling): the mean signed score keeps its sign
    (a 2-1 split of +1/-1 votes is a win, not a tie); its size is rounded half away from zero, and at least 1.
    """
    given = [int(s) for s in scores if s is not None]
    if not given:
        return None
    if method == MEAN:
        mean = float(np.mean(given))
        if mean == 0:
            return 0
        return int(np.sign(mean)) * max(1, round_half_away(abs(mean)))
    if method != MAJORITY:
        raise ValueError(f"unknown jury aggregation {method!r}")
    signs = np.sign(given)
    outcomes, counts = np.unique(signs, return_counts=True)
    if (counts == counts.max()).sum() > 1:
        return 0
    winner = int(outcomes[counts.argmax()])
    if winner == 0:
        return 0
    margins = [abs(s) for s in given if np.sign(s) == winner]
    return winner * max(1, int(np.floor(np.median(margins))))


def jury_verdict(member_orders: Sequence[MemberOrders], *, rule: str, method: str) -> int | None:
    """Return the jury's verdict on a pair: each member's (AB, BA) scores combined by ``rule``, then the members."""
    return combine_verdicts([combine_orders(rule, ab, ba) for ab, ba in member_orders], method)


def jury_order_scores(verdict: int | None, rule: str) -> tuple[int | None, int | None]:
    """Return the (AB, BA) scores to store for a jury's verdict: those ``rule`` combines back to ``verdict``.

    FACET's rules keep a consistent pair's mean, so both orders hold the verdict. Summed margins add the orders,
    so the verdict is split into halves, the larger (odd verdicts) in AB. None stays None in both orders.
    """
    if verdict is None:
        return None, None
    if rule == SUMMED:
        larger = int(np.sign(verdict)) * ((abs(verdict) + 1) // 2)
        return larger, verdict - larger
    return verdict, verdict
