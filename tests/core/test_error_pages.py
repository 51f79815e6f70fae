"""No dead ends: 403, 404 and 500 pages keep the navigation, say why and link on; a favicon exists; pages do not
offer links a role may not follow."""

from unittest import mock

import pytest
from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.contrib.sessions.middleware import SessionMiddleware
from django.test import RequestFactory

from annotation.items.models import Dimension
from annotation.items.services import drafting
from core import views
from tests.factories import make_item


def test_unknown_address_answers_404_with_navigation_reason_and_links(taxonomy, expert, login):
    response = login(expert).get("/no-such-page/", headers={"Referer": "http://testserver/items/"})
    html = response.content.decode()
    assert response.status_code == 404
    assert 'class="mainnav"' in html and 'id="not-found"' in html
    assert "There is no page at /no-such-page/." in html
    assert 'href="http://testserver/items/">Back to the previous page' in html
    assert 'href="/">Back to the home page' in html


def test_missing_item_says_which_uid_and_offers_a_search(taxonomy, expert, login):
    response = login(expert).get("/items/nope-42/")
    html = response.content.decode()
    assert response.status_code == 404
    assert "No item with uid nope-42." in html
    assert 'href="/items/?q=nope-42"' in html


def test_a_foreign_referer_is_not_offered_as_the_way_back(taxonomy, expert, login):
    html = login(expert).get("/no-such-page/", headers={"Referer": "https://evil.example/"}).content.decode()
    assert "evil.example" not in html


def test_anonymous_404_offers_sign_in(db):
    response = RequestFactory().get("/nowhere/")
    response.user = AnonymousUser()
    html = views.not_found(response, Exception({"tried": []})).content.decode()
    assert "There is no page at /nowhere/." in html and 'href="/login/"' in html


def test_forbidden_page_keeps_navigation_says_why_and_links_home(taxonomy, expert, login):
    response = login(expert).get("/evaluation/")
    html = response.content.decode()
    assert response.status_code == 403
    assert 'class="mainnav"' in html and 'id="forbidden-reason"' in html
    assert "Roles that may do this" in html and "Your roles: Expert" in html
    assert 'href="/">Back to the home page' in html


def _request(user):
    request = RequestFactory().get("/broken/")
    SessionMiddleware(lambda r: None).process_request(request)
    request.user = user
    return request


def test_server_error_page_has_navigation_and_a_way_back(taxonomy, expert):
    response = views.server_error(_request(expert))
    html = response.content.decode()
    assert response.status_code == 500
    assert 'class="mainnav"' in html and 'id="server-error"' in html
    assert 'href="/">Back to the home page' in html


def test_server_error_page_falls_back_to_plain_html_when_rendering_fails(taxonomy, expert):
    with mock.patch("core.views.render", side_effect=RuntimeError("database is down")):
        response = views.server_error(_request(expert))
    assert response.status_code == 500
    assert b"Something went wrong on our side" in response.content


def test_favicon_is_served_to_anyone(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 302 and response.url.endswith("favicon.ico")
    assert (settings.BASE_DIR / "static" / "favicon.ico").read_bytes()[:4] == b"\x00\x00\x01\x00"


@pytest.mark.django_db(transaction=True)
def test_a_leads_drafting_job_does_not_link_to_the_llm_run_page_they_may_not_open(taxonomy, lead, login, make_endpoint):
    seed = make_item(uid="seed-dead-end", user=lead, status="accepted")
    template = drafting.item_template_save(
        dimension=Dimension.objects.get(benchmark__slug="facet", code="hidden_emotion_recognition"),
        kind="mcq",
        instructions="Write a scenario.",
        user=lead,
        seed_items=[seed],
    )
    job = drafting.drafting_job_start(
        template=template,
        endpoint=make_endpoint("sim-drafter", for_drafting=True),
        count=1,
        languages=["en"],
        user=lead,
        start=False,
    )
    client = login(lead)
    assert client.get(f"/llm/runs/{job.llm_run_id}/").status_code == 403
    html = client.get(f"/drafting/jobs/{job.pk}/").content.decode()
    assert "/llm/runs/" not in html
