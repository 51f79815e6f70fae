"""``manage.py rank_models``: rankings with intervals from verdict files, and the agreement of two rankings.

The reference is the llmfao study (github.com/dustalov/llmfao, ``leaderboard.ipynb``): Bradley-Terry scores
(Evalica, a tie half a win each way) from every crowd vote in ``crowd-comparisons.csv`` and from GPT-4's verdicts
in ``gpt4-crowd-comparisons.csv``, each turned into ranks (1 for the best) over the same 59 models; the Pearson
correlation of the two rank columns is 0.730918.
"""

import json
import math
import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

EXTERNAL = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "external"
LLMFAO = EXTERNAL / "llmfao"

CROWD = """id,prompt,model_x,model_y,worker,winner,left,right
0,1,1,2,w1,left,Alpha,Beta
0,1,1,2,w2,tie,Alpha,Beta
0,1,1,2,w3,left,Alpha,Beta
1,1,2,3,w1,left,Beta,Gamma
1,1,2,3,w2,right,Beta,Gamma
2,2,3,1,w1,right,Gamma,Alpha
2,2,3,1,w3,left,Gamma,Alpha
3,2,3,4,w2,left,Gamma,Delta
3,2,3,4,w3,tie,Gamma,Delta
4,2,4,1,w1,left,Delta,Alpha
"""
JUDGE = """id,prompt,model_x,model_y,winner,left,right
0,1,1,2,left,Alpha,Beta
1,1,2,3,right,Beta,Gamma
2,2,3,1,right,Gamma,Alpha
3,2,3,4,left,Gamma,Delta
4,2,4,1,left,Delta,Alpha
5,2,2,4,tie,Beta,Delta
"""
LABELS = """item,language,dimension,model_a,model_b,rater,winner,margin,order
q1,en,empathy,Alpha,Beta,r1,A,3,
q1,en,empathy,Alpha,Beta,r2,tie,0,
q1,en,empathy,Beta,Gamma,r1,first,2,AB
q2,en,empathy,Gamma,Alpha,r1,B,1,
q2,en,empathy,Gamma,Beta,r2,second,++,BA
q2,en,empathy,Delta,Gamma,r1,A,1,
q2,en,empathy,Alpha,Delta,r2,B,4,
"""


def rank_models(*args: str) -> str:
    out = StringIO()
    call_command("rank_models", *args, stdout=out)
    return out.getvalue()


def line_value(output: str, name: str) -> float:
    match = re.search(rf"^{re.escape(name)}: (-?[0-9.]+)$", output, re.MULTILINE)
    assert match, f"no line {name!r} in:\n{output}"
    return float(match.group(1))


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    paths = {}
    for name, text in (("crowd", CROWD), ("judge", JUDGE), ("labels", LABELS)):
        paths[name] = tmp_path / f"{name}.csv"
        paths[name].write_text(text, encoding="utf-8")
    return paths


@pytest.fixture
def llmfao() -> Path:
    if not LLMFAO.is_dir():
        pytest.skip(f"llmfao data not found at {LLMFAO}")
    return LLMFAO


def test_crowd_and_gpt4_rankings_reproduce_the_llmfao_pearson_on_ranks(llmfao):
    output = rank_models(
        str(llmfao / "crowd-comparisons.csv"),
        "--compare",
        str(llmfao / "gpt4-crowd-comparisons.csv"),
        "--resamples",
        "50",
    )
    assert "8931 verdicts (llmfao layout), 59 models" in output
    assert "(59 models in both)" in output
    assert line_value(output, "Pearson's r on ranks") == pytest.approx(0.730918, abs=5e-5)
    # No tied scores, so Spearman (average ranks) equals Pearson on minimum ranks here.
    assert line_value(output, "Spearman's rho") == pytest.approx(0.730918, abs=5e-5)
    assert 0.5 < line_value(output, "Kendall's tau-b") < 0.6
    # The study's top of the crowd leaderboard: GPT 4, Platypus-2 Instruct (70B), command.
    top = re.findall(r"^\s+([123])  (.+?)\s{2,}", output, re.MULTILINE)
    assert top == [("1", "GPT 4"), ("2", "Platypus-2 Instruct (70B)"), ("3", "command")]


def test_json_gives_llmfao_strengths_intervals_and_unbounded_bounds_as_null(llmfao):
    body = json.loads(rank_models(str(llmfao / "gpt4-crowd-comparisons.csv"), "--json", "--resamples", "200"))
    assert body["layout"] == "llmfao" and body["n_verdicts"] == 2139
    top = body["ratings"][0]
    assert top["model"] == "GPT 3.5 Turbo" and top["rank"] == 1 and top["wins"] == 87.0 and top["verdicts"] == 90
    assert body["method"]["n_resamples_without_mle"] > 0
    assert any(row["high"] is None for row in body["ratings"])
    assert all(row["low"] < row["score"] for row in body["ratings"] if row["low"] is not None)


def test_crowd_strengths_are_the_llmfao_studys_scores(llmfao):
    # Evalica's scores are exp(strength) normalised to sum 1; on the crowd file its iteration converged (on the
    # GPT-4 file it stopped at its 100-iteration limit, short of the maximum, with the same ranking).
    body = json.loads(rank_models(str(llmfao / "crowd-comparisons.csv"), "--json", "--resamples", "0"))
    total = sum(math.exp(row["strength"]) for row in body["ratings"])
    published = {"GPT 4": 0.041215, "Platypus-2 Instruct (70B)": 0.029233, "command": 0.028852, "Claude v1": 0.026259}
    scores = {row["model"]: math.exp(row["strength"]) / total for row in body["ratings"]}
    # Evalica stops once successive iterates differ by less than 1e-6, so its scores are that close to the maximum.
    assert {name: scores[name] for name in published} == pytest.approx(published, abs=5e-6)
    assert [row["model"] for row in body["ratings"][:2]] == ["GPT 4", "Platypus-2 Instruct (70B)"]
    assert all(row["low"] is None and row["rank_low"] is None for row in body["ratings"])


def test_a_crowd_file_with_workers_and_a_judge_file_are_ranked_and_compared(files):
    output = rank_models(str(files["crowd"]), "--compare", str(files["judge"]), "--resamples", "100")
    assert "10 verdicts (llmfao layout), 4 models" in output
    assert "Intervals: 95% percentile bootstrap over verdicts, 100 resamples, seed 0." in output
    for name in ("Spearman's rho", "Kendall's tau-b", "Pearson's r on ranks"):
        assert -1 <= line_value(output, name) <= 1
    assert "(4 models in both)" in output


def test_a_label_table_is_ranked_with_trueskill_using_its_margins(files):
    output = rank_models(str(files["labels"]), "--method", "trueskill")
    assert "7 verdicts (labels layout), 4 models" in output
    assert "TrueSkill" in output and "margin mapping sqrt" in output
    body = json.loads(rank_models(str(files["labels"]), "--method", "trueskill", "--json"))
    assert [row["rank"] for row in body["ratings"]] == sorted(row["rank"] for row in body["ratings"])
    assert {row["model"] for row in body["ratings"]} == {"Alpha", "Beta", "Gamma", "Delta"}
    assert body["method"]["margin_mapping"] == "sqrt"


def test_missing_maximum_likelihood_is_explained_and_virtual_draws_give_strengths(tmp_path):
    path = tmp_path / "one-sided.csv"
    path.write_text("winner,left,right\nleft,A,B\nleft,A,C\nleft,B,C\nleft,C,B\n", encoding="utf-8")
    output = rank_models(str(path))
    assert (
        "The strengths are undefined: the maximum-likelihood strengths do not exist: B, C never beat or tied" in output
    )
    assert "add virtual draws" in output
    regularised = rank_models(str(path), "--virtual-draws", "1", "--resamples", "20")
    assert "Each model also drew 1 games against a virtual opponent of strength 0." in regularised
    assert re.search(r"^\s+1\s{2}A\s", regularised, re.MULTILINE)


def test_bad_files_and_options_are_refused_with_the_line_and_field(files, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("winner,left,right\nleft,A,B\nmaybe,A,B\n", encoding="utf-8")
    with pytest.raises(CommandError, match=r"line 3: winner: expected left, right or tie, got 'maybe'"):
        rank_models(str(bad))
    unknown = tmp_path / "unknown.csv"
    unknown.write_text("a,b,c\n1,2,3\n", encoding="utf-8")
    with pytest.raises(CommandError, match="line 1: header"):
        rank_models(str(unknown))
    with pytest.raises(CommandError, match="no such file"):
        rank_models(str(tmp_path / "absent.csv"))
    broken_labels = tmp_path / "labels.csv"
    broken_labels.write_text(LABELS.replace("r2,tie,0,", "r2,tie,2,"), encoding="utf-8")
    with pytest.raises(CommandError, match="line 3: margin"):
        rank_models(str(broken_labels))
    with pytest.raises(CommandError, match="--resamples"):
        rank_models(str(files["judge"]), "--resamples", "-1")
