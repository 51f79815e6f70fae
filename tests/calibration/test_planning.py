"""Precision planning: design effect, sample sizes and expert hours, against hand computations (no database)."""

import math

import numpy as np
import pytest

from calibration.agreement.planning import (
    comparisons_for_half_width,
    comparisons_for_lead,
    design_effect,
    expert_hours,
    plan,
    planning_inputs,
)


def test_design_effect_of_perfectly_clustered_values_is_the_cluster_size():
    # MSB = 1, MSW = 0, so ICC = 1 and deff = 1 + (2 - 1) * 1.
    assert design_effect([1, 1, 0, 0], ["a", "a", "b", "b"]) == pytest.approx(2.0)


def test_design_effect_ignores_negative_intra_item_correlation():
    assert design_effect([1, 0, 1, 0], ["a", "a", "b", "b"]) == pytest.approx(1.0)


def test_design_effect_matches_the_anova_icc_by_hand():
    values = np.array([1, 1, 0, 1, 0, 0, 1, 1, 1], dtype=float)
    clusters = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2])
    means = np.array([2 / 3, 1 / 3, 1.0])
    grand = values.mean()
    msb = 3 * np.sum((means - grand) ** 2) / 2
    msw = np.sum((values - np.repeat(means, 3)) ** 2) / 6
    icc = (msb - msw) / (msb + 2 * msw)
    assert design_effect(values, clusters) == pytest.approx(1 + 2 * max(icc, 0.0))


def test_design_effect_is_one_without_replication_and_skips_nan():
    assert design_effect([1, 0, 1], [1, 2, 3]) == 1.0
    assert design_effect([1, np.nan, 1, 0, 0], [1, 1, 1, 2, 2]) == pytest.approx(2.0)


def test_half_width_scales_with_one_over_root_n():
    assert comparisons_for_half_width(n=100, half_width=0.1, target=0.05) == 400
    assert comparisons_for_half_width(n=100, half_width=0.1, target=0.2) == 100
    assert comparisons_for_half_width(n=0, half_width=0.1, target=0.05) is None


def test_comparisons_for_lead_is_the_textbook_paired_sample_size():
    # n = (z_0.975 + z_0.8)^2 * sd^2 / d^2 = 7.8489 * 0.25 / 0.01 = 196.2 -> 197.
    assert comparisons_for_lead(mean_difference=0.1, sd_difference=0.5) == 197
    assert comparisons_for_lead(mean_difference=-0.1, sd_difference=0.5, design_effect=2.0) == 393
    assert comparisons_for_lead(mean_difference=0.0, sd_difference=0.5) is None


def test_expert_hours_count_every_label_of_a_comparison():
    assert expert_hours(comparisons=100, labels_per_comparison=3, seconds_per_label=60) == pytest.approx(5.0)
    assert expert_hours(comparisons=100, labels_per_comparison=3, seconds_per_label=None) is None


def test_planning_inputs_and_plan_give_the_normal_half_width_and_the_lead():
    first = np.array([1.0, 0.0] * 50)
    second = np.array([1.0, 0.0, 0.0, 0.0] * 25)
    inputs = planning_inputs(
        agreements={"b": second, "a": first}, items=np.arange(100), labels_per_comparison=3, seconds_per_label=30
    )
    sd = math.sqrt(0.25 * 100 / 99)
    assert inputs["judges"]["a"]["half_width"] == pytest.approx(1.959964 * sd / 10, rel=1e-5)
    assert inputs["lead"]["first"] == "a" and inputs["lead"]["mean"] == pytest.approx(0.25)
    result = plan(inputs, target_half_width=inputs["judges"]["a"]["half_width"] / 2)
    row = next(r for r in result["judges"] if r["name"] == "a")
    assert row["needed_total"] == 400 and row["more_comparisons"] == 300 and row["more_labels"] == 900
    assert row["more_hours"] == pytest.approx(900 * 30 / 3600)
    # The lead of 0.25 with sd of the difference 0.435 over 100 comparisons is already significant.
    assert result["lead"]["significant_now"]


def test_the_projected_half_width_is_reached_in_simulation():
    rng = np.random.default_rng(1)
    pilot = (rng.random(200) < 0.7).astype(float)
    inputs = planning_inputs(
        agreements={"j": pilot}, items=np.arange(200), labels_per_comparison=1, seconds_per_label=None
    )
    needed = plan(inputs, target_half_width=0.02)["judges"][0]["needed_total"]
    widths = [1.96 * (rng.random(needed) < 0.7).std(ddof=1) / math.sqrt(needed) for _ in range(50)]
    assert np.mean(widths) == pytest.approx(0.02, rel=0.1)
