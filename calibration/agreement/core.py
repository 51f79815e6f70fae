"""Hold the shared vocabulary of the agreement statistics: types, constants, the error and the result records.

Every result is a frozen dataclass whose ``as_dict`` gives plain, JSON-serialisable values.
"""

from dataclasses import dataclass, fields
from typing import Literal

import numpy as np
import numpy.typing as npt

Level = Literal["nominal", "ordinal", "interval", "ratio"]
KappaWeights = Literal["unweighted", "linear", "quadratic"]
Coefficient = Literal[
    "alpha_nominal",
    "alpha_ordinal",
    "alpha_interval",
    "cohen_unweighted",
    "cohen_linear",
    "cohen_quadratic",
    "percent_agreement",
    "percent_agreement_without_ties",
    "spearman",
]
ArrayLike = npt.ArrayLike
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

LEVELS: tuple[Level, ...] = ("nominal", "ordinal", "interval", "ratio")
DEFAULT_RESAMPLES = 1000
DEFAULT_CONFIDENCE = 0.95
SCALE_MAX = 5
SIGNED_SCALE = tuple(float(score) for score in range(-SCALE_MAX, SCALE_MAX + 1))
LENGTH_RATIO = 1.3

NO_SHARED_UNITS = "no unit was rated by both raters"
NO_PAIRABLE_UNITS = "no unit has ratings from two or more raters"
NO_RATINGS = "no ratings: every cell of the table is missing"


class UndefinedStatistic(ValueError):
    """Signal that a coefficient is undefined on the given data; the message says why."""


def _plain(value: object) -> object:
    if isinstance(value, _Serialisable):
        return value.as_dict()
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


class _Serialisable:
    def as_dict(self) -> dict[str, object]:
        """Return the result as plain, JSON-serialisable Python values."""
        return {field.name: _plain(getattr(self, field.name)) for field in fields(self)}


@dataclass(frozen=True)
class Estimate(_Serialisable):
    """One coefficient with its percentile bootstrap interval; ``value`` is None exactly when it is undefined.

    ``ci_low``/``ci_high`` are None when no resample gave a defined value (or ``n_boot`` is 0); ``p_value`` is
    set by the statistics that come with a test (binomial tests, paired differences).
    """

    statistic: str
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n_units: int
    undefined_reason: str | None = None
    p_value: float | None = None
    n_boot: int = 0
    n_boot_defined: int = 0
    confidence: float = DEFAULT_CONFIDENCE


@dataclass(frozen=True)
class PairAgreement(_Serialisable):
    """The pairwise coefficients of two raters; a coefficient that does not apply to the level is None.

    The ``*_both_orientations`` kappas (signed scores only) count every unit once as given and once with A and B
    swapped, so they do not depend on which response of a pair is called A.
    """

    rater_a: str
    rater_b: str
    cohen_kappa: Estimate
    cohen_kappa_linear: Estimate | None
    cohen_kappa_quadratic: Estimate | None
    percent_agreement: Estimate
    percent_agreement_without_ties: Estimate | None
    spearman: Estimate | None
    cohen_kappa_both_orientations: Estimate | None = None
    cohen_kappa_linear_both_orientations: Estimate | None = None
    cohen_kappa_quadratic_both_orientations: Estimate | None = None


@dataclass(frozen=True)
class AgreementReport(_Serialisable):
    """Every coefficient of a label table with its interval, as printed by ``manage.py agreement``.

    For a signed table (``signed=True``) the nominal coefficients (``alpha_winner``, Fleiss' kappa, unweighted
    Cohen's kappa, percent agreement) are computed on the winner, the others on the signed score. ``scale`` is
    the declared scale on which the weighted kappas count distances, or None when each pair's weights count
    positions among the values both raters gave on the units both rated (as R irr::kappa2).
    """

    level: Level
    signed: bool
    raters: tuple[str, ...]
    categories: tuple[float, ...]
    scale: tuple[float, ...] | None
    n_units: int
    n_ratings: int
    seed: int
    n_boot: int
    confidence: float
    undefined_reason: str | None
    alpha: Estimate
    alpha_winner: Estimate | None
    fleiss_kappa: Estimate
    pairs: tuple[PairAgreement, ...]


@dataclass(frozen=True)
class PositionBias(_Serialisable):
    """Position bias of one judge that gave a verdict in both orders (AB: A shown first; BA: B shown first)."""

    n_comparisons: int
    n_parsed_ab: int
    n_parsed_ba: int
    flip_rate: Estimate
    reversal_rate: Estimate
    first_position_win_rate: Estimate
    margin_asymmetry: Estimate
    position_offset: Estimate
