"""Raw data of a calibration study out, and back in through ``manage.py agreement``: the figures the report shows.

The labels file of the closed set gives the experts' own alpha of the report's overall stratum; its rows and a
judge's rows of the verdicts file (the same ``unit, rater, value`` columns) give the report's alpha with that judge.
"""

import csv
import io
import json

import pyarrow.parquet as pq
import pytest
from django.core.management import call_command

from annotation.labelling import services as labelling
from annotation.labelling.models import ExpertLabel
from calibration.exports import verdict_preference_counts
from calibration.models import JudgeVerdict
from calibration.report import combine_orders
from tests.factories import make_calibration_run

JUDGES = ("careful", "noisy")


@pytest.fixture
def study(transactional_db, labelled_set, make_endpoint, researcher, lead):
    run = make_calibration_run(
        comparison_set=labelled_set,
        judges={"careful": make_endpoint("sim-judge-noise2"), "noisy": make_endpoint("sim-judge-noise25-bias10")},
        user=researcher,
        bootstrap=0,
    )
    labelling.comparison_set_close(comparison_set=labelled_set, user=lead)
    return run


def _agreement(path, *extra: str) -> dict:
    out = io.StringIO()
    call_command("agreement", str(path), "--json", "--bootstrap", "0", *extra, stdout=out)
    return json.loads(out.getvalue())


def _rows(path) -> list[dict]:
    return list(csv.DictReader(path.open(encoding="utf-8")))


def test_exported_labels_and_verdicts_give_the_reports_alphas_through_manage_agreement(study, tmp_path):
    labels, verdicts = tmp_path / "labels.csv", tmp_path / "verdicts.csv"
    call_command("export_labels", study.comparison_set.name, "--out", str(labels))
    call_command("export_verdicts", str(study.pk), "--calibration", "--out", str(verdicts))
    overall = study.report["strata"][0]
    assert overall["key"] == "overall"

    experts = _agreement(labels, "--signed", "--level", "ordinal")
    assert experts["n_ratings"] == ExpertLabel.objects.filter(assignment__comparison_set=study.comparison_set).count()
    assert experts["alpha"]["value"] == pytest.approx(overall["baseline"]["alpha_ordinal"]["value"], abs=1e-12)
    assert experts["raters"] == ["E01", "E02", "E03"]
    # The label table columns read too (A: the model whose name sorts first).
    assert _agreement(labels, "--pairwise")["n_ratings"] == experts["n_ratings"]

    rows = _rows(verdicts)
    assert {r["rater"] for r in rows} == set(JUDGES)
    assert len(rows) == len(JUDGES) * study.comparison_set.size
    for judge in JUDGES:
        stacked = tmp_path / f"with-{judge}.csv"
        with stacked.open("w", encoding="utf-8", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(["unit", "rater", "value", "excluded"])
            for row in _rows(labels) + [r for r in rows if r["rater"] == judge]:
                writer.writerow([row["unit"], row["rater"], row["value"], row.get("excluded", "")])
        with_judge = _agreement(stacked, "--signed", "--level", "ordinal")
        expected = overall["judges"][judge]["alpha_with_judge"]["value"]
        assert with_judge["alpha"]["value"] == pytest.approx(expected, abs=1e-12), judge
    # The verdicts file alone: the judges against each other, with the pairs they left out skipped.
    assert _agreement(verdicts, "--signed")["n_ratings"] == sum(1 for r in rows if not r["excluded"])


def test_each_verdict_row_holds_both_orders_raw_and_parsed_and_their_combination(study, researcher, login):
    response = login(researcher).get(f"/calibration/runs/{study.pk}/verdicts.parquet")
    rows = pq.read_table(io.BytesIO(b"".join(response.streaming_content))).to_pylist()
    stored = {
        (v.judge.name, v.comparison_id, v.order): v
        for v in JudgeVerdict.objects.filter(calibration_run=study).select_related("judge")
    }
    assert len(rows) * 2 == len(stored)
    for row in rows:
        ab, ba = stored[(row["rater"], row["comparison"], "AB")], stored[(row["rater"], row["comparison"], "BA")]
        assert (row["raw_ab"], row["raw_ba"]) == (ab.raw_output, ba.raw_output)
        assert (row["parsed_ab"], row["parsed_ba"]) == (ab.parsed, ba.parsed)
        assert (row["score_ab"], row["score_ba"]) == (ab.score, ba.score)
        combined = combine_orders(study.combine_rule, ab.score, ba.score)
        assert row["value"] == combined
        assert bool(row["excluded"]) == (combined is None)
    counts = verdict_preference_counts(run=study)
    pairs = login(researcher).get(f"/api/calibration/runs/{study.pk}/pairs/jsonl/")
    written = [json.loads(line) for line in b"".join(pairs.streaming_content).decode().splitlines()]
    assert len(written) == counts["pair"] == int(pairs["X-Preference-Pairs"])
    assert sum(counts.values()) == len(rows)
    # A pair: both orders parsed, not naming different winners, and a winner once combined.
    expected = [
        r
        for r in rows
        if r["value"] and None not in (r["score_ab"], r["score_ba"]) and r["score_ab"] * r["score_ba"] >= 0
    ]
    assert counts["pair"] == len(expected)
    for pair in written:
        assert pair["chosen"] != pair["rejected"] and pair["judge"] in JUDGES and pair["score"] != 0


def test_experts_and_lead_experts_get_no_verdicts(study, make_user, lead, login):
    for user in (make_user("expert", username="nobody"), lead):
        client = login(user)
        for url in (
            f"/calibration/runs/{study.pk}/verdicts.csv",
            f"/calibration/runs/{study.pk}/pairs.csv",
            f"/api/calibration/runs/{study.pk}/verdicts/csv/",
            f"/api/calibration/runs/{study.pk}/pairs/parquet/",
        ):
            assert client.get(url).status_code == 403, url
