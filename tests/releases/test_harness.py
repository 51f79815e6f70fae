"""The harness task files of a layout-2 export: the protocol they carry is the app's, Inspect AI runs the exported
task against the simulator, lm-eval's YAML uses only documented task keys, OpenAI evals samples are well formed."""

import json

import pytest
import yaml

from annotation.releases import protocol
from annotation.releases import services as releases
from evaluation import prompts
from llm.parsers import ParseError, parse_mcq_letter
from llm.simulator.simulation import chat_reply
from tests.factories import make_frozen_release, make_item
from tests.releases.test_hf_export import TURNS

pytestmark = pytest.mark.django_db

MODEL = "sim-mcq-acc50"
# The keys of an lm-evaluation-harness task YAML, as its task guide (docs/task_guide.md, "Configurations") and its
# TaskConfig dataclass (lm_eval/api/task.py) list them. lm-eval itself is not installed: it needs torch.
LM_EVAL_TASK_KEYS = {
    "task",
    "task_alias",
    "tag",
    "group",
    "custom_dataset",
    "dataset_path",
    "dataset_name",
    "dataset_kwargs",
    "training_split",
    "validation_split",
    "test_split",
    "fewshot_split",
    "process_docs",
    "doc_to_text",
    "doc_to_image",
    "doc_to_audio",
    "unsafe_code",
    "doc_to_target",
    "doc_to_choice",
    "process_results",
    "use_prompt",
    "description",
    "target_delimiter",
    "fewshot_delimiter",
    "fewshot_config",
    "num_fewshot",
    "metric_list",
    "output_type",
    "generation_kwargs",
    "repeats",
    "filter_list",
    "should_decontaminate",
    "doc_to_decontamination_query",
    "gen_prefix",
    "metadata",
}
LM_EVAL_OUTPUT_TYPES = {"loglikelihood", "loglikelihood_rolling", "multiple_choice", "generate_until"}


@pytest.fixture
def export_dir(accepted_items, fixed_clock, lead, tmp_path):
    make_item(uid="rel-turns", kind="multi_turn_choice", content=TURNS, user=lead, status="accepted")
    release = make_frozen_release(version="1.0.0", title="FACET 1.0.0")
    out = tmp_path / "export"
    releases.release_export_to_directory(release=release, out=out)
    return out


def records(out):
    return [json.loads(line) for line in (out / "items.bilingual.jsonl").read_text().splitlines()]


def app_letter(text):
    try:
        return parse_mcq_letter(text, {})["letter"]
    except ParseError:
        return None


@pytest.mark.parametrize("uid", ["a", "rel-0", "长"])
@pytest.mark.parametrize("n", [2, 4, 12])
def test_the_exported_protocol_shuffles_and_prompts_as_the_app(uid, n):
    for lang in ("en", "zh"):
        for turn in (0, 1):
            args = {"uid": uid, "model_code": "M02", "language": lang, "turn": turn, "seed": 7, "n": n}
            assert protocol.option_order(**args) == prompts.option_order(**args)
    for kind, version in (("mcq", accepted_version()), ("multi_turn_choice", TURNS["zh"])):
        turns = prompts.objective_turns(kind, version)
        orders = [
            prompts.option_order(uid=uid, model_code="M01", language="zh", turn=t, seed=0, n=len(s["options"]))
            for t, s in enumerate(turns)
        ]
        for t in range(len(turns)):
            call = {"kind": kind, "version": version, "language": "zh", "turn": t}
            assert protocol.letter_messages(**call, orders=orders) == prompts.letter_messages(**call, orders=orders)
            assert protocol.logprob_prefix(**call) == prompts.logprob_prefix(**call)
    for text in ["Answer: B", "答案：C", "  d  ", "The answer is (E).", "I pick option F", "none", "", "Z", "选项为K"]:
        assert protocol.parse_letter(text) == app_letter(text)


def accepted_version():
    from tests.factories import mcq_content

    return mcq_content()["en"]


def expected_scores(out, model, *, seed=0, model_code="M01"):
    """What the app's protocol scores for each (uid, language), from the simulator's own reply function."""
    expected = {}
    for record in records(out):
        for lang, version, turns in protocol.objective_versions(record, ["en", "zh"]):
            orders = [
                prompts.option_order(
                    uid=record["uid"], model_code=model_code, language=lang, turn=t, seed=seed, n=len(s["options"])
                )
                for t, s in enumerate(turns)
            ]
            right = []
            for t, spec in enumerate(turns):
                messages = prompts.letter_messages(
                    kind=record["kind"], version=version, language=lang, turn=t, orders=orders
                )
                letter = app_letter(chat_reply(model, messages, seed=0))
                chosen = orders[t][prompts.LETTERS.index(letter)] if letter else None
                right.append(chosen == spec["answer"])
            expected[f"{record['uid']}/{lang}"] = "C" if all(right) else "I"
    return expected


def test_inspect_runs_the_exported_task_against_the_simulator(export_dir, simulator, tmp_path, monkeypatch):
    from inspect_ai import eval as inspect_eval

    monkeypatch.setenv("SIM_API_KEY", "not-a-secret")
    monkeypatch.setenv("INSPECT_LOG_DIR", str(tmp_path / "logs"))
    before = simulator.stats()
    monkeypatch.chdir(export_dir)  # Inspect reads a task file by a path relative to the working directory
    (log,) = inspect_eval(
        "inspect_task.py",
        model=f"openai-api/sim/{MODEL}",
        model_base_url=simulator.base_url,
        log_dir=str(tmp_path / "logs"),
        display="none",
        max_connections=4,
    )
    assert log.status == "success", log.error
    # Three mcqs and one two-turn item, in both languages; the open prompt has nothing to score.
    assert log.results.total_samples == log.results.completed_samples == 8
    scores = {sample.id: sample.scores["minimum_across_turns"].value for sample in log.samples}
    expected = expected_scores(export_dir, MODEL)
    assert scores == expected
    assert set(expected.values()) == {"C", "I"}, "a model right half the time gets some items right and some wrong"
    accuracy = log.results.scores[0].metrics["accuracy"].value
    assert accuracy == pytest.approx(sum(v == "C" for v in expected.values()) / 8)
    # One chat per turn: 3 mcqs + 2 turns, per language.
    assert simulator.stats()["requests"] - before["requests"] == 10


def test_lm_eval_tasks_use_documented_keys_and_score_every_objective_turn(export_dir):
    for lang in ("en", "zh"):
        config = yaml.safe_load((export_dir / f"lm_eval.{lang}.yaml").read_text())
        assert set(config) <= LM_EVAL_TASK_KEYS, set(config) - LM_EVAL_TASK_KEYS
        assert config["output_type"] in LM_EVAL_OUTPUT_TYPES and config["output_type"] == "multiple_choice"
        assert config["dataset_path"] == "json" and config["test_split"] in config["dataset_kwargs"]["data_files"]
        assert all(m["metric"] in {"acc", "acc_norm"} for m in config["metric_list"])
        data = export_dir / config["dataset_kwargs"]["data_files"][config["test_split"]]
        docs = [json.loads(line) for line in data.read_text().splitlines()]
        assert len(docs) == 5  # 3 mcqs + 2 turns
        for doc in docs:
            # doc_to_text / doc_to_choice / doc_to_target name fields of each document, as lm-eval reads them.
            text, choices, target = (
                doc[config["doc_to_text"]],
                doc[config["doc_to_choice"]],
                doc[config["doc_to_target"]],
            )
            assert isinstance(text, str) and isinstance(choices, list) and 0 <= target < len(choices)
            # The scored continuation is the app's log-probability prompt: prefix, the delimiter, the option.
            assert text + config["target_delimiter"] + choices[0] == prompts.logprob_prompt(text, choices[0])
            assert text.endswith(prompts.ANSWER_CUE[lang])


def test_evals_samples_are_match_samples_of_every_objective_turn(export_dir):
    for lang in ("en", "zh"):
        samples = [json.loads(line) for line in (export_dir / f"evals.{lang}.jsonl").read_text().splitlines()]
        assert len(samples) == 5
        by_record = {r["uid"]: r for r in records(export_dir)}
        for sample in samples:
            assert [m["role"] for m in sample["input"]][:2] == ["system", "user"]
            assert all(isinstance(m["content"], str) and m["content"] for m in sample["input"])
            letter = sample["ideal"][-1]
            # The keyed option is listed under the ideal letter in the last user message.
            record = by_record[sample["uid"]]
            spec = prompts.objective_turns(record["kind"], record["content"][lang])[sample["turn"]]
            assert f"{letter}. {spec['options'][spec['answer']]}" in sample["input"][-1]["content"].splitlines()
            assert app_letter(sample["ideal"][0]) == letter
