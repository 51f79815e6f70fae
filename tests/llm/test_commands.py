"""The command-line tools: start a run from JSONL, follow its progress bar, control it, register the simulator."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from llm import services
from llm.management.commands._progress import bar
from llm.models import Endpoint, Run
from tests.factories import mcq_prompts


def run_command(*args: object) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_a_run_is_started_from_a_jsonl_file(make_endpoint, tmp_path):
    endpoint = make_endpoint()
    path = tmp_path / "prompts.jsonl"
    path.write_text("\n".join(json.dumps(p) for p in mcq_prompts(4)) + "\n")
    output = run_command("llm_run_start", str(path), "--endpoint", endpoint.name, "--parser", "mcq_letter")
    run = Run.objects.get()
    assert f"Run {run.pk} created with 4 prompts" in output and run.name == "prompts.jsonl"


def test_starting_from_a_bad_file_names_the_problem(make_endpoint, tmp_path):
    endpoint = make_endpoint()
    path = tmp_path / "bad.jsonl"
    path.write_text('{"key": "a"}\n')
    with pytest.raises(CommandError, match="Prompt 1"):
        run_command("llm_run_start", str(path), "--endpoint", endpoint.name)
    with pytest.raises(CommandError, match="No endpoint named nope"):
        run_command("llm_run_start", str(path), "--endpoint", "nope")


def test_the_status_command_prints_a_progress_bar(make_endpoint):
    run = services.run_create(endpoint=make_endpoint(), prompts=mcq_prompts(4), parser="text", name="cli", start=False)
    Run.objects.filter(pk=run.pk).update(done=1, failed=1)
    output = run_command("llm_run_status", str(run.pk))
    assert "[###############...............]  50.0%" in output and "1/4 done" in output and "Simulator" in output
    assert "cli" in run_command("llm_run_status")


def test_following_a_finished_run_returns_and_a_failed_one_is_an_error(make_endpoint):
    run = services.run_create(endpoint=make_endpoint(), prompts=mcq_prompts(2), parser="text", name="f", start=False)
    Run.objects.filter(pk=run.pk).update(status=Run.Status.FAILED, error="Not found (404): no such model")
    with pytest.raises(CommandError, match="is failed"):
        run_command("llm_run_status", str(run.pk), "--follow", "--interval", "0.01")


def test_the_control_command_pauses_resumes_and_cancels(make_endpoint):
    run = services.run_create(endpoint=make_endpoint(), prompts=mcq_prompts(2), parser="text", name="c", start=False)
    assert "paused" in run_command("llm_run_control", str(run.pk), "pause")
    assert "queued" in run_command("llm_run_control", str(run.pk), "resume")
    assert "cancelled" in run_command("llm_run_control", str(run.pk), "cancel")
    with pytest.raises(CommandError, match="already"):
        run_command("llm_run_control", str(run.pk), "cancel")


def test_registering_the_simulator_twice_is_harmless(db):
    run_command("llm_register_simulator", "--base-url", "http://127.0.0.1:8765/v1")
    run_command("llm_register_simulator", "--base-url", "http://127.0.0.1:8765/v1")
    assert Endpoint.objects.filter(is_simulator=True).count() == len(services.SIMULATED_MODELS)


def test_the_endpoint_test_command_reports_success_or_failure(make_endpoint, simulator):
    assert "Connected" in run_command("llm_endpoint_test", make_endpoint("sim-echo").name)
    with pytest.raises(CommandError, match="does not exist"):
        run_command("llm_endpoint_test", make_endpoint("nope-model").name)


def test_the_bar_shows_time_left_and_stalled_runs():
    progress = {
        "planned": 10,
        "done": 5,
        "failed": 0,
        "cached": 0,
        "percent": 50.0,
        "spent": 1,
        "estimated_total": 2,
        "status": "running",
        "eta_seconds": 12,
        "stalled": True,
    }
    line = bar(progress, width=10)
    assert line.startswith("[#####.....]") and "about 12 s left" in line and "stalled" in line
