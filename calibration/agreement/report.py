"""Compute the full agreement report of a label table and the paired bootstrap difference between two judges."""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from calibration.agreement.alpha import _alpha_statistic, _alpha_with_judge_statistic
from calibration.agreement.bootstrap import _check_bootstrap, _difference, _estimate, _Resamples, _Statistic
from calibration.agreement.core import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    LEVELS,
    NO_PAIRABLE_UNITS,
    NO_RATINGS,
    SIGNED_SCALE,
    AgreementReport,
    ArrayLike,
    Coefficient,
    Estimate,
    FloatArray,
    KappaWeights,
    Level,
    PairAgreement,
)
from calibration.agreement.correlation import _percent_statistic, _spearman_statistic
from calibration.agreement.kappa import _cohen_statistic, _fleiss_statistic
from calibration.agreement.tables import (
    _check_signed,
    _ordered_categories,
    _rater_reason,
    _same_length,
    _table,
    _vector,
)

# --- judges ---------------------------------------------------------------------------------------------


def _coefficient_statistic(
    coefficient: Coefficient,
    reference: ArrayLike,
    judge: FloatArray,
    labels: ArrayLike | None,
    both_orientations: bool,
) -> _Statistic:
    if both_orientations and not coefficient.startswith("cohen_"):
        raise ValueError(f"both_orientations applies to the cohen_* coefficients, not to {coefficient!r}")
    if coefficient.startswith("alpha_"):
        return _alpha_with_judge_statistic(reference, judge, coefficient.removeprefix("alpha_"))
    column = np.asarray(reference, dtype=float)
    if column.ndim == 2 and column.shape[1] == 1:
        column = column[:, 0]
    column = _vector(column, "reference (one value per unit, e.g. the experts' majority or median)")
    _same_length(reference=column, judge=judge)
    if coefficient.startswith("cohen_"):
        weights: KappaWeights = coefficient.removeprefix("cohen_")
        name = f"cohen_kappa_{weights}" + ("_both_orientations" if both_orientations else "")
        return _cohen_statistic(column, judge, weights, labels, name, both_orientations=both_orientations)
    if coefficient in ("percent_agreement", "percent_agreement_without_ties"):
        return _percent_statistic(column, judge, coefficient.endswith("without_ties"), coefficient)
    if coefficient == "spearman":
        return _spearman_statistic(column, judge, "spearman", ("the reference", "the judge"))
    raise ValueError(f"unknown coefficient {coefficient!r}")


def judge_difference(
    reference: ArrayLike,
    judge_a: ArrayLike,
    judge_b: ArrayLike,
    *,
    coefficient: Coefficient,
    labels: ArrayLike | None = None,
    both_orientations: bool = False,
    seed: int = 0,
    n_boot: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Estimate:
    """Compare two judges against the same reference with a paired bootstrap over units.

    Return coefficient(judge A) - coefficient(judge B), its percentile interval from resamples that draw the
    same units for both judges, and the two-sided bootstrap p-value 2 * (k + 1) / (B + 1), capped at 1, where k
    counts the B resampled differences at or beyond zero on the smaller side (so it is never 0).
    ``reference`` is the experts' table (units x experts) for the ``alpha_*`` coefficients, where each judge is
    added as one more rater, and one value per unit (majority or median) for the others. Percent agreement
    compares values as given: pass winners to compare winners. ``labels`` and ``both_orientations`` mean what
    they mean for ``cohen_kappa``: each judge's kappa is the one ``cohen_kappa`` gives it against the reference.
    """
    _check_bootstrap(n_boot, confidence)
    first, second = _vector(judge_a, "judge_a"), _vector(judge_b, "judge_b")
    _same_length(judge_a=first, judge_b=second)
    statistic_a = _coefficient_statistic(coefficient, reference, first, labels, both_orientations)
    statistic_b = _coefficient_statistic(coefficient, reference, second, labels, both_orientations)
    return _difference(statistic_a, statistic_b, _Resamples(len(first), seed=seed, n_boot=n_boot), confidence)


# --- the report -----------------------------------------------------------------------------------------


def _table_reason(table: FloatArray) -> str | None:
    reason = _rater_reason(table.shape[1])
    if reason:
        return reason
    rated = ~np.isnan(table)
    if not rated.any():
        return NO_RATINGS
    pairable = rated.sum(axis=1) >= 2
    if not pairable.any():
        return NO_PAIRABLE_UNITS
    values = np.unique(table[pairable][rated[pairable]])
    if values.size < 2:
        return (
            f"every rating on units with two or more ratings is {values[0]:g}: with no variation, agreement "
            "is undefined"
        )
    return None


def _declared_scale(scale: ArrayLike | None, signed: bool, values: FloatArray) -> FloatArray | None:
    if scale is None:
        return np.array(SIGNED_SCALE) if signed else None
    declared = _ordered_categories(scale)
    if signed and not np.array_equal(declared, -declared[::-1]):
        raise ValueError(f"a scale for signed scores must be symmetric around 0, e.g. -5..5; got {declared.tolist()}")
    off_scale = values[~np.isin(values, declared)]
    if off_scale.size:
        raise ValueError(f"rating {off_scale[0]:g} is not on the declared scale {declared.tolist()}")
    return declared


def agreement_report(
    table: ArrayLike,
    level: Level,
    *,
    raters: Sequence[str] | None = None,
    signed: bool = False,
    scale: ArrayLike | None = None,
    seed: int = 0,
    n_boot: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> AgreementReport:
    """Compute every coefficient of a label table with its bootstrap interval, from one set of resamples.

    Krippendorff's alpha at ``level`` and Fleiss' kappa over all raters; for each pair of raters Cohen's kappa
    (plus linear and quadratic weights and Spearman's rho unless the level is nominal) and percent agreement.
    Weights count positions on ``scale``, the declared scale (strictly increasing, holding every value); without
    one, on the values the two raters gave on the units both rated (as R irr::kappa2). With ``signed`` the values
    are pairwise scores -5..+5: the scale defaults to -5..+5, alpha is also given on the winner, the nominal
    coefficients use the winner, percent agreement is also given without ties, and every Cohen's kappa is also
    given over both orientations (each unit once as given and once with A and B swapped), which does not depend
    on which response of a pair is called A.
    """
    _check_bootstrap(n_boot, confidence)
    array, names = _checked_table(table, level, raters, signed)
    winners = np.sign(array) if signed else array
    categories = np.unique(array[~np.isnan(array)])
    declared = _declared_scale(scale, signed, categories)
    pairs = _PairEstimates(
        array=array,
        winners=winners,
        names=names,
        level=level,
        signed=signed,
        declared=declared,
        resamples=_Resamples(array.shape[0], seed=seed, n_boot=n_boot),
        confidence=confidence,
    )
    suffix = "_winner" if signed else ""
    alpha_winner = None
    if signed:
        alpha_winner = pairs.estimate(_alpha_statistic(winners, "nominal", "krippendorff_alpha_nominal_winner"))
    return AgreementReport(
        level=level,
        signed=signed,
        raters=names,
        categories=tuple(float(c) for c in categories),
        scale=None if declared is None else tuple(float(c) for c in declared),
        n_units=array.shape[0],
        n_ratings=int((~np.isnan(array)).sum()),
        seed=seed,
        n_boot=n_boot,
        confidence=confidence,
        undefined_reason=_table_reason(array),
        alpha=pairs.estimate(_alpha_statistic(array, level, f"krippendorff_alpha_{level}")),
        alpha_winner=alpha_winner,
        fleiss_kappa=pairs.estimate(_fleiss_statistic(winners, f"fleiss_kappa{suffix}")),
        pairs=tuple(pairs.pair(i, j) for i in range(len(names)) for j in range(i + 1, len(names))),
    )


def _checked_table(
    table: ArrayLike, level: Level, raters: Sequence[str] | None, signed: bool
) -> tuple[FloatArray, tuple[str, ...]]:
    """Return the label table as an array and its raters' names (rater1, rater2, ... by default), refusing a level
    it does not know, the ratio level for signed scores, names that do not match the columns and bad scores."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}; got {level!r}")
    if signed and level == "ratio":
        raise ValueError("signed scores run from -5 to +5 through 0: the ratio level does not apply to them")
    array = _table(table)
    names = tuple(raters) if raters is not None else tuple(f"rater{i + 1}" for i in range(array.shape[1]))
    if len(names) != array.shape[1] or len(set(names)) != len(names):
        raise ValueError(f"give {array.shape[1]} distinct rater names, one per column")
    if signed:
        _check_signed(array)
    return array, names


@dataclass(frozen=True)
class _PairEstimates:
    """The coefficients of ``agreement_report`` for each pair of raters, from one set of resamples."""

    array: FloatArray
    # The table itself, or the winner of each signed score (its sign).
    winners: FloatArray
    names: tuple[str, ...]
    level: Level
    signed: bool
    declared: FloatArray | None
    resamples: _Resamples
    confidence: float

    def estimate(self, statistic: _Statistic) -> Estimate:
        return _estimate(statistic, self.resamples, self.confidence)

    def kappa(
        self,
        key: str,
        name: str,
        first: FloatArray,
        second: FloatArray,
        weights: KappaWeights,
        labels: FloatArray | None,
    ) -> dict[str, Estimate]:
        """Return Cohen's kappa under ``key`` and, for signed scores, the same over both orientations."""
        result = {key: self.estimate(_cohen_statistic(first, second, weights, labels, name))}
        if self.signed:
            statistic = _cohen_statistic(
                first, second, weights, labels, f"{name}_both_orientations", both_orientations=True
            )
            result[f"{key}_both_orientations"] = self.estimate(statistic)
        return result

    def pair(self, i: int, j: int) -> PairAgreement:
        """Return the agreement of the raters in columns ``i`` and ``j``."""
        a_winners, b_winners = self.winners[:, i], self.winners[:, j]
        suffix = "_winner" if self.signed else ""
        agreement = _percent_statistic(a_winners, b_winners, False, f"percent_agreement{suffix}")
        return PairAgreement(
            rater_a=self.names[i],
            rater_b=self.names[j],
            percent_agreement=self.estimate(agreement),
            **self.kappa("cohen_kappa", f"cohen_kappa_unweighted{suffix}", a_winners, b_winners, "unweighted", None),
            **self._optional(i, j),
        )

    def _optional(self, i: int, j: int) -> dict[str, Estimate | None]:
        """Return the weighted kappas and Spearman's rho (beyond the nominal level) and the percent agreement
        without ties (signed scores) of a pair; None where they do not apply."""
        a, b = self.array[:, i], self.array[:, j]
        optional: dict[str, Estimate | None] = dict.fromkeys(
            ("cohen_kappa_linear", "cohen_kappa_quadratic", "percent_agreement_without_ties", "spearman")
        )
        if self.level != "nominal":
            for weights in ("linear", "quadratic"):
                name = f"cohen_kappa_{weights}"
                optional.update(self.kappa(name, name, a, b, weights, self.declared))
            optional["spearman"] = self.estimate(_spearman_statistic(a, b, "spearman", (self.names[i], self.names[j])))
        if self.signed:
            name = "percent_agreement_without_ties_winner"
            statistic = _percent_statistic(self.winners[:, i], self.winners[:, j], True, name)
            optional["percent_agreement_without_ties"] = self.estimate(statistic)
        return optional
