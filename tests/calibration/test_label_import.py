"""Pairwise verdicts from files: canonical orientation, bad rows, and the agreement command on them."""

import json

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from calibration.label_import import LabelImportError, read_pairwise_labels

HEADER = "item,language,dimension,model_a,model_b,rater,winner,margin,order\n"


def test_verdicts_in_either_column_order_and_by_position_land_on_one_canonical_unit():
    text = HEADER + (
        "q1,en,empathy,gpt,claude,exp1,A,3,\n"  # gpt beats claude by 3: canonical A is claude -> -3
        "q1,en,empathy,claude,gpt,exp2,B,2,\n"  # same direction, written the other way round -> -2
        "q1,en,empathy,claude,gpt,judge,first,1,BA\n"  # gpt was shown first and won -> -1
        "q1,en,empathy,claude,gpt,exp3,tie,,\n"
    )
    table = read_pairwise_labels(text)
    assert table.units == ["q1|en|empathy|claude|gpt"]
    assert table.raters == ["exp1", "exp2", "exp3", "judge"]
    assert table.values.tolist() == [[-3.0, -2.0, 0.0, -1.0]]


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("q1,en,d,a,a,r,A,1,", "line 2: model_a/model_b: two different model names are required"),
        ("q1,en,d,a,b,r,A,7,", "line 2: margin: 7 is outside 0 to 5"),
        ("q1,en,d,a,b,r,tie,2,", "line 2: margin: a tie has no margin"),
        ("q1,en,d,a,b,r,first,2,", "line 2: order: positions need an order of AB or BA"),
        ("q1,en,d,a,b,r,left,2,", "line 2: winner: expected A, B, first, second or tie, got 'left'"),
    ],
)
def test_bad_rows_name_the_line_and_field(row, message):
    with pytest.raises(LabelImportError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_pairwise_labels(HEADER + row + "\n")


def test_a_second_verdict_by_the_same_rater_is_refused():
    with pytest.raises(LabelImportError, match="line 3: rater: r already rated this comparison"):
        read_pairwise_labels(HEADER + "q,en,d,a,b,r,A,1,\nq,en,d,b,a,r,B,1,\n")


def test_agreement_command_reads_pairwise_files(tmp_path, capsys):
    rows = []
    rng = np.random.default_rng(0)
    for n in range(30):
        truth = int(rng.integers(-3, 4))
        for rater, noise in (("e1", 0), ("e2", 1), ("judge", 2)):
            score = int(np.clip(truth + rng.integers(-noise, noise + 1), -5, 5))
            winner = "tie" if score == 0 else ("A" if score > 0 else "B")
            rows.append(f"q{n},en,d,m1,m2,{rater},{winner},{abs(score) or ''},")
    path = tmp_path / "labels.csv"
    path.write_text(HEADER + "\n".join(rows) + "\n", encoding="utf-8")
    call_command(
        "agreement", str(path), "--pairwise", "--level", "ordinal", "--json", "--bootstrap", "100", "--skip-checks"
    )
    report = json.loads(capsys.readouterr().out)
    assert report["raters"] == ["e1", "e2", "judge"] and report["n_units"] == 30
    assert report["alpha"]["value"] > 0.5
    bad = tmp_path / "bad.csv"
    bad.write_text("item,rater\nq,e\n", encoding="utf-8")
    with pytest.raises(CommandError, match="missing column"):
        call_command("agreement", str(bad), "--pairwise", "--skip-checks")
