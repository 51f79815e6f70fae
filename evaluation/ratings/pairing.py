"""Pairing: the round-robin schedule and adaptive batches aimed at the pairs whose order is still in doubt.

A pair's score is the probability that the current ratings order it wrongly, ``Phi(-|mu_a - mu_b| /
sqrt(sigma_a^2 + sigma_b^2))``, times its uncertainty ``(sigma_a^2 + sigma_b^2) / (2 sigma_0^2)``: Kendall's tau
counts misordered pairs, so the judge's calls go where a misorder is likely and a verdict can still move the
ratings. A batch is chosen greedily, one pair at a time; after each choice the two models' variances shrink as a
TrueSkill update of an even match would shrink them (``EVEN_MATCH_SHRINK``), so a batch spreads over the pairs
in doubt instead of repeating the single best one. See docs/statistics.md for the measurements.

The rule "auto" (``pairs_auto_batch``) is round-robin in passes where a pass is cheap and adaptive elsewhere. With
few models (judging every pair once costs at most ``COVER_ROUNDS`` rounds) each round judges the pairs judged in the
fewest strata so far, once each, spread over the strata: the next round-robin pass, so a run stopped after any
round is round-robin stopped early. On the sweep of issue 25 (scripts/bench_pairing.py --sweep) one pass followed
by adaptive rounds was better with 6 and 8 models at the fitted judge noise but worse with 10 models at twice the
noise, so with few models no adaptive round is made. With many models one pass costs many rounds (20 models, 10
items, 4 pairs an item: 190 pairs against 40 a round), and adaptive pairing is better there.
"""

import math
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import trueskill
from scipy import stats

from evaluation.ratings.update import DEFAULT_ENVIRONMENT, TrueSkillEnvironment

# w = v (v + t) of a TrueSkill win at t = 0: v = phi(0) / Phi(0) = sqrt(2 / pi), so w = 2 / pi. It is the share
# of the variance, relative to the performance variance c^2, that one game between equal ratings removes.
EVEN_MATCH_SHRINK = 2.0 / math.pi
# "auto" judges round-robin passes (every pair once more, spread over the strata) when one costs at most this many
# rounds of adaptive pairs, and is adaptive otherwise.
COVER_ROUNDS = 2


def pairs_round_robin(models: Sequence[str], *, both_orders: bool = False) -> list[tuple[str, str]]:
    """Return every pair of distinct models once (or in both presentation orders), in a fixed order."""
    names = list(dict.fromkeys(models))
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    if both_orders:
        pairs += [(b, a) for a, b in pairs]
    return pairs


@dataclass(frozen=True)
class PairChoice:
    """A proposed comparison with the quantities that ranked it (before the batch's earlier choices shrank them)."""

    model_a: str
    model_b: str
    score: float
    quality: float
    uncertainty: float
    misorder: float = 0.0


def pairs_adaptive(
    ratings: Mapping[str, tuple[float, float]],
    *,
    n_pairs: int,
    seed: int,
    environment: TrueSkillEnvironment = DEFAULT_ENVIRONMENT,
    max_per_model: int | None = None,
    exclude: Iterable[tuple[str, str]] = (),
) -> list[PairChoice]:
    """Choose the next ``n_pairs`` comparisons of one stratum, most informative first.

    ``ratings`` maps each model to its current ``(mu, sigma)``. Each model appears at most ``max_per_model``
    times in the batch, and pairs in ``exclude`` (either order) are skipped. Equal scores are broken by a seeded
    shuffle; the presentation order of each pair is randomised with the same generator.
    """
    if n_pairs < 0:
        raise ValueError("n_pairs cannot be negative")
    batch = pairs_adaptive_batch(
        ratings,
        strata={"": exclude},
        pairs_per_stratum=n_pairs,
        seed=seed,
        environment=environment,
        max_per_model=max_per_model,
    )
    return batch.get("", [])


def pairs_adaptive_batch(
    ratings: Mapping[str, tuple[float, float]],
    *,
    strata: Mapping[Hashable, Iterable[tuple[str, str]]],
    pairs_per_stratum: int,
    seed: int,
    environment: TrueSkillEnvironment = DEFAULT_ENVIRONMENT,
    max_per_model: int | None = None,
    cover_only: bool = False,
) -> dict[Hashable, list[PairChoice]]:
    """Choose up to ``pairs_per_stratum`` comparisons for each stratum (e.g. item and language), jointly.

    With ``cover_only`` the batch holds only the pairs judged in the fewest strata so far (most in doubt first) and
    ends when each of them has been placed once: the next round-robin pass spread over the strata
    (``pairs_auto_batch``).

    ``strata`` maps each stratum to the pairs already judged there (either order), which it will not get again.
    The strata share one set of ratings, so the batch is chosen as a whole: the best pair goes to the stratum
    with the most room left that has not judged it (ties broken by the seeded generator), the two models'
    variances shrink, and the next pair is chosen. A pair can thus be judged in several strata of a batch, one
    verdict each. ``max_per_model`` caps a model's comparisons per stratum. Returns the choices per stratum.
    """
    if pairs_per_stratum < 0:
        raise ValueError("pairs_per_stratum cannot be negative")
    names = sorted(ratings)
    position = {name: i for i, name in enumerate(names)}
    mu = np.array([float(ratings[name][0]) for name in names])
    var = np.array([float(ratings[name][1]) ** 2 for name in names])
    first, second = np.triu_indices(len(names), k=1)
    pair_index = {(int(i), int(j)): k for k, (i, j) in enumerate(zip(first, second, strict=True))}
    keys = list(strata)
    done = []
    for key in keys:
        judged = set()
        for a, b in strata[key]:
            if a in position and b in position and a != b:
                i, j = sorted((position[a], position[b]))
                judged.add(pair_index[(i, j)])
        done.append(judged)
    rng = np.random.default_rng(seed)
    tiebreak = rng.permutation(len(first))
    room = [pairs_per_stratum] * len(keys)
    used = [defaultdict(int) for _ in keys]
    env = environment.as_trueskill()
    two_beta2 = 2.0 * environment.beta**2
    prior_var = environment.sigma**2
    chosen: dict[Hashable, list[PairChoice]] = {}
    # A pair no stratum can take any more is dropped for the rest of the batch.
    open_pairs = np.ones(len(first), dtype=bool)
    # Under cover_only a pair counts as covered once it has been judged in more strata than the least judged pair:
    # the batch is then the next round-robin pass (the first when some pair has been judged nowhere).
    covered = np.ones(len(first), dtype=bool)
    if cover_only:
        times = np.zeros(len(first), dtype=int)
        for judged in done:
            times[list(judged)] += 1
        covered = times > times.min()
    while any(room) and open_pairs.any():
        spread = var[first] + var[second]
        misorder = stats.norm.sf(np.abs(mu[first] - mu[second]) / np.sqrt(spread))
        score = misorder * spread / (2.0 * prior_var)
        order = np.lexsort((tiebreak, -score, covered))
        placed = False
        for k in order:
            if not open_pairs[k]:
                continue
            if cover_only and covered[k]:
                break
            i, j = int(first[k]), int(second[k])
            takers = [
                s
                for s in range(len(keys))
                if room[s]
                and k not in done[s]
                and (max_per_model is None or max(used[s][i], used[s][j]) < max_per_model)
            ]
            if not takers:
                open_pairs[k] = False
                continue
            most = max(room[s] for s in takers)
            takers = [s for s in takers if room[s] == most]
            s = takers[int(rng.integers(len(takers)))] if len(takers) > 1 else takers[0]
            room[s] -= 1
            done[s].add(k)
            covered[k] = True
            used[s][i] += 1
            used[s][j] += 1
            a, b = names[i], names[j]
            quality = trueskill.quality_1vs1(
                env.create_rating(mu[i], math.sqrt(var[i])), env.create_rating(mu[j], math.sqrt(var[j])), env=env
            )
            uncertainty = float(spread[k] / (2.0 * prior_var))
            # The presentation order is randomised too, so a batch does not always show the same model first.
            if rng.random() < 0.5:
                a, b = b, a
            chosen.setdefault(keys[s], []).append(
                PairChoice(a, b, float(score[k]), float(quality), uncertainty, float(misorder[k]))
            )
            c2 = two_beta2 + var[i] + var[j]
            var[i] *= 1.0 - EVEN_MATCH_SHRINK * var[i] / c2
            var[j] *= 1.0 - EVEN_MATCH_SHRINK * var[j] / c2
            placed = True
            break
        if not placed:
            break
    return chosen


def cover_costs_rounds(n_models: int, *, n_strata: int, pairs_per_stratum: int) -> float:
    """Return how many rounds (``pairs_per_stratum`` in each of ``n_strata`` strata) one pass over every pair costs."""
    capacity = n_strata * pairs_per_stratum
    pairs = n_models * (n_models - 1) // 2
    return pairs / capacity if capacity else math.inf


def pairs_auto_batch(
    ratings: Mapping[str, tuple[float, float]],
    *,
    strata: Mapping[Hashable, Iterable[tuple[str, str]]],
    pairs_per_stratum: int,
    seed: int,
    environment: TrueSkillEnvironment = DEFAULT_ENVIRONMENT,
    max_per_model: int | None = None,
) -> dict[Hashable, list[PairChoice]]:
    """Choose the next round by the rule "auto": round-robin passes when a pass is cheap, adaptive otherwise.

    When one pass over every pair costs at most ``COVER_ROUNDS`` rounds (``cover_costs_rounds``), the round judges
    the pairs judged in the fewest strata so far, each once, spread evenly over the strata that have not judged it
    (so a stratum may get more than ``pairs_per_stratum`` of them): the first round is round-robin's first pass, the
    next its second, and so on. Otherwise it is ``pairs_adaptive_batch``. Arguments as there.
    """
    strata = {key: list(pairs) for key, pairs in strata.items()}
    if pairs_per_stratum < 0:
        raise ValueError("pairs_per_stratum cannot be negative")
    names = set(ratings)
    times: dict[frozenset, int] = {frozenset(pair): 0 for pair in pairs_round_robin(sorted(names))}
    for pairs in strata.values():
        for pair in {frozenset(pair) for pair in pairs} & times.keys():
            times[pair] += 1
    fewest = min(times.values(), default=0)
    behind = sum(count == fewest for count in times.values())
    rounds = cover_costs_rounds(len(names), n_strata=len(strata), pairs_per_stratum=pairs_per_stratum)
    cover = bool(times) and rounds <= COVER_ROUNDS
    return pairs_adaptive_batch(
        ratings,
        strata=strata,
        pairs_per_stratum=math.ceil(behind / len(strata)) if cover else pairs_per_stratum,
        seed=seed,
        environment=environment,
        max_per_model=max_per_model,
        cover_only=cover,
    )
