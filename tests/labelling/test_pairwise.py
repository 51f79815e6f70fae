"""Canonical orientation of pairwise verdicts: the one mapping from the order shown back to A and B (pure)."""

import pytest

from labelling.pairwise import canonical_score, shown_choice


@pytest.mark.parametrize(
    ("shown_order", "winner", "margin", "expected"),
    [
        ("AB", "left", 3, 3),
        ("AB", "right", 2, -2),
        ("BA", "left", 5, -5),
        ("BA", "right", 1, 1),
        ("AB", "tie", 0, 0),
        ("BA", "tie", 0, 0),
        ("BA", "tie", None, 0),
    ],
)
def test_canonical_score_maps_the_shown_order_back_to_a_and_b(shown_order, winner, margin, expected):
    assert canonical_score(shown_order=shown_order, winner=winner, margin=margin) == expected


@pytest.mark.parametrize(
    ("shown_order", "winner", "margin"),
    [
        ("AB", "left", 0),
        ("AB", "left", 6),
        ("BA", "right", -1),
        ("AB", "right", None),
        ("AB", "tie", 2),
        ("AC", "left", 1),
        ("AB", "x", 1),
    ],
)
def test_canonical_score_rejects_verdicts_off_the_scale(shown_order, winner, margin):
    with pytest.raises(ValueError):
        canonical_score(shown_order=shown_order, winner=winner, margin=margin)


@pytest.mark.parametrize("shown_order", ["AB", "BA"])
@pytest.mark.parametrize("score", range(-5, 6))
def test_shown_choice_inverts_canonical_score(shown_order, score):
    winner, margin = shown_choice(shown_order=shown_order, score=score)
    assert canonical_score(shown_order=shown_order, winner=winner, margin=margin) == score
