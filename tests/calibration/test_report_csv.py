"""The calibration report's CSV escapes text a spreadsheet would run as a formula (a judge's name); numbers stay
numbers, negative ones included."""

import csv
import io

from calibration.report import csv_table

HOSTILE_JUDGE = "=cmd|' /C calc'!A0"


def value(v: float | None) -> dict:
    return {"value": v, "ci_low": None, "ci_high": None}


def report() -> dict:
    judge = {
        "alpha_with_judge": {"value": -0.25, "ci_low": -0.5, "ci_high": 0.125},
        "kappa_majority": value(-0.1),
        "kappa_majority_both_orientations": value(0.2),
        "agreement": value(0.5),
        "agreement_without_ties": value(0.6),
        "position_bias": {"flip_rate": value(0.1)},
        "length_bias": value(-0.05),
        "parse_failure_rate": 0.0,
    }
    baseline = {"alpha_ordinal": {"value": 0.4, "ci_low": 0.2, "ci_high": 0.6}}
    return {"strata": [{"key": "overall", "baseline": baseline, "judges": {HOSTILE_JUDGE: judge}}]}


def test_a_judge_named_like_a_formula_is_escaped_and_negative_numbers_stay_numbers():
    text = csv_table(report())

    rows = list(csv.DictReader(io.StringIO(text)))
    assert [row["rater"] for row in rows] == ["experts", "'" + HOSTILE_JUDGE]
    assert (rows[1]["alpha"], rows[1]["kappa"], rows[1]["length_bias"]) == ("-0.250", "-0.100", "-0.050")
    assert text.splitlines()[2].startswith('"overall","\'=cmd|\' /C calc\'!A0",-0.250,-0.500,0.125,-0.100,')
    assert text.splitlines()[1] == '"overall","experts",0.400,0.200,0.600,,,,,,,'
