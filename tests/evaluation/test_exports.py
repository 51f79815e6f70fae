"""An evaluation run's pair verdicts out, and back in through ``manage.py rank_models``: the report's ratings.

The verdicts file ranks, unchanged, to the report's Bradley-Terry Elo scores and TrueSkill means of the overall
stratum, model by model (both rate the multiset of combined verdicts, whatever their order).
"""

import csv
import io
import json

import pytest
from django.core.management import call_command

from evaluation.exports import verdict_preference_counts
from evaluation.models import OpenResponse, PairVerdict
from tests.factories import make_evaluation_run

STYLES = ("sim-mcq-acc90", "sim-style-template", "sim-style-list", "sim-style-concise")


@pytest.fixture
def run(frozen_release, primary, make_endpoint, researcher):
    endpoints = [make_endpoint(name) for name in STYLES]
    return make_evaluation_run(
        name="raw", release=frozen_release, endpoints=endpoints, languages=["en"], user=researcher
    )


def _rank(path, *extra: str) -> dict:
    out = io.StringIO()
    call_command("rank_models", str(path), "--json", *extra, stdout=out)
    return json.loads(out.getvalue())


def test_exported_verdicts_rank_to_the_reports_ratings_through_manage_rank_models(run, tmp_path):
    path = tmp_path / "verdicts.csv"
    said = io.StringIO()
    call_command("export_verdicts", run.name, "--out", str(path), stderr=said)
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    assert said.getvalue().strip() == f"wrote {len(rows)} verdicts to {path}"
    subjective = run.report["subjective"]
    assert sum(1 for r in rows if not r["excluded"]) == subjective["combined_pairs"]["overall|en"]
    assert len(rows) * 2 == PairVerdict.objects.filter(run=run).count()

    bradley_terry = _rank(path, "--resamples", "0", "--seed", str(run.seed))
    assert bradley_terry["n_verdicts"] == subjective["combined_pairs"]["overall|en"]
    in_app = {r["model"]: r for r in subjective["bradley_terry"] if r["language"] == "en"}
    assert {r["model"] for r in bradley_terry["ratings"]} == set(in_app) == {"M01", "M02", "M03", "M04"}
    for row in bradley_terry["ratings"]:
        if in_app[row["model"]]["elo"] is None:
            assert row["score"] is None
        else:
            assert row["score"] == pytest.approx(in_app[row["model"]]["elo"], rel=1e-9)
        assert row["rank"] == in_app[row["model"]]["rank"]

    trueskill = _rank(path, "--method", "trueskill", "--seed", str(run.seed))
    overall = {r["model"]: r for r in subjective["ratings"] if r["dimension"] == "overall" and r["language"] == "en"}
    for row in trueskill["ratings"]:
        assert row["mu"] == pytest.approx(overall[row["model"]]["mu"], abs=1e-9)
        assert row["sigma"] == pytest.approx(overall[row["model"]]["sigma"], abs=1e-9)
        assert row["verdicts"] == overall[row["model"]]["n"]


def test_preference_pairs_of_the_run_hold_the_texts_judged_and_count_what_they_leave_out(run, researcher, login):
    client = login(researcher)
    response = client.get(f"/evaluation/{run.pk}/pairs.jsonl")
    pairs = [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]
    counts = verdict_preference_counts(run=run)
    assert len(pairs) == counts["pair"] == int(response["X-Preference-Pairs"])
    assert int(response["X-Left-Out-Ties"]) == counts["tie"]
    assert int(response["X-Left-Out-Inconsistent"]) == counts["inconsistent"]
    assert sum(counts.values()) * 2 == PairVerdict.objects.filter(run=run).count()
    texts = {
        (r.model.code, r.item.uid): r.text for r in OpenResponse.objects.filter(run=run).select_related("model", "item")
    }
    assert pairs
    for pair in pairs:
        assert pair["chosen"] == texts[(pair["chosen_model"], pair["item"])]
        assert pair["rejected"] == texts[(pair["rejected_model"], pair["item"])]
        assert pair["prompt"] and pair["judge"] == run.judge.name and pair["score"] != 0
    api = client.get(f"/api/evaluation/runs/{run.pk}/verdicts/parquet/")
    assert api.status_code == 200 and b"".join(api.streaming_content).startswith(b"PAR1")
    assert client.get(f"/api/evaluation/runs/{run.pk}/verdicts/xlsx/").status_code == 404


def test_experts_get_no_evaluation_verdicts(run, expert, lead, login):
    for user in (expert, lead):
        client = login(user)
        for url in (
            f"/evaluation/{run.pk}/verdicts.csv",
            f"/evaluation/{run.pk}/pairs.csv",
            f"/api/evaluation/runs/{run.pk}/verdicts/csv/",
            f"/api/evaluation/runs/{run.pk}/pairs/jsonl/",
        ):
            assert client.get(url).status_code == 403, url
