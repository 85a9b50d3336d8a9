"""The OpenAPI schema at /api/schema/ says what the API answers, refusals included.

tests/reliability/test_api_fuzz.py holds a real server to it; these are the quick checks.
"""

import pytest
from django.core.management import call_command
from drf_spectacular.generators import SchemaGenerator

pytestmark = pytest.mark.django_db

WRITES = {"post", "put", "patch", "delete"}


@pytest.fixture(scope="module")
def schema():
    return SchemaGenerator().get_schema(request=None, public=True)


def _operations(schema):
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            yield path, method, operation


def _shapes(response):
    schema = response["content"]["application/json"]["schema"]
    refs = schema.get("anyOf", [schema])
    return {ref["$ref"].rsplit("/", 1)[-1] for ref in refs}


def test_the_schema_generates_without_a_warning_and_validates(tmp_path):
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "s.yaml"))


def test_every_operation_documents_the_refusals_it_can_answer(schema):
    for path, method, operation in _operations(schema):
        responses = operation["responses"]
        if path == "/api/inbox/":
            continue
        assert {"401", "404"} <= set(responses), (method, path)
        assert _shapes(responses["404"]) == {"Error"}
        if method in WRITES:
            assert {"400", "403", "409"} <= set(responses), (method, path)


def test_every_refusal_is_documented_in_the_one_error_shape(schema):
    for path, method, operation in _operations(schema):
        for code, response in operation["responses"].items():
            if code.startswith("4"):
                assert _shapes(response) == {"Error"}, (method, path, code)
    assert schema["components"]["schemas"]["Error"]["required"] == ["code", "detail", "problems"]


def test_every_request_body_is_documented_as_refusing_keys_it_does_not_know(schema):
    components = schema["components"]["schemas"]
    bodies = 0
    for path, method, operation in _operations(schema):
        content = operation.get("requestBody", {}).get("content", {})
        for media in content.values():
            ref = media["schema"].get("$ref")
            if ref and path != "/api/inbox/":
                bodies += 1
                component = components[ref.rsplit("/", 1)[-1]]
                assert component.get("additionalProperties") is False, (method, path)
    assert bodies >= 12


def test_the_public_inbox_is_documented_as_needing_no_credentials(schema):
    inbox = schema["paths"]["/api/inbox/"]["post"]
    assert inbox["security"] == []
    assert set(inbox["responses"]) == {"202", "400", "409", "413", "429"}
    assert "Retry-After" in inbox["responses"]["429"]["headers"]


def test_path_parameters_say_what_their_routes_match(schema):
    parameters = {
        parameter["name"]: parameter["schema"]
        for item in schema["paths"].values()
        for operation in item.values()
        for parameter in operation.get("parameters", [])
        if parameter["in"] == "path"
    }
    assert parameters["workspace"]["pattern"] == "^[-a-zA-Z0-9_]+$"
    assert parameters["id"] == {"type": "integer", "minimum": 0}
    assert parameters["version"]["pattern"] == "^[^/]+$"


def test_file_downloads_are_documented_as_the_bytes_they_are(schema):
    path = "/api/workspaces/{workspace}/skills/{slug}/files/{path}"
    content = schema["paths"][path]["get"]["responses"]["200"]["content"]
    assert {"text/plain", "image/*", "application/octet-stream", "*/*"} == set(content)


def test_a_mistyped_api_url_is_refused_in_json_and_the_admin_keeps_its_page(client, settings):
    settings.DEBUG = False
    response = client.get("/api/workspaces/not a slug/agents/")
    assert response.status_code == 404
    not_found = {"code": "not_found", "detail": "Not found.", "problems": ["Not found."]}
    assert response.json() == not_found
    page = client.get("/admin-nowhere/")
    assert page.status_code == 404 and page["Content-Type"].startswith("text/html")
