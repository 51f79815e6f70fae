"""LaTeX escaping: user text typesets as written in every LaTeX file the app writes."""

import pytest

from calibration.report import latex_table
from core.latex import latex_escape
from evaluation.report.files import _latex as leaderboard_latex

HOSTILE = r"100% \input{x} #1 $x$ ~^_&{}"
ESCAPED = r"100\% \textbackslash{}input\{x\} \#1 \$x\$ \textasciitilde{}\textasciicircum{}\_\&\{\}"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (HOSTILE, ESCAPED),
        ("a<b>c|d", r"a\textless{}b\textgreater{}c\textbar{}d"),
        ("two\n\nlines\r\n", "two  lines  "),
        ("judge_v2", r"judge\_v2"),
        ("情绪 judge", "情绪 judge"),
        (3, "3"),
    ],
)
def test_latex_escape_writes_every_special_character_as_the_command_that_prints_it(text, expected):
    assert latex_escape(text) == expected


def _unescaped_specials(line: str) -> list[str]:
    """Return the special characters of a table row that no backslash escapes (outside the commands written)."""
    found, i = [], 0
    while i < len(line):
        char = line[i]
        if char == "\\":
            i += 2
            continue
        if char in "%#$_^~{}":
            found.append(char)
        i += 1
    return found


def _value(v: float | None) -> dict:
    return {"value": v, "ci_low": v, "ci_high": v}


def test_calibration_latex_table_escapes_a_hostile_judge_name():
    judge = {
        "alpha_with_judge": _value(0.5),
        "kappa_majority": _value(0.4),
        "kappa_majority_both_orientations": _value(0.4),
        "agreement": _value(0.7),
        "agreement_without_ties": _value(0.8),
        "position_bias": {"flip_rate": _value(0.1)},
        "length_bias": _value(0.0),
        "parse_failure_rate": 0.0,
    }
    report = {"strata": [{"key": "overall", "baseline": {"alpha_ordinal": _value(0.6)}, "judges": {HOSTILE: judge}}]}

    latex = latex_table(report)

    row = next(line for line in latex.splitlines() if line.startswith("100"))
    assert row.startswith(ESCAPED + " & 0.500 [0.500, 0.500] & 0.400")
    assert r"\input{" not in latex
    # What is left unescaped is the table's own markup: the column separators and the row end.
    assert _unescaped_specials(row.removeprefix(ESCAPED)) == []


def test_evaluation_leaderboard_escapes_model_codes():
    report = {
        "analysis": {
            "standing": [
                {"model": "M_1 & #2", "language": "en", "accuracy": 0.5, "macro": 0.5, "rating": 25.0, "delta": 0.1}
            ]
        }
    }
    latex = leaderboard_latex(report).decode()

    assert r"M\_1 \& \#2 & en & 0.500" in latex
