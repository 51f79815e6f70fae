"""The /api/calibration/ routes: prompts, prompt sets, judges, runs, reports, files, suggestion and selection; who
may call each, bad input answered by field, and list queries that do not grow with rows."""

import json

import pytest

from annotation.items.models import Benchmark, Dimension
from calibration import services
from calibration.models import CalibrationRun, Judge, JudgeSelection
from tests.factories import make_calibration_run, make_judge, make_judge_selection, run_queued_report_computations
from tests.factories.llm import work_llm_run


@pytest.fixture
def api(client):
    def as_user(user: object) -> object:
        client.force_login(user)
        return client

    return as_user


def test_a_calibration_is_run_reported_downloaded_and_decided_through_the_api(
    transactional_db, labelled_set, make_endpoint, researcher, api
):
    client = api(researcher)
    prompt_set = services.judge_prompts_load_defaults(benchmark=Benchmark.objects.get(slug="facet"))
    endpoint = make_endpoint("sim-judge-noise2")

    response = client.post(
        "/api/calibration/judges/",
        {"name": "careful", "endpoint": endpoint.pk, "prompt_set": prompt_set.pk},
        content_type="application/json",
    )
    assert response.status_code == 201, response.json()
    judge_id = response.json()["id"]
    response = client.post(
        "/api/calibration/runs/",
        {"name": "api", "comparison_set": labelled_set.pk, "judges": [judge_id], "bootstrap": 50, "seed": 1},
        content_type="application/json",
    )
    assert response.status_code == 201, response.json()
    run = response.json()
    assert run["status"] == "running" and run["report_ready"] is False and run["percent"] == 0.0
    assert [j["name"] for j in run["judges"]] == ["careful"]
    assert client.get(f"/api/calibration/runs/{run['id']}/report/").status_code == 409

    work_llm_run(run["judges"][0]["llm_run"])
    detail = client.get(f"/api/calibration/runs/{run['id']}/").json()
    assert detail["status"] == "finished" and detail["percent"] == 100.0
    assert detail["progress"][0]["progress"]["remaining"] == 0

    response = client.post(f"/api/calibration/runs/{run['id']}/report/")
    assert response.status_code == 202, response.json()
    assert response.json()["state"] == "queued"
    assert run_queued_report_computations() == 1
    response = client.get(f"/api/calibration/runs/{run['id']}/report/")
    assert response.status_code == 200, response.json()
    stored = CalibrationRun.objects.get(pk=run["id"])
    body = response.json()
    assert body["report_digest"] == stored.report_digest
    assert body["report"]["strata"][0]["judges"]["careful"]["alpha_with_judge"] == (
        stored.report["strata"][0]["judges"]["careful"]["alpha_with_judge"]
    )

    urls = client.get(f"/api/calibration/runs/{run['id']}/").json()["files"]
    assert urls["csv"] == f"http://testserver/api/calibration/runs/{run['id']}/files/csv/"
    files = {fmt: client.get(urls[fmt]) for fmt in ("json", "csv", "tex")}
    assert json.loads(files["json"].content)["judges"] == ["careful"]
    assert files["csv"].content.decode().splitlines()[0].startswith("stratum,rater,alpha")
    assert "\\begin{tabular}" in files["tex"].content.decode()
    assert files["csv"]["Content-Disposition"] == f'attachment; filename="calibration-{run["id"]}.csv"'
    assert client.get(f"/api/calibration/runs/{run['id']}/files/xlsx/").status_code == 404

    suggestion = client.get(f"/api/calibration/runs/{run['id']}/suggestion/").json()
    assert suggestion["report_digest"] == stored.report_digest
    assert suggestion["reasoning"] == stored.report["suggestion"]["reasoning"]
    assert suggestion["judge_name"] == stored.report["suggestion"]["judge"]

    response = client.post(
        f"/api/calibration/runs/{run['id']}/select/",
        {"judge": judge_id, "reason": "the only candidate"},
        content_type="application/json",
    )
    assert response.status_code == 201, response.json()
    selection = JudgeSelection.objects.get()
    assert (selection.judge_id, selection.selected_by, selection.report_digest) == (
        judge_id,
        researcher,
        stored.report_digest,
    )
    assert client.get("/api/calibration/selections/").json()["results"][0]["judge_name"] == "careful"


def test_judge_prompts_are_read_by_every_role_and_written_by_their_authors(api, taxonomy, expert, researcher):
    dimension = Dimension.objects.filter(subjective=True).first()
    body = {
        "dimension": dimension.pk,
        "criteria": "Names the feeling.",
        "analysis_steps": "Compare techniques.",
        "length_penalty": "Shorter wins ties.",
    }
    client = api(researcher)
    assert client.post("/api/calibration/prompts/", body, content_type="application/json").status_code == 403
    client = api(expert)
    response = client.post("/api/calibration/prompts/", body, content_type="application/json")
    assert response.status_code == 201, response.json()
    prompt = response.json()
    assert (prompt["version"], prompt["created_by"]) == (1, "expert1")
    listed = client.get(f"/api/calibration/prompts/?dimension={dimension.code}").json()
    assert [p["id"] for p in listed["results"]] == [prompt["id"]]
    response = client.post(
        "/api/calibration/prompt-sets/", {"name": "mine", "prompts": [prompt["id"]]}, content_type="application/json"
    )
    assert response.status_code == 201 and response.json()["version"] == 1
    assert api(researcher).get("/api/calibration/prompt-sets/").json()["count"] == 1


RUN_JUDGE_ROUTES = [
    ("GET", "/api/calibration/judges/"),
    ("POST", "/api/calibration/judges/"),
    ("GET", "/api/calibration/judges/1/"),
    ("GET", "/api/calibration/runs/"),
    ("POST", "/api/calibration/runs/"),
    ("GET", "/api/calibration/runs/1/"),
    ("GET", "/api/calibration/runs/1/report/"),
    ("POST", "/api/calibration/runs/1/report/"),
    ("GET", "/api/calibration/runs/1/files/csv/"),
    ("GET", "/api/calibration/runs/1/suggestion/"),
    ("POST", "/api/calibration/runs/1/select/"),
    ("GET", "/api/calibration/selections/"),
    ("GET", "/api/calibration/selections/1/"),
]


@pytest.mark.parametrize("role", ["expert", "lead_expert"])
@pytest.mark.parametrize(("method", "path"), RUN_JUDGE_ROUTES)
def test_those_who_label_are_refused_every_judge_and_run_route_with_a_reason(api, make_user, role, method, path):
    client = api(make_user(role))
    response = client.post(path, {}, content_type="application/json") if method == "POST" else client.get(path)
    assert response.status_code == 403
    assert "calibration.run_judge" in response.json()["detail"]


@pytest.mark.parametrize(
    ("method", "path"), [("POST", "/api/calibration/prompts/"), ("POST", "/api/calibration/prompt-sets/")]
)
def test_researchers_are_refused_writing_judge_prompts(api, researcher, method, path):
    response = api(researcher).post(path, {}, content_type="application/json")
    assert response.status_code == 403 and "calibration.author_judge_prompt" in response.json()["detail"]


@pytest.mark.parametrize("role", ["researcher", "admin"])
def test_researchers_and_admins_may_use_the_run_routes(api, make_user, taxonomy, role):
    client = api(make_user(role))
    assert client.get("/api/calibration/runs/").status_code == 200
    assert client.get("/api/calibration/judges/").status_code == 200
    assert client.get("/api/calibration/runs/999/").status_code == 404


def test_bad_input_is_answered_400_by_field(api, researcher, expert, taxonomy):
    client = api(researcher)
    body = {"combine_rule": "vote", "seed": -1}
    response = client.post("/api/calibration/runs/", body, content_type="application/json")
    assert response.status_code == 400
    assert {"name", "comparison_set", "judges", "combine_rule", "seed"} <= set(response.json())
    response = client.post("/api/calibration/judges/", {"name": ""}, content_type="application/json")
    assert response.status_code == 400 and {"name", "endpoint", "prompt_set"} <= set(response.json())
    objective = Dimension.objects.filter(subjective=False).first()
    response = api(expert).post(
        "/api/calibration/prompts/",
        {"dimension": objective.pk, "criteria": "x", "analysis_steps": "y", "length_penalty": "z", "few_shot": [1]},
        content_type="application/json",
    )
    assert response.status_code == 400 and {"dimension", "few_shot"} <= set(response.json())


def test_a_judge_is_selected_only_with_a_reason_from_a_computed_report(
    transactional_db, labelled_set, make_endpoint, researcher, api
):
    run = make_calibration_run(
        comparison_set=labelled_set,
        judges={"careful": make_endpoint("sim-judge-noise2")},
        user=researcher,
        bootstrap=20,
        report=False,
    )
    judge = run.judge_runs.get().judge
    client = api(researcher)
    path = f"/api/calibration/runs/{run.pk}/select/"
    response = client.post(path, {"judge": judge.pk, "reason": "good"}, content_type="application/json")
    assert response.status_code == 409 and response.json()["code"] == "report_not_ready"
    assert client.get(f"/api/calibration/runs/{run.pk}/suggestion/").status_code == 409
    assert client.get(f"/api/calibration/runs/{run.pk}/files/csv/").status_code == 409
    services.calibration_report_compute(run=run)
    response = client.post(path, {"judge": judge.pk, "reason": "  "}, content_type="application/json")
    assert response.status_code == 400 and "reason" in response.json()
    other = make_judge(name="other", endpoint=make_endpoint("sim-judge-noise2"))
    response = client.post(path, {"judge": other.pk, "reason": "why not"}, content_type="application/json")
    assert response.status_code == 400 and "was not part of this calibration run" in str(response.json())
    response = client.post(path, {"judge": 99999, "reason": "x"}, content_type="application/json")
    assert response.status_code == 400 and "judge" in response.json()
    assert not JudgeSelection.objects.exists()


def test_list_routes_use_a_fixed_number_of_queries(
    transactional_db, labelled_set, make_endpoint, researcher, api, django_assert_max_num_queries
):
    run = make_calibration_run(
        comparison_set=labelled_set,
        judges={"a": make_endpoint("sim-judge-noise2"), "b": make_endpoint("sim-judge-noise2")},
        user=researcher,
        bootstrap=20,
    )
    make_judge_selection(run=run, user=researcher)
    judges = list(Judge.objects.all())
    for n in range(4):
        services.calibration_run_start(
            name=f"queued {n}",
            comparison_set=labelled_set,
            judges=judges,
            combine_rule="summed",
            user=researcher,
            start=False,
        )
    client = api(researcher)
    for path in (
        "/api/calibration/runs/",
        "/api/calibration/judges/",
        "/api/calibration/prompts/",
        "/api/calibration/prompt-sets/",
        "/api/calibration/selections/",
    ):
        with django_assert_max_num_queries(8):
            response = client.get(path + "?page_size=100")
        assert response.status_code == 200, path
    assert client.get("/api/calibration/runs/?page_size=2").json()["count"] == 5


def test_the_index_lists_only_the_routes_the_user_may_use(api, expert, researcher):
    assert set(api(expert).get("/api/calibration/").json()) == {"prompts", "prompt-sets"}
    assert {"prompts", "judges", "juries", "runs", "selections"} <= set(api(researcher).get("/api/calibration/").json())
