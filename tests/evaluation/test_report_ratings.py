"""The evaluation report's Bradley-Terry ratings (table, intervals, figure, files) and, for adaptive runs, the
judge calls saved and the estimated rank stability."""

from evaluation import ratings, services
from evaluation.charts import figures
from evaluation.report import report_files
from tests.factories import drive_evaluation_run, make_evaluation_run

STYLES = ("sim-mcq-acc90", "sim-style-template", "sim-style-list", "sim-style-concise")


def test_report_rates_by_bradley_terry_next_to_trueskill(frozen_release, primary, make_endpoint, researcher, login):
    endpoints = [make_endpoint(name) for name in STYLES]
    run = make_evaluation_run(
        name="bt", release=frozen_release, endpoints=endpoints, languages=["en"], user=researcher, pairing="round_robin"
    )
    subjective = run.report["subjective"]
    (summary,) = subjective["bradley_terry_summary"]
    assert summary["language"] == "en" and summary["n_resamples"] == 1000
    assert summary["n_verdicts"] == subjective["combined_pairs"]["overall|en"]
    rows = subjective["bradley_terry"]
    assert sorted(r["model"] for r in rows) == ["M01", "M02", "M03", "M04"]
    if summary["undefined_reason"] is None:
        assert sorted(r["rank"] for r in rows) == [1, 2, 3, 4]
        assert 0 < summary["rank_stability"] <= 1
        for r in rows:
            assert r["elo_low"] is None or r["elo_low"] <= r["elo"]
            assert r["elo_high"] is None or r["elo"] <= r["elo_high"]
            assert r["rank_low"] <= r["rank"] <= r["rank_high"]
        trueskill = {r["model"]: r["mu"] for r in subjective["ratings"] if r["dimension"] == "overall"}
        agreement = ratings.rank_agreement(trueskill, {r["model"]: r["strength"] for r in rows})
        assert agreement.tau is not None and agreement.tau > 0
    else:
        assert any(note.startswith("Bradley-Terry (en):") for note in run.report["notes"])
    assert subjective["pairing_summary"] is None  # round-robin
    svg = figures(run.report)["bradley_terry.svg"]
    assert b"<svg" in svg and b"Bradley-Terry" in svg
    files = report_files(run.report, with_figures=False)
    assert files["bradley_terry.csv"].decode().startswith("model,language,strength,low,high,elo")
    assert {"bradley_terry.csv", "bradley_terry.svg", "bradley_terry.png"} <= set(run.report["files"])
    page = login(researcher).get(f"/evaluation/{run.pk}/").content.decode()
    assert "Bradley-Terry ratings" in page and "Rank interval" in page
    png = login(researcher).get(f"/evaluation/{run.pk}/files/bradley_terry.png").content
    assert png.startswith(b"\x89PNG")
    # A report stored before Bradley-Terry was added still gives every file.
    for key in ("bradley_terry", "bradley_terry_summary", "pairing_summary"):
        subjective.pop(key)
    files = report_files(run.report)
    assert files["bradley_terry.csv"] == b"" and b"<svg" in files["bradley_terry.svg"]


def test_adaptive_report_says_how_many_calls_were_saved_and_how_stable_the_ranking_is(
    frozen_release, primary, make_endpoint, researcher, login
):
    endpoints = [make_endpoint(name) for name in STYLES]
    run = services.evaluation_run_create(
        name="adaptive",
        release=frozen_release,
        endpoints=endpoints,
        languages=["en"],
        user=researcher,
        pairing="adaptive",
    )
    run.adaptive_rounds, run.adaptive_pairs_per_round = 2, 2
    run.save()
    services.evaluation_run_start(run=run, user=researcher, start=False)
    drive_evaluation_run(run)
    run.refresh_from_db()
    subjective = run.report["subjective"]
    summary = subjective["pairing_summary"]
    assert summary["judge_calls"] == subjective["judge_calls"] > 0
    # Eight open prompts, four models answering each: round-robin judges 6 pairs in 2 orders on each.
    assert summary["round_robin_calls"] == 8 * 4 * 3
    # Two rounds of two pairs per prompt, in both orders: 4 of the 6 pairs.
    assert summary["judge_calls"] == 8 * 2 * 2 * 2
    assert summary["calls_saved"] == summary["round_robin_calls"] - summary["judge_calls"] == 32
    assert summary["share_of_round_robin"] == summary["judge_calls"] / summary["round_robin_calls"]
    assert set(summary["rank_stability"]) == {"en"}
    page = login(researcher).get(f"/evaluation/{run.pk}/").content.decode()
    assert f"{summary['calls_saved']} calls saved" in page and "Estimated rank stability (en)" in page
