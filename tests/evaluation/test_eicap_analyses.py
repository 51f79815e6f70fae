"""EiCAP's analyses of multi-turn choice probes, from plain facts, against hand computations; no database.

The fixture: layers L1 (subcategories s1, s2) and L2 (s3); four two-turn probes p1-p4 and a one-turn probe p5.
M01 and M02 are scored by log-probability, M03 by letter choice (a chat-only API).
"""

import pytest
from django.utils import translation

from core.figures import figure_files
from evaluation import stats
from evaluation.eicap_charts import eicap_builders
from evaluation.report.eicap import eicap_tables
from evaluation.report.facts import ModelFacts, ReportFacts
from evaluation.report.files import report_files, report_files_names
from evaluation.report.tables import report_tables
from tests.evaluation.test_report_tables import answer, run_facts


def eicap_figures(report: dict, names: dict[str, str]) -> dict[str, bytes]:
    files = {}
    for stem, build in eicap_builders(report, names).items():
        files.update(figure_files(stem, build, formats=("svg",)))
    return files


ORDER = ["L1", "s1", "s2", "L2", "s3"]
SUBCATEGORY = {"p1": "s1", "p2": "s1", "p3": "s2", "p4": "s3", "p5": "s3"}
LAYER = {"s1": "L1", "s2": "L1", "s3": "L2"}
# Turn outcomes per model and probe (1: the key chosen).
OUTCOMES = {
    "M01": {"p1": (1, 1), "p2": (1, 0), "p3": (0, 0), "p4": (0, 1), "p5": (1,)},
    "M02": {"p1": (1, 1), "p2": (1, 1), "p3": (1, 0), "p4": (0, 0), "p5": (0,)},
    "M03": {"p1": (1, 1), "p2": (1, 1), "p3": (1, 1), "p4": (1, 1), "p5": (1,)},
}
# Mean log-probabilities of the four options (the key is option 0): margin +0.5 when right, -0.75 when wrong.
RIGHT = {0: -1.0, 1: -1.5, 2: -2.0, 3: -2.5}
WRONG = {0: -1.0, 1: -0.25, 2: -2.0, 3: -3.0}


def probe_answers() -> list:
    rows = []
    for model, probes in OUTCOMES.items():
        letter = model == "M03"
        for uid, turns in probes.items():
            for turn, right in enumerate(turns):
                rows.append(
                    answer(
                        model,
                        uid,
                        0 if right else 1,
                        turn=turn,
                        kind="multi_turn_choice",
                        dimension=SUBCATEGORY[uid],
                        layer=LAYER[SUBCATEGORY[uid]],
                        protocol="letter" if letter else "logprob",
                        means=None if letter else (RIGHT if right else WRONG),
                    )
                )
    return rows


@pytest.fixture(scope="module")
def eicap() -> dict:
    return eicap_tables(run_facts(protocol="logprob"), ["M01", "M02", "M03"], probe_answers(), ORDER)


def by(rows: list[dict], **match: object) -> list[dict]:
    return [r for r in rows if all(r[k] == v for k, v in match.items())]


def test_accuracy_per_subcategory_and_layer_is_the_share_of_probes_right_on_every_turn(eicap):
    cells = {(r["model"], r["subcategory"]): (r["correct"], r["n"]) for r in eicap["subcategories"]}
    assert cells == {
        ("M01", "s1"): (1, 2), ("M01", "s2"): (0, 1), ("M01", "s3"): (1, 2),
        ("M02", "s1"): (2, 2), ("M02", "s2"): (0, 1), ("M02", "s3"): (0, 2),
        ("M03", "s1"): (2, 2), ("M03", "s2"): (1, 1), ("M03", "s3"): (2, 2),
    }  # fmt: skip
    assert [r["subcategory"] for r in by(eicap["subcategories"], model="M01")] == ["s1", "s2", "s3"]
    layers = {(r["model"], r["layer"]): (r["correct"], r["n"]) for r in eicap["layers"]}
    assert layers[("M01", "L1")] == (1, 3) and layers[("M01", "L2")] == (1, 2)
    assert layers[("M02", "L1")] == (2, 3) and layers[("M02", "L2")] == (0, 2)
    summary = {r["model"]: r for r in eicap["summary"]}
    assert summary["M01"]["micro"] == pytest.approx(2 / 5)
    assert summary["M01"]["macro"] == pytest.approx((1 / 2 + 0 + 1 / 2) / 3)
    assert summary["M02"]["macro"] == pytest.approx((1 + 0 + 0) / 3)
    assert summary["M03"]["macro"] == 1.0 and summary["M03"]["protocol"] == "letter"
    assert summary["M01"]["chance"] == pytest.approx(0.25)


def test_turn_decomposition_of_two_turn_probes_by_hand(eicap):
    turns = {r["model"]: r for r in eicap["turns"]}
    m1, m2, m3 = turns["M01"], turns["M02"], turns["M03"]
    assert m1["n"] == m2["n"] == 4  # p5 has one turn
    assert (m1["turn1"], m1["turn2"], m1["both_wrong"], m1["gap"]) == (0.5, 0.5, 0.25, 0.0)
    assert (m1["both_right"], m1["only_first"], m1["only_second"]) == (1, 1, 1)
    assert (m2["turn1"], m2["turn2"], m2["both_wrong"]) == (0.75, 0.5, 0.25)
    assert m2["gap"] == pytest.approx(0.25) and m2["gap_low"] <= 0.25 <= m2["gap_high"]
    assert m3["gap"] == 0.0 and m3["protocol"] == "letter"
    ci = stats.wilson_interval(3, 4)
    assert (m2["turn1_low"], m2["turn1_high"]) == (ci.low, ci.high)


def test_agreement_is_within_a_protocol_and_counts_same_outcomes(eicap):
    # Outcomes M01 10001, M02 11000: the same on p1, p3, p4. M03 has no one to agree with in its protocol.
    cells = {(r["a"], r["b"]): r for r in eicap["agreement"]}
    assert set(cells) == {("M01", "M01"), ("M01", "M02"), ("M02", "M01"), ("M02", "M02")}
    assert cells[("M01", "M02")]["agreement"] == pytest.approx(3 / 5) and cells[("M01", "M02")]["n"] == 5
    assert cells[("M01", "M01")]["agreement"] == 1.0
    assert {r["protocol"] for r in eicap["agreement"]} == {"logprob"}


def test_margins_are_the_smallest_turn_margin_of_log_probability_models_only(eicap):
    margins = {r["model"]: r for r in eicap["margins"]}
    assert set(margins) == {"M01", "M02"}
    m1 = margins["M01"]  # probes: +0.5, -0.75, -0.75, -0.75, +0.5
    assert m1["n"] == 5 and m1["mean"] == pytest.approx(-0.25) and m1["share_positive"] == pytest.approx(0.4)
    assert m1["median"] == -0.75
    assert m1["counts"][6] == 3 and m1["counts"][11] == 2 and sum(m1["counts"]) == 5
    assert m1["edges"][5] == -0.75 and m1["edges"][10] == 0.5


def test_significance_compares_each_model_with_its_protocols_baseline(eicap):
    assert eicap["baselines"] == {"logprob": "M01", "letter": "M03"}
    assert eicap["mixed_protocols"] is True
    rows = eicap["significance"]
    assert {(r["model"], r["baseline"]) for r in rows} == {("M02", "M01")}
    assert [(r["subcategory"], r["n"], r["diff"]) for r in rows] == [("s1", 2, 0.5), ("s2", 1, None), ("s3", 2, -0.5)]
    assert rows[1]["undefined_reason"] == stats.TOO_FEW_ITEMS
    (summary,) = eicap["significance_summary"]
    assert summary["subcategories"] == 3 and summary["significant_better"] == 0
    by_model = {r["model"]: r for r in eicap["summary"]}
    assert by_model["M02"]["significant_better"] == 0 and by_model["M01"]["significant_better"] is None


def test_significance_by_group_counts_significant_improvements_after_benjamini_hochberg():
    groups = {f"{g}{i}": g for g in "abc" for i in range(20)}
    model = {p: {"a": 1.0, "b": 0.0, "c": 0.0}[g] for p, g in groups.items()}
    baseline = {p: {"a": 0.0, "b": 0.0, "c": 1.0}[g] for p, g in groups.items()}
    result = stats.significance_by_group(model, baseline, groups, n_resamples=10_000, seed=3)
    a, b, c = result.groups
    # Every resample of a (and c) gives a difference of exactly +1 (-1): p = 1 / 10,001; b never differs: p = 1.
    assert (a.difference, a.p_value) == (1.0, pytest.approx(1 / 10_001))
    assert (b.difference, b.p_value, b.significant) == (0.0, 1.0, False)
    # BH over three: the two smallest of equal p become 3/2 p; the largest stays 1.
    assert a.p_adjusted == pytest.approx(1.5 / 10_001) and c.p_adjusted == pytest.approx(1.5 / 10_001)
    assert (result.n_groups, result.significant_better, result.significant_worse) == (3, 1, 1)


def test_newcombes_interval_for_two_independent_proportions_matches_the_published_example():
    # Newcombe (1998), Statistics in Medicine 17:873, table II example (56/70 vs 48/80), method 10.
    diff = stats.proportion_difference(56, 70, 48, 80)
    assert diff.difference == pytest.approx(0.2)
    assert (diff.low, diff.high) == (pytest.approx(0.0524, abs=1e-4), pytest.approx(0.3339, abs=1e-4))
    assert stats.proportion_difference(0, 0, 1, 2).difference is None


def test_held_out_accuracy_is_reported_beside_the_release_never_pooled():
    main = [answer("M01", "a", 0), answer("M01", "b", 1), answer("M02", "a", 0)]
    held = [answer("M01", "h", 0, held_out=True), answer("M01", "h", 1, turn=1, held_out=True)]
    facts = ReportFacts(
        run=run_facts(held_out_release="other 1.0"),
        models=[ModelFacts("M01", "a"), ModelFacts("M02", "b")],
        answers=main + held,
        verdicts=[],
        responses=[],
    )
    report = report_tables(facts)
    (row,) = report["held_out"]["accuracy"]
    assert (row["model"], row["n_main"], row["main"], row["n_held_out"], row["held_out"]) == ("M01", 2, 0.5, 1, 0.0)
    assert row["diff"] == 0.5 and report["held_out"]["release"] == "other 1.0"
    # The release's own accuracy table does not see the held-out item.
    assert {r["n"] for r in report["objective"]["accuracy"] if r["model"] == "M01"} == {2}
    assert "held_out.csv" in report["files"]


def test_score_margin_and_its_distribution():
    assert stats.score_margin({0: -1.0, 1: -0.5, 2: -3.0}, 0) == -0.5
    assert stats.score_margin({0: -1.0, 1: None}, 0) is None
    assert stats.score_margin({0: -1.0}, 0) is None
    dist = stats.margin_distribution([-5.0, 0.0, 2.0, 9.0])
    assert dist.counts[0] == 1 and dist.counts[-1] == 2 and dist.counts[9] == 1
    assert len(dist.counts) == len(stats.MARGIN_EDGES) + 1
    assert stats.margin_distribution([]).mean is None


def test_a_report_with_probes_offers_the_eicap_files_and_figures_in_both_languages():
    facts = ReportFacts(
        run=run_facts(protocol="logprob"),
        models=[ModelFacts(code=c, label=c) for c in OUTCOMES],
        answers=probe_answers(),
        verdicts=[],
        responses=[],
        dimension_order=ORDER,
    )
    report = report_tables(facts)
    assert report["eicap"]["languages"] == ["en"]
    assert report["files"] == report_files_names(["en"], eicap_languages=["en"])
    for language in ("en", "zh-hans"):
        with translation.override(language):
            drawn = eicap_figures(report, {"s1": "Sub one"})
        assert set(drawn) == {f"eicap_{figure}_en.svg" for figure in ("heatmap", "turns", "agreement", "margins")}
        assert all(svg.startswith(b"<?xml") for svg in drawn.values())
    files = report_files(report, with_figures=False)
    assert b"M03" in files["eicap_summary.csv"] and b"letter" in files["eicap_summary.csv"]
    table2 = files["eicap_table2.tex"].decode()
    assert "M03$^\\dagger$" in table2 and "0/3" in table2 and "not directly comparable" in table2


def test_a_report_without_probes_has_no_eicap_section():
    facts = ReportFacts(
        run=run_facts(), models=[ModelFacts("M01", "a")], answers=[answer("M01", "q", 0)], verdicts=[], responses=[]
    )
    report = report_tables(facts)
    assert report["eicap"] == {}
    assert not any(name.startswith("eicap") for name in report["files"])
