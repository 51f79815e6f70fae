"""Ratings from pairwise verdicts with margins, independent of the order in which the verdicts arrive.

A verdict is ``(model_a, model_b, margin)``: a positive margin ``k`` means A won by ``k`` (``+`` to ``+++++``),
a negative one that B won by ``|k|``, zero a draw. Each decisive verdict is turned into ``f(|k|)`` sequential
TrueSkill win updates (the margin mapping), a draw into one drawn update.

TrueSkill is order dependent. Results here depend only on the multiset of verdicts, never on the order in which
they arrived: verdicts are first put in a canonical order, then rated in ``n_passes`` passes, each over a seeded
random permutation of that order, and the passes are averaged (``mu`` is the mean of the pass means; ``sigma``
is the standard deviation of the equal-weight mixture of the pass posteriors, which adds the spread caused by
order to the mean posterior variance). See docs/statistics.md for every formula and default.
"""

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields
from typing import NamedTuple

import numpy as np

from evaluation.ratings.display import DEFAULT_DISPLAY_CENTER, DisplayScale, display_scale
from evaluation.ratings.margins import DEFAULT_MARGIN_MAPPING, DEFAULT_MAX_MARGIN, MarginMapping, margin_repeats
from evaluation.ratings.update import (
    _CDF_FLOOR,
    _INV_SQRT2,
    _INV_SQRT_2PI,
    DEFAULT_ENVIRONMENT,
    TrueSkillEnvironment,
    _update,
)

DEFAULT_PASSES = 10
DEFAULT_CONSERVATIVE_K = 3.0


class Verdict(NamedTuple):
    """One pairwise verdict: ``margin`` > 0 means A won by that many steps, < 0 that B won, 0 a draw."""

    model_a: str
    model_b: str
    margin: float


@dataclass(frozen=True)
class ModelRating:
    """One model's rating: TrueSkill ``mu`` and ``sigma``, the conservative score and the display values.

    ``order_sd`` is the standard deviation of ``mu`` across passes (how much the verdict order moves a single
    pass); ``pass_sigma`` is the mean of the passes' own ``sigma`` (what EQ-Bench reports as sigma).
    """

    model: str
    mu: float
    sigma: float
    conservative: float
    display: float | None
    display_low: float | None
    display_high: float | None
    n_verdicts: int
    order_sd: float
    pass_sigma: float


@dataclass(frozen=True)
class Ratings:
    """Ratings of every model, best ``mu`` first, with the settings that produced them."""

    ratings: tuple[ModelRating, ...]
    environment: TrueSkillEnvironment
    margin_mapping: str
    n_passes: int
    seed: int
    n_verdicts: int
    n_updates: float
    conservative_k: float
    display_scale: DisplayScale

    def by_model(self) -> dict[str, ModelRating]:
        """Return the ratings keyed by model name."""
        return {rating.model: rating for rating in self.ratings}

    def ranking(self) -> list[str]:
        """Return model names ordered by ``mu``, best first."""
        return [rating.model for rating in self.ratings]

    def as_dict(self) -> dict[str, object]:
        """Return the result as plain, JSON-serialisable values."""
        scale = self.display_scale
        return {
            "ratings": [{f.name: getattr(rating, f.name) for f in fields(rating)} for rating in self.ratings],
            "environment": self.environment.as_dict(),
            "margin_mapping": self.margin_mapping,
            "n_passes": self.n_passes,
            "seed": self.seed,
            "n_verdicts": self.n_verdicts,
            "n_updates": self.n_updates,
            "conservative_k": self.conservative_k,
            "display_scale": {
                "scale": scale.scale,
                "shift": scale.shift,
                "anchors": scale.anchors,
                "undefined_reason": scale.undefined_reason,
            },
        }


class _Prepared(NamedTuple):
    models: list[str]
    steps: list[tuple[int, int, int, float, bool]]
    n_verdicts: list[int]
    n_updates: float


def _prepare(
    verdicts: Iterable[tuple[str, str, float]],
    models: Iterable[str],
    mapping: MarginMapping | Callable[[float], float],
    max_margin: float,
) -> _Prepared:
    rows = []
    for index, verdict in enumerate(verdicts):
        try:
            model_a, model_b, margin = verdict
            margin = float(margin)
        except (TypeError, ValueError) as error:
            raise ValueError(f"verdict {index}: expected (model_a, model_b, margin), got {verdict!r}") from error
        if model_a == model_b:
            raise ValueError(f"verdict {index}: a model cannot be compared with itself ({model_a!r})")
        if not math.isfinite(margin) or abs(margin) > max_margin:
            raise ValueError(f"verdict {index}: margin {margin!r} is not a finite number within ±{max_margin:g}")
        if model_b < model_a:
            model_a, model_b, margin = model_b, model_a, -margin
        rows.append((str(model_a), str(model_b), margin))
    names = sorted({name for row in rows for name in row[:2]} | set(models))
    position = {name: i for i, name in enumerate(names)}
    # The canonical order makes the result a function of the multiset of verdicts, whatever order they came in.
    rows.sort()
    steps = []
    counts = [0] * len(names)
    n_updates = 0.0
    repeats_of: dict[float, float] = {}
    for model_a, model_b, margin in rows:
        i, j = position[model_a], position[model_b]
        counts[i] += 1
        counts[j] += 1
        if margin == 0:
            steps.append((i, j, 0, 0.0, True))
            n_updates += 1
            continue
        if margin not in repeats_of:
            repeats_of[margin] = margin_repeats(margin, mapping)
        repeats = repeats_of[margin]
        whole = math.floor(repeats)
        winner, loser = (i, j) if margin > 0 else (j, i)
        steps.append((winner, loser, whole, repeats - whole, False))
        n_updates += repeats
    return _Prepared(names, steps, counts, n_updates)


def _rate_pass(
    steps: list[tuple[int, int, int, float, bool]],
    order: list[int],
    n_models: int,
    environment: TrueSkillEnvironment,
) -> tuple[list[float], list[float]]:
    """Run one sequential pass of updates in ``order``; return the final means and variances."""
    mu = [environment.mu] * n_models
    var = [environment.sigma**2] * n_models
    two_beta2 = 2.0 * environment.beta**2
    tau2 = environment.tau**2
    eps = environment.draw_margin
    exp, erfc, sqrt = math.exp, math.erfc, math.sqrt
    for k in order:
        winner, loser, whole, part, drawn = steps[k]
        if drawn:
            (mu[winner], var[winner]), (mu[loser], var[loser]) = _update(
                mu[winner], var[winner], mu[loser], var[loser],
                drawn=True, weight=1.0, two_beta2=two_beta2, tau2=tau2, draw_margin=eps,
            )  # fmt: skip
            continue
        mu_w, var_w, mu_l, var_l = mu[winner], var[winner], mu[loser], var[loser]
        # The win update is inlined (it runs millions of times in a large run); the last step of a non-integer
        # repeat count is scaled by its fractional part.
        for step in range(whole + (part > 0.0)):
            weight = 1.0 if step < whole else part
            var_w += tau2
            var_l += tau2
            c2 = two_beta2 + var_w + var_l
            c = sqrt(c2)
            x = (mu_w - mu_l - eps) / c
            if x > _CDF_FLOOR:
                v = exp(-0.5 * x * x) * _INV_SQRT_2PI / (0.5 * erfc(-x * _INV_SQRT2))
            else:
                v = -x - 1.0 / x + 2.0 / (x * x * x)
            w = v * (v + x)
            w = (0.0 if w < 0.0 else 1.0 if w > 1.0 else w) * weight
            v *= weight
            mu_w += var_w / c * v
            mu_l -= var_l / c * v
            var_w *= 1.0 - var_w / c2 * w
            var_l *= 1.0 - var_l / c2 * w
        mu[winner], var[winner], mu[loser], var[loser] = mu_w, var_w, mu_l, var_l
    return mu, var


def pass_orders(n_verdicts: int, n_passes: int, seed: int) -> list[list[int]]:
    """Return the seeded permutations of the canonical verdict order, one per pass."""
    rng = np.random.default_rng(seed)
    return [rng.permutation(n_verdicts).tolist() for _ in range(n_passes)]


def rate_verdicts(
    verdicts: Iterable[tuple[str, str, float]],
    *,
    environment: TrueSkillEnvironment = DEFAULT_ENVIRONMENT,
    margin_mapping: MarginMapping | Callable[[float], float] = DEFAULT_MARGIN_MAPPING,
    max_margin: float = DEFAULT_MAX_MARGIN,
    n_passes: int = DEFAULT_PASSES,
    seed: int = 0,
    models: Iterable[str] = (),
    anchors: Mapping[str, float] | None = None,
    conservative_k: float = DEFAULT_CONSERVATIVE_K,
    display_center: float = DEFAULT_DISPLAY_CENTER,
) -> Ratings:
    """Rate models from pairwise verdicts, independent of the order in which the verdicts are given.

    ``models`` adds models without verdicts (they keep the prior). ``max_margin`` bounds ``|margin|`` (5 for
    ``+`` to ``+++++``; the EQ-Bench import uses 20). Each of the ``n_passes`` passes rates the verdicts in a
    seeded random order; the result is the average (see the module docstring). The conservative score is
    ``mu - conservative_k * sigma``; the display interval is ``mu ± 1.96 sigma`` on the display scale.
    """
    if n_passes < 1:
        raise ValueError("n_passes must be at least 1")
    name = margin_mapping if isinstance(margin_mapping, str) else getattr(margin_mapping, "__name__", "custom")
    prepared = _prepare(verdicts, models, margin_mapping, max_margin)
    n_models = len(prepared.models)
    pass_mu = np.empty((n_passes, n_models))
    pass_var = np.empty((n_passes, n_models))
    for p, order in enumerate(pass_orders(len(prepared.steps), n_passes, seed)):
        mu, var = _rate_pass(prepared.steps, order, n_models, environment)
        pass_mu[p] = mu
        pass_var[p] = var
    mean_mu = pass_mu.mean(axis=0)
    order_var = pass_mu.var(axis=0)
    sigma = np.sqrt(pass_var.mean(axis=0) + order_var)
    mus = dict(zip(prepared.models, mean_mu.tolist(), strict=True))
    scale = display_scale(mus, anchors=anchors, environment=environment, center=display_center)
    ratings = []
    for i, model in enumerate(prepared.models):
        m, s = float(mean_mu[i]), float(sigma[i])
        low, high = scale.apply(m - 1.96 * s), scale.apply(m + 1.96 * s)
        if low is not None and high is not None and low > high:
            low, high = high, low
        ratings.append(
            ModelRating(
                model=model,
                mu=m,
                sigma=s,
                conservative=m - conservative_k * s,
                display=scale.apply(m),
                display_low=low,
                display_high=high,
                n_verdicts=prepared.n_verdicts[i],
                order_sd=float(math.sqrt(order_var[i])),
                pass_sigma=float(np.sqrt(pass_var[:, i]).mean()),
            )
        )
    ratings.sort(key=lambda rating: (-rating.mu, rating.model))
    return Ratings(
        ratings=tuple(ratings),
        environment=environment,
        margin_mapping=name,
        n_passes=n_passes,
        seed=seed,
        n_verdicts=len(prepared.steps),
        n_updates=prepared.n_updates,
        conservative_k=conservative_k,
        display_scale=scale,
    )
