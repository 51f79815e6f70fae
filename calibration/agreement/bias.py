"""Measure a judge's position bias (verdicts in both orders) and length bias (preference for the longer response)."""

from collections.abc import Callable
from dataclasses import replace
from functools import partial

import numpy as np
from scipy import stats

from calibration.agreement.bootstrap import _check_bootstrap, _estimate, _ratio_statistic, _Resamples, _Statistic
from calibration.agreement.core import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    LENGTH_RATIO,
    ArrayLike,
    Estimate,
    FloatArray,
    PositionBias,
    UndefinedStatistic,
)
from calibration.agreement.tables import _check_signed, _same_length, _vector


def position_bias(
    scores_ab: ArrayLike,
    scores_ba: ArrayLike,
    *,
    seed: int = 0,
    n_boot: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> PositionBias:
    """Measure a judge's position bias from its verdicts in both orders, both in canonical orientation.

    ``scores_ab[i]`` is the verdict with A shown first, ``scores_ba[i]`` the verdict with B shown first mapped
    back to canonical orientation (see ``annotation.labelling.pairwise.canonical_score``); NaN marks an unparseable
    verdict.
    Report:

    - flip rate: share of comparisons with both verdicts whose winner (A, B or tie) changes with the order;
    - reversal rate: share whose winner swaps between A and B;
    - first-position win rate over all non-tie verdicts, with an exact two-sided binomial test against 0.5
      (verdicts of one comparison are not independent; the bootstrap interval accounts for that, the test not);
    - margin asymmetry: mean margin of the verdicts the first position wins minus that of those the second
      position wins (positive: the judge is more emphatic for whatever it reads first);
    - position offset: mean of (score_ab - score_ba) / 2 over comparisons with both verdicts, the shift in
      scale points toward the response shown first.
    """
    _check_bootstrap(n_boot, confidence)
    ab, ba = _vector(scores_ab, "scores_ab"), _vector(scores_ba, "scores_ba")
    _same_length(scores_ab=ab, scores_ba=ba)
    _check_signed(ab, "scores_ab")
    _check_signed(ba, "scores_ba")
    parsed_ab, parsed_ba = ~np.isnan(ab), ~np.isnan(ba)
    both = parsed_ab & parsed_ba
    ab0, ba0 = np.nan_to_num(ab), np.nan_to_num(ba)
    first_wins = (ab0 > 0).astype(float) + (ba0 < 0)
    second_wins = (ab0 < 0).astype(float) + (ba0 > 0)
    first_margins = np.where(ab0 > 0, ab0, 0) + np.where(ba0 < 0, -ba0, 0)
    second_margins = np.where(ab0 < 0, -ab0, 0) + np.where(ba0 > 0, ba0, 0)
    no_pair = "no comparison has a parseable verdict in both orders"
    if not (parsed_ab | parsed_ba).any():
        no_pair = "the judge has no parseable verdict"
    no_decisive = "no parseable verdict names a winner" if (parsed_ab | parsed_ba).any() else no_pair
    estimate = partial(_estimate, resamples=_Resamples(len(ab), seed=seed, n_boot=n_boot), confidence=confidence)
    flips = _ratio_statistic("flip_rate", both & (np.sign(ab0) != np.sign(ba0)), both, no_pair)
    reversals = _ratio_statistic("reversal_rate", both & (np.sign(ab0) * np.sign(ba0) < 0), both, no_pair)
    first_rate = _first_position_win_rate(first_wins, second_wins, no_decisive, estimate)
    offset = _ratio_statistic("position_offset", np.where(both, (ab0 - ba0) / 2, 0), both, no_pair)
    return PositionBias(
        n_comparisons=len(ab),
        n_parsed_ab=int(parsed_ab.sum()),
        n_parsed_ba=int(parsed_ba.sum()),
        flip_rate=estimate(flips),
        reversal_rate=estimate(reversals),
        first_position_win_rate=first_rate,
        margin_asymmetry=estimate(
            _margin_asymmetry_statistic(first_wins, second_wins, first_margins, second_margins, no_decisive)
        ),
        position_offset=estimate(offset),
    )


def _first_position_win_rate(
    first_wins: FloatArray, second_wins: FloatArray, no_decisive: str, estimate: Callable[[_Statistic], Estimate]
) -> Estimate:
    """Return the first position's share of the verdicts naming a winner, with an exact two-sided binomial test
    against 0.5."""
    decisive = first_wins + second_wins
    rate = estimate(_ratio_statistic("first_position_win_rate", first_wins, decisive, no_decisive))
    if rate.value is None:
        return rate
    test = stats.binomtest(int(first_wins.sum()), int(decisive.sum()), 0.5, alternative="two-sided")
    return replace(rate, p_value=float(test.pvalue))


def _margin_asymmetry_statistic(
    first_wins: FloatArray,
    second_wins: FloatArray,
    first_margins: FloatArray,
    second_margins: FloatArray,
    no_decisive: str,
) -> _Statistic:
    def point() -> float:
        if not (first_wins.sum() or second_wins.sum()):
            raise UndefinedStatistic(no_decisive)
        for wins, position in ((first_wins, "first"), (second_wins, "second")):
            if not wins.sum():
                raise UndefinedStatistic(f"the {position} position never wins: there is no margin to compare")
        return float(first_margins.sum() / first_wins.sum() - second_margins.sum() / second_wins.sum())

    def batch(resamples: _Resamples) -> FloatArray:
        weights = resamples.weights
        first_count, second_count = weights @ first_wins, weights @ second_wins
        asymmetry = np.full(first_count.shape, np.nan)
        defined = (first_count > 0) & (second_count > 0)
        asymmetry[defined] = (weights[defined] @ first_margins) / first_count[defined] - (
            weights[defined] @ second_margins
        ) / second_count[defined]
        return asymmetry

    return _Statistic("margin_asymmetry", (first_wins + second_wins) > 0, point, batch)


def length_bias(
    scores: ArrayLike,
    length_a: ArrayLike,
    length_b: ArrayLike,
    *,
    min_ratio: float = LENGTH_RATIO,
    seed: int = 0,
    n_boot: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Estimate:
    """Return the share of non-tie verdicts that prefer the longer response, among clearly unequal pairs.

    A pair is clearly unequal when the longer response is more than ``min_ratio`` times the shorter (default:
    more than 30% longer). Lengths are given by the caller: words for English, characters for Chinese. The
    p-value is an exact two-sided binomial test against 0.5. NaN scores (unparseable verdicts) are left out.
    """
    _check_bootstrap(n_boot, confidence)
    verdicts = _vector(scores, "scores")
    a, b = _vector(length_a, "length_a"), _vector(length_b, "length_b")
    _same_length(scores=verdicts, length_a=a, length_b=b)
    if np.isnan(a).any() or np.isnan(b).any() or np.any(a < 0) or np.any(b < 0):
        raise ValueError("lengths must be known and non-negative")
    if min_ratio < 1:
        raise ValueError(f"min_ratio must be at least 1; got {min_ratio}")
    unequal = np.maximum(a, b) > min_ratio * np.minimum(a, b)
    decided = ~np.isnan(verdicts) & unequal & (np.nan_to_num(verdicts) != 0)
    winner = np.sign(np.nan_to_num(verdicts))
    longer_wins = decided & (((winner > 0) & (a > b)) | ((winner < 0) & (b > a)))
    if np.isnan(verdicts).all():
        reason = "the judge has no parseable verdict"
    else:
        reason = f"no non-tie verdict on a pair whose lengths differ by more than {round((min_ratio - 1) * 100)}%"
    statistic = _ratio_statistic("length_bias_longer_preferred", longer_wins, decided, reason)
    estimate = _estimate(statistic, _Resamples(len(verdicts), seed=seed, n_boot=n_boot), confidence)
    if estimate.value is None:
        return estimate
    test = stats.binomtest(int(longer_wins.sum()), int(decided.sum()), 0.5, alternative="two-sided")
    return replace(estimate, p_value=float(test.pvalue))
