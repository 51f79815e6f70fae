"""The evaluation report's CSV tables escape text a spreadsheet would run as a formula; numbers stay numbers."""

import csv
import io

from evaluation.report.files import report_tables

HOSTILE_MODEL = '=HYPERLINK("http://evil.example","M01")'


def report() -> dict:
    return {
        "objective": {
            "accuracy": [
                {
                    "model": HOSTILE_MODEL,
                    "dimension": "-cmd",
                    "language": "en",
                    "n": 10,
                    "correct": 4,
                    "accuracy": 0.4,
                    "ci_low": -0.05,
                    "ci_high": 0.7,
                }
            ]
        },
        "subjective": {
            "ratings": [],
            "win_rates": [
                {
                    "language": "en",
                    "a": "@M02",
                    "b": "+M03",
                    "wins": 1,
                    "losses": 2,
                    "draws": 0,
                    "rate": -0.5,
                    "p": 0.3,
                    "p_adjusted": 0.6,
                    "significant": False,
                }
            ],
        },
    }


def test_text_cells_are_escaped_and_quoted_and_numbers_are_written_as_numbers():
    tables = report_tables(report())

    accuracy = tables["accuracy.csv"].decode()
    assert accuracy.splitlines()[0] == "model,dimension,language,n,correct,accuracy,ci_low,ci_high"
    assert (
        accuracy.splitlines()[1] == '"\'=HYPERLINK(""http://evil.example"",""M01"")","\'-cmd","en",10,4,0.4,-0.05,0.7'
    )
    (row,) = csv.DictReader(io.StringIO(tables["win_rates.csv"].decode()))
    assert (row["a"], row["b"], row["rate"], row["significant"]) == ("'@M02", "'+M03", "-0.5", "False")
    assert tables["ratings.csv"] == b"" and tables["bradley_terry.csv"] == b""
