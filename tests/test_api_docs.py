"""docs/api.md runs: its Python script, then its curl script, carry a whole study on a live server.

The code blocks are taken from the document as they are and run against ``live_server`` with the LLM simulator
as the provider and a real ``db_worker`` working the judges' and models' LLM runs. Only the experts' terminal is
played by the test: the document's ``ask`` (which reads a verdict at the keyboard) is replaced by an expert who
prefers the reply of higher hidden quality, with noise of their own. The block headed "Each expert" runs once
per expert, with that expert's account.
"""

import json
import os
import re
import shutil
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from annotation.items.models import Benchmark
from annotation.labelling.models import ExpertLabel, LabelAssignment
from calibration import services as calibration
from calibration.models import JudgeSelection
from evaluation.models import EvaluationRun
from evaluation.report import report_file
from tests.doc_expert import expert_verdict
from tests.evaluation.conftest import frozen_release  # noqa: F401  (fixture)
from tests.factories import PASSWORD
from tests.workers import wait_for_workers_ready

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "api.md"
EXPERTS = ("doc-expert1", "doc-expert2", "doc-expert3")
EXPERT_BLOCK = "# Each expert, with their own account:"
STYLES = {
    "concise": "Losing him after fourteen years leaves a real hole. What do you miss most in the evenings now?",
    "template": "I'm really sorry to hear that. It's completely understandable to feel this way. Remember, you are "
    "not alone. It's important to take care of yourself.",
    "list": "Here are some steps:\n1. Rest\n2. Talk to friends\n3. Exercise\n4. Eat well\n5. Consider therapy",
    "mixed": "That sounds hard. It's important to rest. Maybe call a friend tonight and tell them about him?",
}
OPEN_PROMPTS = ("facet-demo-015", "facet-demo-017", "facet-demo-018")


def code_blocks(language: str) -> list[str]:
    """Return the fenced code blocks of docs/api.md in ``language``, in document order."""
    return re.findall(rf"^```{language}\n(.*?)^```$", DOC.read_text(encoding="utf-8"), flags=re.S | re.M)


@pytest.fixture
def study(frozen_release, make_endpoint, make_user, researcher, workers, tmp_path, monkeypatch, live_server):  # noqa: F811
    """What docs/api.md's "Before the study" lists, the environment its scripts read, and a running worker."""
    for username in EXPERTS:
        make_user("expert", username=username)
    calibration.judge_prompts_load_defaults(benchmark=Benchmark.objects.get(slug="facet"))
    make_endpoint("sim-judge-noise2", name="judge-sim")
    make_endpoint("sim-mcq-acc90", name="model-a")
    make_endpoint("sim-style-concise", name="model-b")
    rows = [
        {"item": uid, "language": "en", "model": f"m-{style}", "text": f"{text} ({uid})"}
        for uid in OPEN_PROMPTS
        for style, text in STYLES.items()
    ]
    responses = tmp_path / "responses.jsonl"
    responses.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    env = {
        "EI_STUDIO_URL": live_server.url,
        "EI_STUDIO_USER": researcher.username,
        "EI_STUDIO_PASSWORD": PASSWORD,
        "EI_STUDIO_EXPERTS": ",".join(EXPERTS),
        "EI_STUDIO_RESPONSES": str(responses),
        "EI_STUDIO_JUDGE": "judge-sim",
        "EI_STUDIO_PROMPT_SET": "facet-default",
        "EI_STUDIO_MODELS": "model-a,model-b",
        "EI_STUDIO_RELEASE": f"facet:{frozen_release.version}",
        "EI_STUDIO_POLL_SECONDS": "0.2",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    workers.start()
    wait_for_workers_ready(workers)
    return tmp_path


def assert_study_done(study_name: str, out: Path, researcher: object) -> None:
    """Check what the study left: every assignment labelled, a judge selected, the evaluation done and saved."""
    assignments = LabelAssignment.objects.filter(comparison__comparison_set__name=f"{study_name} set")
    assert assignments.count() > 0
    assert ExpertLabel.objects.filter(assignment__in=assignments).count() == assignments.count()
    selection = JudgeSelection.objects.select_related("calibration_run").first()
    assert selection.calibration_run.name == f"{study_name} calibration" and selection.selected_by == researcher
    run = EvaluationRun.objects.get(name=f"{study_name} evaluation")
    assert run.phase == EvaluationRun.Phase.DONE and run.judge == selection.judge
    assert run.budget_pool.budget == Decimal("5") and run.budget_pool.spent <= run.budget_pool.budget
    assert (out / "report.json").read_bytes() == report_file(run, "report.json")[0]
    assert (out / "accuracy.csv").read_text(encoding="utf-8").startswith("model,dimension,language")
    assert (out / "calibration.csv").read_text(encoding="utf-8").startswith("stratum,rater,alpha")


def test_the_python_and_curl_studies_of_docs_api_md_run_against_a_live_server(
    study, researcher, monkeypatch, capsys
):
    python_blocks = code_blocks("python")
    assert len(python_blocks) >= 7 and sum(EXPERT_BLOCK in block for block in python_blocks) == 1
    monkeypatch.setenv("EI_STUDIO_STUDY", "py")
    monkeypatch.setenv("EI_STUDIO_OUT", str(study / "py"))
    namespace: dict = {"__name__": "docs_api"}
    for block in python_blocks:
        if EXPERT_BLOCK not in block:
            exec(compile(block, str(DOC), "exec"), namespace)  # noqa: S102
            continue
        assert "ask" in namespace, "the expert block comes after ask() is defined"
        for expert in EXPERTS:
            monkeypatch.setenv("EI_STUDIO_EXPERT_USER", expert)
            monkeypatch.setenv("EI_STUDIO_EXPERT_PASSWORD", PASSWORD)
            namespace["ask"] = lambda comparison, expert=expert: expert_verdict(expert, comparison)
            exec(compile(block, str(DOC), "exec"), namespace)  # noqa: S102
    printed = capsys.readouterr().out
    assert "primary judge: judge-sim judge" in printed and "report" in printed
    assert_study_done("py", study / "py", researcher)

    # The curl script runs the same study again under another name, reusing the judge the first one registered.
    assert shutil.which("curl") and shutil.which("jq"), "the curl study of docs/api.md needs curl and jq"
    script = []
    for block in code_blocks("bash"):
        if block.startswith("ask() {"):
            block = f'ask() {{ "{sys.executable}" -m tests.doc_expert "$EI_STUDIO_EXPERT_USER" <<<"$1"; }}\n'
        if EXPERT_BLOCK in block:
            script += [f"EI_STUDIO_EXPERT_USER={e}\nEI_STUDIO_EXPERT_PASSWORD={PASSWORD}\n{block}" for e in EXPERTS]
        else:
            script.append(block)
    env = {**os.environ, "EI_STUDIO_STUDY": "curl", "EI_STUDIO_OUT": str(study / "curl"), "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        ["bash", "-c", "\n".join(script)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert_study_done("curl", study / "curl", researcher)
