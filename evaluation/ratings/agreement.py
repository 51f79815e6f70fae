"""Rank agreement: Kendall's tau-b between two rankings, and the three rank correlations rankings are compared by."""

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


@dataclass(frozen=True)
class RankCorrelations:
    """Three correlations of two rankings over the models they share; None with a reason when undefined.

    ``pearson_on_ranks`` is Pearson's r between the ranks (1 for the best; equal scores share the smallest
    rank), as the llmfao study correlates its rankings; ``spearman`` uses average ranks for ties.
    """

    spearman: float | None
    kendall_tau_b: float | None
    pearson_on_ranks: float | None
    n_models: int
    undefined_reason: str | None = None


def competition_ranks(scores: Mapping[str, float]) -> dict[str, int]:
    """Return each model's rank by score, 1 for the highest; equal scores share the smallest rank ("1224")."""
    return {name: 1 + sum(other > value for other in scores.values()) for name, value in scores.items()}


def rank_correlations(scores_a: Mapping[str, float], scores_b: Mapping[str, float]) -> RankCorrelations:
    """Return Spearman's rho, Kendall's tau-b and Pearson's r on ranks between two score mappings."""
    shared = sorted(set(scores_a) & set(scores_b))
    if len(shared) < 3:
        return RankCorrelations(None, None, None, len(shared), "fewer than three models are in both rankings")
    ranks_a = competition_ranks({name: float(scores_a[name]) for name in shared})
    ranks_b = competition_ranks({name: float(scores_b[name]) for name in shared})
    x, y = [ranks_a[name] for name in shared], [ranks_b[name] for name in shared]
    if len(set(x)) == 1 or len(set(y)) == 1:
        return RankCorrelations(None, None, None, len(shared), "one ranking puts every shared model level")
    return RankCorrelations(
        spearman=float(stats.spearmanr(x, y).statistic),
        kendall_tau_b=float(stats.kendalltau(x, y).statistic),
        pearson_on_ranks=float(stats.pearsonr(x, y).statistic),
        n_models=len(shared),
    )
