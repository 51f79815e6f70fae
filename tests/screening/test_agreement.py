"""Nominal alpha from pattern counts equals Krippendorff's alpha from the full reliability matrix."""

import krippendorff
import numpy as np
import pytest

from annotation.screening.agreement import nominal_alpha


def test_alpha_from_patterns_matches_the_reliability_matrix():
    rng = np.random.default_rng(7)
    matrix = rng.integers(0, 3, size=(4, 60)).astype(float)
    matrix[rng.random(matrix.shape) < 0.4] = np.nan
    patterns: dict = {}
    for unit in matrix.T:
        pattern = tuple(int(np.sum(unit == value)) for value in range(3))
        patterns[pattern] = patterns.get(pattern, 0) + 1
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal")
    assert nominal_alpha(patterns) == pytest.approx(expected)


def test_alpha_is_two_thirds_for_the_textbook_example():
    # Units {a,a}, {x,x}, {a,x}, {v,v}: D_o = 2/8, D_e = 42/56.
    assert nominal_alpha({(2, 0, 0): 1, (0, 0, 2): 1, (1, 0, 1): 1, (0, 2, 0): 1}) == pytest.approx(2 / 3)


def test_alpha_is_undefined_without_pairs():
    assert nominal_alpha({}) is None
    assert nominal_alpha({(1, 0, 0): 5}) is None
