"""Preference pairs (chosen and rejected, as DPO training reads them) from signed pairwise scores (pure).

A comparison's canonical scores are +k when response A wins by k, 0 for a tie, -k when B wins. Experts' labels of
one comparison give a pair when at least one label has a winner and no two labels name different winners: a
comparison whose labels are all ties is a *tie*, one where some experts chose A and others B is *inconsistent*;
both are left out and counted. A judge's two presentation orders give a pair when both were parsed, they do not
name different winners, and their combination by the run's rule (``calibration.report.combine_orders``) has a
winner; orders that name different winners are *inconsistent*, a combination of 0 (or dropped) is a *tie*, and a
pair with an order missing or unparsed is *unparsed*.
"""

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

PAIR = "pair"
TIE = "tie"
INCONSISTENT = "inconsistent"
UNPARSED = "unparsed"
OUTCOMES = (PAIR, TIE, INCONSISTENT, UNPARSED)


@dataclass(frozen=True)
class Outcome:
    """What a comparison gives: ``kind`` is one of ``OUTCOMES``; ``a_chosen`` says which side won a pair."""

    kind: str
    a_chosen: bool | None = None


def _sign(score: float) -> int:
    return (score > 0) - (score < 0)


def from_labels(scores: Iterable[int]) -> Outcome:
    """Return the outcome of the experts' canonical scores of one comparison."""
    winners = {_sign(score) for score in scores} - {0}
    if not winners:
        return Outcome(TIE)
    if len(winners) > 1:
        return Outcome(INCONSISTENT)
    return Outcome(PAIR, a_chosen=winners == {1})


def from_orders(ab: int | None, ba: int | None, combined: int | None) -> Outcome:
    """Return the outcome of a judge's canonical scores in both orders and their combination by the run's rule."""
    if ab is None or ba is None:
        return Outcome(UNPARSED)
    if _sign(ab) * _sign(ba) < 0:
        return Outcome(INCONSISTENT)
    if not combined:
        return Outcome(TIE)
    return Outcome(PAIR, a_chosen=combined > 0)


def outcome_counts(outcomes: Iterable[Outcome]) -> dict[str, int]:
    """Count outcomes by kind, every kind present (0 when none)."""
    counts = Counter(outcome.kind for outcome in outcomes)
    return {kind: counts.get(kind, 0) for kind in OUTCOMES}
