"""GET /openapi.json: an OpenAPI 3.1 document generated from the catalogue and the models."""

from __future__ import annotations

from openapi_spec_validator import validate
from tests.conftest import Server

from wasdi_sdk.catalog import BY_NAME, Auth
from wasdi_server.api.framework import HANDLERS
from wasdi_server.api.openapi import build_document


def test_the_document_is_served_without_a_session_and_is_valid_openapi_3_1(server: Server) -> None:
    r = server.get("/openapi.json")
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    document = r.json
    assert document["openapi"] == "3.1.0"
    validate(document)
    assert server.get("/wasdiwebserver/rest/openapi.json").json == document


def test_every_routed_endpoint_is_described_with_its_failure_style(server: Server) -> None:
    paths = server.get("/openapi.json").json["paths"]
    described = {op["operationId"]: op for ops in paths.values() for op in ops.values()}
    assert set(described) == set(HANDLERS)
    for name, op in described.items():
        ep = BY_NAME[name]
        assert op["x-wasdi-failure-style"] == ep.style.value
        assert {p["name"] for p in op["parameters"] if p["in"] == "query"} == {p.name for p in ep.query}
        assert (op.get("security") == []) == (ep.auth is Auth.PUBLIC)


def test_the_whole_catalogue_makes_a_valid_document() -> None:
    validate(build_document(BY_NAME.values()))


def test_bodies_and_answers_point_at_the_models(server: Server) -> None:
    document = server.get("/openapi.json").json
    login = document["paths"]["/auth/login"]["post"]
    assert login["requestBody"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/LoginInfo"}
    assert "userPassword" in document["components"]["schemas"]["LoginInfo"]["properties"]
    byuser = document["paths"]["/ws/byuser"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    # style C: a failure is HTTP 200 too (null or an empty list), so null is part of the 200 schema
    assert byuser == {"anyOf": [{"type": "array", "items": {"$ref": "#/components/schemas/WorkspaceListInfoViewModel"}},
                                {"type": "null"}]}
