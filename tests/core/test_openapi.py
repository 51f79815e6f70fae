"""The OpenAPI schema describes every operation's answers (``core.openapi``): the error statuses each can give with
their JSON body, nullable and blank fields as they answer, plain arrays where the API answers one, and the media
types of file downloads. tests/core/test_schemathesis.py checks the same against the live server."""

import pytest
from drf_spectacular.generators import SchemaGenerator

from tests.factories import UserFactory

ERROR_REF = {"$ref": "#/components/schemas/Error"}


@pytest.fixture(scope="module")
def schema() -> dict:
    return SchemaGenerator().get_schema(request=None, public=True)


def operations(schema: dict) -> list[tuple[str, str, dict]]:
    return [
        (path, method, operation) for path, methods in schema["paths"].items() for method, operation in methods.items()
    ]


def test_every_operation_declares_401_403_and_404_for_an_id_in_its_path(schema):
    for path, method, operation in operations(schema):
        responses = operation["responses"]
        if path == "/api/token/":
            continue  # open to anyone: it is how a token is had
        assert {"401", "403"} <= set(responses), (method, path)
        if "{" in path:
            assert "404" in responses, (method, path)
        if method in {"post", "put", "patch"}:
            assert {"400", "409", "413", "415"} <= set(responses), (method, path)


def test_every_error_status_has_a_json_body_with_its_shape(schema):
    for path, method, operation in operations(schema):
        for code, response in operation["responses"].items():
            if code.startswith("4"):
                body = response["content"]["application/json"]["schema"]
                expected = {"$ref": "#/components/schemas/ValidationError"} if code == "400" else ERROR_REF
                assert body == expected, (method, path, code)
    assert schema["components"]["schemas"]["Error"]["required"] == ["detail"]


def test_fields_that_answer_null_or_blank_say_so(schema):
    components = schema["components"]["schemas"]
    assert components["JudgePrompt"]["properties"]["created_by"]["nullable"] is True
    assert components["Round"]["properties"]["closed_by"]["nullable"] is True
    assert components["Item"]["properties"]["crisis_level"]["nullable"] is True
    assert components["ComparisonSet"]["properties"]["description"]["nullable"] is True
    assert "description" in components["ComparisonSet"]["required"]
    for component, field in (("Item", "difficulty"), ("Call", "error_kind")):
        refs = [choice["$ref"] for choice in components[component]["properties"][field]["oneOf"]]
        assert "#/components/schemas/BlankEnum" in refs, (component, field)
    # A count over a reverse relation is no nullable relation.
    assert "nullable" not in components["Release"]["properties"]["items"]


def test_lists_the_api_answers_unpaginated_are_plain_arrays(schema):
    for path in (
        "/api/items/{uid}/revisions/",
        "/api/items/{uid}/status/",
        "/api/labelling/sets/{id}/experts/",
        "/api/calibration/key-validations/{id}/disagreements/",
    ):
        body = schema["paths"][path]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
        assert body["type"] == "array", path


def test_downloads_declare_their_media_types(schema):
    def media(path: str) -> set[str]:
        return set(schema["paths"][path]["get"]["responses"]["200"]["content"])

    tables = {"text/csv", "application/x-ndjson", "application/vnd.apache.parquet"}
    # Every table download (a {fmt} path other than a report's files) declares the three formats it serves: the
    # answers download once declared only CSV and schemathesis caught its JSONL.
    table_paths = [path for path in schema["paths"] if path.endswith("/{fmt}/") and "/files/" not in path]
    assert "/api/evaluation/runs/{id}/answers/{fmt}/" in table_paths
    assert len(table_paths) >= 7
    for path in table_paths:
        assert media(path) == tables, path
    assert media("/api/releases/{id}/download/") == {"application/zip"}
    assert {"application/pdf", "image/png", "text/csv", "application/json"} <= media(
        "/api/evaluation/runs/{id}/files/{name}/"
    )
    assert {"application/pdf", "image/png", "application/x-tex"} <= media("/api/calibration/runs/{id}/files/{fmt}/")


@pytest.mark.django_db
def test_an_api_path_that_matches_no_route_answers_json_404(client):
    client.force_login(UserFactory(role="researcher", username="r-404"))

    response = client.get("/api/llm/runs/abc/progress/")

    assert response.status_code == 404 and response["Content-Type"] == "application/json"
    assert response.json()["code"] == "not_found" and response.json()["detail"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("url", "field"),
    [
        ("/api/llm/runs/?endpoint=abc", "endpoint"),
        ("/api/llm/runs/?status=sideways", "status"),
        ("/api/llm/calls/?endpoint=99999999999999999999", "endpoint"),
        ("/api/llm/calls/?error_kind=nope", "error_kind"),
        ("/api/evaluation/runs/?release=null", "release"),
    ],
)
def test_list_filters_that_are_no_value_answer_400_naming_them(client, url, field):
    client.force_login(UserFactory(role="admin", username="a-filter"))

    response = client.get(url)

    assert response.status_code == 400 and list(response.json()) == [field], response.content[:300]


@pytest.mark.django_db
def test_an_empty_llm_filter_filters_nothing(client):
    client.force_login(UserFactory(role="admin", username="a-empty"))

    assert client.get("/api/llm/runs/?endpoint=&status=").status_code == 200
