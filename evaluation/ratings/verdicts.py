"""Ratings from pairwise verdicts with margins, independent of the order in which the verdicts arrive.

A verdict is ``(model_a, model_b, margin)``: a positive margin ``k`` means A won by ``k`` (``+`` to ``+++++``),
a negative one that B won by ``|k|``, zero a draw. Each decisive verdict is turned into ``f(|k|)`` sequential
TrueSkill win updates (the margin mapping), a draw into one drawn update.

TrueSkill is order dependent. Results here depend only on the multiset of verdicts, never on the order in which
they arrived nor on the models' names: each pass rates the verdicts in a seeded random order derived from their
content (``_content_units``: models are told apart by their records, never by their labels), and the passes are
averaged (``mu`` is the mean of the pass means; ``sigma`` is the standard deviation of the equal-weight mixture of
the pass posteriors, which adds the spread caused by order to the mean posterior variance). See
docs/statistics.md for every formula and default.
"""

import hashlib
import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields
from itertools import groupby
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
    """Ratings of every model, best ``mu`` first, with the settings that produced them.

    ``order_sd_max`` is the largest ``order_sd`` of a model: how far one pass's ``mu`` strays from another's
    because of the order alone (the mean of ``n_passes`` passes strays ``1 / sqrt(n_passes)`` as far).
    """

    ratings: tuple[ModelRating, ...]
    environment: TrueSkillEnvironment
    margin_mapping: str
    n_passes: int
    seed: int
    n_verdicts: int
    n_updates: float
    conservative_k: float
    display_scale: DisplayScale
    order_sd_max: float = 0.0

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
            "order_sd_max": self.order_sd_max,
            "display_scale": {
                "scale": scale.scale,
                "shift": scale.shift,
                "anchors": scale.anchors,
                "undefined_reason": scale.undefined_reason,
            },
        }


Step = tuple[int, int, int, float, bool]


class _Prepared(NamedTuple):
    models: list[str]
    units: list[tuple[Step, ...]]
    unit_verdicts: list[tuple[Verdict, ...]]
    unit_keys: list[tuple[int, int, int]]
    n_verdicts: list[int]
    n_steps: int
    n_updates: float


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def _record_colours(
    n_models: int, kinds: Mapping[tuple[int, int, float], int], *, rounds: int | None = None
) -> list[str]:
    """Label each model by its record, never its name: colour refinement (Weisfeiler-Lehman) over the verdicts.

    ``kinds`` counts the verdicts ``(i, j, margin)``. A model's colour digests its own colour and the multiset of
    (margin from its side, opponent's colour); the refinement stops when no class splits (or after ``rounds``).
    Two models get one colour when their records are alike all the way down (mirror-identical records), which no
    renaming changes.
    """
    games: list[list[tuple[float, int, int]]] = [[] for _ in range(n_models)]
    for (i, j, margin), count in kinds.items():
        games[i].append((margin, j, count))
        games[j].append((-margin if margin else 0.0, i, count))  # a draw is 0.0 from both sides, never -0.0
    colours = [""] * n_models
    classes = 1
    for _ in range(n_models if rounds is None else rounds):
        refined = []
        for m in range(n_models):
            record: Counter = Counter()
            for margin, opponent, count in games[m]:
                record[margin, colours[opponent]] += count
            refined.append(_digest(f"{colours[m]}|{sorted(record.items())}"))
        split = len(set(refined))
        colours = refined
        if split == classes:
            break
        classes = split
    return colours


def _sign(margin: float) -> float:
    return 1.0 if margin > 0 else -1.0 if margin < 0 else 0.0


def _content_units(
    n_models: int, kinds: Mapping[tuple[int, int, float], tuple[int, Step, Verdict]]
) -> tuple[list[tuple[Step, ...]], list[tuple[Verdict, ...]], list[tuple[int, int, int]]]:
    """Group the verdicts into units named by content, in canonical order, with three 64-bit keys per unit.

    ``kinds`` maps each distinct verdict ``(i, j, margin)`` (``i < j``) to its count, step and display form.
    Labels never enter, and neither do the margins' sizes: models are told apart by who they played
    (``schedule``) and by their records of wins, draws and losses, so a verdict whose margin grows (``+`` to
    ``+++++``) leaves every unit where it was and only raises the updates in its own pair's units. A verdict's
    first key is its pairing's schedule colours and its copy index ``r`` among the pair's verdicts of its class
    (its result seen from a label-free side); a pair's verdicts of one class take its copies in the order of
    their margins' sizes, so raising a margin raises the sizes copy by copy, never lowers one. The second key
    digests its two models' own records and its result, the third their refined records (these order verdicts
    that share the first key, as between models of one schedule in a round robin). Verdicts sharing all three
    form one unit, rated side by side (``_rate_side_by_side``): mirror images (models whose records are alike
    all the way down), whatever order they came in.
    """
    played_counts: Counter = Counter()
    results: Counter = Counter()
    for (i, j, margin), (count, _step, _verdict) in kinds.items():
        played_counts[i, j, 0.0] += count
        results[i, j, _sign(margin)] += count
    schedule = _record_colours(n_models, played_counts)
    records = _record_colours(n_models, results)
    own = _record_colours(n_models, results, rounds=1)
    classes: dict[tuple[int, int], dict[tuple, list[tuple[float, int, int]]]] = {}
    for index, ((i, j, margin), (count, _step, _verdict)) in enumerate(kinds.items()):
        # A pair's verdicts are classed by their result seen from the side that a label-free key puts first: who
        # played whom; between models of one schedule, a win and a loss are one class (from the side of the model
        # with the smaller own record, which changes only with its own results).
        result = _sign(margin)
        backward = -result if result else 0.0
        if schedule[i] != schedule[j]:
            first = result if schedule[i] < schedule[j] else backward
        else:
            first = min(result, backward)
        second = result if (own[i], result) <= (own[j], backward) else backward
        name = min((own[i], own[j], result, records[i], records[j]), (own[j], own[i], backward, records[j], records[i]))
        classes.setdefault((i, j), {}).setdefault((first, second, name), []).append((abs(margin), count, index))
    listed = list(kinds.values())
    grouped = _copies(classes, listed, schedule)
    units, unit_verdicts, keys = [], [], []
    for identity in sorted(grouped):
        played, r, name = identity
        units.append(tuple(listed[index][1] for index in grouped[identity]))
        unit_verdicts.append(tuple(listed[index][2] for index in grouped[identity]))
        keys.append((int(_digest(f"{played}|{r}"), 16), int(_digest(f"{name[:3]}"), 16), int(_digest(f"{name}"), 16)))
    return units, unit_verdicts, keys


def _copies(classes: dict, listed: list[tuple[int, Step, Verdict]], schedule: list) -> dict[tuple, list[int]]:
    """Give each verdict of each pair's classes its copy indices (``_content_units``); return the verdicts' indices
    in ``listed`` by unit identity (schedule colours of the pair, copy index, class name)."""
    grouped: dict[tuple[tuple[str, str], int, tuple[str, str, float, str, str]], list[int]] = {}
    for (i, j), pair_classes in classes.items():
        played = (min(schedule[i], schedule[j]), max(schedule[i], schedule[j]))
        r = 0
        for (_first, _second, name), games in sorted(pair_classes.items()):
            if len({listed[index][1][0] for _size, _count, index in games}) > 1:
                # Wins both ways between models no label-free key tells apart: ordered by size, a growing margin
                # could swap who wins first, so the class is one unit, rated side by side.
                for _size, count, index in games:
                    grouped.setdefault((played, r, name), []).extend([index] * count)
                r += 1
                continue
            for _size, tied in groupby(sorted(games), key=lambda game: game[0]):
                # Verdicts of one class and one size are those no label-free key tells apart (mirror models
                # winning one each): they share their copy indices and are rated side by side.
                tied = list(tied)
                for _size, count, index in tied:
                    for copy in range(r, r + count):
                        grouped.setdefault((played, copy, name), []).append(index)
                r += max(count for _size, count, _index in tied)
    return grouped


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
        rows.append((str(model_a), str(model_b), margin + 0.0))  # + 0.0 turns -0.0 into 0.0
    names = sorted({name for row in rows for name in row[:2]} | set(models))
    position = {name: i for i, name in enumerate(names)}
    kinds: dict[tuple[int, int, float], tuple[int, Step, Verdict]] = {}
    counts = [0] * len(names)
    updates = []
    repeats_of: dict[float, float] = {}
    for model_a, model_b, margin in rows:
        i, j = position[model_a], position[model_b]
        counts[i] += 1
        counts[j] += 1
        if j < i:
            i, j, margin = j, i, -margin if margin else 0.0
        if (i, j, margin) in kinds:
            count, step, verdict = kinds[i, j, margin]
            kinds[i, j, margin] = (count + 1, step, verdict)
            updates.append(1.0 if margin == 0 else repeats_of[abs(margin)])
            continue
        if margin == 0:
            step = (i, j, 0, 0.0, True)
            verdict = Verdict(names[i], names[j], 0.0)
            updates.append(1.0)
        else:
            if abs(margin) not in repeats_of:
                repeats_of[abs(margin)] = margin_repeats(abs(margin), mapping)
            repeats = repeats_of[abs(margin)]
            whole = math.floor(repeats)
            winner, loser = (i, j) if margin > 0 else (j, i)
            step = (winner, loser, whole, repeats - whole, False)
            verdict = Verdict(names[winner], names[loser], abs(margin))
            updates.append(repeats)
        kinds[i, j, margin] = (1, step, verdict)
    units, unit_verdicts, keys = _content_units(len(names), kinds)
    # An exact sum does not depend on the order of the verdicts.
    return _Prepared(names, units, unit_verdicts, keys, counts, len(rows), math.fsum(updates))


def _rate_pass(
    steps: list[Step],
    order: list[int],
    n_models: int,
    environment: TrueSkillEnvironment,
) -> tuple[list[float], list[float]]:
    """Run one sequential pass of updates in ``order``; return the final means and variances."""
    mu = [environment.mu] * n_models
    var = [environment.sigma**2] * n_models
    _rate_units([(step,) for step in steps], order, mu, var, environment)
    return mu, var


def _rate_units(
    units: list[tuple[Step, ...]],
    order: list[int],
    mu: list[float],
    var: list[float],
    environment: TrueSkillEnvironment,
) -> None:
    """Run one pass over the units in ``order``, updating the means ``mu`` and variances ``var`` in place."""
    two_beta2 = 2.0 * environment.beta**2
    tau2 = environment.tau**2
    eps = environment.draw_margin
    exp, erfc, sqrt = math.exp, math.erfc, math.sqrt
    for k in order:
        unit = units[k]
        if len(unit) > 1:
            _rate_side_by_side(unit, mu, var, environment)
            continue
        winner, loser, whole, part, drawn = unit[0]
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


def _rate_side_by_side(
    unit: tuple[Step, ...], mu: list[float], var: list[float], environment: TrueSkillEnvironment
) -> None:
    """Rate a unit's verdicts side by side, in place: each from the ratings before the unit, messages multiplied.

    Each verdict's update is the Gaussian message it sends to its two models (posterior over prior, in natural
    parameters); a model's messages are multiplied, as in one parallel sweep of expectation propagation. Sums are
    exact (``math.fsum``), so the result does not depend on the order of the unit's verdicts.
    """
    precision: dict[int, list[float]] = {}
    shift: dict[int, list[float]] = {}
    for winner, loser, whole, part, drawn in unit:
        pair_mu, pair_var = [mu[winner], mu[loser]], [var[winner], var[loser]]
        _rate_units([((0, 1, whole, part, drawn),)], [0], pair_mu, pair_var, environment)
        for side, model in enumerate((winner, loser)):
            precision.setdefault(model, [1.0 / var[model]]).append(1.0 / pair_var[side] - 1.0 / var[model])
            shift.setdefault(model, [mu[model] / var[model]]).append(
                pair_mu[side] / pair_var[side] - mu[model] / var[model]
            )
    for model, terms in precision.items():
        total = math.fsum(terms)
        var[model], mu[model] = 1.0 / total, math.fsum(shift[model]) / total


def _mix(keys: np.ndarray, salt: int) -> np.ndarray:
    """Return a seeded 64-bit hash of each key (SplitMix64's finaliser): a random but reproducible order."""
    with np.errstate(over="ignore"):
        z = keys ^ np.uint64(salt)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def _pass_keys(unit_keys: list[tuple[int, int, int]], n_passes: int, seed: int) -> list[list[int]]:
    """Return each pass's order of the units: sorted by seeded hashes of their two content keys.

    A unit keeps its place when other verdicts change (only units of the same pairing can trade places), so a
    changed verdict barely perturbs the order. Every second pass is the reverse of the one before (antithetic
    passes), which cancels the first-order effect of the order, so that 10 passes suffice.
    """
    if not unit_keys:
        return [[] for _ in range(n_passes)]
    first, second, third = (np.array(column, dtype=np.uint64) for column in zip(*unit_keys, strict=True))
    orders: list[list[int]] = []
    for p in range(n_passes):
        if p % 2:
            orders.append(orders[-1][::-1])
            continue
        salt = int(_digest(f"pass|{seed}|{p}"), 16)
        orders.append(np.lexsort((_mix(third, salt), _mix(second, salt), _mix(first, salt))).tolist())
    return orders


def pass_orders(
    verdicts: Iterable[tuple[str, str, float]], *, n_passes: int = DEFAULT_PASSES, seed: int = 0
) -> list[list[tuple[Verdict, ...]]]:
    """Return the order in which each pass rates the verdicts: units of verdicts rated side by side.

    Each verdict is given winner first with its margin's size (a draw: margin 0, its models in name order).
    """
    prepared = _prepare(verdicts, (), DEFAULT_MARGIN_MAPPING, math.inf)
    return [[prepared.unit_verdicts[k] for k in order] for order in _pass_keys(prepared.unit_keys, n_passes, seed)]


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
    pass_mu, pass_var = _passes(prepared, environment, n_passes, seed)
    mean_mu = pass_mu.mean(axis=0)
    order_var = pass_mu.var(axis=0)
    sigma = np.sqrt(pass_var.mean(axis=0) + order_var)
    mus = dict(zip(prepared.models, mean_mu.tolist(), strict=True))
    scale = display_scale(mus, anchors=anchors, environment=environment, center=display_center)
    ratings = []
    for i, model in enumerate(prepared.models):
        m, s = float(mean_mu[i]), float(sigma[i])
        ratings.append(
            ModelRating(
                model=model,
                mu=m,
                sigma=s,
                conservative=m - conservative_k * s,
                display=scale.apply(m),
                **_display_interval(scale, m, s),
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
        n_verdicts=prepared.n_steps,
        n_updates=prepared.n_updates,
        conservative_k=conservative_k,
        display_scale=scale,
        order_sd_max=max((rating.order_sd for rating in ratings), default=0.0),
    )


def _passes(
    prepared: _Prepared, environment: TrueSkillEnvironment, n_passes: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Rate the prepared units in each pass's seeded order from the prior; return every pass's mu and variance."""
    n_models = len(prepared.models)
    pass_mu = np.empty((n_passes, n_models))
    pass_var = np.empty((n_passes, n_models))
    for p, order in enumerate(_pass_keys(prepared.unit_keys, n_passes, seed)):
        mu = [environment.mu] * n_models
        var = [environment.sigma**2] * n_models
        _rate_units(prepared.units, order, mu, var, environment)
        pass_mu[p] = mu
        pass_var[p] = var
    return pass_mu, pass_var


def _display_interval(scale: DisplayScale, mu: float, sigma: float) -> dict[str, float | None]:
    """Return ``mu ± 1.96 sigma`` on the display scale, low end first."""
    low, high = scale.apply(mu - 1.96 * sigma), scale.apply(mu + 1.96 * sigma)
    if low is not None and high is not None and low > high:
        low, high = high, low
    return {"display_low": low, "display_high": high}
