"""Win-rate matrix from pairwise verdicts: win rates without draws, exact binomial tests and BH-FDR."""

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from scipy import stats

from evaluation.stats._common import DEFAULT_FDR, _Serialisable
from evaluation.stats.multiple_comparisons import benjamini_hochberg


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
