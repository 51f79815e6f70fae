"""Agreement defects of issue 12: decimal ratings, the category set of weighted kappa, and orientation.

Reference values are computed by hand in the comments (exact fractions), by a line-by-line port of R
``irr::kappa2`` (which drops incomplete units first), or by scikit-learn on integer codes of the same data.
"""

import csv
import json
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from django.core.management import CommandError, call_command, execute_from_command_line
from sklearn.metrics import cohen_kappa_score

from calibration.agreement import (
    SIGNED_SCALE,
    agreement_report,
    cohen_kappa,
    judge_difference,
    krippendorff_alpha,
    majority_winner,
    median_score,
)
from calibration.report import csv_table, latex_table, stratum_report

EXTERNAL = Path(__file__).resolve().parents[2].parent / "shared/data/external"
LLMFAO = EXTERNAL / "llmfao"
N = np.nan


def run(*args: str) -> str:
    out = StringIO()
    call_command("agreement", *args, stdout=out)
    return out.getvalue()


def write(tmp_path: Path, rows: list[str], name: str = "labels.csv") -> str:
    path = tmp_path / name
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return str(path)


def table_rows(table: np.ndarray, raters: tuple[str, ...]) -> list[str]:
    """Return a units x raters table as CSV lines unit,rater,value (missing cells left out)."""
    rows = ["unit,rater,value"]
    for i, values in enumerate(table):
        rows += [f"u{i},{rater},{value:g}" for rater, value in zip(raters, values, strict=True) if not np.isnan(value)]
    return rows


def line_value(output: str, label: str, occurrence: int = 0) -> float:
    """Return the point estimate printed on the ``occurrence``-th line that starts with ``label``."""
    lines = [line for line in output.splitlines() if line.startswith(label)]
    return float(lines[occurrence][len(label) :].split()[0])


# --- 1. non-integer ratings are categories --------------------------------------------------------------


def test_cohen_kappa_takes_half_point_ratings_as_categories():
    # Categories 0.5, 1, 1.5. Observed agreement 2/3; marginals (1/3, 1/3, 1/3) and (1/3, 0, 2/3), so chance
    # agreement is 1/9 + 0 + 2/9 = 1/3 and kappa = (2/3 - 1/3) / (1 - 1/3) = 1/2.
    assert cohen_kappa([0.5, 1.0, 1.5], [0.5, 1.5, 1.5], n_boot=0).value == pytest.approx(0.5, abs=1e-12)


@pytest.mark.parametrize("weights", ["unweighted", "linear", "quadratic"])
def test_kappa_of_half_points_equals_scikit_learn_on_the_doubled_whole_numbers(weights):
    rng = np.random.default_rng(4)
    first = rng.integers(2, 11, 40) / 2  # 1.0, 1.5, ..., 5.0
    second = np.clip(first + rng.integers(-2, 3, 40) / 2, 1, 5)
    reference = cohen_kappa_score(
        (2 * first).astype(int), (2 * second).astype(int), weights=None if weights == "unweighted" else weights
    )
    assert cohen_kappa(first, second, weights=weights, n_boot=0).value == pytest.approx(reference, abs=1e-12)


def test_report_and_judge_difference_take_the_experts_half_point_medians():
    experts = np.array([[1, 2], [3, 4], [-1, -2], [0, 1], [2, 2], [-3, -4], [1, 1], [4, 5]], dtype=float)
    median = median_score(experts)  # 1.5, 3.5, -1.5, 0.5, 2, -3.5, 1, 4.5
    assert set(median) >= {1.5, 3.5}
    judge_a = np.array([2, 3, -1, 0, 2, -3, 1, 5], dtype=float)
    judge_b = np.array([1, 4, -2, 1, 1, -4, 2, 4], dtype=float)
    for coefficient, weights in (("cohen_unweighted", "unweighted"), ("cohen_linear", "linear")):
        difference = judge_difference(median, judge_a, judge_b, coefficient=coefficient, n_boot=200)
        expected = (
            cohen_kappa(median, judge_a, weights=weights, n_boot=0).value
            - cohen_kappa(median, judge_b, weights=weights, n_boot=0).value
        )
        assert difference.value == pytest.approx(expected, abs=1e-12)
    report = agreement_report(np.column_stack([median, judge_a]), "interval", n_boot=50)
    assert report.pairs[0].cohen_kappa_linear.value == pytest.approx(
        cohen_kappa(median, judge_a, weights="linear", n_boot=0).value, abs=1e-12
    )


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_command_reports_decimal_ratings_at_every_level(tmp_path, level):
    table = np.array([[2.5, 3], [1, 1.5], [4, 4], [2.5, 2.5], [3.5, N], [0.5, 1]])
    output = run(write(tmp_path, table_rows(table, ("ann", "bob"))), "--level", level, "--bootstrap", "20")
    assert f"level {level}" in output
    # On the five shared units: observed agreement 2/5; ann (0.5, 1, 2.5, 2.5, 4) and bob (1, 1.5, 2.5, 3, 4)
    # share 1 (1 x 1), 2.5 (2 x 1) and 4 (1 x 1): chance agreement 4/25, kappa = (10 - 4) / (25 - 4) = 2/7.
    assert line_value(output, "  Cohen's kappa  ") == pytest.approx(2 / 7, abs=5e-4)
    assert "nan" not in output.lower()


def test_command_offers_the_ratio_level_and_refuses_negative_ratio_values(tmp_path):
    path = write(tmp_path, table_rows(np.array([[1, 2], [3, 3], [2, 4]], dtype=float), ("ann", "bob")))
    body = json.loads(run(path, "--level", "ratio", "--json", "--bootstrap", "0"))
    expected = krippendorff_alpha([[1, 2], [3, 3], [2, 4]], "ratio", n_boot=0).value
    assert body["alpha"]["statistic"] == "krippendorff_alpha_ratio"
    assert body["alpha"]["value"] == pytest.approx(expected, abs=1e-12)
    negative = write(tmp_path, ["unit,rater,value", "u1,ann,1", "u1,bob,-0.5"], "negative.csv")
    with pytest.raises(CommandError, match="line 3: value '-0.5' is negative: level ratio needs values of 0 or more"):
        run(negative, "--level", "ratio")
    with pytest.raises(CommandError, match="level ratio does not apply"):
        run(path, "--level", "ratio", "--signed")
    with pytest.raises(ValueError, match="the ratio level needs values of 0 or more; got -1"):
        krippendorff_alpha([[1, -1], [2, 2]], "ratio")


def test_command_never_prints_a_traceback_on_a_well_formed_table_of_numbers(tmp_path, capsys):
    rng = np.random.default_rng(12)
    kinds = [
        lambda size: np.round(rng.uniform(0, 10, size), 1),
        lambda size: np.round(rng.uniform(0, 5, size), 2),
        lambda size: rng.integers(0, 3, size).astype(float) / 4,
        lambda size: np.full(size, 2.5),
        lambda size: rng.choice([0.0, 1e-9, 1e12, 7.25], size),
    ]
    for case in range(20):
        units, raters = int(rng.integers(1, 9)), int(rng.integers(1, 5))
        table = kinds[case % len(kinds)]((units, raters))
        table[rng.random((units, raters)) < 0.25] = N
        if np.isnan(table).all():
            table[0, 0] = 1.5
        path = write(tmp_path, table_rows(table, tuple(f"r{j}" for j in range(raters))), f"t{case}.csv")
        for level in ("nominal", "ordinal", "interval", "ratio"):
            execute_from_command_line(
                ["manage.py", "agreement", "--skip-checks", path, "--level", level, "--bootstrap", "20"]
            )
            captured = capsys.readouterr()
            assert "Traceback" not in captured.err and "Krippendorff's alpha" in captured.out, (case, level)


# --- 2. the category set of weighted kappa --------------------------------------------------------------

# Two raters; the last unit is rated by the first rater only, with a value (3) nobody gives on a shared unit.
FIRST = np.array([1, 2, 4, 2, 1, 4, 3], dtype=float)
SECOND = np.array([1, 4, 4, 2, 2, 2, N])


def irr_kappa2(first: np.ndarray, second: np.ndarray, weight: str) -> float:
    """Port R irr::kappa2 (irr 0.84) line by line: na.omit, sorted levels, (nc-1):0/(nc-1) agreement weights.

    irr sorts levels as strings; for the single-digit values used here that is the numeric order.
    """
    complete = ~np.isnan(first) & ~np.isnan(second)
    r1, r2 = first[complete], second[complete]
    ns = r1.size
    lev = np.unique(np.concatenate([r1, r2]))
    ttab = np.array([[np.sum((r1 == a) & (r2 == b)) for b in lev] for a in lev], dtype=float)
    nc = lev.size
    steps = np.arange(nc)
    w = (nc - 1 - steps) / (nc - 1) if weight == "equal" else 1 - steps**2 / (nc - 1) ** 2
    wvec = np.concatenate([np.sort(w), w[1:]])
    weighttab = np.array([wvec[nc - i : 2 * nc - i] for i in range(1, nc + 1)])
    agree = np.sum(ttab * weighttab) / ns
    chance = np.sum(np.outer(ttab.sum(axis=1), ttab.sum(axis=0)) / ns * weighttab) / ns
    return float((agree - chance) / (1 - chance))


def test_weighted_kappa_ignores_values_seen_only_on_units_the_other_rater_skipped():
    # Shared units (1,1) (2,4) (4,4) (2,2) (1,2) (4,2); categories 1, 2, 4 at positions 0, 1, 2.
    # Linear: observed 3/6; marginals (2,2,2) and (1,3,2) give expected 30/36; kappa = 1 - (1/2)/(5/6) = 2/5.
    # Quadratic: observed 3/6, expected 42/36; kappa = 1 - (1/2)/(7/6) = 4/7.
    # Counting the unshared 3 as a category would put 4 at position 3: linear kappa 8/23.
    linear = cohen_kappa(FIRST, SECOND, weights="linear", n_boot=0)
    quadratic = cohen_kappa(FIRST, SECOND, weights="quadratic", n_boot=0)
    assert linear.value == pytest.approx(2 / 5, abs=1e-12)
    assert quadratic.value == pytest.approx(4 / 7, abs=1e-12)
    assert linear.value == pytest.approx(irr_kappa2(FIRST, SECOND, "equal"), abs=1e-12)
    assert quadratic.value == pytest.approx(irr_kappa2(FIRST, SECOND, "squared"), abs=1e-12)


def test_a_declared_scale_makes_weights_follow_numeric_distances_on_the_whole_scale():
    # On the scale 1..5 the value 4 sits at position 3: linear observed 5/6, expected 46/36, kappa 8/23.
    declared = cohen_kappa(FIRST, SECOND, weights="linear", labels=[1, 2, 3, 4, 5], n_boot=0)
    assert declared.value == pytest.approx(8 / 23, abs=1e-12)
    shared = ~np.isnan(SECOND)
    reference = cohen_kappa_score(FIRST[shared], SECOND[shared], labels=[1, 2, 3, 4, 5], weights="linear")
    assert declared.value == pytest.approx(reference, abs=1e-12)


def test_report_weights_each_pair_on_its_own_shared_values_unless_a_scale_is_declared():
    third = np.array([3, 3, 3, 1, 2, 3, 3], dtype=float)  # a third rater who uses 3 everywhere
    table = np.column_stack([FIRST, SECOND, third])
    report = agreement_report(table, "ordinal", n_boot=0)
    assert report.scale is None
    assert report.pairs[0].cohen_kappa_linear.value == pytest.approx(2 / 5, abs=1e-12)
    assert report.pairs[0].cohen_kappa_quadratic.value == pytest.approx(4 / 7, abs=1e-12)
    declared = agreement_report(table, "ordinal", scale=[1, 2, 3, 4, 5], n_boot=0)
    assert declared.scale == (1.0, 2.0, 3.0, 4.0, 5.0)
    assert declared.pairs[0].cohen_kappa_linear.value == pytest.approx(8 / 23, abs=1e-12)
    with pytest.raises(ValueError, match="rating 4 is not on the declared scale"):
        agreement_report(table, "ordinal", scale=[1, 2, 3])
    signed = agreement_report(np.array([[1, 2], [-1, 0], [3, 3]], dtype=float), "ordinal", signed=True, n_boot=0)
    assert signed.scale == SIGNED_SCALE


def test_each_judge_is_weighted_on_the_values_it_shares_with_the_reference():
    reference = np.array([1, 2, 4, 2, 1, 4, 2, 1], dtype=float)
    judge_a = np.array([1, 4, 4, 2, 2, 2, N, 1], dtype=float)
    judge_b = np.array([2, 3, 4, 2, 1, 5, 2, N], dtype=float)
    difference = judge_difference(reference, judge_a, judge_b, coefficient="cohen_linear", n_boot=100)
    expected = (
        cohen_kappa(reference, judge_a, weights="linear", n_boot=0).value
        - cohen_kappa(reference, judge_b, weights="linear", n_boot=0).value
    )
    assert difference.value == pytest.approx(expected, abs=1e-12)


def test_command_declares_a_scale_and_says_which_weights_it_used(tmp_path):
    path = write(tmp_path, table_rows(np.column_stack([FIRST, SECOND]), ("ann", "bob")))
    default = run(path, "--level", "ordinal", "--bootstrap", "0")
    assert "Kappa weights: positions among the values both raters gave on the units both rated" in default
    assert line_value(default, "  Cohen's kappa, linear weights") == pytest.approx(0.400, abs=5e-4)
    declared = run(path, "--level", "ordinal", "--scale", "1..5", "--bootstrap", "0")
    assert "Kappa weights: positions on the scale 1..5" in declared
    assert line_value(declared, "  Cohen's kappa, linear weights") == pytest.approx(8 / 23, abs=5e-4)
    assert json.loads(run(path, "--level", "ordinal", "--scale", "1,2,3,4,5", "--json"))["scale"] == [1, 2, 3, 4, 5]
    with pytest.raises(CommandError, match=r"line \d+: value '4' is not on the scale 1\.\.3 \(--scale\)"):
        run(path, "--level", "ordinal", "--scale", "1..3")
    for bad in ("one..five", "5..1", "1,3,2", "0..5000"):
        with pytest.raises(CommandError, match="--scale"):
            run(path, "--level", "ordinal", "--scale", bad)
    with pytest.raises(CommandError, match="symmetric around 0"):
        run(path, "--level", "ordinal", "--signed", "--scale", "0..5")


# --- 4. orientation -------------------------------------------------------------------------------------


def test_kappa_over_both_orientations_matches_a_hand_computed_table():
    # Winners; as given the marginals are (B, tie, A) = (.2, .2, .6) and (.4, .4, .2): chance .28, observed .6,
    # kappa .32/.72 = 4/9. Over both orientations they become (.4, .2, .4) and (.3, .4, .3): chance .32,
    # kappa .28/.68 = 7/17. Swapping A and B in the first two units moves kappa as given to 2/7, not 7/17.
    first, second = np.array([1, 1, 0, -1, 1.0]), np.array([1, 0, 0, -1, -1.0])
    swapped = np.array([-1, -1, 1, 1, 1.0])
    assert cohen_kappa(first, second, n_boot=0).value == pytest.approx(4 / 9, abs=1e-12)
    assert cohen_kappa(first * swapped, second * swapped, n_boot=0).value == pytest.approx(2 / 7, abs=1e-12)
    for a, b in ((first, second), (first * swapped, second * swapped)):
        estimate = cohen_kappa(a, b, both_orientations=True, n_boot=0)
        assert estimate.value == pytest.approx(7 / 17, abs=1e-12)
        assert estimate.statistic == "cohen_kappa_unweighted_both_orientations"
        assert estimate.n_units == 5


@pytest.mark.parametrize("weights", ["unweighted", "linear", "quadratic"])
def test_kappa_over_both_orientations_does_not_depend_on_which_response_is_a(weights):
    rng = np.random.default_rng(2)
    truth = rng.integers(-5, 6, 80)
    first = np.clip(truth + rng.integers(-1, 3, 80), -5, 5).astype(float)  # a rater who leans toward A
    second = np.clip(truth + rng.integers(-2, 2, 80), -5, 5).astype(float)
    second[rng.random(80) < 0.1] = N
    swapped = np.where(rng.random(80) < 0.5, -1.0, 1.0)
    options = {"weights": weights, "labels": SIGNED_SCALE, "seed": 3, "n_boot": 200}
    given = cohen_kappa(first, second, both_orientations=True, **options)
    flipped = cohen_kappa(first * swapped, second * swapped, both_orientations=True, **options)
    assert (flipped.value, flipped.ci_low, flipped.ci_high) == pytest.approx(
        (given.value, given.ci_low, given.ci_high), abs=1e-12
    )
    # Over both orientations is kappa of the table doubled with every unit also swapped.
    shared = ~np.isnan(second)
    doubled_first = np.concatenate([first[shared], -first[shared]]).astype(int)
    doubled_second = np.concatenate([second[shared], -second[shared]]).astype(int)
    reference = cohen_kappa_score(
        doubled_first, doubled_second, labels=range(-5, 6), weights=None if weights == "unweighted" else weights
    )
    assert given.value == pytest.approx(reference, abs=1e-12)
    assert cohen_kappa(first, second, **options).value != pytest.approx(
        cohen_kappa(first * swapped, second * swapped, **options).value, abs=1e-6
    )


def test_both_orientations_is_refused_where_it_does_not_apply():
    with pytest.raises(ValueError, match="symmetric around 0"):
        cohen_kappa([1, 2], [2, 1], labels=[0, 1, 2], both_orientations=True)
    with pytest.raises(ValueError, match="applies to the cohen_"):
        judge_difference([1, 0, -1], [1, 0, 1], [1, 1, -1], coefficient="spearman", both_orientations=True)


def test_signed_report_gives_every_kappa_also_over_both_orientations():
    table = np.array([[3, 2, 1], [-1, 0, -2], [2, 2, 3], [0, 1, 0], [-4, -3, -5], [1, -1, 1]], dtype=float)
    report = agreement_report(table, "ordinal", signed=True, n_boot=50)
    pair = report.pairs[0]
    assert pair.cohen_kappa_both_orientations.statistic == "cohen_kappa_unweighted_winner_both_orientations"
    assert pair.cohen_kappa_both_orientations.value == pytest.approx(
        cohen_kappa(np.sign(table[:, 0]), np.sign(table[:, 1]), both_orientations=True, n_boot=0).value
    )
    assert pair.cohen_kappa_quadratic_both_orientations.value == pytest.approx(
        cohen_kappa(table[:, 0], table[:, 1], weights="quadratic", labels=SIGNED_SCALE, both_orientations=True).value
    )
    unsigned = agreement_report(table + 5, "ordinal", n_boot=0).pairs[0]
    assert unsigned.cohen_kappa_both_orientations is None and unsigned.cohen_kappa_linear_both_orientations is None


def test_signed_command_output_states_the_orientation(tmp_path):
    path = write(
        tmp_path, ["unit,rater,value", "u1,ann,2", "u1,bob,1", "u2,ann,-1", "u2,bob,0", "u3,ann,0", "u3,bob,0"]
    )
    output = run(path, "--signed", "--level", "ordinal", "--bootstrap", "0")
    assert "Orientation: scores as given in the file (+k: the unit's A wins by k)" in output
    assert "Kappa depends on which response of a pair is called A" in output
    assert output.count("    both orientations") == 3
    assert json.loads(run(path, "--signed", "--json"))["orientation"].startswith("scores as given in the file")
    unsigned = json.loads(run(path, "--json"))
    assert unsigned["orientation"] is None and unsigned["pairs"][0]["cohen_kappa_both_orientations"] is None


def test_calibration_report_gives_kappa_over_both_orientations_and_states_the_orientation():
    rng = np.random.default_rng(5)
    truth = rng.integers(-4, 5, 40)
    experts = np.clip(truth[:, None] + rng.integers(-1, 2, (40, 3)), -5, 5).astype(float)
    ab = np.clip(truth + rng.integers(0, 3, 40), -5, 5).astype(float)  # a judge that leans toward A
    ba = np.clip(truth + rng.integers(-1, 2, 40), -5, 5).astype(float)
    lengths = (rng.integers(50, 200, 40).astype(float), rng.integers(50, 200, 40).astype(float))
    swapped = np.where(rng.random(40) < 0.5, -1.0, 1.0)
    attempted = np.ones(40, dtype=bool)
    options = {"rule": "summed", "seed": 0, "n_boot": 100}
    given = stratum_report(
        experts=experts, judges={"j": {"ab": ab, "ba": ba, "attempted": attempted}}, lengths=lengths, **options
    )
    # Swapping A and B in a comparison negates every canonical score; the order that showed A first now shows
    # the new B first, so the two orders trade places.
    flip_ab, flip_ba = np.where(swapped < 0, -ba, ab), np.where(swapped < 0, -ab, ba)
    swapped_lengths = (np.where(swapped < 0, lengths[1], lengths[0]), np.where(swapped < 0, lengths[0], lengths[1]))
    flipped = stratum_report(
        experts=experts * swapped[:, None],
        judges={"j": {"ab": flip_ab, "ba": flip_ba, "attempted": attempted}},
        lengths=swapped_lengths,
        **options,
    )
    row, flipped_row = given["judges"]["j"], flipped["judges"]["j"]
    for key in (
        "kappa_majority_both_orientations",
        "kappa_linear_median_both_orientations",
        "kappa_quadratic_median_both_orientations",
    ):
        assert flipped_row[key]["value"] == pytest.approx(row[key]["value"], abs=1e-12), key
    assert flipped_row["kappa_majority"]["value"] != pytest.approx(row["kappa_majority"]["value"], abs=1e-6)
    # Weighted kappa against the median counts distances on the declared scale -5..+5.
    median = median_score(experts, round_toward_tie=True)
    combined = np.clip(ab + ba, -5, 5)
    assert row["kappa_linear_median"]["value"] == pytest.approx(
        cohen_kappa(combined, median, weights="linear", labels=SIGNED_SCALE, n_boot=0).value, abs=1e-12
    )
    report = {"strata": [{"key": "overall", **given}]}
    assert csv_table(report).splitlines()[0].startswith("stratum,rater,alpha,alpha_low,alpha_high,kappa,kappa_both")
    latex = latex_table(report)
    assert latex.startswith("% A is each comparison's response A") and r"$\kappa$ both orient." in latex
    # A report stored before this entry existed still renders.
    del given["judges"]["j"]["kappa_majority_both_orientations"]
    assert ',"j",' in csv_table({"strata": [{"key": "overall", **given}]})


# --- 4. orientation on real data: llmfao ------------------------------------------------------------------

WINNER_SIGN = {"left": 1.0, "right": -1.0, "tie": 0.0}


@pytest.fixture(scope="module")
def llmfao_verdicts() -> dict:
    """Return, per pair id, the crowd majority and GPT-4's winner in the file's orientation, and the model names.

    The file's A is model_x, shown on the left: ``left`` is +1, ``right`` -1, ``tie`` 0.
    """
    if not LLMFAO.is_dir():
        pytest.skip(f"llmfao data not found at {LLMFAO}")
    with (LLMFAO / "crowd-comparisons.csv").open(encoding="utf-8", newline="") as handle:
        crowd = list(csv.DictReader(handle))
    ids = sorted({int(row["id"]) for row in crowd})
    index = {pair: i for i, pair in enumerate(ids)}
    workers = {worker: j for j, worker in enumerate(sorted({row["worker"] for row in crowd}))}
    table = np.full((len(ids), len(workers)), N)
    names = {}
    for row in crowd:
        table[index[int(row["id"])], workers[row["worker"]]] = WINNER_SIGN[row["winner"]]
        names[int(row["id"])] = (row["left"], row["right"])
    gpt4 = np.full(len(ids), N)
    with (LLMFAO / "gpt4-crowd-comparisons.csv").open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            gpt4[index[int(row["id"])]] = WINNER_SIGN[row["winner"]]
    return {"ids": ids, "names": names, "majority": majority_winner(table), "gpt4": gpt4}


def test_llmfao_kappa_depends_on_orientation_and_over_both_orientations_does_not(llmfao_verdicts):
    majority, gpt4 = llmfao_verdicts["majority"], llmfao_verdicts["gpt4"]
    names = llmfao_verdicts["names"]
    # The label import's orientation: A is the model whose name sorts first (1,079 of 2,139 pairs swap).
    sorted_first = np.array([1.0 if names[i][0] < names[i][1] else -1.0 for i in llmfao_verdicts["ids"]])
    assert (sorted_first < 0).sum() == 1079
    assert cohen_kappa(majority, gpt4, n_boot=0).value == pytest.approx(0.178, abs=5e-4)
    assert cohen_kappa(majority * sorted_first, gpt4 * sorted_first, n_boot=0).value == pytest.approx(0.170, abs=5e-4)
    as_file = cohen_kappa(majority, gpt4, both_orientations=True)
    as_sorted = cohen_kappa(majority * sorted_first, gpt4 * sorted_first, both_orientations=True)
    assert as_file.value == pytest.approx(0.17677334, abs=1e-8)
    assert (as_sorted.value, as_sorted.ci_low, as_sorted.ci_high) == pytest.approx(
        (as_file.value, as_file.ci_low, as_file.ci_high), abs=1e-12
    )
    assert (as_file.ci_low, as_file.ci_high) == pytest.approx((0.155, 0.198), abs=5e-4)


def test_llmfao_command_states_the_orientation_and_agrees_over_both_orientations(tmp_path, llmfao_verdicts):
    majority, gpt4, names = llmfao_verdicts["majority"], llmfao_verdicts["gpt4"], llmfao_verdicts["names"]
    signed, pairwise = StringIO(), StringIO()
    signed_rows, pairwise_rows = csv.writer(signed), csv.writer(pairwise)
    signed_rows.writerow(["unit", "rater", "value"])
    pairwise_rows.writerow(["item", "language", "dimension", "model_a", "model_b", "rater", "winner", "margin"])
    for i, pair in enumerate(llmfao_verdicts["ids"]):
        for rater, score in (("crowd-majority", majority[i]), ("gpt4", gpt4[i])):
            signed_rows.writerow([pair, rater, f"{score:g}"])
            winner = {1.0: "A", -1.0: "B", 0.0: "tie"}[score]
            pairwise_rows.writerow([pair, "en", "overall", *names[pair], rater, winner, 0 if score == 0 else 1])
    signed_path, pairwise_path = tmp_path / "signed.csv", tmp_path / "pairwise.csv"
    signed_path.write_text(signed.getvalue(), encoding="utf-8")
    pairwise_path.write_text(pairwise.getvalue(), encoding="utf-8")
    in_file = run(str(signed_path), "--signed", "--bootstrap", "0")
    in_sorted = run(str(pairwise_path), "--pairwise", "--bootstrap", "0")
    assert "Orientation: scores as given in the file" in in_file
    assert "Orientation: A is the model whose name sorts first in each comparison" in in_sorted
    assert line_value(in_file, "  Cohen's kappa (winner)") == pytest.approx(0.178, abs=5e-4)
    assert line_value(in_sorted, "  Cohen's kappa (winner)") == pytest.approx(0.170, abs=5e-4)
    for output in (in_file, in_sorted):
        assert line_value(output, "    both orientations") == pytest.approx(0.177, abs=5e-4)
