"""Preference pairs from signed scores: which comparisons give a pair, and which are ties or inconsistent."""

from annotation.labelling import preferences as p
from calibration.label_import import read_pairwise_labels


def test_experts_give_a_pair_only_when_no_two_name_different_winners():
    assert p.from_labels([2, 1, 0]) == p.Outcome(p.PAIR, a_chosen=True)
    assert p.from_labels([-3]) == p.Outcome(p.PAIR, a_chosen=False)
    assert p.from_labels([0, 0]) == p.Outcome(p.TIE)
    assert p.from_labels([1, -1, 2]) == p.Outcome(p.INCONSISTENT)


def test_a_judges_orders_give_a_pair_when_both_parsed_agree_and_combine_to_a_winner():
    assert p.from_orders(3, 1, 2) == p.Outcome(p.PAIR, a_chosen=True)
    assert p.from_orders(-1, 0, -1) == p.Outcome(p.PAIR, a_chosen=False)
    assert p.from_orders(2, -2, 0) == p.Outcome(p.INCONSISTENT)
    assert p.from_orders(2, -2, None) == p.Outcome(p.INCONSISTENT)
    assert p.from_orders(0, 0, 0) == p.Outcome(p.TIE)
    assert p.from_orders(None, 2, None) == p.Outcome(p.UNPARSED)
    counts = p.outcome_counts([p.Outcome(p.TIE), p.Outcome(p.TIE), p.Outcome(p.PAIR, True)])
    assert counts == {"pair": 1, "tie": 2, "inconsistent": 0, "unparsed": 0}


def test_the_label_table_reader_skips_rows_an_export_marks_excluded():
    text = (
        "item,language,dimension,model_a,model_b,rater,winner,margin,excluded\n"
        "i1,en,d,m1,m2,judge,A,2,\n"
        "i2,en,d,m1,m2,judge,,,not parsed: BA\n"
    )
    table = read_pairwise_labels(text)
    assert table.units == ["i1|en|d|m1|m2"] and table.values.tolist() == [[2.0]]
