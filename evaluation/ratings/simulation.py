"""Simulated tournaments for measuring pairing strategies: a judge fitted to EQ-Bench 3, round-robin and adaptive.

Models have known strengths spread like the EQ-Bench 3 leaderboard (``leaderboard_strengths``). The judge
(``SimulatedJudge``) sees each pair in both presentation orders; in each order the first model wins with
probability ``Phi((mu_first - mu_second + position_bias) / noise)``, and the margin grows with the latent
difference. The noise and position bias were fitted by probit maximum likelihood to EQ-Bench 3's 6,362 judge
calls against the published ratings (the first-shown respondent wins 55.4 % of decisive calls; ties are 1 %).
The two orders are combined by FACET's rule (an inconsistent pair is a tie), as evaluation runs do by default.

A tournament has ``n_items`` items (prompts); round-robin judges every pair on every item. Adaptive pairing
judges ``pairs_per_item`` pairs per item per round, chosen jointly across items from the current ratings
(``pairs_adaptive_batch``, or ``pairs_auto_batch`` for the rule "auto"), exactly as evaluation runs do. After
every round the ranking that a report would show (``rate_verdicts`` with its defaults) is compared with the true
order by Kendall's tau. Everything is seeded.
"""

import math
from dataclasses import dataclass

import numpy as np

from calibration.agreement import combine_facet
from evaluation.ratings.agreement import rank_agreement
from evaluation.ratings.pairing import pairs_adaptive_batch, pairs_auto_batch, pairs_round_robin
from evaluation.ratings.verdicts import Verdict, rate_verdicts

# The 27 published ratings (mu) of EQ-Bench 3's leaderboard of 2025-04-28 (published_ratings_2025-04-28.json).
EQBENCH3_PUBLISHED_MU = (
    1527.2, 1447.74, 1444.41, 1444.38, 1415.38, 1409.08, 1401.87, 1398.39, 1376.07, 1368.74, 1365.58, 1362.06,
    1353.99, 1342.37, 1330.36, 1326.37, 1308.32, 1287.93, 1279.88, 1247.68, 1203.88, 1166.26, 1160.13, 1149.49,
    1101.05, 1085.97, 974.87,
)  # fmt: skip
# Probit fit of P(first-shown wins) = Phi((mu_first - mu_second + bias) / noise) to EQ-Bench 3's judge calls.
EQBENCH3_JUDGE_NOISE = 93.4
EQBENCH3_POSITION_BIAS = 16.1


def leaderboard_strengths(n_models: int = 20) -> list[float]:
    """Return ``n_models`` strengths, best first, at evenly spaced quantiles of EQ-Bench 3's published ratings."""
    published = sorted(EQBENCH3_PUBLISHED_MU, reverse=True)
    positions = np.linspace(0, len(published) - 1, n_models)
    return np.interp(positions, np.arange(len(published)), published).tolist()


@dataclass(frozen=True)
class SimulatedJudge:
    """A pairwise judge with Gaussian noise and a bias towards the first-shown response (both in rating points).

    A latent difference ``d`` (in noise units) within ``tie_band`` of zero is a tie; otherwise the margin is
    ``ceil(|d| / margin_step)`` plus signs, at most 5, for the side ``d`` favours.
    """

    noise: float = EQBENCH3_JUDGE_NOISE
    position_bias: float = EQBENCH3_POSITION_BIAS
    tie_band: float = 0.02
    margin_step: float = 0.5

    def margin(self, rng: np.random.Generator, mu_first: float, mu_second: float) -> int:
        """Return the judge's signed margin for the first-shown model (positive: it won)."""
        latent = (mu_first - mu_second + self.position_bias) / self.noise + rng.standard_normal()
        if abs(latent) < self.tie_band:
            return 0
        return int(math.copysign(min(5, math.ceil(abs(latent) / self.margin_step)), latent))

    def comparison(self, rng: np.random.Generator, mu_a: float, mu_b: float) -> int:
        """Judge A and B in both orders and combine them by FACET's rule; return the score for A."""
        shown_first = self.margin(rng, mu_a, mu_b)
        shown_second = -self.margin(rng, mu_b, mu_a)
        return combine_facet(shown_first, shown_second, inconsistent="tie")


@dataclass(frozen=True)
class Tournament:
    """A tournament's progress: judge calls and Kendall's tau with the true order after each round."""

    calls: tuple[int, ...]
    taus: tuple[float, ...]
    round_robin_calls: int

    def fraction_reaching(self, target: float) -> float | None:
        """Return the share of round-robin's calls made when tau first reached ``target`` (None if never)."""
        for calls, tau in zip(self.calls, self.taus, strict=True):
            if tau >= target:
                return calls / self.round_robin_calls
        return None

    def within(self, budget: float) -> "Tournament":
        """Return the progress up to ``budget`` (a share of round-robin's calls): round-robin stopped there."""
        kept = sum(calls <= budget * self.round_robin_calls for calls in self.calls)
        return Tournament(self.calls[:kept], self.taus[:kept], self.round_robin_calls)

    def fraction_staying(self, target: float) -> float | None:
        """Return the share of calls from which tau stayed at ``target`` or above until the end (None if never)."""
        staying = None
        for calls, tau in zip(reversed(self.calls), reversed(self.taus), strict=True):
            if tau < target:
                break
            staying = calls / self.round_robin_calls
        return staying


def model_names(n_models: int) -> list[str]:
    """Return the simulated models' names, strongest first."""
    return [f"m{i:02d}" for i in range(n_models)]


def ranking_tau(verdicts: list[Verdict], names: list[str], *, seed: int = 0) -> float:
    """Return Kendall's tau between the report's ranking (TrueSkill ``mu``) and the true order ``names``."""
    result = rate_verdicts(verdicts, models=names, seed=seed)
    truth = {name: -float(position) for position, name in enumerate(names)}
    return rank_agreement({r.model: r.mu for r in result.ratings}, truth).tau


def judge_draws(
    strengths: list[float], *, n_items: int, seed: int, judge: SimulatedJudge = SimulatedJudge()
) -> dict[tuple[str, str], list[int]]:
    """Return the judge's scores for each pair (names sorted), its ``k``-th comparison of that pair at index ``k``.

    Common random numbers: every rule of a seed reads the same draws, so round-robin's ``k``-th item and a rule's
    ``k``-th comparison of a pair get the same verdict and rules differ only in which pairs they judge. The draws
    are made item by item in round-robin order, as round-robin judges them.
    """
    rng = np.random.default_rng(seed)
    names = model_names(len(strengths))
    mu = dict(zip(names, strengths, strict=True))
    draws: dict[tuple[str, str], list[int]] = {pair: [] for pair in pairs_round_robin(names)}
    for _ in range(n_items):
        for a, b in draws:
            draws[(a, b)].append(judge.comparison(rng, mu[a], mu[b]))
    return draws


def simulate_round_robin(
    strengths: list[float], *, n_items: int, seed: int, judge: SimulatedJudge = SimulatedJudge()
) -> tuple[list[Verdict], Tournament]:
    """Judge every pair on every item; return the verdicts and the progress after each item."""
    names = model_names(len(strengths))
    draws = judge_draws(strengths, n_items=n_items, seed=seed, judge=judge)
    verdicts: list[Verdict] = []
    calls, taus = [], []
    for item in range(n_items):
        for a, b in pairs_round_robin(names):
            verdicts.append(Verdict(a, b, draws[(a, b)][item]))
        calls.append(2 * len(verdicts))
        taus.append(ranking_tau(verdicts, names, seed=seed))
    total = n_items * len(names) * (len(names) - 1)
    return verdicts, Tournament(tuple(calls), tuple(taus), total)


def simulate_adaptive(
    strengths: list[float],
    *,
    n_items: int,
    seed: int,
    pairs_per_item: int = 4,
    budget: float = 1.0,
    judge: SimulatedJudge = SimulatedJudge(),
    selection_passes: int = 3,
    rule: str = "adaptive",
) -> tuple[list[Verdict], Tournament]:
    """Run rounds of ``rule`` ("adaptive" or "auto") until ``budget`` (a share of round-robin's calls) is spent.

    Each round rates the verdicts so far with ``selection_passes`` passes (as evaluation runs do), chooses the
    pairs of every item jointly and judges them in both orders; it also stops when no pair is left. Under "auto"
    a round that covers every pair once (``pairs_auto_batch``) costs what round-robin's first item costs.
    """
    choose = {"adaptive": pairs_adaptive_batch, "auto": pairs_auto_batch}[rule]
    names = model_names(len(strengths))
    draws = judge_draws(strengths, n_items=n_items, seed=seed, judge=judge)
    round_robin_calls = n_items * len(names) * (len(names) - 1)
    judged: dict[int, set[tuple[str, str]]] = {item: set() for item in range(n_items)}
    verdicts: list[Verdict] = []
    calls, taus = [], []
    current = rate_verdicts([], models=names, seed=seed, n_passes=1)
    round_number = 0
    while 2 * len(verdicts) < budget * round_robin_calls:
        batch = choose(
            {r.model: (r.mu, r.sigma) for r in current.ratings},
            strata=judged,
            pairs_per_stratum=pairs_per_item,
            seed=seed * 100_003 + round_number,
        )
        if not batch:
            break
        for item, choices in sorted(batch.items()):
            for choice in choices:
                a, b = sorted((choice.model_a, choice.model_b))
                verdicts.append(Verdict(a, b, draws[(a, b)][sum((a, b) in pairs for pairs in judged.values())]))
                judged[item].add((a, b))
        round_number += 1
        calls.append(2 * len(verdicts))
        taus.append(ranking_tau(verdicts, names, seed=seed))
        current = rate_verdicts(verdicts, models=names, seed=seed, n_passes=selection_passes)
    return verdicts, Tournament(tuple(calls), tuple(taus), round_robin_calls)
