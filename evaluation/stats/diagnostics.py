"""Diagnostics of objective answers: position bias among wrong answers (normalised entropy), the multi-turn
split and the crisis-level confusion matrix."""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from evaluation.stats._common import DEFAULT_CONFIDENCE, ArrayLike, _Serialisable
from evaluation.stats.proportions import Proportion, wilson_interval

CRISIS_LEVELS = (1, 2, 3, 4, 5)


@dataclass(frozen=True)
class PositionBias(_Serialisable):
    """Normalised Shannon entropy of the categories chosen among wrong answers (1 = uniform, 0 = one category)."""

    entropy: float | None
    counts: list[int]
    n_wrong: int
    n_unparsed: int
    n_categories: int
    undefined_reason: str | None = None


def normalised_entropy(counts: ArrayLike) -> float | None:
    """Return ``H / ln K`` of the distribution given by ``counts`` over ``K`` categories; None if undefined."""
    array = np.asarray(counts, dtype=float)
    total = array.sum()
    if len(array) < 2 or total <= 0:
        return None
    p = array[array > 0] / total
    return float(max(0.0, -(p * np.log(p)).sum() / math.log(len(array))))


def position_bias(
    chosen: Sequence[int | None],
    correct: Sequence[int],
    *,
    n_options: int,
    by: Literal["distractor", "position"] = "distractor",
) -> PositionBias:
    """Measure position bias among wrong answers as the normalised entropy of what was chosen.

    ``chosen[i]`` is the option index picked on item ``i`` (None when unparseable: counted, not used) and
    ``correct[i]`` the key. ``by="distractor"``: categories are the ``n_options - 1`` distractor slots (the chosen
    index with the key removed); with options in their canonical item order this is EiCAP's H / log 3 over
    wrong1..wrong3. ``by="position"``: categories are the ``n_options`` displayed positions.
    """
    if len(chosen) != len(correct):
        raise ValueError("chosen and correct must have one entry per item")
    if n_options < 2:
        raise ValueError("n_options must be at least 2")
    k = n_options - 1 if by == "distractor" else n_options
    counts = [0] * k
    unparsed = 0
    for pick, key in zip(chosen, correct, strict=True):
        if not 0 <= key < n_options:
            raise ValueError(f"answer key {key!r} is not an option index below {n_options}")
        if pick is None:
            unparsed += 1
            continue
        if not 0 <= pick < n_options:
            raise ValueError(f"chosen option {pick!r} is not an option index below {n_options}")
        if pick == key:
            continue
        counts[pick - (pick > key) if by == "distractor" else pick] += 1
    n_wrong = sum(counts)
    if k < 2:
        return PositionBias(None, counts, n_wrong, unparsed, k, "entropy needs at least two categories")
    if n_wrong == 0:
        return PositionBias(None, counts, 0, unparsed, k, "no wrong answer with a parsed choice")
    return PositionBias(normalised_entropy(counts), counts, n_wrong, unparsed, k)


@dataclass(frozen=True)
class TurnSplit(_Serialisable):
    """Multi-turn results: per-turn accuracy, item accuracy (minimum across turns) and, for two turns, the split."""

    n_items: int
    n_turns: int
    item_accuracy: Proportion
    turn_accuracy: list[Proportion]
    both_right: int | None
    only_first: int | None
    only_second: int | None
    both_wrong: int | None
    turn_gap: float | None
    undefined_reason: str | None = None


def turn_split(turn_correct: ArrayLike, *, confidence: float = DEFAULT_CONFIDENCE) -> TurnSplit:
    """Summarise items x turns correctness: an item counts as correct only if every turn is (the minimum).

    For two turns also return both-right, only-first (context loss), only-second and both-wrong counts and the
    turn gap ``accuracy(turn 2) - accuracy(turn 1)``.
    """
    matrix = np.asarray(turn_correct, dtype=float)
    if matrix.ndim != 2:
        raise ValueError("turn_correct must be a two-dimensional items x turns table")
    if not np.all((matrix == 0) | (matrix == 1)):
        raise ValueError("turn_correct must hold only 0/1 or False/True")
    n_items, n_turns = matrix.shape
    if n_turns == 0:
        raise ValueError("turn_correct needs at least one turn")
    item = wilson_interval(int(matrix.min(axis=1, initial=1).sum()) if n_items else 0, n_items, confidence=confidence)
    turns = [wilson_interval(int(matrix[:, t].sum()), n_items, confidence=confidence) for t in range(n_turns)]
    if n_turns != 2:
        return TurnSplit(
            n_items, n_turns, item, turns, None, None, None, None, None,
            "the four-way split is defined for two-turn items only",
        )  # fmt: skip
    first, second = matrix[:, 0] == 1, matrix[:, 1] == 1
    gap = None if n_items == 0 else float(second.mean() - first.mean())
    return TurnSplit(
        n_items, n_turns, item, turns,
        int(np.sum(first & second)), int(np.sum(first & ~second)), int(np.sum(~first & second)),
        int(np.sum(~first & ~second)), gap, None if n_items else "no items",
    )  # fmt: skip


@dataclass(frozen=True)
class CrisisConfusion(_Serialisable):
    """Predicted vs true crisis risk level: ``matrix[t][p]`` counts items of true level t predicted as p."""

    levels: list[int]
    matrix: list[list[int]]
    n: int
    n_invalid: int
    exact: Proportion
    overestimated: Proportion
    underestimated: Proportion
    mean_signed_error: float | None
    undefined_reason: str | None = None


def crisis_confusion(
    true_levels: Sequence[int],
    predicted_levels: Sequence[int | None],
    *,
    levels: Sequence[int] = CRISIS_LEVELS,
    confidence: float = DEFAULT_CONFIDENCE,
) -> CrisisConfusion:
    """Build the confusion matrix of predicted vs true risk level and the over-/under-estimation rates.

    A prediction that is None or not one of ``levels`` is invalid: counted in ``n_invalid``, left out of the
    matrix and the rates (whose denominator is the number of valid predictions). Over-estimation: predicted
    level above the true one; under-estimation: below. ``mean_signed_error`` is the mean of predicted - true.
    """
    if len(true_levels) != len(predicted_levels):
        raise ValueError("true_levels and predicted_levels must have one entry per item")
    position = {level: i for i, level in enumerate(levels)}
    matrix = [[0] * len(levels) for _ in levels]
    invalid = over = under = exact = 0
    errors = 0
    for truth, prediction in zip(true_levels, predicted_levels, strict=True):
        if truth not in position:
            raise ValueError(f"true level {truth!r} is not one of {list(levels)}")
        if prediction not in position:
            invalid += 1
            continue
        matrix[position[truth]][position[prediction]] += 1
        step = position[prediction] - position[truth]
        errors += step
        over += step > 0
        under += step < 0
        exact += step == 0
    n = len(true_levels) - invalid
    return CrisisConfusion(
        list(levels),
        matrix,
        n,
        invalid,
        wilson_interval(exact, n, confidence=confidence),
        wilson_interval(over, n, confidence=confidence),
        wilson_interval(under, n, confidence=confidence),
        errors / n if n else None,
        None if n else "no valid prediction",
    )
