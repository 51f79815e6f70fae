"""The TrueSkill environment and the exact one-versus-one update.

The two-player update is the exact closed form of the TrueSkill factor graph for one-versus-one games (Herbrich,
Minka and Graepel 2007), checked against ``trueskill.rate_1vs1`` in the tests; it runs some three hundred times
faster than the library's general factor-graph solver, which is what makes 100,000 verdicts affordable.
``_update`` and the constants below are shared with the inlined pass loop in ``evaluation.ratings.verdicts``.
"""

import math
from dataclasses import dataclass, fields

import trueskill
from scipy import stats

_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
# Below this standardised difference the normal CDF underflows towards zero; an asymptotic series takes over.
_CDF_FLOOR = -35.0


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
    # Bracketed so that a draw's two sides can be swapped bit for bit (floating-point addition commutes).
    c2 = two_beta2 + (var_w + var_l)
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
