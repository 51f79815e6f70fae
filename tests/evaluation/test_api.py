"""The /api/evaluation/ routes: create, estimate, start, pause, resume, cancel, progress, report, files and
drill-down; who may call each, bad input answered by field, and a list whose queries do not grow with rows."""

import json

import pytest

from annotation.releases.models import Release
from evaluation import selectors, services
from evaluation.models import EvaluationRun
from llm.models import Run
from tests.factories.evaluation import drive_evaluation_run


@pytest.fixture
def api(client):
    def as_user(user: object) -> object:
        client.force_login(user)
        return client

    return as_user


@pytest.mark.usefixtures("primary")
def test_a_run_is_planned_estimated_started_paused_resumed_and_reported_through_the_api(
    frozen_release, make_endpoint, researcher, api
):
    endpoints = [make_endpoint("sim-mcq-acc90"), make_endpoint("sim-style-concise")]
    client = api(researcher)
    response = client.post(
        "/api/evaluation/runs/",
        {"name": "api run", "release": frozen_release.pk, "endpoints": [e.pk for e in endpoints], "languages": ["en"]},
        content_type="application/json",
    )
    assert response.status_code == 201, response.json()
    created = response.json()
    pk = created["id"]
    assert created["phase"] == "draft" and [m["code"] for m in created["models"]] == ["M01", "M02"]
    assert created["judge_name"] == "judge"
    assert created["pairing"] == "auto"  # the default rule, named in the run's record
    estimate = client.get(f"/api/evaluation/runs/{pk}/estimate/").json()
    run = EvaluationRun.objects.get(pk=pk)
    expected = services.evaluation_estimate(run=run)
    assert estimate["response_calls"] == expected["response_calls"] > 0
    assert estimate["judge_calls_round_robin"] == expected["judge_calls_round_robin"] > 0
    assert client.get(f"/api/evaluation/runs/{pk}/progress/").json()["percent"] == 0.0

    assert client.post(f"/api/evaluation/runs/{pk}/start/").json()["phase"] == "responses"
    response = client.post(f"/api/evaluation/runs/{pk}/start/")
    assert response.status_code == 400 and "already started" in str(response.json())
    assert client.post(f"/api/evaluation/runs/{pk}/pause/").status_code == 200
    progress = client.get(f"/api/evaluation/runs/{pk}/progress/").json()
    assert progress["phase"] == "responses" and progress["paused_llm_runs"] == 2 and progress["running"] is True
    assert progress["counts"]["by_kind"]["responses"]["planned"] == estimate["response_calls"]
    assert client.post(f"/api/evaluation/runs/{pk}/pause/").status_code == 400
    assert client.post(f"/api/evaluation/runs/{pk}/resume/").status_code == 200
    assert not run.llm_runs.filter(llm_run__status=Run.Status.PAUSED).exists()
    assert client.get(f"/api/evaluation/runs/{pk}/report/").status_code == 409

    drive_evaluation_run(run)
    progress = client.get(f"/api/evaluation/runs/{pk}/progress/").json()
    assert (progress["phase"], progress["percent"], progress["has_report"]) == ("done", 100.0, True)
    run.refresh_from_db()
    report = client.get(f"/api/evaluation/runs/{pk}/report/").json()
    assert report["report_digest"] == run.report_digest
    assert report["report"]["subjective"]["judge_calls"] == run.report["subjective"]["judge_calls"] > 0
    assert client.post(f"/api/evaluation/runs/{pk}/report/").json()["report_digest"] == run.report_digest

    files = {f["name"]: f["url"] for f in client.get(f"/api/evaluation/runs/{pk}/files/").json()["files"]}
    assert "accuracy.csv" in files
    assert files["report.json"] == f"http://testserver/api/evaluation/runs/{pk}/files/report.json/"
    downloaded = client.get(files["report.json"])
    assert downloaded["Content-Disposition"] == f'attachment; filename="{pk}-report.json"'
    assert json.loads(downloaded.content)["subjective"]["judge_calls"] == run.report["subjective"]["judge_calls"]
    csv_text = client.get(f"/api/evaluation/runs/{pk}/files/accuracy.csv/").content.decode()
    assert csv_text.startswith("model,dimension,language,n,correct,accuracy")
    response = client.get(f"/api/evaluation/runs/{pk}/files/nothing.csv/")
    assert response.status_code == 404 and "name" in response.json()

    drill = client.get(f"/api/evaluation/runs/{pk}/drill/?model=M01&language=en").json()
    assert drill["filters"] == {"model": "M01", "dimension": None, "language": "en"}
    assert drill["answers"] and {a["model"] for a in drill["answers"]} == {"M01"}
    assert all("M01" in (v["model_a"], v["model_b"]) for v in drill["verdicts"])
    assert drill["verdicts"] and drill["verdicts"][0]["raw"]
    assert (drill["page"], drill["has_next"]) == (1, False)
    assert client.get(f"/api/evaluation/runs/{pk}/drill/?page=2").json()["answers"] == []
    response = client.get(f"/api/evaluation/runs/{pk}/drill/?page=zero")
    assert response.status_code == 400 and "page" in response.json()
    # A page of the evidence holds `sizes` rows of each list, and says whether any goes on.
    everything = selectors.evaluation_run_evidence(run=run)
    sizes = {"answers": 2, "opens": 1, "verdicts": 3}
    pages, page = [], 1
    while True:
        found = selectors.evaluation_run_evidence(run=run, page=page, sizes=sizes)
        pages.append(found)
        if not found["has_next"]:
            break
        page += 1
    for name in sizes:
        assert [row.pk for p in pages for row in p[name]] == [row.pk for row in everything[name]]
        assert all(len(p[name]) <= sizes[name] for p in pages)

    response = client.post(f"/api/evaluation/runs/{pk}/cancel/")
    assert response.status_code == 400 and "Only a running evaluation" in str(response.json())


def test_a_started_run_is_cancelled_through_the_api(frozen_release, make_endpoint, researcher, api):
    run = services.evaluation_run_create(
        name="to cancel",
        release=frozen_release,
        endpoints=[make_endpoint("sim-mcq-acc90")],
        languages=["en"],
        user=researcher,
        judge_override_reason="objective items only",
    )
    client = api(researcher)
    assert client.post(f"/api/evaluation/runs/{run.pk}/start/").status_code == 200
    response = client.post(f"/api/evaluation/runs/{run.pk}/cancel/")
    assert response.status_code == 200 and response.json()["phase"] == "cancelled"
    assert run.llm_runs.get().llm_run.status == Run.Status.CANCELLED
    response = client.post(f"/api/evaluation/runs/{run.pk}/resume/")
    assert response.status_code == 400 and "Only a running evaluation" in str(response.json())


def test_a_run_is_given_a_budget_when_planned_and_the_budget_is_changed_through_the_api(
    frozen_release, make_endpoint, researcher, api
):
    client = api(researcher)
    response = client.post(
        "/api/evaluation/runs/",
        {
            "name": "capped",
            "release": frozen_release.pk,
            "endpoints": [make_endpoint("sim-mcq-acc90").pk],
            "languages": ["en"],
            "judge_override_reason": "objective items only",
            "budget": "0.5",
        },
        content_type="application/json",
    )
    assert response.status_code == 201, response.json()
    pk = response.json()["id"]
    assert (response.json()["budget"], response.json()["spent"]) == ("0.50000000", "0.00000000")
    response = client.post(f"/api/evaluation/runs/{pk}/budget/", {"budget": "-1"}, content_type="application/json")
    assert response.status_code == 400 and "budget" in response.json()
    response = client.post(f"/api/evaluation/runs/{pk}/budget/", {"budget": "2"}, content_type="application/json")
    assert response.status_code == 200 and response.json()["budget"] == "2.00000000"
    response = client.post(f"/api/evaluation/runs/{pk}/budget/", {"budget": None}, content_type="application/json")
    assert response.status_code == 200 and response.json()["budget"] is None
    assert EvaluationRun.objects.get(pk=pk).budget_pool.budget is None


ROUTES = [
    ("GET", "/api/evaluation/runs/"),
    ("POST", "/api/evaluation/runs/"),
    ("GET", "/api/evaluation/runs/1/"),
    ("GET", "/api/evaluation/runs/1/estimate/"),
    ("GET", "/api/evaluation/runs/1/progress/"),
    ("POST", "/api/evaluation/runs/1/start/"),
    ("POST", "/api/evaluation/runs/1/pause/"),
    ("POST", "/api/evaluation/runs/1/resume/"),
    ("POST", "/api/evaluation/runs/1/cancel/"),
    ("POST", "/api/evaluation/runs/1/budget/"),
    ("GET", "/api/evaluation/runs/1/report/"),
    ("POST", "/api/evaluation/runs/1/report/"),
    ("GET", "/api/evaluation/runs/1/files/"),
    ("GET", "/api/evaluation/runs/1/files/report.json/"),
    ("GET", "/api/evaluation/runs/1/drill/"),
]


@pytest.mark.parametrize("role", ["expert", "lead_expert"])
@pytest.mark.parametrize(("method", "path"), ROUTES)
def test_those_who_label_are_refused_every_evaluation_route_with_a_reason(api, make_user, role, method, path):
    client = api(make_user(role))
    response = client.post(path, {}, content_type="application/json") if method == "POST" else client.get(path)
    assert response.status_code == 403
    assert "evaluation.run_evaluation" in response.json()["detail"]


def test_anonymous_callers_are_refused(client):
    assert client.get("/api/evaluation/runs/").status_code in (401, 403)


@pytest.mark.parametrize("role", ["researcher", "admin"])
def test_researchers_and_admins_may_use_the_evaluation_routes(api, make_user, role):
    client = api(make_user(role))
    assert client.get("/api/evaluation/runs/").status_code == 200
    assert client.get("/api/evaluation/runs/999/").status_code == 404


def test_bad_input_is_answered_400_by_field(frozen_release, make_endpoint, researcher, lead, api):
    client = api(researcher)
    response = client.post(
        "/api/evaluation/runs/",
        {"languages": ["fr"], "pairing": "swiss", "seed": -2, "endpoints": []},
        content_type="application/json",
    )
    assert response.status_code == 400
    assert {"name", "release", "endpoints", "languages", "pairing", "seed"} <= set(response.json())
    draft = Release.objects.create(benchmark=frozen_release.benchmark, version="9.9.9", title="draft")
    endpoint = make_endpoint()
    response = client.post(
        "/api/evaluation/runs/",
        {"name": "x", "release": draft.pk, "endpoints": [endpoint.pk]},
        content_type="application/json",
    )
    assert response.status_code == 400 and "release" in response.json()
    response = client.post(
        "/api/evaluation/runs/",
        {"name": "x", "release": frozen_release.pk, "endpoints": [endpoint.pk]},
        content_type="application/json",
    )
    assert response.status_code == 400 and "No primary judge is selected" in str(response.json())
    assert not EvaluationRun.objects.exists()


def test_the_run_list_uses_a_fixed_number_of_queries(
    frozen_release, make_endpoint, researcher, api, django_assert_max_num_queries
):
    endpoints = [make_endpoint("sim-mcq-acc90"), make_endpoint("sim-mcq-acc70"), make_endpoint("sim-style-concise")]
    for n in range(6):
        services.evaluation_run_create(
            name=f"run {n}",
            release=frozen_release,
            endpoints=endpoints[: 1 + n % 3],
            languages=["en", "zh"],
            user=researcher,
            judge_override_reason="objective only",
        )
    client = api(researcher)
    with django_assert_max_num_queries(9):
        response = client.get("/api/evaluation/runs/?page_size=100")
    body = response.json()
    assert body["count"] == 6 and len(body["results"][0]["models"]) >= 1
    assert client.get(f"/api/evaluation/runs/?phase=draft&release={frozen_release.pk}").json()["count"] == 6
    assert client.get("/api/evaluation/runs/?phase=done").json()["count"] == 0


def test_the_openapi_schema_documents_the_evaluation_and_calibration_routes_with_examples(api, researcher):
    schema = api(researcher).get("/api/schema/?format=json").json()
    paths = schema["paths"]
    for path in (
        "/api/evaluation/runs/{id}/estimate/",
        "/api/evaluation/runs/{id}/progress/",
        "/api/evaluation/runs/{id}/files/{name}/",
        "/api/calibration/runs/{id}/report/",
        "/api/calibration/runs/{id}/select/",
    ):
        assert path in paths, path
    create = paths["/api/evaluation/runs/"]["post"]["requestBody"]["content"]["application/json"]
    assert create["examples"]["PlanARun"]["value"]["endpoints"] == [2, 5]
    select = paths["/api/calibration/runs/{id}/select/"]["post"]["requestBody"]["content"]["application/json"]
    assert "reason" in select["examples"]["Select"]["value"]


def test_the_index_lists_the_runs_only_to_those_who_may_run_evaluations(api, expert, researcher):
    assert api(expert).get("/api/evaluation/").json() == {}
    assert set(api(researcher).get("/api/evaluation/").json()) == {"runs", "contamination"}
