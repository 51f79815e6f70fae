"""Every API list answers 400 naming a query parameter it does not declare; what it declares (the OpenAPI
schema's query parameters, pagination and ``format``) is accepted."""

import pytest

from core.query_params import declared_query_parameters
from tests.core.crawl import routes
from tests.factories import UserFactory


def _list_routes() -> list:
    found = []
    for route in routes():
        actions = getattr(route.callback, "actions", None) or {}
        if route.route.startswith("api/") and actions.get("get") == "list" and not route.params:
            found.append(route)
    return found


def _url(route) -> str:
    return "/" + route.route.rstrip("$").lstrip("^")


@pytest.fixture
def superuser(db):
    return UserFactory(role="admin", username="super1", is_superuser=True)


def test_there_are_list_routes_in_every_app():
    urls = {_url(route) for route in _list_routes()}
    assert {"/api/llm/runs/", "/api/labelling/labels/", "/api/items/", "/api/releases/"} <= urls
    assert len(urls) > 15


@pytest.mark.parametrize("route", _list_routes(), ids=lambda route: route.route)
def test_a_list_refuses_an_unknown_query_parameter_naming_it(client, superuser, route):
    client.force_login(superuser)

    response = client.get(_url(route), {"comparison_set": "1", "format": "json"})

    assert response.status_code == 400, response.content[:300]
    body = response.json()
    assert list(body) == ["comparison_set"]
    assert body["comparison_set"][0].startswith("Unknown query parameter; this list takes: ")
    assert "format" in body["comparison_set"][0]


@pytest.mark.parametrize("route", _list_routes(), ids=lambda route: route.route)
def test_a_list_accepts_every_parameter_it_declares(client, superuser, route):
    client.force_login(superuser)
    view = route.callback.cls(action="list", request=None, format_kwarg=None, kwargs={}, args=())
    declared = declared_query_parameters(view)

    for name in sorted(declared):
        response = client.get(_url(route), {name: ""})
        assert not (response.status_code == 400 and "Unknown query parameter" in response.content.decode()), (
            f"{name}: {response.content[:300]}"
        )
    paginated = {"page": "1", "page_size": "5"} if route.callback.cls.pagination_class else {}
    assert {"format", *paginated} <= declared
    assert client.get(_url(route), {**paginated, "format": "json"}).status_code == 200


def test_the_labels_list_names_comparison_set_and_offers_set(client, expert, login):
    response = login(expert).get("/api/labelling/labels/", {"comparison_set": "3"})

    assert response.status_code == 400
    message = response.json()["comparison_set"][0]
    assert message == "Unknown query parameter; this list takes: format, page, page_size, set."
