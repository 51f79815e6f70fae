"""The agreement command: every coefficient with its interval, JSON output, undefined tables, malformed files."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command, execute_from_command_line

DATA = Path(__file__).resolve().parent / "data"
KRIPPENDORFF_CSV = DATA / "krippendorff2011_reliability.csv"
PAIRWISE_CSV = DATA / "pairwise_signed.csv"


def run(*args: str) -> str:
    out = StringIO()
    call_command("agreement", *args, stdout=out)
    return out.getvalue()


def write(tmp_path: Path, text: str, name: str = "labels.csv") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def reject_nan(constant: str) -> None:
    raise AssertionError(f"JSON output holds {constant}")


def test_prints_every_coefficient_with_its_interval_for_an_interval_table():
    output = run(str(KRIPPENDORFF_CSV), "--level", "interval")
    assert "12 units, 4 raters, 41 ratings; level interval" in output
    assert "95% percentile bootstrap over units, 1000 resamples, seed 0" in output
    assert "Krippendorff's alpha (interval)" in output
    alpha_line = next(line for line in output.splitlines() if line.startswith("Krippendorff's alpha"))
    assert "0.849  [" in alpha_line and "n=11" in alpha_line
    assert "Fleiss' kappa" in output
    assert output.count(" vs ") == 6  # every pair of the four observers
    for label in ("Cohen's kappa ", "linear weights", "quadratic weights", "percent agreement", "Spearman's rho"):
        assert output.count(label) == 6, label
    assert "nan" not in output.lower()


def test_nominal_level_prints_only_the_nominal_coefficients():
    output = run(str(KRIPPENDORFF_CSV))
    assert "Krippendorff's alpha (nominal)" in output
    assert "0.743" in output
    assert "linear weights" not in output and "Spearman" not in output
    assert output.count("percent agreement") == 6


def test_json_output_holds_every_coefficient_and_no_nan():
    body = json.loads(run(str(KRIPPENDORFF_CSV), "--level", "ordinal", "--json"), parse_constant=reject_nan)
    assert body["alpha"]["value"] == pytest.approx(0.815, abs=5e-4)
    assert body["alpha"]["ci_low"] < body["alpha"]["value"] <= body["alpha"]["ci_high"]
    assert body["raters"] == ["c1", "c2", "c4", "c3"]  # in order of first appearance
    assert body["units"] == [str(unit) for unit in range(1, 13)]
    assert len(body["pairs"]) == 6
    pair = body["pairs"][0]
    assert {"cohen_kappa", "cohen_kappa_linear", "cohen_kappa_quadratic", "percent_agreement", "spearman"} <= set(pair)
    assert set(pair["cohen_kappa"]) >= {"value", "ci_low", "ci_high", "n_units", "undefined_reason"}
    assert body["undefined_reason"] is None


def test_signed_scores_add_the_winner_coefficients():
    output = run(str(PAIRWISE_CSV), "--level", "ordinal", "--signed")
    assert "level ordinal, signed scores" in output
    assert "Krippendorff's alpha (nominal, winner)" in output
    assert "Fleiss' kappa (winner)" in output
    assert output.count("percent agreement without ties (winner)") == 6
    assert "expert1 vs judge" in output
    body = json.loads(run(str(PAIRWISE_CSV), "--level", "ordinal", "--signed", "--json"))
    assert body["alpha_winner"]["statistic"] == "krippendorff_alpha_nominal_winner"
    assert body["pairs"][0]["percent_agreement_without_ties"]["value"] == 1


def test_nominal_labels_may_be_words(tmp_path):
    rows = ["unit,rater,value"]
    verdicts = {"ann": "left left tie right left right", "bob": "left right tie right left right"}
    for rater, labels in verdicts.items():
        rows += [f"p{i},{rater},{label}" for i, label in enumerate(labels.split())]
    output = run(write(tmp_path, "\n".join(rows) + "\n"))
    assert "Categories: left, right, tie" in output
    agreement_line = next(line for line in output.splitlines() if "percent agreement" in line)
    assert "0.833" in agreement_line  # 5 of 6 pairs agree
    body = json.loads(run(write(tmp_path, "\n".join(rows) + "\n"), "--json"))
    assert body["category_names"] == ["left", "right", "tie"]


def test_the_same_seed_gives_the_same_intervals_and_another_seed_other_ones():
    first = run(str(PAIRWISE_CSV), "--level", "interval", "--seed", "7", "--bootstrap", "300")
    assert first == run(str(PAIRWISE_CSV), "--level", "interval", "--seed", "7", "--bootstrap", "300")
    assert first != run(str(PAIRWISE_CSV), "--level", "interval", "--seed", "8", "--bootstrap", "300")


def test_bootstrap_zero_prints_estimates_without_intervals():
    output = run(str(KRIPPENDORFF_CSV), "--bootstrap", "0")
    assert "Intervals: none (--bootstrap 0)" in output
    assert "0.743  [no interval]" in output


def test_one_rater_is_reported_as_undefined_without_failing(tmp_path):
    path = write(tmp_path, "unit,rater,value\nu1,ann,3\nu2,ann,4\nu3,ann,1\n")
    output = run(path, "--level", "ordinal")
    assert "Agreement is undefined: only one rater: agreement needs at least two." in output
    alpha_line = next(line for line in output.splitlines() if line.startswith("Krippendorff's alpha (ordinal)"))
    assert alpha_line.endswith("undefined: only one rater: agreement needs at least two")
    assert "3 units, 1 rater, 3 ratings" in output
    body = json.loads(run(path, "--json"), parse_constant=reject_nan)
    assert body["alpha"]["value"] is None
    assert body["undefined_reason"] == "only one rater: agreement needs at least two"


def test_constant_values_are_reported_as_undefined_without_failing(tmp_path):
    rows = "".join(f"u{unit},{rater},2\n" for unit in range(4) for rater in ("ann", "bob"))
    output = run(write(tmp_path, "unit,rater,value\n" + rows), "--level", "interval")
    assert "Agreement is undefined: every rating on units with two or more ratings is 2" in output
    assert "no variation" in output
    assert "nan" not in output.lower()


@pytest.mark.parametrize(
    ("text", "options", "message"),
    [
        ("", [], "is empty: expected a header line 'unit,rater,value'"),
        ("\n \n", [], "is empty"),
        ("unit,rater\nu1,ann\n", [], "line 1: the header must name the columns unit, rater and value; missing: value"),
        ("item,who,score\n", [], "missing: unit, rater, value (found: item, who, score)"),
        ("unit,rater,value,unit\n", [], "line 1: the header names the column 'unit' twice"),
        ("unit,rater,value\n", [], "has a header but no ratings"),
        ("unit,rater,value\nu1,ann,3\nu1,bob,abc\n", ["--level", "ordinal"], "line 3: value 'abc' is not a finite"),
        ("unit,rater,value\nu1,ann,3\nu1,bob,nan\n", ["--level", "interval"], "line 3: value 'nan' is not a finite"),
        (
            "unit,rater,value\nu1,ann,3\nu2,ann,4\nu1,ann,5\n",
            [],
            "line 4: rater 'ann' already rated unit 'u1' on line 2",
        ),
        ("unit,rater,value\nu1,ann\n", [], "line 2: expected 3 fields as in the header, found 2"),
        ("unit,rater,value\nu1,ann,\n", [], "line 2: empty value (leave the row out for a missing rating)"),
        ("unit,rater,value\n,ann,3\n", [], "line 2: empty unit"),
        ("unit,rater,value\nu1,ann,3\n\nu1,bob,7\n", ["--signed"], "line 4: value '7' is not a signed score"),
        ("unit,rater,value\nu1,ann,1.5\n", ["--signed", "--level", "ordinal"], "line 2: value '1.5' is not a signed"),
        ("unit,rater,value\nu1,ann,left\n", ["--signed"], "line 2: value 'left' is not a signed score"),
    ],
)
def test_malformed_input_is_refused_naming_the_line(tmp_path, text, options, message):
    with pytest.raises(CommandError) as error:
        run(write(tmp_path, text), *options)
    assert message in str(error.value)


def test_a_missing_file_and_a_negative_bootstrap_are_refused(tmp_path):
    with pytest.raises(CommandError, match="no such file"):
        run(str(tmp_path / "absent.csv"))
    with pytest.raises(CommandError, match="--bootstrap must be 0 or more"):
        run(str(KRIPPENDORFF_CSV), "--bootstrap", "-1")


def test_a_file_that_is_not_utf8_is_refused(tmp_path):
    path = tmp_path / "latin1.csv"
    path.write_bytes("unit,rater,value\nu1,Jos\xe9,3\n".encode("latin-1"))
    with pytest.raises(CommandError, match="not UTF-8"):
        run(str(path))


def test_header_names_are_trimmed_and_case_blind_and_extra_columns_are_ignored(tmp_path):
    text = " Rater ,note,UNIT,Value\nann,first,u1,1\nbob,,u1,1\nann,,u2,2\nbob,,u2,1\nann,,u3,2\nbob,,u3,2\n"
    body = json.loads(run(write(tmp_path, text), "--json"))
    assert body["raters"] == ["ann", "bob"]
    assert body["pairs"][0]["percent_agreement"]["value"] == pytest.approx(2 / 3)


def test_exit_status_is_zero_for_undefined_agreement_and_non_zero_for_malformed_input(tmp_path, capsys):
    one_rater = write(tmp_path, "unit,rater,value\nu1,ann,3\nu2,ann,4\n", "one.csv")
    duplicate = write(tmp_path, "unit,rater,value\nu1,ann,3\nu1,ann,4\n", "dup.csv")
    # --skip-checks: the model checks open a database connection, which these tests do without.
    execute_from_command_line(["manage.py", "agreement", "--skip-checks", "--bootstrap", "10", one_rater])
    assert "Agreement is undefined: only one rater" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_status:
        execute_from_command_line(["manage.py", "agreement", "--skip-checks", "--bootstrap", "10", duplicate])
    assert exit_status.value.code != 0
    assert "line 3: rater 'ann' already rated unit 'u1' on line 2" in capsys.readouterr().err


def test_numbers_written_differently_are_one_category_even_beside_words(tmp_path):
    rows = ["unit,rater,value"]
    verdicts = {"ann": "1 1.0 tie 2 +2 left", "bob": "1.0 1 tie 2.00 2 left"}
    for rater, labels in verdicts.items():
        rows += [f"p{i},{rater},{label}" for i, label in enumerate(labels.split())]
    output = run(write(tmp_path, "\n".join(rows) + "\n"))
    assert "Categories: 1, 2, left, tie" in output
    agreement_line = next(line for line in output.splitlines() if "percent agreement" in line)
    assert "1.000" in agreement_line  # "1" and "1.0", "2", "+2" and "2.00" are the same labels
