"""Statistics for evaluation runs: plain arrays in, JSON-ready results out, no ORM, no NaN.

Objective results (accuracy with Wilson intervals, paired bootstrap differences with Benjamini-Hochberg FDR,
discriminability, position bias among wrong answers, multi-turn splits, the crisis-level confusion matrix) and
the analyses researchers ask for (win-rate matrix with exact binomial tests, z-scores and the ΔZ typology,
per-dimension cross-lingual gaps). A quantity that cannot be computed is None and an ``undefined_reason`` says
why. Every random step takes a seed and uses ``numpy.random.default_rng(seed)``. docs/statistics.md gives the
definitions, defaults and references.

The code lives in submodules by concept; import the names from ``evaluation.stats``:

- ``proportions``: Wilson intervals, accuracy per group (micro and macro), discriminability;
- ``bootstrap``: paired bootstrap of mean differences, alone and for every pair of models;
- ``multiple_comparisons``: Benjamini-Hochberg FDR;
- ``diagnostics``: position bias among wrong answers, multi-turn split, crisis-level confusion matrix;
- ``win_rates``: win-rate matrix with exact binomial tests;
- ``standings``: z-scores, ΔZ and its typology;
- ``correlations``: Pearson/Spearman correlation, cross-lingual gaps;
- ``probes``: EiCAP's probe analyses (score margins, turn decomposition, outcome agreement, significance per
  subcategory against a baseline);
- ``_common``: defaults, input checks and the JSON-ready base class shared by the others.
"""

from evaluation.stats._common import (
    DEFAULT_CONFIDENCE,
    DEFAULT_FDR,
    DEFAULT_RESAMPLES,
    ArrayLike,
    _Serialisable,
)
from evaluation.stats.bootstrap import (
    TOO_FEW_ITEMS,
    PairedDifference,
    bootstrap_sums,
    paired_bootstrap,
    paired_bootstrap_all,
)
from evaluation.stats.correlations import (
    Correlation,
    CrossLingualGaps,
    DimensionGap,
    correlation,
    cross_lingual_gaps,
)
from evaluation.stats.diagnostics import (
    CRISIS_LEVELS,
    CrisisConfusion,
    PositionBias,
    TurnSplit,
    crisis_confusion,
    normalised_entropy,
    position_bias,
    turn_split,
)
from evaluation.stats.multiple_comparisons import FdrResult, benjamini_hochberg
from evaluation.stats.probes import (
    MARGIN_EDGES,
    AgreementCell,
    GroupDifference,
    GroupSignificance,
    MarginDistribution,
    TurnDecomposition,
    margin_distribution,
    outcome_agreement,
    score_margin,
    significance_by_group,
    turn_decomposition,
)
from evaluation.stats.proportions import (
    GroupAccuracy,
    MacroAverage,
    Proportion,
    ProportionDifference,
    accuracy_by_group,
    discriminability,
    proportion_difference,
    wilson_interval,
)
from evaluation.stats.standings import (
    DeltaZResult,
    ModelGap,
    Typology,
    ZScores,
    delta_z,
    typology,
    z_scores,
)
from evaluation.stats.win_rates import WinRateCell, WinRateMatrix, win_rate_matrix

__all__ = [
    # _common (``_Serialisable`` is the result base class that evaluation.style builds on)
    "ArrayLike",
    "DEFAULT_CONFIDENCE",
    "DEFAULT_FDR",
    "DEFAULT_RESAMPLES",
    "_Serialisable",
    # proportions
    "GroupAccuracy",
    "MacroAverage",
    "Proportion",
    "ProportionDifference",
    "proportion_difference",
    "accuracy_by_group",
    "discriminability",
    "wilson_interval",
    # bootstrap
    "TOO_FEW_ITEMS",
    "PairedDifference",
    "bootstrap_sums",
    "paired_bootstrap",
    "paired_bootstrap_all",
    # multiple_comparisons
    "FdrResult",
    "benjamini_hochberg",
    # diagnostics
    "CRISIS_LEVELS",
    "CrisisConfusion",
    "PositionBias",
    "TurnSplit",
    "crisis_confusion",
    "normalised_entropy",
    "position_bias",
    "turn_split",
    # probes
    "MARGIN_EDGES",
    "AgreementCell",
    "GroupDifference",
    "GroupSignificance",
    "MarginDistribution",
    "TurnDecomposition",
    "margin_distribution",
    "outcome_agreement",
    "score_margin",
    "significance_by_group",
    "turn_decomposition",
    # win_rates
    "WinRateCell",
    "WinRateMatrix",
    "win_rate_matrix",
    # standings
    "DeltaZResult",
    "ModelGap",
    "Typology",
    "ZScores",
    "delta_z",
    "typology",
    "z_scores",
    # correlations
    "Correlation",
    "CrossLingualGaps",
    "DimensionGap",
    "correlation",
    "cross_lingual_gaps",
]
