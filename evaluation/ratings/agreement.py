"""Rank agreement: Kendall's tau-b between two rankings over the models they share."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from scipy import stats


@dataclass(frozen=True)
class RankAgreement:
    """Kendall's tau-b between two rankings over the models they share; None with a reason when undefined."""

    tau: float | None
    p_value: float | None
    n_models: int
    undefined_reason: str | None = None


def rank_agreement(
    ranking_a: Sequence[str] | Mapping[str, float], ranking_b: Sequence[str] | Mapping[str, float]
) -> RankAgreement:
    """Return Kendall's tau-b between two rankings (lists best first, or mappings of model to score)."""

    def scores(ranking: Sequence[str] | Mapping[str, float]) -> dict[str, float]:
        if isinstance(ranking, Mapping):
            return {name: float(value) for name, value in ranking.items()}
        return {name: -float(position) for position, name in enumerate(ranking)}

    a, b = scores(ranking_a), scores(ranking_b)
    shared = sorted(set(a) & set(b))
    if len(shared) < 2:
        return RankAgreement(None, None, len(shared), "fewer than two models are in both rankings")
    x = [a[name] for name in shared]
    y = [b[name] for name in shared]
    if len(set(x)) == 1 or len(set(y)) == 1:
        return RankAgreement(None, None, len(shared), "one ranking puts every shared model level")
    result = stats.kendalltau(x, y)
    return RankAgreement(float(result.statistic), float(result.pvalue), len(shared))
