"""Spreadsheet formula injection: text cells that would run as formulas are escaped, numbers stay numbers."""

import csv
import io
from decimal import Decimal

import pytest

from core.csvsafe import csv_safe_cell, csv_text


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ('=HYPERLINK("http://x")', '\'=HYPERLINK("http://x")'),
        ("+1+2", "'+1+2"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1+2", "'\t=1+2"),
        ("\r=1+2", "'\r=1+2"),
        ("  =1+2", "'  =1+2"),
        ("\n-cmd", "'\n-cmd"),
        ("-5", "'-5"),
        ("\ufeff=1+2", "'\ufeff=1+2"),
        ("\ufeff+1", "'\ufeff+1"),
        ("\ufeff-1", "'\ufeff-1"),
        ("\ufeff@SUM(A1)", "'\ufeff@SUM(A1)"),
        (" \ufeff\u200b=1", "' \ufeff\u200b=1"),
        ("\u200e=1", "'\u200e=1"),
        ("\ufeffhello", "\ufeffhello"),
        ("Mia feels = joy", "Mia feels = joy"),
        ("米娅最可能有什么感受？", "米娅最可能有什么感受？"),
        ("", ""),
        (-0.5, -0.5),
        (-3, -3),
        (Decimal("-0.500"), Decimal("-0.500")),
        (None, None),
    ],
)
def test_only_text_that_would_run_as_a_formula_is_escaped(value, expected):
    assert csv_safe_cell(value) == expected


def test_text_cells_are_quoted_numbers_are_not_and_embedded_quotes_and_separators_stay_inside_the_cell():
    rows = [{"name": '=1+2";=1+2', "note": "a;=cmd()", "score": -0.5, "n": 3, "missing": None}]

    text = csv_text(rows, ["name", "note", "score", "n", "missing"])

    assert text == 'name,note,score,n,missing\n"\'=1+2"";=1+2","a;=cmd()",-0.5,3,\n'
    (row,) = list(csv.DictReader(io.StringIO(text)))
    assert row == {"name": "'=1+2\";=1+2", "note": "a;=cmd()", "score": "-0.5", "n": "3", "missing": ""}


def test_a_row_with_an_unknown_column_is_an_error():
    with pytest.raises(ValueError):
        csv_text([{"unknown": "x"}], ["name"])
