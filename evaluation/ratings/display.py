"""The display scale: ``mu`` mapped linearly to Elo-like points, optionally through one or two anchor models."""

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from evaluation.ratings.update import DEFAULT_ENVIRONMENT, TrueSkillEnvironment

DEFAULT_DISPLAY_CENTER = 1000.0
# Camilli (1994): logistic(1.702 x) approximates the normal CDF to within 0.01 everywhere, which converts a
# TrueSkill performance difference in units of sqrt(2) * beta into Elo's logistic scale (400 points = 10:1 odds).
LOGISTIC_PROBIT_SCALE = 1.702


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
