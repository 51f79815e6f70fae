"""Schemathesis against the live test server: with a token for each role, every operation of ``/api/schema/``.

``SCHEMATHESIS_BIN`` names the ``schemathesis`` command of a virtual environment of its own (``.ci/run`` installs
``.ci/schemathesis-requirements.txt`` there); without it the test is skipped, and with ``REQUIRE_SCHEMATHESIS=1``
it fails instead. The study is small and built through the services, as the blindness audit builds its own: items
in every status, a screening round with a review, generated and imported responses, a labelled comparison set, a
calibration run with its report and judge selection, a frozen release and an evaluation run on it.

Each role (expert, lead expert, researcher, admin, and no token at all) runs the CLI with a bounded number of
examples per operation (``SCHEMATHESIS_MAX_EXAMPLES``, 3 by default, in the phases ``SCHEMATHESIS_PHASES``:
``examples,fuzzing``; add ``coverage`` for its thousands of edge cases per role) and the checks ``not_a_server_error``,
``status_code_conformance``, ``content_type_conformance`` and ``response_schema_conformance``: a 500, a status
the operation does not declare, a media type it does not declare or a body its schema does not describe fails the
test, which prints each role's cases and failures. Schemathesis writes what it likes (it deletes, revises, freezes,
revokes its own token): it does so in this test's database, which ``transactional_db`` empties afterwards.
"""

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from django.apps import apps
from django.db.models import AutoField
from django.test import Client
from rest_framework.authtoken.models import Token

from annotation.items.models import Benchmark, Item
from annotation.labelling import services as labelling
from annotation.screening.criteria import default_criteria_create
from annotation.screening.models import Criterion
from tests.factories import (
    make_calibration_run,
    make_evaluation_run,
    make_frozen_release,
    make_item,
    make_judge_selection,
    make_labelled_comparison_set,
    make_review,
    make_screening_round,
    work_llm_run,
)

STUDY_APPS = ("items", "screening", "labelling", "releases", "calibration", "evaluation", "llm")
ROLES = ("expert", "lead_expert", "researcher", "admin", "anonymous")
CHECKS = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance"
OPEN_PROMPTS = {
    "st-open-1": ("emotion_matching", "My friend laughed when I said I was fine."),
    "st-open-2": ("emotion_deepening", "My boss says my work is fine, then sighs."),
    "st-open-3": ("emotion_matching", "I keep smiling at work although my dog died."),
}


def schemathesis_bin() -> str:
    binary = os.environ.get("SCHEMATHESIS_BIN", "")
    required = os.environ.get("REQUIRE_SCHEMATHESIS") == "1"
    if not binary or not Path(binary).is_file():
        why = f"SCHEMATHESIS_BIN={binary!r} is not a file" if binary else "SCHEMATHESIS_BIN is not set"
        if required:
            pytest.fail(f"REQUIRE_SCHEMATHESIS=1 but {why}: .ci/run installs Schemathesis and sets it")
        pytest.skip(f"{why} (.ci/run installs Schemathesis)")
    return binary


@pytest.fixture
def api_study(transactional_db, taxonomy, make_endpoint, make_user, expert, lead, researcher, admin_user):
    """A small study made through the services; return each role's user."""
    for uid, (dimension, english) in OPEN_PROMPTS.items():
        content = {"en": {"prompt": english}, "zh": {"prompt": "我很好。"}}
        make_item(uid=uid, kind="open_prompt", dimension=dimension, content=content, user=lead, status="accepted")
    for n in range(3):
        make_item(uid=f"st-mcq-{n}", user=lead, status="accepted")
    make_item(uid="st-draft", user=expert)
    make_item(uid="st-rejected", user=lead, status="rejected")
    default_criteria_create(Criterion)
    screening_round = make_screening_round(user=lead, reviewers=[expert, lead], title="Schema round")
    make_review(round=screening_round, uid="st-draft", reviewer=expert, decision="accept")

    responder, judge = make_endpoint("sim-style-concise"), make_endpoint("sim-judge-noise2")
    run = labelling.responses_generate(
        benchmark=Benchmark.objects.get(slug="facet"),
        endpoint=responder,
        languages=("en",),
        user=researcher,
        start=False,
    )
    work_llm_run(run.pk)
    rows = [
        {"item": uid, "language": "en", "model": "panel-model", "text": f"Panel reply {n}: that sounds heavy."}
        for n, uid in enumerate(OPEN_PROMPTS, 1)
    ]
    comparison_set = make_labelled_comparison_set(
        experts=[expert, lead], responses=rows, name="Schema set", user=researcher, languages=("en",), seed=3
    )
    calibrated = make_calibration_run(
        comparison_set=comparison_set,
        judges={"Schema judge": judge},
        name="Schema calibration",
        user=researcher,
        bootstrap=20,
    )
    make_judge_selection(run=calibrated, user=researcher)
    release = make_frozen_release(version="1.0.0", title="Schema release", user=admin_user)
    make_evaluation_run(release=release, endpoints=[responder], user=researcher, name="Schema evaluation")
    return {"expert": expert, "lead_expert": lead, "researcher": researcher, "admin": admin_user}


def write_config(folder: Path) -> None:
    """Write ``schemathesis.toml`` (read from the CLI's working directory): path ids, uids and formats that exist,
    offered in most cases, so that operations answer more than 404 (the rest stay generated)."""
    ids: set[int] = set()
    for model in apps.get_models():
        if model._meta.app_label in STUDY_APPS and isinstance(model._meta.pk, AutoField):
            ids.update(model.objects.order_by("pk").values_list("pk", flat=True)[:3])
    dictionaries = {
        "ids": sorted(ids),
        "uids": sorted(Item.objects.values_list("uid", flat=True)),
        "formats": ["csv", "jsonl", "parquet", "json", "tex", "png", "pdf", "svg"],
    }
    lines = []
    for name, values in dictionaries.items():
        lines += [f"[dictionaries.{name}]", f"values = {json.dumps(values)}"]
    lines += [
        "[parameters]",
        '"path.id" = { dictionary = "ids", probability = 0.7 }',
        '"path.uid" = { dictionary = "uids", probability = 0.7 }',
        '"path.fmt" = { dictionary = "formats", probability = 0.7 }',
    ]
    (folder / "schemathesis.toml").write_text("\n".join(lines) + "\n")


def run_role(binary: str, role: str, schema: Path, base_url: str, token: str | None, workdir: Path) -> dict:
    """Run the CLI as ``role``; return its case count, failures and output."""
    max_examples = os.environ.get("SCHEMATHESIS_MAX_EXAMPLES", "3")
    command = [
        binary,
        "run",
        str(schema),
        "--url",
        base_url,
        "--checks",
        CHECKS,
        "--max-examples",
        max_examples,
        "--seed",
        os.environ.get("SCHEMATHESIS_SEED", "2026"),
        "--workers",
        "1",
        "--phases",
        os.environ.get("SCHEMATHESIS_PHASES", "examples,fuzzing"),
        "--no-shrink",
        "--suppress-health-check",
        "all",
        "--request-timeout",
        "60",
        "--output-truncate",
        "true",
    ]
    if token:
        command += ["--header", f"Authorization: Token {token}"]
    # In a folder of the test's: the CLI keeps a cache (.schemathesis/) in its working directory.
    completed = subprocess.run(  # noqa: S603
        command, capture_output=True, text=True, timeout=900, check=False, cwd=workdir
    )
    output = completed.stdout + completed.stderr
    cases = _cases(output)
    return {"role": role, "exit": completed.returncode, "cases": cases, "output": output}


def _cases(output: str) -> int:
    """Return the number of test cases the CLI's summary says it generated (each one request, checked)."""
    found = re.search(r"Test cases:\s+(\d+) generated", output)
    return int(found.group(1)) if found else 0


def test_every_role_gets_only_answers_the_schema_describes_and_no_server_error(api_study, live_server, tmp_path):
    binary = schemathesis_bin()
    tokens = {role: Token.objects.create(user=user).key for role, user in api_study.items()}
    # The schema as the API serves it (to signed-in users): fetched once, then given to every role's run.
    answer = Client().get(
        "/api/schema/", headers={"authorization": f"Token {tokens['admin']}", "accept": "application/json"}
    )
    assert answer.status_code == 200, answer.content[:500]
    schema = tmp_path / "schema.json"
    schema.write_bytes(answer.content)
    write_config(tmp_path)
    results = [run_role(binary, role, schema, live_server.url, tokens.get(role), tmp_path) for role in ROLES]
    summary = "\n".join(f"{r['role']}: {r['cases']} cases, exit {r['exit']}" for r in results)
    print(summary)  # noqa: T201 - the closing note of issue 28 reports these
    failed = [r for r in results if r["exit"] != 0]
    details = "\n\n".join(f"==== {r['role']} ====\n{_failures(r['output'])}" for r in failed)
    assert not failed, f"{summary}\n\n{details}"
    assert all(r["cases"] > 0 for r in results), summary


def _failures(output: str) -> str:
    """The part of the CLI output that names the errors and failures (from its ERRORS or FAILURES section)."""
    match = re.search(r"=+ (ERRORS|FAILURES) =+", output)
    return output[match.start() :] if match else output[-20000:]
