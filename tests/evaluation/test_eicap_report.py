"""EiCAP's analyses end to end: a small EiCAP release of two-turn probes, two models scored by log-probability and
one chat-only model by letter choice in one mixed run on the simulator, the report page in English and Chinese,
and the heatmap, turn table and margins checked against a pandas computation from the exported raw answers."""

import io

import pandas as pd
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from evaluation import selectors
from evaluation.models import EvaluationRun
from tests.factories import make_evaluation_run, make_frozen_release, make_item

# Three subcategories of two layers, four probes each.
SUBCATEGORIES = ("basic_emotion_labels", "edge_cases", "two_turn_context_tracking")


def probe(n: int) -> dict:
    return {
        "en": {
            "context": f"Case {n}: Lena tells you her project was cancelled after {n} months.",
            "turns": [
                {
                    "user": "I can't believe it is over.",
                    "options": [
                        "That sounds really disappointing after so much work.",
                        "Projects get cancelled all the time.",
                        "Let's talk about something else.",
                        "You should have seen it coming.",
                    ],
                    "answer": n % 4,
                },
                {
                    "user": "Actually my manager cancelled it without telling me.",
                    "options": [
                        "Being left out of that decision must have stung.",
                        "Managers are busy people.",
                        "At least you have free time now.",
                        "Did you do something wrong?",
                    ],
                    "answer": (n + 1) % 4,
                },
            ],
        }
    }


@pytest.fixture
def eicap_run(transactional_db, taxonomy, lead, researcher, make_endpoint):
    for i, code in enumerate(SUBCATEGORIES):
        for k in range(4):
            n = 4 * i + k
            make_item(
                uid=f"eicap-{n:02d}",
                benchmark="eicap",
                dimension=code,
                kind="multi_turn_choice",
                content=probe(n),
                user=lead,
                status="accepted",
            )
    release = make_frozen_release(benchmark="eicap", version="0.1.0", user=lead, override_reason="small EiCAP set")
    endpoints = [
        make_endpoint("sim-base", api_style="completions", name="base"),
        make_endpoint("sim-tuned", api_style="completions", name="tuned"),
        make_endpoint("sim-mcq-acc90", name="chat-only"),
    ]
    return make_evaluation_run(
        name="eicap",
        release=release,
        endpoints=endpoints,
        user=researcher,
        protocol=EvaluationRun.Protocol.MIXED,
        judge_override_reason="probes only",
    )


def exported_answers(client, run) -> pd.DataFrame:
    response = client.get(f"/evaluation/{run.pk}/answers.csv")
    assert response.status_code == 200
    return pd.read_csv(io.BytesIO(b"".join(response.streaming_content)))


def test_the_eicap_report_matches_pandas_on_the_exported_answers(eicap_run, researcher, login):
    run = eicap_run
    assert run.phase == EvaluationRun.Phase.DONE
    eicap = run.report["eicap"]
    assert {r["model"]: r["protocol"] for r in eicap["protocols"]} == {
        "M01": "logprob",
        "M02": "logprob",
        "M03": "letter",
    }
    assert eicap["mixed_protocols"] and eicap["baselines"] == {"logprob": "M01", "letter": "M03"}
    answers = exported_answers(login(researcher), run)
    assert set(answers["protocol"]) == {"logprob", "letter"} and len(answers) == 3 * 12 * 2

    # The heatmap: a probe is right when every turn is; accuracy per model and subcategory.
    probes = answers.groupby(["model", "item", "dimension", "layer"], as_index=False).agg(
        correct=("correct", "all"), margin=("margin", "min"), turns=("turn", "count")
    )
    heatmap = probes.groupby(["model", "dimension"])["correct"].mean()
    reported = {(r["model"], r["subcategory"]): r["accuracy"] for r in eicap["subcategories"]}
    assert reported == pytest.approx(heatmap.to_dict())
    layers = probes.groupby(["model", "layer"])["correct"].mean().to_dict()
    assert {(r["model"], r["layer"]): r["accuracy"] for r in eicap["layers"]} == pytest.approx(layers)
    macro = heatmap.groupby("model").mean().to_dict()
    assert {r["model"]: r["macro"] for r in eicap["summary"]} == pytest.approx(macro)

    # The turn table, from the two turns of each probe side by side.
    wide = answers.pivot_table(index=["model", "item"], columns="turn", values="correct", aggfunc="first").astype(bool)
    table = (
        pd.DataFrame(
            {
                "turn1": wide[0],
                "turn2": wide[1],
                "both_wrong": ~wide[0] & ~wide[1],
                "gap": wide[0].astype(int) - wide[1],
            }
        )
        .groupby("model")
        .mean()
    )
    for row in eicap["turns"]:
        expected = table.loc[row["model"]]
        assert row["n"] == 12
        assert [row[k] for k in ("turn1", "turn2", "both_wrong", "gap")] == pytest.approx(
            [expected[k] for k in ("turn1", "turn2", "both_wrong", "gap")]
        )

    # Margins for the log-probability models only; the probe's is its smaller turn margin.
    logprob = probes[probes["model"].isin(["M01", "M02"])]
    assert {r["model"]: r["mean"] for r in eicap["margins"]} == pytest.approx(
        logprob.groupby("model")["margin"].mean().to_dict()
    )
    assert ((logprob["margin"] > 0) == logprob["correct"]).all()

    # Agreement between the two log-probability models, and the significance table against M01.
    outcome = probes.pivot_table(index="item", columns="model", values="correct", aggfunc="first")
    cell = next(r for r in eicap["agreement"] if (r["a"], r["b"]) == ("M01", "M02"))
    assert cell["agreement"] == pytest.approx((outcome["M01"] == outcome["M02"]).mean())
    assert {(r["model"], r["baseline"]) for r in eicap["significance"]} == {("M02", "M01")}
    assert len(eicap["significance"]) == len(SUBCATEGORIES)


def test_the_eicap_section_reads_in_english_and_chinese(eicap_run, researcher, login):
    client = login(researcher)
    run = eicap_run
    english = client.get(f"/evaluation/{run.pk}/").content.decode()
    assert 'id="eicap"' in english and "EiCAP analyses of the multi-turn choice probes" in english
    assert 'id="eicap-not-comparable"' in english and "Turn decomposition of two-turn probes" in english
    assert 'id="figure-eicap_heatmap_en"' in english and 'id="figure-eicap_margins_en"' in english
    assert "Basic Emotion Labels" in english and "Foundation (Receiving)" in english
    client.post("/language/", {"language": "zh-hans", "next": "/"})
    chinese = client.get(f"/evaluation/{run.pk}/").content.decode()
    assert 'id="eicap"' in chinese and "多轮选择探针的 EiCAP 分析" in chinese and "不可比" in chinese
    for name in ("eicap_summary.csv", "eicap_turns.csv", "eicap_table2.tex", "eicap_heatmap_en.svg"):
        assert client.get(f"/evaluation/{run.pk}/files/{name}").status_code == 200, name
    listed = client.get(f"/api/evaluation/runs/{run.pk}/files/").json()["files"]
    assert {"eicap_significance.csv", "eicap_agreement_en.pdf"} <= {f["name"] for f in listed}


def test_the_report_facts_take_the_same_few_queries_whatever_the_models(eicap_run):
    with CaptureQueriesContext(connection) as queries:
        facts = selectors.evaluation_report_facts(run=eicap_run)
    assert len(facts.models) == 3 and len(facts.answers) == 72
    assert facts.dimension_order.index("foundation_receiving") < facts.dimension_order.index("basic_emotion_labels")
    # models, answers (with dimension and layer), verdicts, responses, the taxonomy, the release and its benchmark
    assert len(queries) <= 7, [q["sql"][:80] for q in queries]
