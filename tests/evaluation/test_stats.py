"""Statistics against SciPy, R's p.adjust and hand-checked examples; no database."""

import json
import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from evaluation import stats

# R 4.x: p.adjust(c(0.01, 0.04, 0.03, 0.005, 0.20), method = "BH")
R_EXAMPLE_P = [0.01, 0.04, 0.03, 0.005, 0.20]
R_EXAMPLE_ADJUSTED = [0.025, 0.05, 0.05, 0.025, 0.20]
# Benjamini & Hochberg (1995), section 4.2: 15 p-values; the procedure at q = 0.05 rejects the four smallest.
# Adjusted values computed by hand: min over j >= i of (15 / j) p_(j).
BH_1995_P = [
    0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459, 0.3240, 0.4262, 0.5719, 0.6528, 0.7590,
    1.0000,
]  # fmt: skip
BH_1995_ADJUSTED = [
    0.0015, 0.003, 0.0095, 0.035625, 0.0603, 15 / 7 * 0.0298, 15 / 7 * 0.0298, 0.0645, 0.0765, 0.486,
    15 / 11 * 0.4262, 0.714875, 15 / 13 * 0.6528, 15 / 14 * 0.7590, 1.0,
]  # fmt: skip


def assert_json_clean(result: object) -> None:
    json.dumps(result.as_dict(), allow_nan=False)


# --- Wilson -----------------------------------------------------------------------------------------------


def test_wilson_interval_matches_the_published_example_81_of_263():
    result = stats.wilson_interval(81, 263)
    assert round(result.low, 4) == 0.2553
    assert round(result.high, 4) == 0.3662
    assert result.value == pytest.approx(81 / 263)


@pytest.mark.parametrize(
    ("successes", "n", "confidence"), [(81, 263, 0.95), (0, 10, 0.95), (10, 10, 0.95), (1, 1, 0.9), (37, 48, 0.99)]
)
def test_wilson_interval_equals_scipy_binomtest(successes, n, confidence):
    expected = scipy_stats.binomtest(successes, n).proportion_ci(confidence_level=confidence, method="wilson")
    result = stats.wilson_interval(successes, n, confidence=confidence)
    assert result.low == pytest.approx(expected.low, abs=1e-12)
    assert result.high == pytest.approx(expected.high, abs=1e-12)


def test_wilson_interval_of_no_observations_is_undefined_with_a_reason():
    result = stats.wilson_interval(0, 0)
    assert result.value is None and result.low is None and result.high is None
    assert result.undefined_reason == "no observations"
    assert_json_clean(result)


def test_wilson_interval_rejects_impossible_counts():
    with pytest.raises(ValueError, match="successes <= n"):
        stats.wilson_interval(5, 4)


# --- accuracy by group ------------------------------------------------------------------------------------


def test_accuracy_by_group_gives_wilson_per_group_micro_and_macro_averages():
    groups = ["empathy"] * 4 + ["crisis"] * 6
    correct = [1, 1, 1, 0, 1, 0, 0, 0, 0, 0]
    result = stats.accuracy_by_group(groups, correct, seed=3)
    assert result.groups["empathy"] == stats.wilson_interval(3, 4)
    assert result.groups["crisis"] == stats.wilson_interval(1, 6)
    assert result.micro == stats.wilson_interval(4, 10)
    assert result.macro.value == pytest.approx((3 / 4 + 1 / 6) / 2)
    assert result.macro.low <= result.macro.value <= result.macro.high
    assert result.macro.n_groups == 2
    assert result == stats.accuracy_by_group(groups, correct, seed=3)
    assert_json_clean(result)


def test_macro_interval_matches_an_explicit_stratified_item_bootstrap():
    rng = np.random.default_rng(11)
    groups = np.repeat(["a", "b", "c"], [30, 50, 20])
    correct = (rng.random(100) < np.repeat([0.3, 0.6, 0.8], [30, 50, 20])).astype(int)
    result = stats.accuracy_by_group(list(groups), correct, n_resamples=20_000, seed=5)
    explicit = []
    for _ in range(4000):
        means = []
        for key in ("a", "b", "c"):
            values = correct[groups == key]
            means.append(rng.choice(values, size=len(values), replace=True).mean())
        explicit.append(np.mean(means))
    low, high = np.quantile(explicit, [0.025, 0.975])
    assert result.macro.low == pytest.approx(low, abs=0.015)
    assert result.macro.high == pytest.approx(high, abs=0.015)


def test_accuracy_by_group_rejects_non_binary_scores():
    with pytest.raises(ValueError, match="0/1"):
        stats.accuracy_by_group(["a", "a"], [1, 0.5])


def test_discriminability_rescales_chance_to_zero_and_perfect_to_one():
    assert stats.discriminability(0.625, 0.25) == pytest.approx(0.5)
    assert stats.discriminability(0.25, 0.25) == 0
    assert stats.discriminability(1.0, 0.25) == 1
    assert stats.discriminability(0.10, 0.25) < 0
    with pytest.raises(ValueError):
        stats.discriminability(0.5, 1.0)


# --- paired bootstrap -------------------------------------------------------------------------------------


def test_bootstrap_sums_equal_explicit_resampling_with_the_same_generator():
    values = np.array([3.0, -1.0, 4.0, 1.0, -5.0, 9.0])
    sums = stats.bootstrap_sums(values, n_resamples=50, seed=7)
    draws = np.random.default_rng(7).integers(0, len(values), size=(50, len(values)))
    np.testing.assert_allclose(sums[:, 0], values[draws].sum(axis=1))


def test_paired_bootstrap_of_identical_models_has_zero_difference_and_p_one():
    scores = [1, 0, 1, 1, 0, 1, 0, 0]
    result = stats.paired_bootstrap(scores, scores, n_resamples=2000)
    assert result.difference == 0 and result.low == 0 and result.high == 0
    assert result.p_value == 1


def test_paired_bootstrap_agrees_with_normal_theory_on_a_large_sample():
    rng = np.random.default_rng(2)
    a = (rng.random(600) < 0.62).astype(int)
    b = np.where(rng.random(600) < 0.8, a, 1 - a)
    result = stats.paired_bootstrap(a, b, seed=1)
    d = a - b
    se = d.std(ddof=1) / math.sqrt(len(d))
    # The resampled sums are integers and the p-value counts ties (>=), so the matching normal approximation
    # carries a continuity correction of half a unit on the sum scale.
    z = (abs(d.sum()) - 0.5) / (math.sqrt(len(d)) * d.std())
    assert result.difference == pytest.approx(d.mean())
    assert result.p_value == pytest.approx(2 * scipy_stats.norm.sf(z), abs=0.01)
    assert result.low == pytest.approx(d.mean() - 1.96 * se, abs=0.006)
    assert result.high == pytest.approx(d.mean() + 1.96 * se, abs=0.006)
    assert result.n_resamples == 10_000


def test_paired_bootstrap_is_reproducible_and_seed_dependent():
    a = [1, 1, 0, 1, 0, 1, 1, 1, 0, 1]
    b = [0, 1, 0, 0, 0, 1, 0, 1, 0, 0]
    first = stats.paired_bootstrap(a, b, seed=4)
    assert first == stats.paired_bootstrap(a, b, seed=4)
    assert first.difference == pytest.approx(0.4)
    assert first.low <= 0.4 <= first.high
    assert 0 < first.p_value < 0.05
    assert stats.paired_bootstrap(a, b, seed=5).p_value != first.p_value


def test_paired_bootstrap_needs_two_items():
    result = stats.paired_bootstrap([1], [0])
    assert result.difference is None and result.undefined_reason
    assert_json_clean(result)


def test_paired_bootstrap_all_matches_single_pairs_and_applies_bh():
    rng = np.random.default_rng(8)
    scores = {name: (rng.random(120) < p).astype(int) for name, p in (("m1", 0.8), ("m2", 0.6), ("m3", 0.58))}
    table = stats.paired_bootstrap_all(scores, n_resamples=3000, seed=9)
    assert [(row.model_a, row.model_b) for row in table] == [("m1", "m2"), ("m1", "m3"), ("m2", "m3")]
    for row in table:
        single = stats.paired_bootstrap(scores[row.model_a], scores[row.model_b], n_resamples=3000, seed=9)
        assert (row.difference, row.low, row.high, row.p_value) == pytest.approx(
            (single.difference, single.low, single.high, single.p_value)
        )
    fdr = stats.benjamini_hochberg([row.p_value for row in table])
    assert [row.p_adjusted for row in table] == fdr.adjusted
    assert [row.significant for row in table] == fdr.rejected
    assert_json_clean(table[0])


# --- Benjamini-Hochberg -----------------------------------------------------------------------------------


def test_benjamini_hochberg_matches_r_p_adjust():
    result = stats.benjamini_hochberg(R_EXAMPLE_P)
    assert result.adjusted == pytest.approx(R_EXAMPLE_ADJUSTED, abs=1e-15)
    assert result.rejected == [True, True, True, True, False]


def test_benjamini_hochberg_reproduces_the_1995_paper_example():
    result = stats.benjamini_hochberg(BH_1995_P, q=0.05)
    assert result.adjusted == pytest.approx(BH_1995_ADJUSTED, abs=1e-12)
    assert sum(result.rejected) == 4
    assert result.rejected[:4] == [True] * 4


def test_benjamini_hochberg_equals_scipy_and_is_monotone_and_capped():
    p = np.random.default_rng(1).random(200) ** 3
    result = stats.benjamini_hochberg(p)
    np.testing.assert_allclose(result.adjusted, scipy_stats.false_discovery_control(p), rtol=1e-12)
    order = np.argsort(p)
    assert np.all(np.diff(np.asarray(result.adjusted)[order]) >= 0)
    assert max(result.adjusted) <= 1
    assert stats.benjamini_hochberg([0.9, 0.95]).adjusted == [0.95, 0.95]


def test_benjamini_hochberg_handles_empty_input_and_rejects_bad_values():
    assert stats.benjamini_hochberg([]).adjusted == []
    with pytest.raises(ValueError):
        stats.benjamini_hochberg([0.1, float("nan")])
    with pytest.raises(ValueError):
        stats.benjamini_hochberg([1.2])


# --- position bias, turns, crisis -------------------------------------------------------------------------


def test_position_bias_entropy_is_one_when_uniform_and_zero_when_concentrated():
    correct = [0] * 6
    uniform = stats.position_bias([1, 2, 3, 1, 2, 3], correct, n_options=4)
    assert uniform.entropy == pytest.approx(1.0)
    assert uniform.counts == [2, 2, 2]
    concentrated = stats.position_bias([2, 2, 2, 0, 0], [0] * 5, n_options=4)
    assert concentrated.entropy == 0
    assert concentrated.n_wrong == 3


def test_position_bias_maps_choices_to_distractor_slots_or_positions():
    chosen = [3, 0, 1, None, 2]
    correct = [2, 2, 2, 2, 2]
    by_slot = stats.position_bias(chosen, correct, n_options=4)
    assert by_slot.counts == [1, 1, 1]
    assert by_slot.n_unparsed == 1 and by_slot.n_wrong == 3
    by_position = stats.position_bias(chosen, correct, n_options=4, by="position")
    assert by_position.counts == [1, 1, 0, 1]
    counts = [34, 30, 36]
    expected = scipy_stats.entropy(counts) / math.log(3)
    assert stats.normalised_entropy(counts) == pytest.approx(expected)


def test_position_bias_without_wrong_answers_is_undefined():
    result = stats.position_bias([1, 1], [1, 1], n_options=4)
    assert result.entropy is None and result.undefined_reason
    assert_json_clean(result)


def test_turn_split_takes_the_minimum_across_turns_and_splits_two_turns():
    turns = [[1, 1], [1, 0], [1, 0], [0, 1], [0, 0], [1, 1]]
    result = stats.turn_split(turns)
    assert result.item_accuracy.successes == 2 and result.item_accuracy.n == 6
    assert (result.both_right, result.only_first, result.only_second, result.both_wrong) == (2, 2, 1, 1)
    assert [t.successes for t in result.turn_accuracy] == [4, 3]
    assert result.turn_gap == pytest.approx(3 / 6 - 4 / 6)


def test_turn_split_with_three_turns_gives_no_four_way_split():
    result = stats.turn_split([[1, 1, 1], [1, 0, 1]])
    assert result.item_accuracy.successes == 1
    assert result.both_right is None and result.undefined_reason
    assert_json_clean(result)


def test_crisis_confusion_counts_over_and_under_estimation_and_invalid_answers():
    true = [1, 2, 3, 4, 5, 2, 3]
    predicted = [2, 2, 5, 3, 5, None, 7]
    result = stats.crisis_confusion(true, predicted)
    assert result.n == 5 and result.n_invalid == 2
    assert result.matrix[0][1] == 1  # true 1 predicted 2
    assert result.matrix[2][4] == 1  # true 3 predicted 5
    assert result.matrix[3][2] == 1  # true 4 predicted 3
    assert sum(map(sum, result.matrix)) == 5
    assert (result.exact.successes, result.overestimated.successes, result.underestimated.successes) == (2, 2, 1)
    assert result.mean_signed_error == pytest.approx((1 + 0 + 2 - 1 + 0) / 5)
    with pytest.raises(ValueError, match="true level"):
        stats.crisis_confusion([6], [1])


# --- win rates --------------------------------------------------------------------------------------------


def test_win_rate_matrix_excludes_draws_and_uses_exact_binomial_tests_with_bh():
    verdicts = [("a", "b", 2)] * 9 + [("b", "a", 1)] * 1 + [("a", "b", 0)] * 5 + [("a", "c", -1)] * 3
    verdicts += [("c", "a", 3)] * 3
    result = stats.win_rate_matrix(verdicts, models=["d"])
    assert result.models == ["a", "b", "c", "d"]
    ab = result.cells[0][1]
    assert (ab.wins, ab.losses, ab.draws) == (9, 1, 5)
    assert ab.win_rate == pytest.approx(0.9)
    assert ab.p_value == pytest.approx(scipy_stats.binomtest(9, 10, 0.5).pvalue)
    assert ab.p_value == pytest.approx(22 / 1024)  # (1 + 10 + 10 + 1) / 2^10
    ba = result.cells[1][0]
    assert (ba.wins, ba.losses, ba.win_rate, ba.p_value) == (1, 9, pytest.approx(0.1), ab.p_value)
    ac = result.cells[0][2]
    assert (ac.wins, ac.losses) == (0, 6)
    fdr = stats.benjamini_hochberg([ab.p_value, ac.p_value])
    assert (ab.p_adjusted, ac.p_adjusted) == tuple(fdr.adjusted)
    assert result.cells[0][0] is None
    assert result.cells[0][3].win_rate is None and result.cells[0][3].undefined_reason == "no verdict"
    assert_json_clean(result)


# --- z-scores, ΔZ, cross-lingual gaps -------------------------------------------------------------------------


def test_z_scores_equal_scipy_zscore_and_are_undefined_without_spread():
    values = {"a": 0.61, "b": 0.55, "c": 0.47, "d": 0.52}
    result = stats.z_scores(values)
    np.testing.assert_allclose(list(result.values.values()), scipy_stats.zscore(list(values.values())))
    sample = stats.z_scores(values, ddof=1)
    np.testing.assert_allclose(list(sample.values.values()), scipy_stats.zscore(list(values.values()), ddof=1))
    flat = stats.z_scores({"a": 1.0, "b": 1.0})
    assert flat.values == {"a": None, "b": None} and flat.undefined_reason
    assert_json_clean(flat)


@pytest.mark.parametrize(
    ("deltas", "dead_band", "expected"),
    [
        ([-3.11, -0.8], 0.0, "cognition-dominant"),
        ([2.00, 2.04], 0.0, "interaction-dominant"),
        ([1.90, -0.22], 0.0, "context-dependent"),
        ([-0.00, 1.64], 0.0, "context-dependent"),
        ([1.90, -0.22], 0.3, "context-dependent"),
        ([0.1, -0.2], 0.25, "balanced"),
        ([-0.5, -0.2], 0.25, "context-dependent"),
    ],
)
def test_typology_follows_the_documented_thresholds(deltas, dead_band, expected):
    assert stats.typology(deltas, dead_band=dead_band) == expected


def test_delta_z_compares_subjective_and_objective_standing_per_language():
    objective = {
        "en": {"gpt": 0.54, "kimi": 0.47, "doubao": 0.50},
        "zh": {"gpt": 0.63, "kimi": 0.52, "doubao": 0.54},
    }
    subjective = {
        "en": {"gpt": 949.0, "kimi": 1263.0, "doubao": 1000.0},
        "zh": {"gpt": 825.0, "kimi": 1214.0, "doubao": 1252.0},
    }
    result = stats.delta_z(objective, subjective)
    by_model = {gap.model: gap for gap in result.models}
    for language in ("en", "zh"):
        z_obj = scipy_stats.zscore(list(objective[language].values()))
        z_subj = scipy_stats.zscore(list(subjective[language].values()))
        for i, model in enumerate(objective[language]):
            assert by_model[model].delta_z[language] == pytest.approx(z_subj[i] - z_obj[i])
    assert by_model["gpt"].typology == "cognition-dominant"
    assert by_model["kimi"].typology == "interaction-dominant"
    assert_json_clean(result)


def test_delta_z_without_both_languages_has_no_typology():
    result = stats.delta_z({"en": {"a": 0.5, "b": 0.6}}, {"en": {"a": 1.0, "b": 0.0}})
    assert result.models[0].typology is None
    assert "two languages" in result.models[0].undefined_reason


def test_cross_lingual_gaps_correlate_each_dimension_with_the_overall_bias():
    scores = {
        "empathy": {"zh": {"a": 0.9, "b": 0.6, "c": 0.5, "d": 0.8}, "en": {"a": 0.5, "b": 0.5, "c": 0.6, "d": 0.6}},
        "crisis": {"zh": {"a": 0.7, "b": 0.5, "c": 0.4, "d": 0.6}, "en": {"a": 0.6, "b": 0.4, "c": 0.45, "d": 0.5}},
    }
    result = stats.cross_lingual_gaps(scores, language_a="zh", language_b="en")
    gaps = {"empathy": [0.4, 0.1, -0.1, 0.2], "crisis": [0.1, 0.1, -0.05, 0.1]}
    bias = np.mean([gaps["empathy"], gaps["crisis"]], axis=0)
    assert list(result.overall_bias.values()) == pytest.approx(bias.tolist())
    for dimension in result.dimensions:
        assert list(dimension.gaps.values()) == pytest.approx(gaps[dimension.dimension])
        expected = scipy_stats.pearsonr(gaps[dimension.dimension], bias)
        assert dimension.correlation.r == pytest.approx(expected.statistic)
        assert dimension.correlation.p_value == pytest.approx(expected.pvalue)
    loo = stats.cross_lingual_gaps(scores, language_a="zh", language_b="en", leave_dimension_out=True)
    expected = scipy_stats.pearsonr(gaps["empathy"], gaps["crisis"]).statistic
    assert loo.dimensions[0].correlation.r == pytest.approx(expected)
    assert_json_clean(result)


def test_correlation_is_undefined_for_constant_or_tiny_samples():
    assert stats.correlation([1, 2], [3, 4], method="pearson").r is None
    constant = stats.correlation([1, 1, 1], [1, 2, 3], method="spearman")
    assert constant.r is None and constant.undefined_reason == "a variable is constant"
