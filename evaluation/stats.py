"""Statistics for evaluation runs: plain arrays in, JSON-ready results out, no ORM, no NaN.

Objective results (accuracy with Wilson intervals, paired bootstrap differences with Benjamini-Hochberg FDR,
discriminability, position bias among wrong answers, multi-turn splits, the crisis-level confusion matrix) and
the analyses researchers ask for (win-rate matrix with exact binomial tests, z-scores and the ΔZ typology,
per-dimension cross-lingual gaps). A quantity that cannot be computed is None and an ``undefined_reason`` says
why. Every random step takes a seed and uses ``numpy.random.default_rng(seed)``. docs/statistics.md gives the
definitions, defaults and references.
"""

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy import stats

ArrayLike = npt.ArrayLike
DEFAULT_CONFIDENCE = 0.95
DEFAULT_RESAMPLES = 10_000
DEFAULT_FDR = 0.05
CRISIS_LEVELS = (1, 2, 3, 4, 5)
# Resampled index blocks are drawn this many cells at a time, to bound memory for large item sets.
_BLOCK_CELLS = 2_000_000

Typology = Literal["cognition-dominant", "interaction-dominant", "context-dependent", "balanced"]


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


# --- proportions ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Proportion(_Serialisable):
    """A proportion ``successes / n`` with its Wilson score interval; None with a reason when ``n`` is 0."""

    successes: int
    n: int
    value: float | None
    low: float | None
    high: float | None
    confidence: float
    undefined_reason: str | None = None


def wilson_interval(successes: int, n: int, *, confidence: float = DEFAULT_CONFIDENCE) -> Proportion:
    """Return the proportion with its Wilson score interval (Wilson 1927; no continuity correction).

    ``(p + z²/2n ± z sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)`` with ``z`` the ``(1 + confidence) / 2`` normal
    quantile; the same as ``scipy.stats.binomtest(k, n).proportion_ci(method="wilson")``.
    """
    _check_confidence(confidence)
    if n < 0 or not 0 <= successes <= max(n, 0):
        raise ValueError(f"need 0 <= successes <= n, got {successes} of {n}")
    if n == 0:
        return Proportion(successes, n, None, None, None, confidence, "no observations")
    z = float(stats.norm.ppf((1 + confidence) / 2))
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z / denominator * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return Proportion(successes, n, p, max(0.0, centre - half), min(1.0, centre + half), confidence)


@dataclass(frozen=True)
class MacroAverage(_Serialisable):
    """The unweighted mean of group accuracies with a stratified percentile bootstrap interval."""

    value: float | None
    low: float | None
    high: float | None
    n_groups: int
    confidence: float
    n_resamples: int
    seed: int
    undefined_reason: str | None = None


@dataclass(frozen=True)
class GroupAccuracy(_Serialisable):
    """Accuracy per group with Wilson intervals, the micro average (pooled items) and the macro average."""

    groups: dict[Hashable, Proportion]
    micro: Proportion
    macro: MacroAverage


def accuracy_by_group(
    groups: Sequence[Hashable],
    correct: ArrayLike,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> GroupAccuracy:
    """Return accuracy per group, micro average (all items pooled) and macro average (mean of group accuracies).

    ``correct[i]`` is 1 when item ``i`` (of group ``groups[i]``) was answered correctly; an unparseable answer
    must be passed as 0. The macro interval resamples items with replacement within each group: the resampled
    successes of group g are then exactly Binomial(n_g, p_g), which is what is drawn.
    """
    _check_confidence(confidence)
    values = _binary(correct, "correct")
    if len(groups) != len(values):
        raise ValueError(f"groups has {len(groups)} entries but correct has {len(values)}")
    keys = list(dict.fromkeys(groups))
    index = {key: i for i, key in enumerate(keys)}
    codes = np.fromiter((index[key] for key in groups), dtype=np.int64, count=len(groups))
    totals = np.bincount(codes, minlength=len(keys))
    successes = np.bincount(codes, weights=values, minlength=len(keys)).round().astype(np.int64)
    per_group = {
        key: wilson_interval(int(successes[i]), int(totals[i]), confidence=confidence) for i, key in enumerate(keys)
    }
    micro = wilson_interval(int(successes.sum()), int(totals.sum()), confidence=confidence)
    if not keys:
        macro = MacroAverage(None, None, None, 0, confidence, n_resamples, seed, "no groups")
    else:
        rates = successes / totals
        rng = np.random.default_rng(seed)
        resampled = rng.binomial(totals, rates, size=(n_resamples, len(keys))) / totals
        low, high = np.quantile(resampled.mean(axis=1), [(1 - confidence) / 2, (1 + confidence) / 2])
        macro = MacroAverage(float(rates.mean()), float(low), float(high), len(keys), confidence, n_resamples, seed)
    return GroupAccuracy(per_group, micro, macro)


def discriminability(accuracy: float, chance: float) -> float:
    """Return ``(accuracy - chance) / (1 - chance)``: 0 at chance level, 1 when perfect, negative below chance."""
    if not 0 <= chance < 1:
        raise ValueError("chance must be in [0, 1)")
    return (accuracy - chance) / (1 - chance)


# --- paired bootstrap and FDR -------------------------------------------------------------------------------


def bootstrap_sums(values: ArrayLike, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> np.ndarray:
    """Return the column sums of ``values`` (items x columns) in each bootstrap resample of the items.

    Resample ``b`` draws ``n`` item indices with replacement from ``numpy.random.default_rng(seed)``, in blocks
    of whole resamples; the sums are ``counts @ values`` with ``counts[b, i]`` the times item ``i`` was drawn.
    Every column sees the same resamples, which is what makes a difference of columns a paired bootstrap.
    """
    matrix = np.asarray(values, dtype=float)
    if matrix.ndim == 1:
        matrix = matrix[:, None]
    n = matrix.shape[0]
    if n == 0:
        raise ValueError("cannot resample zero items")
    rng = np.random.default_rng(seed)
    rows_per_block = max(1, _BLOCK_CELLS // n)
    sums = np.empty((n_resamples, matrix.shape[1]))
    for start in range(0, n_resamples, rows_per_block):
        rows = min(rows_per_block, n_resamples - start)
        draws = rng.integers(0, n, size=(rows, n))
        flat = (draws + (np.arange(rows) * n)[:, None]).ravel()
        counts = np.bincount(flat, minlength=rows * n).reshape(rows, n)
        sums[start : start + rows] = counts @ matrix
    return sums


@dataclass(frozen=True)
class PairedDifference(_Serialisable):
    """Mean difference A - B over the same items with percentile interval and two-sided bootstrap p-value."""

    model_a: str
    model_b: str
    n_items: int
    n_resamples: int
    confidence: float
    seed: int
    mean_a: float | None = None
    mean_b: float | None = None
    difference: float | None = None
    low: float | None = None
    high: float | None = None
    p_value: float | None = None
    p_adjusted: float | None = None
    significant: bool | None = None
    undefined_reason: str | None = None


TOO_FEW_ITEMS = "the paired bootstrap needs at least two items"


def _difference_from_sums(
    observed: float, resampled: np.ndarray, n: int, confidence: float
) -> tuple[float, float, float, float]:
    # Shifted-null p-value (Efron & Tibshirani 1993, §16.4): how often a resampled difference lies at least as
    # far from the observed one as the observed one lies from zero; +1 in numerator and denominator
    # (Davison & Hinkley 1997, eq. 4.11) so that p is never 0.
    tolerance = 1e-9 * max(1.0, abs(observed))
    extreme = np.count_nonzero(np.abs(resampled - observed) >= abs(observed) - tolerance)
    p_value = (1 + extreme) / (1 + len(resampled))
    low, high = np.quantile(resampled / n, [(1 - confidence) / 2, (1 + confidence) / 2])
    return observed / n, float(low), float(high), float(min(1.0, p_value))


def paired_bootstrap(
    scores_a: ArrayLike,
    scores_b: ArrayLike,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
    model_a: str = "A",
    model_b: str = "B",
) -> PairedDifference:
    """Compare two models on the same items by the paired bootstrap of the mean difference A - B.

    ``scores_a[i]`` and ``scores_b[i]`` are the two models' scores on item ``i`` (1/0 for accuracy). The
    interval is the percentile interval of the resampled differences; the p-value is two-sided (see
    ``_difference_from_sums``). Items are resampled as in ``bootstrap_sums``; with the same seed and items,
    ``paired_bootstrap_all`` gives identical numbers for each pair.
    """
    _check_confidence(confidence)
    a = np.asarray(scores_a, dtype=float)
    b = np.asarray(scores_b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError("scores_a and scores_b must be one-dimensional and of equal length (the same items)")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("scores must be finite numbers")
    n = len(a)
    if n < 2:
        return PairedDifference(model_a, model_b, n, n_resamples, confidence, seed, undefined_reason=TOO_FEW_ITEMS)
    resampled = bootstrap_sums(np.column_stack([a, b]), n_resamples=n_resamples, seed=seed)
    difference, low, high, p_value = _difference_from_sums(
        float(a.sum() - b.sum()), resampled[:, 0] - resampled[:, 1], n, confidence
    )
    return PairedDifference(
        model_a, model_b, n, n_resamples, confidence, seed, float(a.mean()), float(b.mean()), difference, low, high,
        p_value,
    )  # fmt: skip


def paired_bootstrap_all(
    scores: Mapping[str, ArrayLike],
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
    q: float = DEFAULT_FDR,
) -> list[PairedDifference]:
    """Compare every pair of models on the same items, with Benjamini-Hochberg FDR over all the pairs.

    ``scores`` maps each model to its scores on the same items in the same order. All pairs share one set of
    resamples, so the whole table costs one resampling. Pairs follow the mapping's order (A before B).
    """
    _check_confidence(confidence)
    names = list(scores)
    if len(names) < 2:
        return []
    matrix = np.column_stack([np.asarray(scores[name], dtype=float) for name in names])
    if matrix.ndim != 2 or not np.all(np.isfinite(matrix)):
        raise ValueError("every model needs finite scores on the same items")
    n = matrix.shape[0]
    pairs = [(i, j) for i in range(len(names)) for j in range(i + 1, len(names))]
    if n < 2:
        return [
            PairedDifference(names[i], names[j], n, n_resamples, confidence, seed, undefined_reason=TOO_FEW_ITEMS)
            for i, j in pairs
        ]
    resampled = bootstrap_sums(matrix, n_resamples=n_resamples, seed=seed)
    totals = matrix.sum(axis=0)
    means = matrix.mean(axis=0)
    results = []
    for i, j in pairs:
        difference, low, high, p_value = _difference_from_sums(
            float(totals[i] - totals[j]), resampled[:, i] - resampled[:, j], n, confidence
        )
        results.append((i, j, difference, low, high, p_value))
    fdr = benjamini_hochberg([row[5] for row in results], q=q)
    return [
        PairedDifference(
            names[i],
            names[j],
            n,
            n_resamples,
            confidence,
            seed,
            mean_a=float(means[i]),
            mean_b=float(means[j]),
            difference=difference,
            low=low,
            high=high,
            p_value=p_value,
            p_adjusted=adjusted,
            significant=rejected,
        )
        for (i, j, difference, low, high, p_value), adjusted, rejected in zip(
            results, fdr.adjusted, fdr.rejected, strict=True
        )
    ]


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


# --- wrong answers, turns, crisis levels ----------------------------------------------------------------------


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


# --- win rates --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WinRateCell(_Serialisable):
    """Row model vs column model: wins, losses, draws, win rate without draws, exact binomial test, BH-FDR."""

    wins: int
    losses: int
    draws: int
    win_rate: float | None
    p_value: float | None
    p_adjusted: float | None
    significant: bool | None
    undefined_reason: str | None = None


@dataclass(frozen=True)
class WinRateMatrix(_Serialisable):
    """Win rates of each row model against each column model; the diagonal is None."""

    models: list[str]
    cells: list[list[WinRateCell | None]]
    q: float


def win_rate_matrix(
    verdicts: Iterable[tuple[str, str, float]], *, models: Iterable[str] = (), q: float = DEFAULT_FDR
) -> WinRateMatrix:
    """Tabulate win rates excluding draws, with exact two-sided binomial tests and BH-FDR over all pairs.

    The win rate of row i over column j is ``wins / (wins + losses)``; its p-value is
    ``scipy.stats.binomtest(wins, wins + losses, 0.5)`` (two-sided, exact), the same for (i, j) and (j, i).
    The FDR family is every unordered pair with at least one decisive verdict.
    """
    names = set(models)
    tallies: dict[tuple[str, str], list[int]] = {}
    for index, (model_a, model_b, margin) in enumerate(verdicts):
        if model_a == model_b:
            raise ValueError(f"verdict {index}: a model cannot be compared with itself ({model_a!r})")
        names.update((model_a, model_b))
        first, second = sorted((model_a, model_b))
        sign = float(np.sign(margin)) if model_a == first else -float(np.sign(margin))
        tally = tallies.setdefault((first, second), [0, 0, 0])
        tally[0 if sign > 0 else 1 if sign < 0 else 2] += 1
    ordered = sorted(names)
    tested = [pair for pair, (wins, losses, _) in sorted(tallies.items()) if wins + losses > 0]
    p_values = {pair: stats.binomtest(tallies[pair][0], sum(tallies[pair][:2]), 0.5).pvalue for pair in tested}
    fdr = benjamini_hochberg([p_values[pair] for pair in tested], q=q)
    adjusted = dict(zip(tested, zip(fdr.adjusted, fdr.rejected, strict=True), strict=True))
    cells: list[list[WinRateCell | None]] = []
    for row in ordered:
        line: list[WinRateCell | None] = []
        for column in ordered:
            if row == column:
                line.append(None)
                continue
            pair = (row, column) if row < column else (column, row)
            wins, losses, draws = tallies.get(pair, [0, 0, 0])
            if row > column:
                wins, losses = losses, wins
            if wins + losses == 0:
                reason = "no decisive verdict" if draws else "no verdict"
                line.append(WinRateCell(wins, losses, draws, None, None, None, None, reason))
                continue
            p_adjusted, significant = adjusted[pair]
            line.append(
                WinRateCell(wins, losses, draws, wins / (wins + losses), float(p_values[pair]), p_adjusted, significant)
            )
        cells.append(line)
    return WinRateMatrix(ordered, cells, q)


# --- standing across models ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ZScores(_Serialisable):
    """Standard scores ``(x - mean) / sd`` across models; None with a reason when the spread is zero."""

    values: dict[str, float | None]
    mean: float | None
    sd: float | None
    ddof: int
    undefined_reason: str | None = None


def z_scores(values: Mapping[str, float], *, ddof: int = 0) -> ZScores:
    """Standardise one score per model across models (``ddof=0``: population sd, as ``scipy.stats.zscore``)."""
    names = list(values)
    array = np.asarray([values[name] for name in names], dtype=float)
    if not np.all(np.isfinite(array)):
        raise ValueError("scores must be finite numbers")
    if len(array) <= ddof or len(array) < 2:
        return ZScores(dict.fromkeys(names), None, None, ddof, "needs at least two models")
    mean = float(array.mean())
    sd = float(array.std(ddof=ddof))
    if sd <= 1e-12 * max(1.0, abs(mean)):
        return ZScores(dict.fromkeys(names), mean, sd, ddof, "every model has the same score")
    return ZScores(dict(zip(names, ((array - mean) / sd).tolist(), strict=True)), mean, sd, ddof)


@dataclass(frozen=True)
class ModelGap(_Serialisable):
    """One model's z-scores and ΔZ per language and its typology."""

    model: str
    z_objective: dict[str, float | None]
    z_subjective: dict[str, float | None]
    delta_z: dict[str, float | None]
    typology: Typology | None
    undefined_reason: str | None = None


@dataclass(frozen=True)
class DeltaZResult(_Serialisable):
    """ΔZ = Z(subjective) - Z(objective) per model and language, with the typology and its settings."""

    models: list[ModelGap]
    languages: list[str]
    dead_band: float
    ddof: int
    notes: dict[str, str]


def typology(delta_by_language: Sequence[float], *, dead_band: float = 0.0) -> Typology:
    """Classify a model from its ΔZ in each language (two or more languages).

    Each ΔZ is negative if below ``-dead_band``, positive if above ``+dead_band``, neutral otherwise.
    Negative everywhere: cognition-dominant; positive everywhere: interaction-dominant; neutral everywhere:
    balanced (only possible with a dead band, or ΔZ exactly 0); any other mix: context-dependent.
    """
    if len(delta_by_language) < 2:
        raise ValueError("the typology compares at least two languages")
    if dead_band < 0:
        raise ValueError("dead_band cannot be negative")
    signs = {(-1 if delta < -dead_band else 1 if delta > dead_band else 0) for delta in delta_by_language}
    if signs == {-1}:
        return "cognition-dominant"
    if signs == {1}:
        return "interaction-dominant"
    if signs == {0}:
        return "balanced"
    return "context-dependent"


def delta_z(
    objective: Mapping[str, Mapping[str, float]],
    subjective: Mapping[str, Mapping[str, float]],
    *,
    dead_band: float = 0.0,
    ddof: int = 0,
) -> DeltaZResult:
    """Compare objective and subjective standing: ``ΔZ = Z(subjective) - Z(objective)`` per language.

    ``objective[language][model]`` is an accuracy, ``subjective[language][model]`` a rating. In each language
    both z-scores are taken across the same models: those with both scores there. The typology needs a ΔZ in
    at least two languages.
    """
    languages = [language for language in objective if language in subjective]
    notes: dict[str, str] = {}
    per_language: dict[str, tuple[ZScores, ZScores]] = {}
    for language in languages:
        shared = [model for model in objective[language] if model in subjective[language]]
        z_obj = z_scores({model: objective[language][model] for model in shared}, ddof=ddof)
        z_subj = z_scores({model: subjective[language][model] for model in shared}, ddof=ddof)
        per_language[language] = (z_obj, z_subj)
        for label, result in (("objective", z_obj), ("subjective", z_subj)):
            if result.undefined_reason:
                notes[f"{language} {label}"] = result.undefined_reason
    models = sorted({model for language in languages for model in per_language[language][0].values})
    gaps = []
    for model in models:
        z_obj = {lang: per_language[lang][0].values.get(model) for lang in languages}
        z_subj = {lang: per_language[lang][1].values.get(model) for lang in languages}
        deltas = {
            lang: (z_subj[lang] - z_obj[lang]) if z_subj[lang] is not None and z_obj[lang] is not None else None
            for lang in languages
        }
        defined = [delta for delta in deltas.values() if delta is not None]
        if len(defined) == len(languages) >= 2:
            gaps.append(ModelGap(model, z_obj, z_subj, deltas, typology(defined, dead_band=dead_band)))
        else:
            missing = [lang for lang, delta in deltas.items() if delta is None]
            reason = f"no ΔZ in {', '.join(missing)}" if missing else "the typology needs ΔZ in at least two languages"
            gaps.append(ModelGap(model, z_obj, z_subj, deltas, None, reason))
    return DeltaZResult(gaps, languages, dead_band, ddof, notes)


@dataclass(frozen=True)
class Correlation(_Serialisable):
    """A correlation coefficient with its p-value and sample size; None with a reason when undefined."""

    r: float | None
    p_value: float | None
    n: int
    method: str
    undefined_reason: str | None = None


def correlation(x: Sequence[float], y: Sequence[float], *, method: Literal["pearson", "spearman"]) -> Correlation:
    """Return Pearson's r or Spearman's rho with SciPy's p-value; None when n < 3 or a variable is constant."""
    a = np.asarray(x, dtype=float)
    b = np.asarray(y, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError("x and y must be one-dimensional and of equal length")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("x and y must be finite numbers")
    n = len(a)
    if n < 3:
        return Correlation(None, None, n, method, "needs at least three paired values")
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return Correlation(None, None, n, method, "a variable is constant")
    result = stats.pearsonr(a, b) if method == "pearson" else stats.spearmanr(a, b)
    return Correlation(float(result.statistic), float(result.pvalue), n, method)


@dataclass(frozen=True)
class DimensionGap(_Serialisable):
    """One dimension: each model's cross-lingual gap and its correlation with the overall language bias."""

    dimension: str
    gaps: dict[str, float]
    mean_gap: float | None
    correlation: Correlation


@dataclass(frozen=True)
class CrossLingualGaps(_Serialisable):
    """Per-dimension gaps ``score(language_a) - score(language_b)`` and the overall bias per model."""

    language_a: str
    language_b: str
    overall_bias: dict[str, float]
    dimensions: list[DimensionGap]
    leave_dimension_out: bool


def cross_lingual_gaps(
    scores: Mapping[str, Mapping[str, Mapping[str, float]]],
    *,
    language_a: str,
    language_b: str,
    overall_bias: Mapping[str, float] | None = None,
    leave_dimension_out: bool = False,
) -> CrossLingualGaps:
    """Relate each dimension's cross-lingual gap to a model's overall language bias (Pearson r across models).

    ``scores[dimension][language][model]``; the gap of a model on a dimension is its score in ``language_a``
    minus its score in ``language_b``. The overall bias defaults to the model's mean gap over the dimensions it
    has in both languages; ``leave_dimension_out`` recomputes it without the dimension being correlated, which
    removes the part-whole inflation of r. Scores must be comparable across languages (accuracies, or ratings
    on a common anchored scale).
    """
    gaps: dict[str, dict[str, float]] = {}
    for dimension, by_language in scores.items():
        a, b = by_language.get(language_a, {}), by_language.get(language_b, {})
        gaps[dimension] = {model: float(a[model]) - float(b[model]) for model in a if model in b}

    def mean_bias(skip: str | None) -> dict[str, float]:
        collected: dict[str, list[float]] = {}
        for dimension, by_model in gaps.items():
            if dimension == skip:
                continue
            for model, gap in by_model.items():
                collected.setdefault(model, []).append(gap)
        return {model: float(np.mean(values)) for model, values in collected.items()}

    bias = dict(overall_bias) if overall_bias is not None else mean_bias(None)
    dimensions = []
    for dimension, by_model in gaps.items():
        reference = bias if overall_bias is not None or not leave_dimension_out else mean_bias(dimension)
        shared = [model for model in by_model if model in reference]
        result = correlation(
            [by_model[model] for model in shared], [reference[model] for model in shared], method="pearson"
        )
        mean_gap = float(np.mean(list(by_model.values()))) if by_model else None
        dimensions.append(DimensionGap(dimension, by_model, mean_gap, result))
    return CrossLingualGaps(language_a, language_b, bias, dimensions, leave_dimension_out)
