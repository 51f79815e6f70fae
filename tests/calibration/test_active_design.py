"""Active allocation: draw probabilities, priorities and the design-unbiased estimator on simulated data (no DB)."""

import numpy as np
import pytest

from annotation.labelling import active


def test_draw_probabilities_mix_an_epsilon_share_uniformly_and_sum_to_one():
    q = active.draw_probabilities(np.array([0.0, 1.0, 3.0]), epsilon=0.2)
    assert q == pytest.approx([0.2 / 3, 0.2 / 3 + 0.8 / 4, 0.2 / 3 + 0.8 * 3 / 4])
    assert active.draw_probabilities(np.zeros(4)) == pytest.approx([0.25] * 4)
    masked = active.draw_probabilities(np.array([1.0, 1.0, 5.0]), remaining=[True, True, False])
    assert masked == pytest.approx([0.5, 0.5, 0.0])


def test_priority_is_the_disagreement_between_judges_likely_to_be_best():
    winners = np.array([[1, 1, 1], [1, -1, 1], [1, 1, -1], [np.nan, -1, 1]], dtype=float)
    best = np.array([0.5, 0.5, 0.0])
    # Only judges 0 and 1 can be best, so only their disagreement (row 1) matters; a missing verdict never counts.
    assert active.priorities(winners, best) == pytest.approx([0.0, 0.25, 0.0, 0.0])


def test_raj_estimator_by_hand():
    # T1 = 1 / 0.5 = 2; T2 = 1 + 0 / 0.25 = 1; mean 1.5; variance ((0.5)^2 + (0.5)^2) / (2 * 1) = 0.25.
    total, variance = active.raj_total(np.array([1.0, 0.0]), np.array([0.5, 0.25]))
    assert total == pytest.approx(1.5) and variance == pytest.approx(0.25)


def _pool(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    strata = np.repeat([0, 1, 2], 40)
    hard = rng.random(strata.size) < 0.4
    accuracy = np.array([0.62, 0.7, 0.71])
    agree = np.where(hard[:, None], rng.random((strata.size, 3)) < accuracy - 0.2, rng.random((strata.size, 3)) < 0.95)
    winners = np.where(agree, 1.0, -1.0)
    return strata, agree.astype(float), winners


def _serve(strata, agree, winners, rng, draws_per_stratum):
    """Serve like the product: strata in turn, priorities from the current plain estimates, every draw recorded."""
    served = np.zeros(strata.size, dtype=bool)
    order, probabilities = [], []
    for _ in range(draws_per_stratum):
        for h in np.unique(strata):
            if order:
                seen = agree[order]
                mean = seen.mean(axis=0)
                best = active.best_probabilities(mean, np.sqrt(np.maximum(mean * (1 - mean), 0.05) / len(order)))
            else:
                best = np.full(agree.shape[1], 1 / agree.shape[1])
            candidates = np.flatnonzero((strata == h) & ~served)
            index, q = active.draw(active.priorities(winners[candidates], best), rng=rng)
            served[candidates[index]] = True
            order.append(candidates[index])
            probabilities.append(q)
    return np.array(order), np.array(probabilities)


def test_design_weighted_agreement_is_unbiased_under_active_allocation_over_many_seeds():
    strata, agree, winners = _pool(0)
    truth = agree[:, 0].mean()
    sizes = {h: int((strata == h).sum()) for h in np.unique(strata)}
    estimates, errors, naive = [], [], []
    for seed in range(1000):
        order, q = _serve(strata, agree, winners, np.random.default_rng(seed), draws_per_stratum=8)
        result = active.stratified_mean(agree[order, 0], q, strata[order], sizes)
        estimates.append(result.value)
        errors.append(result.standard_error)
        naive.append(agree[order, 0].mean())
    estimates = np.array(estimates)
    standard_error_of_bias = estimates.std(ddof=1) / np.sqrt(estimates.size)
    assert abs(estimates.mean() - truth) < 2 * standard_error_of_bias
    # The reported standard error matches the spread over seeds.
    assert np.mean(errors) == pytest.approx(estimates.std(ddof=1), rel=0.25)
    # Without the correction the same draws are far off: active order over-samples where judges disagree.
    assert abs(np.mean(naive) - truth) > 5 * np.std(naive, ddof=1) / np.sqrt(len(naive))


def test_ratio_estimate_handles_undefined_values():
    y = np.array([1.0, 0.0, 1.0, 1.0])
    defined = np.array([1.0, 0.0, 1.0, 1.0])
    result = active.stratified_mean(y, np.full(4, 0.25), np.zeros(4), {0: 4}, defined=defined)
    assert result.value == pytest.approx(1.0)
    assert active.stratified_mean(y, np.full(4, 0.25), np.zeros(4), {0: 4, 1: 3}).value is None


def test_choose_by_lower_bound_prefers_the_surer_judge():
    assert active.choose_by_lower_bound(np.array([0.70, 0.71]), np.array([0.01, 0.05])) == 0


def _facet_sized_pool() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ten strata of 13 comparisons (a FACET-sized set), judges erring together on hard pairs."""
    rng = np.random.default_rng(0)
    strata = np.repeat(np.arange(10), 13)
    hard = rng.random(strata.size) < 0.4
    accuracy = np.array([0.62, 0.7, 0.71])
    agree = np.where(hard[:, None], rng.random((strata.size, 3)) < accuracy - 0.2, rng.random((strata.size, 3)) < 0.95)
    return strata, agree.astype(float), np.where(agree, 1.0, -1.0)


def _serve_rounds(strata, agree, winners, rng, rounds):
    """Serve strata in turn as the product does; priorities refreshed once per round (keeps the test fast)."""
    served = np.zeros(strata.size, dtype=bool)
    order, probabilities = [], []
    for _ in range(rounds):
        if order:
            mean = agree[order].mean(axis=0)
            best = active.best_probabilities(mean, np.sqrt(np.maximum(mean * (1 - mean), 0.05) / len(order)))
        else:
            best = np.full(agree.shape[1], 1 / agree.shape[1])
        for h in np.unique(strata):
            candidates = np.flatnonzero((strata == h) & ~served)
            index, q = active.draw(active.priorities(winners[candidates], best), rng=rng)
            served[candidates[index]] = True
            order.append(candidates[index])
            probabilities.append(q)
    return np.array(order), np.array(probabilities)


def test_design_weighted_interval_covers_at_least_94_percent_with_60_draws_of_small_strata():
    # 60 draws over ten strata of 13: the interval the report uses (ratio form, its half-width) must cover the
    # whole-set agreement of every judge in >= 94% of 400 seeded runs (Monte-Carlo error allowed per judge).
    strata, agree, winners = _facet_sized_pool()
    sizes = {h: 13 for h in range(10)}
    reps = 400
    covered = np.zeros(3)
    for seed in range(reps):
        order, q = _serve_rounds(strata, agree, winners, np.random.default_rng(seed), rounds=6)
        for j in range(3):
            y = agree[order, j]
            result = active.stratified_mean(y, q, strata[order], sizes, defined=np.ones_like(y))
            covered[j] += abs(result.value - agree[:, j].mean()) <= result.half_width
    coverage = covered / reps
    assert coverage.mean() >= 0.94
    assert (coverage >= 0.94 - 2 * np.sqrt(0.95 * 0.05 / reps)).all(), coverage


def test_half_width_uses_the_satterthwaite_t_quantile():
    y = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 1.0])
    q = np.array([0.5, 0.4, 0.3, 0.5, 0.4, 0.3])
    strata = np.array([0, 0, 0, 1, 1, 1])
    result = active.stratified_mean(y, q, strata, {0: 5, 1: 5})
    # Two strata of three draws with equal variance: Satterthwaite gives 2 + 2 = 4 degrees of freedom.
    assert result.degrees_of_freedom == pytest.approx(4.0)
    assert result.half_width == pytest.approx(2.776445 * result.standard_error, rel=1e-5)
