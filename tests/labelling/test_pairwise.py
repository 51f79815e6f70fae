"""Pairwise verdicts and blinding (pure): the one mapping from the order shown back to A and B, and the
anonymisation of model names in responses."""

import pytest

from annotation.labelling.pairwise import anonymise, canonical_score, shown_choice


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


@pytest.mark.parametrize(
    ("order", "winner", "margin", "score"),
    [
        ("AB", "left", 3, 3),
        ("AB", "right", 5, -5),
        ("BA", "left", 3, -3),
        ("BA", "right", 1, 1),
        ("BA", "tie", None, 0),
    ],
)
def test_labels_are_stored_in_canonical_orientation(order, winner, margin, score):
    assert canonical_score(shown_order=order, winner=winner, margin=margin) == score
    assert shown_choice(shown_order=order, score=score) == (winner, margin or 0)


@pytest.mark.parametrize(("winner", "margin"), [("left", 0), ("left", 6), ("tie", 2), ("both", 1), ("right", None)])
def test_invalid_verdicts_are_refused(winner, margin):
    with pytest.raises(ValueError):
        canonical_score(shown_order="AB", winner=winner, margin=margin)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("As an AI language model developed by OpenAI, I hear you.", "[model], I hear you."),
        ("I'm ChatGPT and I care.", "I'm [model] and I care."),
        ("m-beta here: take a breath.", "[model] here: take a breath."),
        ("作为一个由深度求索开发的人工智能助手，我理解你。", "[model]，我理解你。"),
        ("我是通义千问，我在这里陪你。", "我是[model]，我在这里陪你。"),
        ("Beta-blockers are medicines.", "Beta-blockers are medicines."),
    ],
)
def test_anonymise_removes_model_names_and_self_identification(text, expected):
    assert anonymise(text, ["m-beta"]) == expected
