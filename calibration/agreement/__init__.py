"""Agreement statistics for label tables: plain arrays in, JSON-ready results out, no ORM.

A label table is a float array of shape (units, raters) with NaN for a missing rating. Its values are nominal
category codes, ordinal or interval scores, or signed pairwise scores from -5 to +5 (+k: A wins by k plus signs,
0: tie, -k: B wins by k). The winner of a signed score is its sign.

Every coefficient comes back as an ``Estimate`` with a percentile bootstrap interval. The bootstrap resamples
units (comparisons) with replacement: resample ``b`` takes the units
``numpy.random.default_rng(seed).integers(0, n_units, size=(n_boot, n_units))[b]``, so all coefficients computed
from one seed on one set of units see the same resamples; that is what makes the paired bootstrap paired. A
coefficient that cannot be computed (one rater, no variation, nothing in common) has ``value=None`` and says why
in ``undefined_reason``. Resamples in which it is undefined are left out of the interval and counted in
``n_boot_defined``. No result ever holds NaN. See docs/agreement.md for the definitions and their sources.

The package re-exports its public names from the modules that hold them:

- ``core``: types, constants, ``UndefinedStatistic`` and the result records (``Estimate`` and the reports);
- ``bootstrap``: shared unit resamples, percentile intervals and paired differences (private helpers);
- ``tables``: input checks and category counts (``ratings_to_counts``);
- ``alpha``: Krippendorff's alpha; ``kappa``: Cohen's and Fleiss' kappa;
- ``correlation``: percent agreement and Spearman's rho;
- ``bias``: position bias and length bias of a judge;
- ``verdicts``: combination of both orders, the experts' majority and median (the orientation of a verdict on
  the order shown is ``annotation.labelling.pairwise.canonical_score``);
- ``report``: the full agreement report of a table and the paired difference between two judges.
"""

from calibration.agreement.alpha import alpha_with_judge, krippendorff_alpha
from calibration.agreement.bias import length_bias, position_bias
from calibration.agreement.core import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    LENGTH_RATIO,
    LEVELS,
    NO_PAIRABLE_UNITS,
    NO_RATINGS,
    NO_SHARED_UNITS,
    SCALE_MAX,
    SIGNED_SCALE,
    AgreementReport,
    ArrayLike,
    BoolArray,
    Coefficient,
    Estimate,
    FloatArray,
    KappaWeights,
    Level,
    PairAgreement,
    PositionBias,
    UndefinedStatistic,
)
from calibration.agreement.correlation import percent_agreement, spearman
from calibration.agreement.kappa import cohen_kappa, fleiss_kappa, fleiss_kappa_from_counts, kappa_from_confusion
from calibration.agreement.report import agreement_report, judge_difference
from calibration.agreement.tables import ratings_to_counts
from calibration.agreement.verdicts import combine_facet, combine_summed, majority_winner, median_score

__all__ = [
    "DEFAULT_CONFIDENCE",
    "DEFAULT_RESAMPLES",
    "LENGTH_RATIO",
    "LEVELS",
    "NO_PAIRABLE_UNITS",
    "NO_RATINGS",
    "NO_SHARED_UNITS",
    "SCALE_MAX",
    "SIGNED_SCALE",
    "AgreementReport",
    "ArrayLike",
    "BoolArray",
    "Coefficient",
    "Estimate",
    "FloatArray",
    "KappaWeights",
    "Level",
    "PairAgreement",
    "PositionBias",
    "UndefinedStatistic",
    "agreement_report",
    "alpha_with_judge",
    "cohen_kappa",
    "combine_facet",
    "combine_summed",
    "fleiss_kappa",
    "fleiss_kappa_from_counts",
    "judge_difference",
    "kappa_from_confusion",
    "krippendorff_alpha",
    "length_bias",
    "majority_winner",
    "median_score",
    "percent_agreement",
    "position_bias",
    "ratings_to_counts",
    "spearman",
]
