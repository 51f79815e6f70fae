"""Refusals that help: a 403 page with the site's navigation and the reason, JSON with a detail from the API, the
admin site refusing signed-in non-admins, and navigation offering only what a role may use."""

import pytest
from django.contrib.auth.models import Group

from calibration.models import JudgePrompt
from core.roles import declared_permissions

BLIND_PAGES = [
    "/calibration/",
    "/calibration/runs/1/",
    "/calibration/runs/1/report.csv",
    "/calibration/runs/new/",
    "/evaluation/",
    "/evaluation/1/",
    "/evaluation/1/drill/?model=M01&language=en",
    "/evaluation/1/files/leaderboard.csv",
    "/llm/",
    "/llm/runs/1/",
    "/llm/runs/1/export.jsonl",
    "/llm/calls/1/",
    "/labelling/new/",
    "/labelling/responses/import/",
]


def reason(html: str) -> str:
    start = html.index('id="forbidden-reason"')
    return html[html.index(">", start) + 1 : html.index("</p>", start)]


@pytest.mark.parametrize("role", ["expert", "lead_expert"])
@pytest.mark.parametrize("path", BLIND_PAGES)
def test_labellers_are_refused_every_page_that_ties_responses_to_models(taxonomy, make_user, client, role, path):
    client.force_login(make_user(role, username=f"blind-{role}"))

    response = client.get(path)

    assert response.status_code == 403
    html = response.content.decode()
    assert 'class="mainnav"' in html
    assert "Researcher" in reason(html) and "Admin" in reason(html)


@pytest.mark.parametrize("path", BLIND_PAGES)
def test_researchers_pass_the_same_checks(taxonomy, researcher, client, path):
    client.force_login(researcher)

    assert client.get(path).status_code in (200, 404)


def test_a_refused_page_says_why_and_who_may_use_it(taxonomy, expert, login):
    html = login(expert).get("/evaluation/1/drill/?model=M01").content.decode()

    assert reason(html) == (
        "Evaluation runs, reports, drill-downs and files show responses under model codes next to the endpoints "
        "behind them, so those who label responses do not see them. Roles that may do this: Admin, Researcher "
        "(permission “evaluation.run_evaluation”)."
    )
    assert "Your roles: Expert." in html


def test_a_refused_api_call_answers_json_naming_the_roles_that_may(taxonomy, expert, login):
    client = login(expert)

    for path in ("/api/llm/", "/api/llm/runs/", "/api/llm/calls/", "/api/llm/endpoints/"):
        response = client.get(path)
        assert response.status_code == 403, path
        assert response["Content-Type"].startswith("application/json")
        assert "Researcher" in response.json()["detail"], path


def test_the_admin_site_refuses_signed_in_non_admins_with_the_403_page(taxonomy, lead, login):
    response = login(lead).get("/admin/items/item/")

    assert response.status_code == 403
    html = response.content.decode()
    assert 'class="mainnav"' in html and "for admins only" in reason(html)


def test_writing_a_judge_prompt_without_the_permission_is_refused_with_the_reason(taxonomy, researcher, login):
    response = login(researcher).post("/calibration/prompts/", {"criteria": "anything"})

    assert response.status_code == 403
    assert "calibration.author_judge_prompt" in reason(response.content.decode())
    assert not JudgePrompt.objects.exists()


def test_the_reason_names_no_role_when_none_holds_the_permission(taxonomy, expert, login, monkeypatch):
    monkeypatch.setattr("core.permissions.declared_permissions", lambda: {})

    html = login(expert).get("/evaluation/").content.decode()

    assert "No role may do this (permission “evaluation.run_evaluation”)" in reason(html)


def test_builders_and_labellers_are_separate_roles(db):
    declared = declared_permissions()

    assert (
        "labelling.manage_comparisons" in declared["researcher"] and "labelling.manage_comparisons" in declared["admin"]
    )
    assert (
        "labelling.label_comparisons" in declared["expert"] and "labelling.label_comparisons" in declared["lead_expert"]
    )
    for builder in ("researcher", "admin"):
        assert "labelling.label_comparisons" not in declared[builder]
    for labeller in ("expert", "lead_expert"):
        assert "labelling.label_comparisons" in declared[labeller]
        assert not {
            "labelling.manage_comparisons",
            "calibration.run_judge",
            "evaluation.run_evaluation",
            "llm.view_run",
            "llm.view_llmcall",
            "llm.view_endpoint",
        } & set(declared[labeller])
    assert Group.objects.get(name="lead_expert").permissions.filter(codename="label_comparisons").exists()


@pytest.mark.parametrize(
    ("role", "shown", "hidden"),
    [
        ("expert", ["/calibration/prompts/", "/labelling/"], ["/calibration/", "/evaluation/", "/llm/", "/admin/"]),
        ("lead_expert", ["/calibration/prompts/", "/screening/"], ["/calibration/", "/evaluation/", "/llm/"]),
        ("researcher", ["/calibration/", "/evaluation/", "/llm/"], ["/screening/", "/items/import/", "/admin/"]),
    ],
)
def test_navigation_offers_only_what_the_role_may_use(taxonomy, make_user, client, role, shown, hidden):
    client.force_login(make_user(role, username=f"nav-{role}"))

    html = client.get("/").content.decode()
    nav = html[html.index('class="mainnav"') : html.index("</nav>")]

    for path in shown:
        assert f'href="{path}"' in nav, path
    for path in hidden:
        assert f'href="{path}"' not in nav, path
