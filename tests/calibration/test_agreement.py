"""Agreement statistics: published reference values, hand-checked tables, undefined cases and real verdicts."""

import csv
import json
import math
import time
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from scipy import stats
from scipy.linalg import toeplitz
from sklearn.metrics import cohen_kappa_score

from calibration import agreement
from calibration.agreement import (
    SIGNED_SCALE,
    UndefinedStatistic,
    agreement_report,
    alpha_with_judge,
    cohen_kappa,
    combine_facet,
    combine_summed,
    fleiss_kappa,
    fleiss_kappa_from_counts,
    judge_difference,
    kappa_from_confusion,
    krippendorff_alpha,
    length_bias,
    majority_winner,
    median_score,
    percent_agreement,
    position_bias,
    ratings_to_counts,
    spearman,
)

EXTERNAL = Path(__file__).resolve().parents[2].parent / "shared/data/external"
RELIABILITY_FIXTURES = EXTERNAL / "reliability" / "statsmodels_inter_rater_fixtures.json"
LLMFAO = EXTERNAL / "llmfao"
N = np.nan

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: observers c1..c4 (rows) code
# 12 units (columns) on values 1..5, "." missing. Transposed to the units x raters layout.
KRIPPENDORFF_2011 = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
        [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N],
    ]
).T

# Same paper, section A: binary data, two observers, no missing data. n0 = 14, n1 = 6, and four units disagree,
# so alpha = 1 - (n - 1) * o01 / (n0 * n1) = 1 - 19 * 4 / 84 = 0.095.
KRIPPENDORFF_2011_BINARY = np.array(
    [
        [0, 1, 0, 0, 0, 0, 0, 0, 1, 0],
        [1, 1, 1, 0, 0, 1, 0, 0, 0, 0],
    ]
).T


def simulated_table(units: int = 135, raters: int = 3, seed: int = 1) -> np.ndarray:
    """Return signed scores of raters who see a common truth with noise (no missing cells)."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(-5, 6, units)
    return np.clip(truth[:, None] + rng.integers(-2, 3, (units, raters)), -5, 5).astype(float)


def assert_no_nan(result: object) -> None:
    json.dumps(result.as_dict(), allow_nan=False)


@pytest.fixture(scope="module")
def reliability() -> dict[str, dict]:
    if not RELIABILITY_FIXTURES.is_file():
        pytest.skip(f"reference fixtures not found at {RELIABILITY_FIXTURES}")
    data = json.loads(RELIABILITY_FIXTURES.read_text(encoding="utf-8"))
    return {fixture["name"]: fixture for fixture in data["fixtures"]}


def expand_contingency(table: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Return the two raters' ratings (categories 1..K) behind a contingency table."""
    counts = np.asarray(table)
    rows, columns = np.nonzero(counts)
    repeats = counts[rows, columns]
    return np.repeat(rows + 1, repeats).astype(float), np.repeat(columns + 1, repeats).astype(float)


def confusion(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Return the contingency table over the categories either rater used, as R irr::kappa2 builds it."""
    categories = np.unique(np.concatenate([first, second]))
    table = np.zeros((categories.size, categories.size))
    np.add.at(table, (np.searchsorted(categories, first), np.searchsorted(categories, second)), 1)
    return table


# --- published reference values -------------------------------------------------------------------------


def test_fleiss_kappa_matches_the_wikipedia_worked_example(reliability):
    fixture = reliability["wikipedia_fleiss_10subjects_14raters_5categories"]
    expected = fixture["expected"]["fleiss_kappa"]
    value = fleiss_kappa_from_counts(fixture["table"])
    assert value == pytest.approx(expected["value"], abs=0.5 * 10 ** -expected["decimals"])


def test_fleiss_kappa_matches_fleiss_1971_diagnoses(reliability):
    fixture = reliability["fleiss1971_diagnoses_30subjects_6raters"]
    expected = fixture["expected"]["fleiss_kappa"]
    counts = ratings_to_counts(fixture["raw"])
    assert counts.sum(axis=0).tolist() == fixture["category_column_sums"]
    estimate = fleiss_kappa(fixture["raw"], n_boot=200)
    assert estimate.value == pytest.approx(expected["value"], abs=0.5 * 10 ** -expected["decimals"])
    assert fleiss_kappa_from_counts(counts) == pytest.approx(expected["value"], abs=0.5 * 10 ** -expected["decimals"])
    assert estimate.n_units == 30


def test_fleiss_kappa_with_unequal_rater_counts_follows_gwet():
    # Units rated (1,1,1), (1,2), (2,2,2), (2): observed agreement (1 + 0 + 1) / 3 over units with two or more
    # ratings; prevalence averages each unit's proportions: pi = (1 + .5 + 0 + 0) / 4 = 0.375 and 0.625,
    # chance 0.375^2 + 0.625^2 = 17/32; kappa = (2/3 - 17/32) / (1 - 17/32) = 13/45.
    table = [[1, 1, 1], [1, 2, N], [2, 2, 2], [2, N, N]]
    assert fleiss_kappa(table, n_boot=0).value == pytest.approx(13 / 45, abs=1e-12)
    assert fleiss_kappa(table, n_boot=0).n_units == 3


def test_cohen_kappa_matches_the_sas_contingency_examples(reliability):
    fixture = reliability["sas_3x3_contingency"]
    expected = fixture["expected"]
    unweighted = expected["cohen_kappa_unweighted"]["kappa"]
    linear = expected["cohen_kappa_weights_[0,1,2]_linear"]["kappa"]
    assert kappa_from_confusion(fixture["table"]) == pytest.approx(unweighted, abs=5e-5)
    assert kappa_from_confusion(fixture["table"], "linear") == pytest.approx(linear, abs=5e-5)
    # The same through raw ratings and scikit-learn, on the full category set 1..3 (rater 1 never used 1).
    first, second = expand_contingency(fixture["table"])
    kappa = cohen_kappa(first, second, labels=[1, 2, 3], n_boot=0)
    assert kappa.value == pytest.approx(unweighted, abs=5e-5)
    assert cohen_kappa(first, second, weights="linear", labels=[1, 2, 3], n_boot=0).value == pytest.approx(
        linear, abs=5e-5
    )


@pytest.mark.parametrize(
    ("key", "raters", "weights"),
    [
        ("unweighted", (1, 2), "unweighted"),
        ("equal(linear)", (1, 2), "linear"),
        ("squared(quadratic)", (1, 2), "quadratic"),
        ("weights_0,0,1,1,2_toeplitz", (1, 2), [0, 0, 1, 1, 2]),
        ("raters_1_2_weights_c(0,0,0,1,1,1)", (0, 1), [0, 0, 0, 1, 1, 1]),
        ("raters_1_2_weights_c(0,0,1,1,2,2)", (0, 1), [0, 0, 1, 1, 2, 2]),
    ],
)
def test_cohen_kappa_matches_r_irr_on_the_anxiety_ratings(reliability, key, raters, weights):
    fixture = reliability["irr_anxiety_20subjects_3raters"]
    expected = fixture["expected"][key]["kappa"]
    ratings = np.asarray(fixture["raw"], dtype=float)
    first, second = ratings[:, raters[0]], ratings[:, raters[1]]
    if isinstance(weights, str):
        # irr drops the level nobody used (5): the default labels are the values either rater used.
        assert cohen_kappa(first, second, weights=weights, n_boot=0).value == pytest.approx(expected, abs=1e-7)
        assert kappa_from_confusion(confusion(first, second), weights) == pytest.approx(expected, abs=1e-7)
    else:
        assert kappa_from_confusion(confusion(first, second), toeplitz(weights)) == pytest.approx(expected, abs=1e-7)


@pytest.mark.parametrize(
    ("level", "expected"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)]
)
def test_krippendorff_alpha_matches_the_2011_worked_example(level, expected):
    estimate = krippendorff_alpha(KRIPPENDORFF_2011, level, n_boot=100)
    assert estimate.value == pytest.approx(expected, abs=5e-4)
    assert estimate.n_units == 11  # unit 12 has a single rating and cannot be paired
    assert estimate.undefined_reason is None


def test_krippendorff_alpha_matches_the_2011_binary_example():
    assert krippendorff_alpha(KRIPPENDORFF_2011_BINARY, "nominal", n_boot=0).value == pytest.approx(
        1 - 19 * 4 / (14 * 6), abs=1e-12
    )
    assert round(krippendorff_alpha(KRIPPENDORFF_2011_BINARY, "nominal", n_boot=0).value, 3) == 0.095


# --- hand-checked tables ----------------------------------------------------------------------------------


def test_percent_agreement_with_and_without_ties_on_a_hand_checked_table():
    reference = np.array([3, 2, 0, -1, 0, -4, 1, N])
    judge = np.array([1, -2, 0, -5, 2, 0, 5, 3])
    # Winners A A T B T B A ? vs A B T B A T A A: 7 shared units, 4 agree (units 1, 3, 4, 7).
    with_ties = percent_agreement(np.sign(reference), np.sign(judge), n_boot=0)
    assert with_ties.value == pytest.approx(4 / 7)
    assert with_ties.n_units == 7
    # Without ties, units 3, 5 and 6 leave (a tie on either side): 3 of the remaining 4 agree.
    without_ties = percent_agreement(np.sign(reference), np.sign(judge), exclude_ties=True, n_boot=0)
    assert without_ties.value == pytest.approx(3 / 4)
    assert without_ties.n_units == 4


def test_spearman_matches_hand_computed_values():
    # No ties: d = (-1, 1, -1, 1, 0), rho = 1 - 6 * 4 / (5 * 24) = 0.8.
    assert spearman([1, 2, 3, 4, 5], [2, 1, 4, 3, 5], n_boot=0).value == pytest.approx(0.8)
    # Ties take mean ranks: (1.5, 1.5, 3, 4) and (1, 2.5, 2.5, 4); Pearson of the ranks is 3.75 / 4.5.
    assert spearman([1, 1, 2, 3], [1, 2, 2, 3], n_boot=0).value == pytest.approx(3.75 / 4.5)
    # Missing ratings leave the unit out.
    assert spearman([1, 1, 2, 3, N], [1, 2, 2, 3, 9], n_boot=0).value == pytest.approx(3.75 / 4.5)


def test_first_position_win_rate_uses_an_exact_two_sided_binomial_test():
    # 100 verdicts with A shown first: the first position wins 60 of them; no verdict in the other order.
    scores_ab = np.array([2.0] * 60 + [-1.0] * 40)
    bias = position_bias(scores_ab, np.full(100, N), n_boot=200)
    assert bias.first_position_win_rate.value == pytest.approx(0.6)
    assert bias.first_position_win_rate.p_value == pytest.approx(0.0569, abs=1e-4)
    assert bias.flip_rate.undefined_reason == "no comparison has a parseable verdict in both orders"


def test_position_bias_on_a_hand_checked_judge():
    # (AB, BA) in canonical orientation. First-position wins: +3 | +2, -1 | -2 | -1 | +4 -> 6 verdicts with
    # margins 3 + 2 + 1 + 2 + 1 + 4 = 13; second-position wins: +2 (BA of 1), -1 (AB of 4) -> margins 2 + 1.
    scores_ab = [3, 2, 0, -1, 4]
    scores_ba = [2, -1, -2, -1, N]
    bias = position_bias(scores_ab, scores_ba, n_boot=200)
    assert (bias.n_comparisons, bias.n_parsed_ab, bias.n_parsed_ba) == (5, 5, 4)
    assert bias.flip_rate.value == pytest.approx(2 / 4)  # comparisons 2 (A -> B) and 3 (tie -> B)
    assert bias.reversal_rate.value == pytest.approx(1 / 4)  # only comparison 2 swaps A and B
    assert bias.first_position_win_rate.value == pytest.approx(6 / 8)
    assert bias.first_position_win_rate.p_value == pytest.approx(2 * (28 + 8 + 1) / 256)
    assert bias.margin_asymmetry.value == pytest.approx(13 / 6 - 3 / 2)
    assert bias.position_offset.value == pytest.approx((0.5 + 1.5 + 1 + 0) / 4)
    assert_no_nan(bias)


def test_length_bias_counts_only_pairs_whose_lengths_differ_by_more_than_30_percent():
    scores = [2, -1, 1, 0, -3, 1, N, 1]
    length_a = [100, 100, 100, 100, 10, 50, 100, 100]
    length_b = [50, 120, 140, 10, 20, 50, 10, 130]
    # Kept: 1 (A longer, A wins), 3 (B longer, A wins), 5 (B longer, B wins). Left out: 2 and 8 (20% and exactly
    # 30% longer), 4 (tie), 6 (equal), 7 (unparseable).
    estimate = length_bias(scores, length_a, length_b, n_boot=200)
    assert estimate.value == pytest.approx(2 / 3)
    assert estimate.n_units == 3
    assert estimate.p_value == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("score_ab", "score_ba", "as_tie", "dropped"),
    [
        (3, 2, 2, 2),  # consistent: mean 2.5, rounded toward the tie
        (2, 4, 3, 3),
        (-1, -4, -2, -2),
        (0, 0, 0, 0),
        (2, -1, 0, None),  # the winner flips with the order
        (0, 3, 0, None),  # a tie in one order only is inconsistent too
        (None, 2, None, None),
        (N, 2, None, None),
    ],
)
def test_facet_rule_keeps_consistent_pairs_and_ties_or_drops_the_rest(score_ab, score_ba, as_tie, dropped):
    assert combine_facet(score_ab, score_ba) == as_tie
    assert combine_facet(score_ab, score_ba, inconsistent="tie") == as_tie
    assert combine_facet(score_ab, score_ba, inconsistent="drop") == dropped


@pytest.mark.parametrize(
    ("score_ab", "score_ba", "expected"),
    [(3, 2, 5), (4, 4, 5), (-5, -3, -5), (2, -1, 1), (0, 0, 0), (-2, 2, 0), (None, 1, None), (1, N, None)],
)
def test_summed_margin_rule_adds_both_orders_and_clips_to_the_scale(score_ab, score_ba, expected):
    assert combine_summed(score_ab, score_ba) == expected


@pytest.mark.parametrize("scores", [(6, 0), (1.5, 0), (0, -7)])
def test_order_rules_reject_scores_off_the_scale(scores):
    with pytest.raises(ValueError):
        combine_facet(*scores)
    with pytest.raises(ValueError):
        combine_summed(*scores)


def test_majority_winner_takes_the_plurality_and_calls_split_votes_a_tie():
    table = [[3, 1, -2], [2, 0, N], [0, 0, 4], [-1, -2, -5], [N, N, N], [1, -1, 0], [N, -3, N]]
    winners = majority_winner(table)
    np.testing.assert_array_equal(winners, [1, 0, 0, -1, N, 0, -1])


def test_median_score_can_round_halves_toward_the_tie():
    table = [[3, 2], [-3, -2], [1, N], [N, N], [-1, 4]]
    np.testing.assert_array_equal(median_score(table), [2.5, -2.5, 1, N, 1.5])
    np.testing.assert_array_equal(median_score(table, round_toward_tie=True), [2, -2, 1, N, 1])


# --- bootstrap ------------------------------------------------------------------------------------------


def textbook_fleiss(counts: np.ndarray) -> float:
    """Return Fleiss' kappa by the formulas of the Wikipedia article (equal rater counts)."""
    raters = counts.sum(axis=1)[0]
    observed = ((counts * (counts - 1)).sum(axis=1) / (raters * (raters - 1))).mean()
    chance = ((counts.sum(axis=0) / counts.sum()) ** 2).sum()
    return (observed - chance) / (1 - chance)


def test_bootstrap_intervals_equal_brute_force_recomputation_on_the_documented_resamples():
    table = simulated_table(units=60, raters=3, seed=7)
    a, b = table[:, 0], table[:, 1]
    seed, n_boot = 11, 150
    resamples = np.random.default_rng(seed).integers(0, len(table), size=(n_boot, len(table)))

    def interval(values: list[float]) -> tuple[float, float]:
        low, high = np.quantile(values, [0.025, 0.975])
        return float(low), float(high)

    def check(estimate, reference: list[float]) -> None:
        assert estimate.n_boot_defined == n_boot
        assert (estimate.ci_low, estimate.ci_high) == pytest.approx(interval(reference), abs=1e-12)

    for weights in ("unweighted", "linear", "quadratic"):
        sklearn_weights = None if weights == "unweighted" else weights
        reference = [
            cohen_kappa_score(a[r], b[r], labels=list(SIGNED_SCALE), weights=sklearn_weights) for r in resamples
        ]
        check(cohen_kappa(a, b, weights=weights, labels=SIGNED_SCALE, seed=seed, n_boot=n_boot), reference)
    check(spearman(a, b, seed=seed, n_boot=n_boot), [stats.spearmanr(a[r], b[r]).statistic for r in resamples])
    check(
        percent_agreement(np.sign(a), np.sign(b), seed=seed, n_boot=n_boot),
        [np.mean(np.sign(a[r]) == np.sign(b[r])) for r in resamples],
    )
    categories = np.unique(table)
    check(
        fleiss_kappa(table, seed=seed, n_boot=n_boot),
        [textbook_fleiss(ratings_to_counts(table[r], categories)) for r in resamples],
    )
    check(
        krippendorff_alpha(table, "ordinal", seed=seed, n_boot=n_boot),
        [krippendorff.alpha(reliability_data=table[r].T, level_of_measurement="ordinal") for r in resamples],
    )


def test_paired_bootstrap_draws_the_same_units_for_both_judges():
    experts = simulated_table(units=80, raters=3, seed=3)
    reference = median_score(experts)
    rng = np.random.default_rng(5)
    judge_a = np.clip(reference + rng.integers(-1, 2, 80), -5, 5)
    judge_b = np.clip(reference + rng.integers(-3, 4, 80), -5, 5)
    seed, n_boot = 2, 120
    difference = judge_difference(reference, judge_a, judge_b, coefficient="spearman", seed=seed, n_boot=n_boot)
    resamples = np.random.default_rng(seed).integers(0, 80, size=(n_boot, 80))
    paired = [
        stats.spearmanr(reference[r], judge_a[r]).statistic - stats.spearmanr(reference[r], judge_b[r]).statistic
        for r in resamples
    ]
    assert (difference.ci_low, difference.ci_high) == pytest.approx(tuple(np.quantile(paired, [0.025, 0.975])))
    expected_value = stats.spearmanr(reference, judge_a).statistic - stats.spearmanr(reference, judge_b).statistic
    assert difference.value == pytest.approx(expected_value)


def test_bootstrap_is_deterministic_for_a_seed():
    table = simulated_table(units=40, seed=2)
    first = agreement_report(table, "ordinal", signed=True, seed=42, n_boot=300)
    again = agreement_report(table, "ordinal", signed=True, seed=42, n_boot=300)
    other = agreement_report(table, "ordinal", signed=True, seed=43, n_boot=300)
    assert first == again
    assert first.alpha.value == other.alpha.value
    assert (first.alpha.ci_low, first.alpha.ci_high) != (other.alpha.ci_low, other.alpha.ci_high)


def all_estimates(report: agreement.AgreementReport) -> list[agreement.Estimate]:
    estimates = [report.alpha, report.alpha_winner, report.fleiss_kappa]
    for pair in report.pairs:
        estimates += [
            pair.cohen_kappa,
            pair.cohen_kappa_linear,
            pair.cohen_kappa_quadratic,
            pair.percent_agreement,
            pair.percent_agreement_without_ties,
            pair.spearman,
        ]
    return [estimate for estimate in estimates if estimate is not None]


def test_interval_contains_the_point_estimate_for_a_well_behaved_table():
    report = agreement_report(simulated_table(units=135, raters=3), "interval", signed=True, n_boot=1000)
    estimates = all_estimates(report)
    assert len(estimates) == 3 + 3 * 6
    for estimate in estimates:
        assert estimate.undefined_reason is None, estimate
        assert estimate.ci_low <= estimate.value <= estimate.ci_high, estimate
        assert estimate.ci_low < estimate.ci_high or estimate.value == 1, estimate
        assert estimate.n_boot_defined == 1000


@pytest.mark.parametrize(
    "coefficient",
    [
        "alpha_nominal",
        "alpha_ordinal",
        "alpha_interval",
        "cohen_unweighted",
        "cohen_linear",
        "cohen_quadratic",
        "percent_agreement",
        "percent_agreement_without_ties",
        "spearman",
    ],
)
def test_paired_difference_of_a_judge_with_itself_is_exactly_zero(coefficient):
    experts = simulated_table(units=50, seed=4)
    judge = np.clip(median_score(experts, round_toward_tie=True) + 1, -5, 5)
    reference = experts if coefficient.startswith("alpha_") else median_score(experts, round_toward_tie=True)
    difference = judge_difference(reference, judge, judge, coefficient=coefficient, n_boot=200)
    assert (difference.value, difference.ci_low, difference.ci_high, difference.p_value) == (0, 0, 0, 1)
    assert difference.n_boot_defined == 200


def test_paired_difference_separates_a_good_judge_from_a_random_one():
    experts = simulated_table(units=135, seed=8)
    reference = majority_winner(experts)
    rng = np.random.default_rng(9)
    good = np.where(rng.random(135) < 0.85, reference, -reference)
    random = rng.integers(-1, 2, 135).astype(float)
    difference = judge_difference(reference, good, random, coefficient="cohen_unweighted", n_boot=1000)
    assert difference.value > 0.4
    assert difference.ci_low > 0
    assert difference.p_value < 0.01


def test_report_on_a_405_label_table_with_1000_resamples_takes_seconds():
    table = simulated_table(units=135, raters=3)
    started = time.perf_counter()
    report = agreement_report(table, "ordinal", signed=True, n_boot=1000)
    assert time.perf_counter() - started < 10
    assert report.n_ratings == 405


# --- undefined cases --------------------------------------------------------------------------------------


def test_one_rater_leaves_agreement_undefined_with_a_reason():
    table = [[1], [2], [3]]
    report = agreement_report(table, "ordinal", raters=["solo"])
    assert report.undefined_reason == "only one rater: agreement needs at least two"
    assert report.alpha.value is None
    assert report.alpha.undefined_reason == "only one rater: agreement needs at least two"
    assert report.fleiss_kappa.undefined_reason == "only one rater: agreement needs at least two"
    assert report.pairs == ()
    assert krippendorff_alpha(table, "nominal").undefined_reason == "only one rater: agreement needs at least two"
    assert_no_nan(report)


def test_constant_values_leave_agreement_undefined_with_a_reason():
    table = np.full((6, 3), 3.0)
    report = agreement_report(table, "interval")
    assert "no variation" in report.undefined_reason
    assert report.alpha.value is None and "every rating" in report.alpha.undefined_reason
    assert "same category" in report.fleiss_kappa.undefined_reason
    pair = report.pairs[0]
    assert "same single category" in pair.cohen_kappa.undefined_reason
    assert "chance agreement is complete" in pair.cohen_kappa_quadratic.undefined_reason
    assert "same score (3)" in pair.spearman.undefined_reason
    assert pair.percent_agreement.value == 1  # raw agreement is defined: every pair agrees
    assert_no_nan(report)
    with pytest.raises(UndefinedStatistic, match="same category"):
        fleiss_kappa_from_counts([[3, 0], [3, 0]])


def test_an_empty_or_unpaired_table_leaves_agreement_undefined():
    missing = np.full((4, 3), N)
    report = agreement_report(missing, "nominal")
    assert report.undefined_reason == agreement.NO_RATINGS
    assert report.alpha.undefined_reason == agreement.NO_RATINGS
    assert report.pairs[0].cohen_kappa.undefined_reason == agreement.NO_SHARED_UNITS
    assert report.pairs[0].percent_agreement.undefined_reason == agreement.NO_SHARED_UNITS
    diagonal = [[1, N], [N, 2], [3, N]]
    assert agreement_report(diagonal, "ordinal").undefined_reason == agreement.NO_PAIRABLE_UNITS
    assert krippendorff_alpha(diagonal, "ordinal").undefined_reason == agreement.NO_PAIRABLE_UNITS
    assert agreement_report(np.empty((0, 2)), "nominal").alpha.undefined_reason == agreement.NO_RATINGS
    assert_no_nan(report)


def test_a_judge_with_no_parseable_verdict_is_undefined_everywhere():
    experts = simulated_table(units=20, seed=6)
    reference = majority_winner(experts)
    silent = np.full(20, N)
    assert cohen_kappa(reference, silent).undefined_reason == agreement.NO_SHARED_UNITS
    assert percent_agreement(reference, silent).undefined_reason == agreement.NO_SHARED_UNITS
    assert spearman(reference, silent).undefined_reason == agreement.NO_SHARED_UNITS
    assert alpha_with_judge(experts, silent, "ordinal").undefined_reason == "the judge has no parseable verdict"
    assert alpha_with_judge(experts, reference, "ordinal").value is not None
    difference = judge_difference(experts, reference, silent, coefficient="alpha_ordinal")
    assert difference.undefined_reason == "judge B: the judge has no parseable verdict"
    bias = position_bias(silent, silent)
    for estimate in (bias.flip_rate, bias.first_position_win_rate, bias.margin_asymmetry, bias.position_offset):
        assert estimate.value is None
        assert estimate.undefined_reason == "the judge has no parseable verdict"
    assert length_bias(silent, np.ones(20), np.ones(20)).undefined_reason == "the judge has no parseable verdict"
    for result in (bias, difference):
        assert_no_nan(result)


def test_resamples_where_a_coefficient_is_undefined_are_left_out_of_the_interval():
    # Without the fourth unit both raters are constant, so kappa and rho are undefined in those resamples.
    a = [1, 1, 1, 2, 1, 1]
    for estimate in (cohen_kappa(a, a, n_boot=500), spearman(a, a, n_boot=500)):
        assert estimate.value == 1
        assert 0 < estimate.n_boot_defined < 500
        assert (estimate.ci_low, estimate.ci_high) == (1, 1)


def test_a_one_sided_margin_asymmetry_is_undefined_with_a_reason():
    bias = position_bias([2, 3, 1], [-1, -2, -4], n_boot=50)
    assert bias.first_position_win_rate.value == 1
    assert bias.margin_asymmetry.undefined_reason == "the second position never wins: there is no margin to compare"


def test_bad_input_is_refused_with_a_clear_error():
    with pytest.raises(ValueError, match="shape"):
        krippendorff_alpha([1, 2, 3], "nominal")
    with pytest.raises(ValueError, match="level"):
        krippendorff_alpha([[1, 2]], "ordinalish")
    with pytest.raises(ValueError, match="one value per unit"):
        cohen_kappa([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="not among the categories"):
        cohen_kappa([1, 7], [1, 2], labels=[1, 2, 3])
    with pytest.raises(ValueError, match="whole numbers"):
        agreement_report([[1, 9], [2, 3]], "ordinal", signed=True)
    with pytest.raises(ValueError, match="resamples"):
        spearman([1, 2], [1, 2], n_boot=-1)
    with pytest.raises(ValueError, match="distinct rater names"):
        agreement_report([[1, 2]], "nominal", raters=["x", "x"])


# --- real data --------------------------------------------------------------------------------------------

WINNER_SIGN = {"left": 1.0, "right": -1.0, "tie": 0.0}


@pytest.fixture(scope="module")
def llmfao() -> dict[str, np.ndarray]:
    """Return the crowd's table (pairs x workers) and each GPT judge's verdict per pair, as winner signs.

    The left response is model_x (A): ``left`` is +1, ``right`` -1, ``tie`` 0.
    """
    if not LLMFAO.is_dir():
        pytest.skip(f"llmfao data not found at {LLMFAO}")
    with (LLMFAO / "crowd-comparisons.csv").open(encoding="utf-8", newline="") as handle:
        crowd = list(csv.DictReader(handle))
    pairs = {pair: i for i, pair in enumerate(sorted({int(row["id"]) for row in crowd}))}
    workers = {worker: j for j, worker in enumerate(sorted({row["worker"] for row in crowd}))}
    table = np.full((len(pairs), len(workers)), N)
    for row in crowd:
        table[pairs[int(row["id"])], workers[row["worker"]]] = WINNER_SIGN[row["winner"]]
    data = {"crowd": table}
    for judge in ("gpt4", "gpt3"):
        verdicts = np.full(len(pairs), N)
        with (LLMFAO / f"{judge}-crowd-comparisons.csv").open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle):
                verdicts[pairs[int(row["id"])]] = WINNER_SIGN[row["winner"]]
        data[judge] = verdicts
    return data


def test_gpt4_judge_agrees_with_the_crowd_majority_in_a_sane_range(llmfao):
    majority = majority_winner(llmfao["crowd"])
    gpt4 = llmfao["gpt4"]
    with_ties = percent_agreement(majority, gpt4)
    without_ties = percent_agreement(majority, gpt4, exclude_ties=True)
    kappa = cohen_kappa(majority, gpt4)
    rho = spearman(majority, gpt4)
    assert with_ties.n_units == 2139 and without_ties.n_units == 1043
    # The figures quoted in docs/agreement.md.
    assert with_ties.value == pytest.approx(0.387, abs=5e-4)
    assert without_ties.value == pytest.approx(0.746, abs=5e-4)
    assert kappa.value == pytest.approx(0.178, abs=5e-4)
    assert rho.value == pytest.approx(0.352, abs=5e-4)
    # Sane: well above chance without ties, far from perfect, intervals around the estimates.
    assert 0.6 < without_ties.ci_low < without_ties.value < without_ties.ci_high < 0.9
    assert 0.1 < kappa.ci_low < kappa.value < kappa.ci_high < 0.4
    crowd_alpha = krippendorff_alpha(llmfao["crowd"], "nominal")
    assert crowd_alpha.value == pytest.approx(0.291, abs=5e-4)
    assert alpha_with_judge(llmfao["crowd"], gpt4, "nominal").value == pytest.approx(0.229, abs=5e-4)


def test_gpt4_judge_beats_gpt3_against_the_crowd_majority(llmfao):
    majority = majority_winner(llmfao["crowd"])
    difference = judge_difference(majority, llmfao["gpt4"], llmfao["gpt3"], coefficient="cohen_unweighted")
    assert difference.value == pytest.approx(0.178 - 0.083, abs=1e-3)
    assert difference.ci_low > 0
    assert difference.p_value == pytest.approx(2 / 1001)  # no resample reverses the order: the smallest p
    assert not math.isnan(difference.ci_high)
