"""Label Studio interchange: a set's tasks and Pairwise config out, a Label Studio JSON export's annotations in.

``data/label_studio_export.json`` is an export as Label Studio writes it (tasks with ``annotations[].result[]``
regions of type ``pairwise`` and a ``margin`` choice, ``completed_by`` as an object with an email or as a bare
user id, a cancelled annotation, a task nobody annotated); each test puts the data of this app's exported tasks
into it, as a project imported from the export holds them.
"""

import copy
import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotation.items.services import ImportFailed
from annotation.labelling import services as comparisons
from annotation.labelling.label_studio import exporting, importing
from annotation.labelling.label_studio.format import read_export
from annotation.labelling.models import ExpertLabel, ExpertProgress, LabelAssignment
from annotation.labelling.pairwise import canonical_score

FIXTURE = Path(__file__).parent / "data" / "label_studio_export.json"
MAPPING = {"12": "x1"}


@pytest.fixture
def experts(make_user):
    return [make_user("expert", username=f"x{i}") for i in range(3)]


@pytest.fixture
def open_set(prompts, experts, researcher):
    return comparisons.comparison_set_build(
        name="studio",
        benchmark=prompts[0].benchmark,
        experts=experts,
        user=researcher,
        seed=4,
        languages=("en",),
        experts_per_comparison=2,
    )


def _tasks(cs) -> list[dict]:
    return json.loads(b"".join(exporting.task_chunks(comparison_set=cs)))


def _export(cs) -> list[dict]:
    """The fixture with the data of the set's first four tasks, as Label Studio exports a project made from them."""
    tasks = json.loads(FIXTURE.read_text(encoding="utf-8"))
    for task, ours in zip(tasks, _tasks(cs), strict=False):
        task["data"] = ours["data"]
    return tasks


def _bytes(tasks: list[dict]) -> bytes:
    return (json.dumps(tasks, indent=2, ensure_ascii=False) + "\n").encode()


def _task_lines(data: bytes) -> list[int]:
    return [n for n, line in enumerate(data.decode().splitlines(), start=1) if line == "  {"]


def test_tasks_carry_no_model_name_and_the_config_is_a_pairwise_project(open_set, researcher, login):
    tasks = _tasks(open_set)
    assert len(tasks) == open_set.size == 6
    text = json.dumps(tasks, ensure_ascii=False)
    for name in ("m-alpha", "m-beta", "m-gamma"):
        assert name not in text
    # Each task is shown in its comparison's seeded order (which order a handful of ids draws depends on the ids).
    from annotation.labelling.label_studio.exporting import shown_order

    assert all(t["data"]["shown_order"] == shown_order(seed=4, comparison=t["data"]["comparison"]) for t in tasks)
    assert {t["data"]["shown_order"] for t in tasks} <= {"AB", "BA"}
    assert tasks == _tasks(open_set)  # the same order every time: annotators of a task all see one
    config = ET.fromstring(exporting.set_config())
    (pairwise,) = config.iter("Pairwise")
    assert pairwise.get("toName") == "left,right"
    (margin,) = config.iter("Choices")
    assert margin.get("name") == "margin"
    assert [c.get("value") for c in margin.iter("Choice")] == ["tie", "+", "++", "+++", "++++", "+++++"]
    names = {t.get("name") for t in config.iter("Text")}
    assert {"left", "right", "prompt"} <= names
    assert all(f"${key}" in exporting.set_config() for key in ("left", "right", "prompt", "context"))
    client = login(researcher)
    response = client.get(f"/labelling/{open_set.pk}/label-studio/tasks.json")
    assert json.loads(b"".join(response.streaming_content)) == tasks
    assert client.get(f"/labelling/{open_set.pk}/label-studio/config.xml").content.decode() == exporting.set_config()
    api = client.get(f"/api/labelling/sets/{open_set.pk}/label-studio/tasks/")
    assert json.loads(b"".join(api.streaming_content)) == tasks


def test_a_label_studio_export_becomes_expert_labels_as_the_annotators_saw_them(open_set, experts):
    tasks = _export(open_set)
    before = LabelAssignment.objects.filter(comparison_set=open_set).count()
    result = importing.label_studio_import(comparison_set=open_set, data=_bytes(tasks), user=None, mapping=MAPPING)
    assert result["tasks"] == 4 and result["labels"] == 5 and result["cancelled"] == 1
    assert result["experts"] == ["x0", "x1", "x2"]
    expected = {
        (0, "x0"): ("left", 3, 42),
        (0, "x1"): ("right", 1, 19),  # a pairwise choice without a margin is +
        (1, "x0"): ("tie", None, 61),
        (2, "x0"): ("right", 5, 26),
        (2, "x2"): ("left", 2, 33),  # the email matched without regard to case
    }
    stored = {
        (label.assignment.comparison_id, label.assignment.expert.username): label
        for label in ExpertLabel.objects.filter(assignment__comparison_set=open_set).select_related(
            "assignment__expert"
        )
    }
    assert len(stored) == 5
    for (n, who), (winner, margin, seconds) in expected.items():
        data = tasks[n]["data"]
        label = stored[(data["comparison"], who)]
        assert label.shown_order == data["shown_order"] and label.seconds_spent == seconds
        assert label.score == canonical_score(shown_order=data["shown_order"], winner=winner, margin=margin)
    added = LabelAssignment.objects.filter(comparison_set=open_set).count() - before
    assert added == result["assignments_added"]
    progress = {p.expert.username: p.labelled for p in ExpertProgress.objects.filter(comparison_set=open_set)}
    assert progress == {"x0": 3, "x1": 1, "x2": 1}
    for p in ExpertProgress.objects.filter(comparison_set=open_set):
        assert p.assigned == LabelAssignment.objects.filter(comparison_set=open_set, expert=p.expert).count()


def _refused(cs, tasks: list[dict], mapping: dict | None = MAPPING) -> list[str]:
    labels, assignments = ExpertLabel.objects.count(), LabelAssignment.objects.count()
    with pytest.raises(ImportFailed) as failed:
        importing.label_studio_import(comparison_set=cs, data=_bytes(tasks), user=None, mapping=mapping)
    assert (ExpertLabel.objects.count(), LabelAssignment.objects.count()) == (labels, assignments)
    return [str(e) for e in failed.value.errors]


def test_unknown_comparisons_annotators_and_double_labels_refuse_the_whole_file_by_line(
    open_set, experts, make_user, researcher
):
    tasks = _export(open_set)
    tasks[1]["data"]["comparison"] = 999_999
    tasks[2]["annotations"].append(copy.deepcopy(tasks[2]["annotations"][0]))
    tasks[3]["annotations"] = [copy.deepcopy(tasks[0]["annotations"][0])]
    tasks[3]["annotations"][0]["completed_by"] = {"id": 44, "email": "stranger@example.org"}
    tasks[0]["data"]["item"] = "op-1" if tasks[0]["data"]["item"] == "op-0" else "op-0"
    lines = _task_lines(_bytes(tasks))
    errors = _refused(open_set, tasks)
    assert errors == [
        f"line {lines[0]}: data.item: the task says {tasks[0]['data']['item']} [en] but comparison "
        f"{tasks[0]['data']['comparison']} is {_export(open_set)[0]['data']['item']} [en]",
        f"line {lines[0]}: data.item: the task says {tasks[0]['data']['item']} [en] but comparison "
        f"{tasks[0]['data']['comparison']} is {_export(open_set)[0]['data']['item']} [en]",
        f"line {lines[1]}: data.comparison: comparison 999999 is not in the set studio",
        f"line {lines[2]}: completed_by: x0 labels comparison {tasks[2]['data']['comparison']} twice (also on line "
        f"{lines[2]})",
        f"line {lines[3]}: completed_by: no account for annotator stranger@example.org: map them to one of the "
        "set's experts",
    ]
    # An account outside the set, and a bare user id nobody mapped.
    make_user("expert", username="outsider")
    tasks = _export(open_set)
    tasks[0]["annotations"][0]["completed_by"] = {"id": 7, "email": "outsider@example.org"}
    errors = _refused(open_set, tasks, mapping={})
    assert any("the account outsider@example.org is not one of the set's experts" in e for e in errors)
    assert any("annotator 12 has no email in the export: map their id to an account" in e for e in errors)


def test_a_comparison_already_labelled_in_the_app_is_not_labelled_again(open_set, experts):
    tasks = _export(open_set)
    comparison = tasks[0]["data"]["comparison"]
    assignment = LabelAssignment.objects.filter(comparison_id=comparison, expert=experts[0]).first()
    if assignment is None:
        assignment = LabelAssignment.objects.create(
            comparison_id=comparison, comparison_set=open_set, expert=experts[0], shown_order="AB", position=99
        )
    comparisons.label_submit(comparison=assignment.comparison, expert=experts[0], winner="tie", margin=None)
    errors = _refused(open_set, tasks)
    assert errors == [f"line {_task_lines(_bytes(tasks))[0]}: completed_by: x0 already labelled comparison "
                      f"{comparison} in the app"]  # fmt: skip


@pytest.mark.parametrize(
    ("result", "message"),
    [
        ([], "no pairwise choice (left or right) and no tie"),
        ([{"type": "pairwise", "value": {"selected": "up"}}], "pairwise choice 'up' is not left or right"),
        (
            [{"type": "pairwise", "value": {"selected": "left"}}, {"type": "choices", "from_name": "margin",
              "value": {"choices": ["tie"]}}],
            "a pairwise choice and a tie at once",
        ),
        ([{"type": "choices", "from_name": "margin", "value": {"choices": ["+6"]}}], "margin '+6' is not tie"),
    ],
)  # fmt: skip
def test_a_result_that_is_not_a_verdict_names_the_annotation(result, message):
    annotations = [{"completed_by": 3, "result": result}]
    task = {"id": 1, "data": {"comparison": 5, "shown_order": "AB"}, "annotations": annotations}
    read = read_export(json.dumps([task]).encode(), max_depth=64)
    (error,) = read.errors
    assert str(error).startswith("line 1: annotations[1].result: " + message)


def test_malformed_files_are_refused_with_their_line(open_set):
    for data, expected in [
        (b"[\n  {\"data\": {}}\n]", "line 2: data.comparison: missing"),
            (b"[\n  {\"data\": {}}\n", "line 3: file: not JSON: the list of tasks is not closed"),
        (b"[\n  {\"data\": {\"comparison\": 1, \"shown_order\": \"AB\"}},\n  {oops}\n]", "line 3: file: not JSON"),
        (b"\xff\xfe", "line 1: file: not UTF-8 text"),
        (b"[]", "line 1: file: holds no tasks"),
        (b"[" * 100 + b"]" * 100, "line 1: file: JSON nested more than"),
    ]:
        with pytest.raises(ImportFailed) as failed:
            importing.label_studio_import(comparison_set=open_set, data=data, user=None)
        assert str(failed.value.errors[0]).startswith(expected), (data, failed.value.errors)
    assert not ExpertLabel.objects.exists()


def test_the_page_the_api_and_the_command_import_and_a_closed_set_refuses(
    open_set, experts, researcher, login, tmp_path
):
    client = login(researcher)
    tasks = _export(open_set)
    page = client.get(f"/labelling/{open_set.pk}/data/").content.decode()
    assert 'name="file"' in page and 'name="mapping"' in page
    upload = io.BytesIO(_bytes(tasks))
    upload.name = "project-3-at-2026-11-30.json"
    response = client.post(f"/labelling/{open_set.pk}/data/", {"file": upload, "mapping": "12 = x1"})
    assert response.status_code == 200 and "5 labels imported from 4 tasks" in response.content.decode()
    # The same file again: every label is already there, nothing changes.
    upload.seek(0)
    response = client.post(f"/labelling/{open_set.pk}/data/", {"file": upload, "mapping": "12 = x1"})
    assert response.status_code == 400 and "already labelled comparison" in response.content.decode()
    assert ExpertLabel.objects.filter(assignment__comparison_set=open_set).count() == 5

    other = comparisons.comparison_set_build(
        name="studio-2", benchmark=open_set.benchmark, experts=experts, user=researcher, seed=5, languages=("en",)
    )
    api = client.post(
        f"/api/labelling/sets/{other.pk}/label-studio/import/",
        {"tasks": _export(other), "mapping": MAPPING},
        content_type="application/json",
    )
    assert api.status_code == 201 and api.json()["labels"] == 5
    third = comparisons.comparison_set_build(
        name="studio-3", benchmark=open_set.benchmark, experts=experts, user=researcher, seed=6, languages=("en",)
    )
    path = tmp_path / "export.json"
    path.write_bytes(_bytes(_export(third)))
    out = io.StringIO()
    call_command("label_studio", "import", "studio-3", str(path), "--map", "12=x1", stdout=out)
    assert "5 labels imported from 4 tasks" in out.getvalue()
    call_command("label_studio", "export", "studio-3", str(tmp_path / "out"))
    assert json.loads((tmp_path / "out" / "tasks.json").read_text()) == _tasks(third)
    assert (tmp_path / "out" / "config.xml").read_text() == exporting.set_config()

    comparisons.comparison_set_close(comparison_set=third, user=researcher)
    with pytest.raises(CommandError, match="closed"):
        call_command("label_studio", "import", "studio-3", str(path), "--map", "12=x1")
    upload.seek(0)
    response = client.post(f"/labelling/{third.pk}/data/", {"file": upload})
    assert response.status_code == 409
    api = client.post(
        f"/api/labelling/sets/{third.pk}/label-studio/import/", {"tasks": tasks}, content_type="application/json"
    )
    assert api.status_code == 409 and "closed" in api.json()["detail"]
    url = f"/api/labelling/sets/{other.pk}/label-studio/import/"
    bad = client.post(url, {"tasks": "x"}, content_type="application/json")
    assert bad.status_code == 400
    # A JSON body that is a bare list, not an object (Schemathesis: it answered 500).
    listed = client.post(url, [{"tasks": []}], content_type="application/json")
    assert listed.status_code == 400 and listed.json()["code"] == "invalid"
