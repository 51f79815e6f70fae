"""Turn verdicts into scores: the combination of both orders and the experts' consensus.

Scores come in canonical orientation already (+: A wins); ``annotation.labelling.pairwise.canonical_score`` is the one
place
that maps a verdict on the order shown back to it.
"""

from typing import Literal

import numpy as np

from calibration.agreement.core import SCALE_MAX, ArrayLike, FloatArray
from calibration.agreement.tables import _table

# --- order combination ----------------------------------------------------------------------------------


def _order_scores(score_ab: float | None, score_ba: float | None) -> tuple[int, int] | None:
    scores = []
    for score in (score_ab, score_ba):
        if score is None or np.isnan(score):
            return None
        if score != int(score) or abs(score) > SCALE_MAX:
            raise ValueError(f"a score is a whole number from -{SCALE_MAX} to {SCALE_MAX}; got {score!r}")
        scores.append(int(score))
    return scores[0], scores[1]


def combine_facet(
    score_ab: float | None, score_ba: float | None, *, inconsistent: Literal["tie", "drop"] = "tie"
) -> int | None:
    """Combine the verdicts of both orders by FACET's rule; return None when the pair is dropped.

    Both scores are in canonical orientation. A pair is consistent when both orders name the same winner (A, B,
    or a tie); it keeps the mean score, halves rounded toward the tie. An inconsistent pair counts as a tie or
    is dropped, as ``inconsistent`` says. A missing verdict (None or NaN) in either order drops the pair.
    """
    if inconsistent not in ("tie", "drop"):
        raise ValueError(f"inconsistent must be 'tie' or 'drop'; got {inconsistent!r}")
    scores = _order_scores(score_ab, score_ba)
    if scores is None:
        return None
    ab, ba = scores
    if np.sign(ab) != np.sign(ba):
        return 0 if inconsistent == "tie" else None
    total = ab + ba
    return int(np.sign(total)) * (abs(total) // 2)


def combine_summed(score_ab: float | None, score_ba: float | None) -> int | None:
    """Combine the verdicts of both orders by adding their signed margins, clipped to -5..+5.

    Both scores are in canonical orientation; a missing verdict (None or NaN) in either order gives None.
    """
    scores = _order_scores(score_ab, score_ba)
    if scores is None:
        return None
    return max(-SCALE_MAX, min(SCALE_MAX, scores[0] + scores[1]))


# --- experts' consensus ---------------------------------------------------------------------------------


def majority_winner(table: ArrayLike) -> FloatArray:
    """Return the plurality winner (-1, 0 or +1) of each unit's signed scores; NaN for an unrated unit.

    When the top count is shared (e.g. one vote for A and one for B, or one for A and one tie) the experts did
    not settle on a winner and the result is a tie (0).
    """
    signs = np.sign(_table(table))
    outcomes = np.array([-1.0, 0.0, 1.0])
    votes = (signs[:, :, None] == outcomes).sum(axis=1)
    top = votes.max(axis=1)
    shared = (votes == top[:, None]).sum(axis=1) > 1
    winners = np.where(shared, 0.0, outcomes[votes.argmax(axis=1)])
    return np.where(top == 0, np.nan, winners)


def median_score(table: ArrayLike, *, round_toward_tie: bool = False) -> FloatArray:
    """Return the median of each unit's scores; NaN for an unrated unit.

    With an even number of ratings the median can fall halfway (e.g. 2.5); ``round_toward_tie`` rounds such
    halves toward 0 so the result stays on the integer scale.
    """
    array = _table(table)
    medians = np.full(array.shape[0], np.nan)
    rated = ~np.isnan(array).all(axis=1)
    medians[rated] = np.nanmedian(array[rated], axis=1)
    if round_toward_tie:
        medians = np.sign(medians) * np.floor(np.abs(medians))
    return medians
