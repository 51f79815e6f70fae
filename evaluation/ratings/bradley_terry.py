"""Bradley-Terry ratings: maximum-likelihood strengths from pairwise verdicts, with bootstrap intervals.

Model (Bradley and Terry 1952; Zermelo 1929): model ``i`` beats model ``j`` with probability
``sigma(theta_i - theta_j)``, ``sigma`` the logistic function. A verdict counts as a win for the side its margin
favours, whatever the margin's size; a tie counts as half a win for each side (as Chatbot Arena and Evalica do).
The strengths maximise the log-likelihood ``sum_ij W_ij log sigma(theta_i - theta_j)``, ``W_ij`` the wins of ``i``
over ``j``, by Newton's method with step halving; they are centred to mean zero (only differences are
identified). The maximum exists and is unique exactly when every split of the models into two groups has a
model of each group winning or tying against the other group (Ford 1957; Hunter 2004): the "beat or tied" graph
is strongly connected. Otherwise the result is undefined with the reason, unless ``virtual_draws`` adds that
many tied games of every model against a virtual opponent of strength zero (a weak prior, as in Coulom's
Whole-History Rating), which keeps every strength finite.

Intervals: percentile bootstrap over verdicts (resampled with replacement, seeded), each resample refitted; the
rank interval comes from the same resamples, and ``rank_stability`` is the mean Kendall's tau-b between each
resample's ranking and the reported one. See docs/statistics.md.
"""

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass

import numpy as np
from scipy.sparse import csr_array
from scipy.sparse.csgraph import breadth_first_order, connected_components

ELO_POINTS_PER_LOGIT = 400.0 / math.log(10.0)
DEFAULT_ELO_CENTER = 1000.0
DEFAULT_RESAMPLES = 1000
_TOLERANCE = 1e-10
_MAX_ITERATIONS = 200


@dataclass(frozen=True)
class BradleyTerryRating:
    """One model's strength (log-odds scale, mean zero), its Elo-scale value, interval, rank and record.

    ``wins`` counts a tie as half a win. Everything estimated is None when the model has no verdict or the
    maximum-likelihood strengths do not exist.
    """

    model: str
    strength: float | None
    low: float | None
    high: float | None
    elo: float | None
    elo_low: float | None
    elo_high: float | None
    rank: int | None
    rank_low: int | None
    rank_high: int | None
    wins: float
    n_verdicts: int


@dataclass(frozen=True)
class BradleyTerryRatings:
    """Strengths of every model, best first, with how they were computed; None with a reason when undefined."""

    ratings: tuple[BradleyTerryRating, ...]
    n_verdicts: int
    virtual_draws: float
    log_likelihood: float | None
    iterations: int
    n_resamples: int
    n_resamples_without_mle: int
    seed: int
    confidence: float
    rank_stability: float | None
    undefined_reason: str | None = None

    def by_model(self) -> dict[str, BradleyTerryRating]:
        """Return the ratings keyed by model name."""
        return {rating.model: rating for rating in self.ratings}

    def ranking(self) -> list[str]:
        """Return the rated models, strongest first (models without a strength are left out)."""
        return [rating.model for rating in self.ratings if rating.strength is not None]

    def scores(self) -> dict[str, float]:
        """Return each rated model's strength."""
        return {rating.model: rating.strength for rating in self.ratings if rating.strength is not None}

    def as_dict(self) -> dict[str, object]:
        """Return the result as plain, JSON-serialisable values."""
        body = asdict(self)
        body["ratings"] = [asdict(rating) for rating in self.ratings]
        return body


def win_matrix(verdicts: Iterable[tuple[str, str, float]], models: Iterable[str] = ()) -> tuple[list[str], np.ndarray]:
    """Return the sorted model names and the matrix of wins ``W[i, j]`` of ``i`` over ``j`` (a tie is half each)."""
    return _wins(_canonical(verdicts), models)


def _wins(rows: list[tuple[str, str, float]], models: Iterable[str]) -> tuple[list[str], np.ndarray]:
    names = sorted({name for a, b, _ in rows for name in (a, b)} | set(models))
    position = {name: i for i, name in enumerate(names)}
    wins = np.zeros((len(names), len(names)))
    for a, b, margin in rows:
        i, j = position[a], position[b]
        if margin > 0:
            wins[i, j] += 1.0
        elif margin < 0:
            wins[j, i] += 1.0
        else:
            wins[i, j] += 0.5
            wins[j, i] += 0.5
    return names, wins


def mle_missing_reason(wins: np.ndarray, names: list[str]) -> str | None:
    """Return why the maximum-likelihood strengths do not exist for ``wins``, or None when they do.

    They exist when the directed graph with an edge ``i -> j`` wherever ``i`` beat or tied ``j`` is strongly
    connected (Ford 1957): otherwise some group of models never beat or tied anyone outside it, and its strengths
    run off to minus infinity relative to the rest.
    """
    n = len(names)
    if n < 2:
        return "fewer than two models have verdicts"
    played = (wins + wins.T) > 0
    n_groups, group = connected_components(csr_array(played), directed=False)
    if n_groups > 1:
        return "the models fall into groups that were never compared with each other"
    n_strong, strong = connected_components(csr_array(wins > 0), directed=True, connection="strong")
    if n_strong == 1:
        return None
    # A component with no win or tie against any other component: its members lost every game they played
    # outside it.
    beaten = np.zeros(n_strong, dtype=bool)
    rows, cols = np.nonzero(wins > 0)
    for i, j in zip(rows.tolist(), cols.tolist(), strict=True):
        if strong[i] != strong[j]:
            beaten[strong[i]] = True
    losers = next(c for c in range(n_strong) if not beaten[c])
    members = [names[i] for i in range(n) if strong[i] == losers]
    shown = ", ".join(members[:5]) + (f" and {len(members) - 5} more" if len(members) > 5 else "")
    return (
        f"the maximum-likelihood strengths do not exist: {shown} never beat or tied a model outside "
        f"{'itself' if len(members) == 1 else 'that group'}; add virtual draws for finite strengths"
    )


def fit_strengths(
    wins: np.ndarray, *, virtual_draws: float = 0.0, start: np.ndarray | None = None
) -> tuple[np.ndarray, int]:
    """Return the strengths maximising the (penalised) log-likelihood of ``wins``, centred, and the iterations.

    Newton's method on the concave log-likelihood with step halving. Without virtual draws the Hessian is
    singular along the all-ones direction, so the step solves ``(-H + 11'/m) d = g`` (``g`` and the step then sum
    to zero). The caller checks existence first (``mle_missing_reason``).
    """
    n = wins.shape[0]
    played = wins + wins.T
    won = wins.sum(axis=1)
    theta = np.zeros(n) if start is None else np.asarray(start, dtype=float) - np.mean(start)
    centring = np.full((n, n), 1.0 / n) if virtual_draws == 0 else 0.0
    value = _log_likelihood(theta, wins, virtual_draws)
    iterations = 0
    while iterations < _MAX_ITERATIONS:
        iterations += 1
        gradient, information = _derivatives(theta, played, won, virtual_draws)
        step = np.linalg.solve(information + centring, gradient)
        size = 1.0
        while True:
            candidate = theta + size * step
            candidate_value = _log_likelihood(candidate, wins, virtual_draws)
            if candidate_value >= value - 1e-12 * abs(value) or size < 1e-8:
                break
            size /= 2
        theta, value = candidate, candidate_value
        if float(np.max(np.abs(size * step))) < _TOLERANCE:
            break
    return theta - theta.mean(), iterations


def _log_likelihood(theta: np.ndarray, wins: np.ndarray, virtual_draws: float) -> float:
    difference = theta[:, None] - theta[None, :]
    value = -float(np.sum(wins * np.logaddexp(0.0, -difference)))
    if virtual_draws:
        value -= 0.5 * virtual_draws * float(np.sum(np.logaddexp(0.0, -theta) + np.logaddexp(0.0, theta)))
    return value


def _derivatives(
    theta: np.ndarray, played: np.ndarray, won: np.ndarray, virtual_draws: float
) -> tuple[np.ndarray, np.ndarray]:
    """Return the gradient and the observed information (minus the Hessian) of the log-likelihood."""
    p = _logistic(theta[:, None] - theta[None, :])
    gradient = won - np.sum(played * p, axis=1)
    weights = played * p * p.T
    information = np.diag(weights.sum(axis=1)) - weights
    if virtual_draws:
        q = _logistic(theta)
        gradient = gradient + virtual_draws * (0.5 - q)
        information = information + np.diag(virtual_draws * q * (1.0 - q))
    return gradient, information


def _logistic(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _canonical(verdicts: Iterable[tuple[str, str, float]]) -> list[tuple[str, str, float]]:
    """Validate and orient verdicts (``a < b`` by name, the sign following) and sort them: the canonical order."""
    rows = []
    for index, verdict in enumerate(verdicts):
        try:
            model_a, model_b, margin = verdict
            margin = float(margin)
        except (TypeError, ValueError) as error:
            raise ValueError(f"verdict {index}: expected (model_a, model_b, margin), got {verdict!r}") from error
        if model_a == model_b:
            raise ValueError(f"verdict {index}: a model cannot be compared with itself ({model_a!r})")
        if not math.isfinite(margin):
            raise ValueError(f"verdict {index}: margin {margin!r} is not a finite number")
        sign = float(np.sign(margin))
        if model_b < model_a:
            model_a, model_b, sign = model_b, model_a, -sign
        rows.append((str(model_a), str(model_b), sign))
    rows.sort()
    return rows


def _ranks(strengths: np.ndarray) -> np.ndarray:
    """Return ranks, 1 for the strongest; equal strengths (to 1e-9) share the smallest rank."""
    rounded = np.round(strengths, 9)
    return 1 + np.sum(rounded[..., None, :] > rounded[..., :, None], axis=-1)


def bradley_terry(
    verdicts: Iterable[tuple[str, str, float]],
    *,
    models: Iterable[str] = (),
    virtual_draws: float = 0.0,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = 0.95,
    elo_center: float = DEFAULT_ELO_CENTER,
) -> BradleyTerryRatings:
    """Rate models by Bradley-Terry maximum likelihood, with percentile bootstrap intervals over verdicts.

    ``verdicts`` are ``(model_a, model_b, margin)``: a positive margin is a win for A, negative for B, zero a
    tie (half a win each). ``models`` adds models without verdicts (listed without a strength). The result
    depends only on the multiset of verdicts: they are put in a canonical order before resampling, so permuting
    or mirroring them changes nothing for the same seed. ``elo`` is ``elo_center + 400 / ln 10 * strength``
    (Chatbot Arena's scale). A resample in which the maximum-likelihood strengths do not exist is taken in the
    limit (see ``_resample_strengths``) and counted in ``n_resamples_without_mle``; an interval bound that
    reaches an infinite strength is None (unbounded).
    """
    if virtual_draws < 0 or not math.isfinite(virtual_draws):
        raise ValueError("virtual_draws must be a finite number, zero or more")
    if n_resamples < 0:
        raise ValueError("n_resamples cannot be negative")
    if not 0 < confidence < 1:
        raise ValueError("confidence must be between 0 and 1")
    rows = _canonical(verdicts)
    names, wins = _wins(rows, models)
    n_verdicts = np.zeros(len(names), dtype=int)
    position = {name: i for i, name in enumerate(names)}
    for a, b, _ in rows:
        n_verdicts[position[a]] += 1
        n_verdicts[position[b]] += 1
    rated = np.flatnonzero(n_verdicts > 0)
    rated_names = [names[i] for i in rated]
    rated_wins = wins[np.ix_(rated, rated)]
    if len(rated) < 2:
        reason = "fewer than two models have verdicts"
    else:
        reason = mle_missing_reason(rated_wins, rated_names) if virtual_draws == 0 else None
    unrated = {
        name: BradleyTerryRating(
            name, None, None, None, None, None, None, None, None, None, float(wins[i].sum()), int(n_verdicts[i])
        )
        for i, name in enumerate(names)
    }
    result = {
        "n_verdicts": len(rows),
        "virtual_draws": float(virtual_draws),
        "n_resamples": n_resamples,
        "seed": seed,
        "confidence": confidence,
        "log_likelihood": None,
        "iterations": 0,
        "n_resamples_without_mle": 0,
        "rank_stability": None,
        "undefined_reason": reason,
    }
    if reason is not None:
        return BradleyTerryRatings(tuple(unrated[name] for name in names), **result)
    theta, result["iterations"] = fit_strengths(rated_wins, virtual_draws=virtual_draws)
    result["log_likelihood"] = _log_likelihood(theta, rated_wins, 0.0)
    samples, result["n_resamples_without_mle"] = _bootstrap(rows, rated_names, theta, virtual_draws, n_resamples, seed)
    point_ranks = _ranks(theta)
    alpha = (1.0 - confidence) / 2.0
    intervals = [(None, None, None, None)] * len(rated)
    if len(samples):
        sample_ranks = np.where(np.isnan(samples), np.nan, _ranks(samples))
        intervals = [
            (
                _percentile(samples[:, k], alpha),
                _percentile(samples[:, k], 1.0 - alpha),
                _rank_bound(sample_ranks[:, k], alpha, "lower"),
                _rank_bound(sample_ranks[:, k], 1.0 - alpha, "higher"),
            )
            for k in range(len(rated))
        ]
        result["rank_stability"] = _mean_kendall_tau_b(samples, theta)
    ratings = dict(unrated)
    for k, i in enumerate(rated):
        lo, hi, rank_low, rank_high = intervals[k]
        ratings[names[i]] = BradleyTerryRating(
            model=names[i],
            strength=float(theta[k]),
            low=lo,
            high=hi,
            elo=_elo(float(theta[k]), elo_center),
            elo_low=_elo(lo, elo_center),
            elo_high=_elo(hi, elo_center),
            rank=int(point_ranks[k]),
            rank_low=rank_low,
            rank_high=rank_high,
            wins=float(wins[i].sum()),
            n_verdicts=int(n_verdicts[i]),
        )
    ordered = sorted(ratings.values(), key=lambda r: (r.strength is None, -(r.strength or 0.0), r.model))
    return BradleyTerryRatings(tuple(ordered), **result)


def _elo(strength: float | None, center: float) -> float | None:
    return None if strength is None else center + ELO_POINTS_PER_LOGIT * strength


def _bootstrap(
    rows: list[tuple[str, str, float]],
    names: list[str],
    theta: np.ndarray,
    virtual_draws: float,
    n_resamples: int,
    seed: int,
) -> tuple[np.ndarray, int]:
    """Return the strengths of every resample (resamples x models) and how many resamples had no MLE."""
    n, m = len(rows), len(names)
    if n_resamples == 0 or n == 0:
        return np.empty((0, m)), 0
    position = {name: i for i, name in enumerate(names)}
    # Each verdict adds to one cell of the win matrix (a win) or half to two cells (a tie).
    verdict_of, cell_of, weight_of = [], [], []
    for k, (a, b, sign) in enumerate(rows):
        i, j = position[a], position[b]
        if sign > 0:
            cells = [(i * m + j, 1.0)]
        elif sign < 0:
            cells = [(j * m + i, 1.0)]
        else:
            cells = [(i * m + j, 0.5), (j * m + i, 0.5)]
        for cell, weight in cells:
            verdict_of.append(k)
            cell_of.append(cell)
            weight_of.append(weight)
    verdict_index, cell_index, weights = np.array(verdict_of), np.array(cell_of), np.array(weight_of)
    rng = np.random.default_rng(seed)
    samples = np.empty((n_resamples, m))
    without_mle = 0
    for b in range(n_resamples):
        counts = np.bincount(rng.integers(0, n, size=n), minlength=n)
        wins = np.bincount(cell_index, weights=weights * counts[verdict_index], minlength=m * m).reshape(m, m)
        samples[b], exists = _resample_strengths(wins, theta, virtual_draws)
        without_mle += not exists
    return samples, without_mle


def _resample_strengths(wins: np.ndarray, theta: np.ndarray, virtual_draws: float) -> tuple[np.ndarray, bool]:
    """Return one resample's strengths and whether its maximum-likelihood estimate exists.

    When it does not, the likelihood's supremum is approached by pulling groups of models infinitely far apart.
    The limit is taken around the largest strongly connected group (ties broken by the first model): its
    strengths are its own maximum-likelihood ones, shifted to the point estimate's mean over the same models;
    a model it beat, directly or through others, and never lost back to is at minus infinity; a model that beat
    it and was never beaten back at plus infinity; a model in neither relation (never compared with it, e.g. one
    absent from the resample) is NaN and left out of that model's interval.
    """
    if virtual_draws > 0:
        return fit_strengths(wins, virtual_draws=virtual_draws, start=theta)[0], True
    edges = csr_array(wins > 0)
    n_groups, group = connected_components(edges, directed=True, connection="strong")
    if n_groups == 1:
        return fit_strengths(wins, start=theta)[0], True
    sizes = np.bincount(group)
    main = np.flatnonzero(group == int(np.argmax(sizes)))
    values = np.full(len(theta), np.nan)
    if len(main) >= 2:
        fitted = fit_strengths(wins[np.ix_(main, main)], start=theta[main])[0]
        values[main] = fitted + theta[main].mean()
    else:
        values[main] = theta[main]
    below = breadth_first_order(edges, int(main[0]), directed=True, return_predecessors=False)
    above = breadth_first_order(edges.T, int(main[0]), directed=True, return_predecessors=False)
    outside = np.ones(len(theta), dtype=bool)
    outside[main] = False
    below_mask = np.zeros(len(theta), dtype=bool)
    below_mask[below] = True
    above_mask = np.zeros(len(theta), dtype=bool)
    above_mask[above] = True
    values[outside & below_mask] = -np.inf
    values[outside & above_mask] = np.inf
    return values, False


def _percentile(values: np.ndarray, q: float) -> float | None:
    """Return the ``q`` quantile (linear interpolation) of the non-NaN values; None if it touches an infinity."""
    finite_or_infinite = values[~np.isnan(values)]
    if not len(finite_or_infinite):
        return None
    ordered = np.sort(finite_or_infinite)
    position = q * (len(ordered) - 1)
    below = math.floor(position)
    weight = position - below
    lower = float(ordered[below])
    if weight == 0:
        return lower if math.isfinite(lower) else None
    upper = float(ordered[below + 1])
    if not (math.isfinite(lower) and math.isfinite(upper)):
        return None
    return lower + (upper - lower) * weight


def _rank_bound(ranks: np.ndarray, q: float, method: str) -> int | None:
    present = ranks[~np.isnan(ranks)]
    return int(np.quantile(present, q, method=method)) if len(present) else None


def _mean_kendall_tau_b(samples: np.ndarray, reference: np.ndarray) -> float | None:
    """Return the mean over rows of Kendall's tau-b between each row of ``samples`` and ``reference``.

    Infinite strengths order as expected; a NaN strength counts as tied with every other model.
    """
    upper_i, upper_j = np.triu_indices(len(reference), k=1)
    ref = np.sign(np.round(reference[upper_i] - reference[upper_j], 9))
    with np.errstate(invalid="ignore"):
        differences = samples[:, upper_i] - samples[:, upper_j]
    sam = np.nan_to_num(np.sign(np.round(differences, 9)), nan=0.0)
    untied_ref = np.count_nonzero(ref)
    untied_sam = np.count_nonzero(sam, axis=1)
    denominator = np.sqrt(untied_ref * untied_sam.astype(float))
    valid = denominator > 0
    if not valid.any():
        return None
    return float(np.mean((sam[valid] @ ref) / denominator[valid]))
