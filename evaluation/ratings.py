"""TrueSkill ratings from pairwise verdicts with margins: plain values in, JSON-ready results out, no ORM.

A verdict is ``(model_a, model_b, margin)``: a positive margin ``k`` means A won by ``k`` (``+`` to ``+++++``),
a negative one that B won by ``|k|``, zero a draw. Each decisive verdict is turned into ``f(|k|)`` sequential
TrueSkill win updates (the margin mapping), a draw into one drawn update. The two-player update is the exact
closed form of the TrueSkill factor graph for one-versus-one games (Herbrich, Minka and Graepel 2007), checked
against ``trueskill.rate_1vs1`` in the tests; it runs some three hundred times faster than the library's general
factor-graph solver, which is what makes 100,000 verdicts affordable.

TrueSkill is order dependent. Results here depend only on the multiset of verdicts, never on the order in which
they arrived: verdicts are first put in a canonical order, then rated in ``n_passes`` passes, each over a seeded
random permutation of that order, and the passes are averaged (``mu`` is the mean of the pass means; ``sigma``
is the standard deviation of the equal-weight mixture of the pass posteriors, which adds the spread caused by
order to the mean posterior variance). See docs/statistics.md for every formula and default.
"""

import json
import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Literal, NamedTuple

import numpy as np
import trueskill
from scipy import stats

MarginMapping = Literal["linear", "sqrt", "log", "fixed"]
MARGIN_MAPPINGS: tuple[MarginMapping, ...] = ("linear", "sqrt", "log", "fixed")
DEFAULT_MAX_MARGIN = 5
DEFAULT_PASSES = 10
DEFAULT_MARGIN_MAPPING: MarginMapping = "sqrt"
DEFAULT_CONSERVATIVE_K = 3.0
DEFAULT_DISPLAY_CENTER = 1000.0
# Camilli (1994): logistic(1.702 x) approximates the normal CDF to within 0.01 everywhere, which converts a
# TrueSkill performance difference in units of sqrt(2) * beta into Elo's logistic scale (400 points = 10:1 odds).
LOGISTIC_PROBIT_SCALE = 1.702

_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
# Below this standardised difference the normal CDF underflows towards zero; an asymptotic series takes over.
_CDF_FLOOR = -35.0


class Verdict(NamedTuple):
    """One pairwise verdict: ``margin`` > 0 means A won by that many steps, < 0 that B won, 0 a draw."""

    model_a: str
    model_b: str
    margin: float


@dataclass(frozen=True)
class TrueSkillEnvironment:
    """Set the TrueSkill prior and noise; ``tau`` is the per-update skill drift, ``draw_probability`` in [0, 1)."""

    mu: float = 25.0
    sigma: float = 25.0 / 3.0
    beta: float = 25.0 / 6.0
    tau: float = 0.0
    draw_probability: float = 0.10

    def __post_init__(self) -> None:
        if not (self.sigma > 0 and self.beta > 0 and self.tau >= 0 and math.isfinite(self.mu)):
            raise ValueError("TrueSkill environment needs sigma > 0, beta > 0, tau >= 0 and a finite mu")
        if not 0 <= self.draw_probability < 1:
            raise ValueError("draw_probability must be in [0, 1)")

    @property
    def draw_margin(self) -> float:
        """Return the draw margin epsilon of a one-versus-one game (Herbrich et al. 2007, eq. for P(draw))."""
        return float(stats.norm.ppf((self.draw_probability + 1.0) / 2.0) * math.sqrt(2.0) * self.beta)

    def as_trueskill(self) -> trueskill.TrueSkill:
        """Return the equivalent ``trueskill.TrueSkill`` environment (for match quality and cross-checks)."""
        return trueskill.TrueSkill(
            mu=self.mu, sigma=self.sigma, beta=self.beta, tau=self.tau, draw_probability=self.draw_probability
        )

    def as_dict(self) -> dict[str, float]:
        """Return the settings as plain values."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


DEFAULT_ENVIRONMENT = TrueSkillEnvironment()
# EQ-Bench 3 (Paech 2025): mu 1200, sigma 350/3, beta 350/6, no drift, no draws.
EQBENCH3_ENVIRONMENT = TrueSkillEnvironment(mu=1200.0, sigma=350.0 / 3.0, beta=350.0 / 6.0, tau=0.0, draw_probability=0)
EQBENCH3_ANCHORS: dict[str, float] = {"o3": 1500.0, "meta-llama/llama-3.2-1b-instruct": 200.0}


def margin_repeats(margin: float, mapping: MarginMapping | Callable[[float], float] = DEFAULT_MARGIN_MAPPING) -> float:
    """Return how many win updates a decisive margin of size ``|margin|`` counts as (0 for a draw).

    ``linear``: f(k) = k; ``sqrt``: f(k) = sqrt(k); ``log``: f(k) = 1 + ln k; ``fixed``: f(k) = 1. A callable is
    used as f directly and must return a positive finite number. A non-integer count r is applied as floor(r)
    full updates followed by one update scaled by the fractional part (see ``docs/statistics.md``).
    """
    size = abs(float(margin))
    if size == 0:
        return 0.0
    if callable(mapping):
        repeats = float(mapping(size))
    elif mapping == "linear":
        repeats = size
    elif mapping == "sqrt":
        repeats = math.sqrt(size)
    elif mapping == "log":
        repeats = 1.0 + math.log(size) if size >= 1 else size
    elif mapping == "fixed":
        repeats = 1.0
    else:
        raise ValueError(f"unknown margin mapping {mapping!r}; choose one of {', '.join(MARGIN_MAPPINGS)}")
    if not (math.isfinite(repeats) and repeats > 0):
        raise ValueError(f"margin mapping gave {repeats!r} updates for margin {margin!r}; it must be positive")
    return repeats


def _win_v_w(x: float) -> tuple[float, float]:
    """Return TrueSkill's V and W functions of a win at standardised difference ``x`` (draw margin removed)."""
    if x > _CDF_FLOOR:
        v = math.exp(-0.5 * x * x) * _INV_SQRT_2PI / (0.5 * math.erfc(-x * _INV_SQRT2))
    else:
        # Mills-ratio series for phi(x) / Phi(x) as x -> -infinity.
        v = -x - 1.0 / x + 2.0 / (x * x * x)
    w = v * (v + x)
    return v, min(max(w, 0.0), 1.0)


def _draw_v_w(t: float, margin: float) -> tuple[float, float]:
    """Return V and W of a draw at standardised difference ``t`` with standardised draw margin ``margin``."""
    if margin <= 0.0:
        # The limit epsilon -> 0: the performance difference is observed to be exactly zero.
        return -t, 1.0
    abs_t = abs(t)
    a = margin - abs_t
    b = -margin - abs_t
    denom = 0.5 * (math.erfc(-a * _INV_SQRT2) - math.erfc(-b * _INV_SQRT2))
    sign = -1.0 if t < 0 else 1.0
    if denom <= 1e-300:
        return a * sign, 1.0
    pdf_a = math.exp(-0.5 * a * a) * _INV_SQRT_2PI
    pdf_b = math.exp(-0.5 * b * b) * _INV_SQRT_2PI
    v = (pdf_b - pdf_a) / denom
    w = v * v + (a * pdf_a - b * pdf_b) / denom
    return v * sign, min(max(w, 0.0), 1.0)


def rate_1vs1(
    winner: tuple[float, float],
    loser: tuple[float, float],
    *,
    drawn: bool = False,
    weight: float = 1.0,
    environment: TrueSkillEnvironment = DEFAULT_ENVIRONMENT,
) -> tuple[tuple[float, float], tuple[float, float]]:
    """Update two ``(mu, sigma)`` ratings after one game, exactly as ``trueskill.rate_1vs1`` does.

    ``weight`` in (0, 1] scales the update (the fractional part of a non-integer margin mapping); 1 is a full
    game. For a draw the order of the two ratings does not matter.
    """
    (mu_w, sigma_w), (mu_l, sigma_l) = winner, loser
    var_w, var_l = _update(
        mu_w,
        sigma_w * sigma_w,
        mu_l,
        sigma_l * sigma_l,
        drawn=drawn,
        weight=weight,
        two_beta2=2.0 * environment.beta**2,
        tau2=environment.tau**2,
        draw_margin=environment.draw_margin,
    )
    return (var_w[0], math.sqrt(var_w[1])), (var_l[0], math.sqrt(var_l[1]))


def _update(
    mu_w: float,
    var_w: float,
    mu_l: float,
    var_l: float,
    *,
    drawn: bool,
    weight: float,
    two_beta2: float,
    tau2: float,
    draw_margin: float,
) -> tuple[tuple[float, float], tuple[float, float]]:
    var_w += tau2
    var_l += tau2
    c2 = two_beta2 + var_w + var_l
    c = math.sqrt(c2)
    t = (mu_w - mu_l) / c
    if drawn:
        v, w = _draw_v_w(t, draw_margin / c)
    else:
        v, w = _win_v_w(t - draw_margin / c)
    v *= weight
    w *= weight
    return (
        (mu_w + var_w / c * v, var_w * (1.0 - var_w / c2 * w)),
        (mu_l - var_l / c * v, var_l * (1.0 - var_l / c2 * w)),
    )


@dataclass(frozen=True)
class DisplayScale:
    """Map ``mu`` to the Elo-like display scale: ``display = scale * mu + shift``; None when it cannot be built."""

    scale: float | None
    shift: float | None
    anchors: dict[str, float] = field(default_factory=dict)
    undefined_reason: str | None = None

    def apply(self, mu: float) -> float | None:
        """Return ``mu`` on the display scale, or None when the scale is undefined."""
        if self.scale is None or self.shift is None:
            return None
        return self.scale * mu + self.shift


def elo_points_per_mu(environment: TrueSkillEnvironment = DEFAULT_ENVIRONMENT) -> float:
    """Return the Elo points worth one unit of ``mu``: 400 * 1.702 / (ln 10 * sqrt(2) * beta)."""
    return 400.0 * LOGISTIC_PROBIT_SCALE / (math.log(10.0) * math.sqrt(2.0) * environment.beta)


def display_scale(
    mus: Mapping[str, float],
    *,
    anchors: Mapping[str, float] | None = None,
    environment: TrueSkillEnvironment = DEFAULT_ENVIRONMENT,
    center: float = DEFAULT_DISPLAY_CENTER,
) -> DisplayScale:
    """Build the linear display scale from the ratings' ``mu`` values.

    No anchors: Elo-like units (``elo_points_per_mu``) with the prior mean at ``center``. One anchor: the same
    units, shifted so that the anchor model shows its given value. Two anchors: the straight line through both
    (EQ-Bench's normalisation). An anchor model without a rating, two anchors with equal ``mu``, or more than two
    anchors leave the scale undefined, with the reason.
    """
    anchors = dict(anchors or {})
    points = elo_points_per_mu(environment)
    if not anchors:
        return DisplayScale(points, center - points * environment.mu)
    missing = sorted(name for name in anchors if name not in mus)
    if missing:
        return DisplayScale(None, None, anchors, f"anchor model(s) without a rating: {', '.join(missing)}")
    if len(anchors) == 1:
        ((name, value),) = anchors.items()
        return DisplayScale(points, value - points * mus[name], anchors)
    if len(anchors) > 2:
        return DisplayScale(None, None, anchors, "at most two anchor models can be used")
    (name_a, value_a), (name_b, value_b) = anchors.items()
    if abs(mus[name_a] - mus[name_b]) < 1e-12:
        return DisplayScale(None, None, anchors, f"anchor models {name_a} and {name_b} have the same rating")
    scale = (value_a - value_b) / (mus[name_a] - mus[name_b])
    return DisplayScale(scale, value_a - scale * mus[name_a], anchors)


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


# --- pairing -----------------------------------------------------------------------------------------------


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


# --- EQ-Bench 3 import --------------------------------------------------------------------------------------

EQBENCH3_FIRST_CODE = "A0493"
EQBENCH3_SECOND_CODE = "A0488"
EQBENCH3_MAX_POSSIBLE_DIFF = 30
EQBENCH3_BIN_SIZE = 20
EQBENCH3_BIN_SIZE_FOR_SIGMA = 3
EQBENCH3_RANK_WINDOW = 16


@dataclass(frozen=True)
class EqBenchJudgement:
    """One EQ-Bench 3 judge call: which model was shown first and each side's total of ``+`` signs."""

    scenario_id: str
    iteration: str
    test_model: str
    neighbor_model: str
    test_shown_first: bool
    plus_for_test: int
    plus_for_other: int


def eqbench3_plus_counts(criterion_verdicts: Mapping[str, object]) -> tuple[int, int]:
    """Count the ``+`` signs won by the first (A0493) and second (A0488) respondent over all criteria.

    This is EQ-Bench 3's ``interpret_pairwise_result``: a verdict such as ``A0488+++`` gives three to the
    respondent it names; non-string values and the chain of thought are ignored.
    """
    first = second = 0
    for key, verdict in criterion_verdicts.items():
        if key == "chain_of_thought_reasoning" or not isinstance(verdict, str):
            continue
        if EQBENCH3_FIRST_CODE in verdict:
            first += verdict.count("+")
        elif EQBENCH3_SECOND_CODE in verdict:
            second += verdict.count("+")
    return first, second


def eqbench3_load(path: Path | str) -> list[EqBenchJudgement]:
    """Read ``pairwise_comparisons_compact.jsonl``; raise ValueError naming the line and field at fault.

    The plus counts are recomputed from ``criterion_verdicts`` and the presentation ``order``, and must agree
    with the stored ``plus_for_test`` / ``plus_for_other``.
    """
    judgements = []
    with Path(path).open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise ValueError(f"line {number}: not valid JSON ({error.msg})") from error
            for key in ("scenario_id", "iteration_index", "test_model", "neighbor_model", "order"):
                if not isinstance(row.get(key), str) or not row[key]:
                    raise ValueError(f"line {number}: field {key!r} is missing or not a non-empty string")
            if not isinstance(row.get("criterion_verdicts"), dict):
                raise ValueError(f"line {number}: field 'criterion_verdicts' is missing or not an object")
            order = row["order"]
            if order.startswith(f"{EQBENCH3_FIRST_CODE}:test"):
                test_first = True
            elif order.startswith(f"{EQBENCH3_FIRST_CODE}:other"):
                test_first = False
            else:
                raise ValueError(f"line {number}: field 'order' has unknown value {order!r}")
            first, second = eqbench3_plus_counts(row["criterion_verdicts"])
            plus_test, plus_other = (first, second) if test_first else (second, first)
            stored = (row.get("plus_for_test"), row.get("plus_for_other"))
            if stored != (None, None) and stored != (plus_test, plus_other):
                raise ValueError(
                    f"line {number}: fields 'plus_for_test'/'plus_for_other' {stored} disagree with the "
                    f"criterion verdicts ({plus_test}, {plus_other})"
                )
            judgements.append(
                EqBenchJudgement(
                    scenario_id=row["scenario_id"],
                    iteration=row["iteration_index"],
                    test_model=row["test_model"],
                    neighbor_model=row["neighbor_model"],
                    test_shown_first=test_first,
                    plus_for_test=plus_test,
                    plus_for_other=plus_other,
                )
            )
    return judgements


def eqbench3_blend(x: float) -> float:
    """Return EQ-Bench 3's ``custom_blend`` of a normalised plus difference ``x`` in [0, 1].

    A linear slope of 5 blended by a smoothstep over [0, 0.11] into ``(1 - exp(-3 x^0.75)) / (1 - exp(-3))``.
    """
    x = min(max(x, 0.0), 1.0)
    if x == 0.0:
        return 0.0
    saturating = (1.0 - math.exp(-3.0 * x**0.75)) / (1.0 - math.exp(-3.0))
    if x >= 0.11:
        return saturating
    t = x / 0.11
    blend = t * t * (3.0 - 2.0 * t)
    return (1.0 - blend) * 5.0 * x + blend * saturating


def eqbench3_margin(plus_first: int, plus_second: int, *, bin_size: int = EQBENCH3_BIN_SIZE) -> int:
    """Return EQ-Bench 3's signed pseudo-win count for one logical matchup (both orders' plus counts summed).

    ``fraction = 0.5 ± blend(min(|diff| / 30, 1)) / 2`` and ``wins = clamp(ceil(|fraction - 0.5| / (0.5 /
    bin_size)), 1, bin_size)`` (``bin_fraction``); positive when the first model has more plus signs, 0 for a tie.
    """
    diff = plus_first - plus_second
    if diff == 0:
        return 0
    # The arithmetic follows compute_fraction_for_test and bin_fraction step by step, so rounding at the bin
    # edges matches EQ-Bench's own.
    fraction = min(1.0, eqbench3_blend(min(abs(diff) / EQBENCH3_MAX_POSSIBLE_DIFF, 1.0)) / 2.0 + 0.5)
    wins = max(1, min(bin_size, math.ceil((fraction - 0.5) / (0.5 / bin_size))))
    return wins if diff > 0 else -wins


def eqbench3_verdicts(
    judgements: Iterable[EqBenchJudgement],
    *,
    bin_size: int = EQBENCH3_BIN_SIZE,
    ladder: Sequence[str] | None = None,
    rank_window: int | None = None,
) -> list[Verdict]:
    """Turn EQ-Bench 3 judge calls into verdicts ``(model_a, model_b, ±pseudo-wins)`` as its solver does.

    Calls are grouped by (model pair, scenario, iteration); each model's plus signs are summed over the group
    (normally the two presentation orders) and ``eqbench3_margin`` gives the signed count of pseudo-wins
    (``model_a`` < ``model_b`` alphabetically). With ``ladder`` (models worst to best or best to worst) and
    ``rank_window``, pairs more than ``rank_window`` places apart are dropped, as EQ-Bench's final solve does.
    """
    groups: dict[tuple[str, str, str, str], list[int]] = {}
    for judgement in judgements:
        first, second = sorted((judgement.test_model, judgement.neighbor_model))
        totals = groups.setdefault((first, second, judgement.scenario_id, judgement.iteration), [0, 0])
        if judgement.test_model == first:
            totals[0] += judgement.plus_for_test
            totals[1] += judgement.plus_for_other
        else:
            totals[0] += judgement.plus_for_other
            totals[1] += judgement.plus_for_test
    position = {name: i for i, name in enumerate(ladder or ())}
    verdicts = []
    for (first, second, _, _), (plus_first, plus_second) in groups.items():
        if rank_window is not None:
            if first not in position or second not in position:
                raise ValueError(f"the ladder lacks {first if first not in position else second!r}")
            if abs(position[first] - position[second]) > rank_window:
                continue
        verdicts.append(Verdict(first, second, eqbench3_margin(plus_first, plus_second, bin_size=bin_size)))
    return verdicts
