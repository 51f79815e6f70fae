"""Pairing: the round-robin schedule and adaptive batches chosen by match quality times uncertainty."""

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import trueskill

from evaluation.ratings.update import DEFAULT_ENVIRONMENT, TrueSkillEnvironment


def pairs_round_robin(models: Sequence[str], *, both_orders: bool = False) -> list[tuple[str, str]]:
    """Return every pair of distinct models once (or in both presentation orders), in a fixed order."""
    names = list(dict.fromkeys(models))
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    if both_orders:
        pairs += [(b, a) for a, b in pairs]
    return pairs


@dataclass(frozen=True)
class PairChoice:
    """A proposed comparison with the quantities that ranked it."""

    model_a: str
    model_b: str
    score: float
    quality: float
    uncertainty: float


def pairs_adaptive(
    ratings: Mapping[str, tuple[float, float]],
    *,
    n_pairs: int,
    seed: int,
    environment: TrueSkillEnvironment = DEFAULT_ENVIRONMENT,
    max_per_model: int | None = None,
    exclude: Iterable[tuple[str, str]] = (),
) -> list[PairChoice]:
    """Choose the next ``n_pairs`` comparisons: most informative first.

    ``ratings`` maps each model to its current ``(mu, sigma)``. A pair's score is match quality times
    uncertainty: ``trueskill.quality_1vs1`` (the draw probability relative to the most even match, high when
    the outcome is least predictable) times ``(sigma_a^2 + sigma_b^2) / (2 sigma_0^2)`` (high while the pair is
    still uncertain). Pairs are taken greedily by score; each model appears at most ``max_per_model`` times in
    one batch, and pairs in ``exclude`` (either order) are skipped. Equal scores are broken by a seeded shuffle.
    """
    if n_pairs < 0:
        raise ValueError("n_pairs cannot be negative")
    env = environment.as_trueskill()
    prior_var = environment.sigma**2
    excluded = {frozenset(pair) for pair in exclude}
    names = sorted(ratings)
    rng = np.random.default_rng(seed)
    tiebreak = rng.permutation(len(names) * len(names)).tolist()
    candidates = []
    for i, a in enumerate(names):
        for j in range(i + 1, len(names)):
            b = names[j]
            if frozenset((a, b)) in excluded:
                continue
            (mu_a, sigma_a), (mu_b, sigma_b) = ratings[a], ratings[b]
            quality = trueskill.quality_1vs1(
                env.create_rating(mu_a, sigma_a), env.create_rating(mu_b, sigma_b), env=env
            )
            uncertainty = (sigma_a**2 + sigma_b**2) / (2.0 * prior_var)
            candidates.append((-(quality * uncertainty), tiebreak[i * len(names) + j], a, b, quality, uncertainty))
    candidates.sort()
    used: dict[str, int] = defaultdict(int)
    chosen = []
    for negative_score, _, a, b, quality, uncertainty in candidates:
        if len(chosen) == n_pairs:
            break
        if max_per_model is not None and (used[a] >= max_per_model or used[b] >= max_per_model):
            continue
        used[a] += 1
        used[b] += 1
        # The presentation order is randomised too, so a batch does not always show the same model first.
        if rng.random() < 0.5:
            a, b = b, a
        chosen.append(PairChoice(a, b, -negative_score, quality, uncertainty))
    return chosen
