"""The one body parser: size and nesting limits, parsed after the session and permission checks."""

from __future__ import annotations

import pytest
from tests.conftest import Person, Server

from wasdi_sdk.catalog import BY_NAME, BodyKind
from wasdi_server.api.framework import HANDLERS
from wasdi_server.json_reader import json_depth_problem

DEEP_ARRAY = b"[" * 1000 + b"]" * 1000
DEEP_OBJECT = b'{"a":' * 1000 + b"1" + b"}" * 1000
JSON_ENDPOINTS = sorted(n for n, e in BY_NAME.items()
                        if e.body.kind in (BodyKind.JSON, BodyKind.JSON_LIST) and n in HANDLERS)


def test_depth_is_counted_outside_strings_only() -> None:
    assert json_depth_problem(b'{"a": "[[[[[[[[[[{{{{{{"}', 3) is None
    assert json_depth_problem(b'{"a": "\\"[[[["}', 1) is None
    assert json_depth_problem(b"[[[[]]]]", 3) is not None
    assert json_depth_problem(b"[[[]]]", 3) is None


def fill(path: str) -> str:
    return path.replace("{", "").replace("}", "")


@pytest.mark.parametrize("name", JSON_ENDPOINTS)
@pytest.mark.parametrize("body", [DEEP_ARRAY, DEEP_OBJECT], ids=["array", "object"])
def test_a_deeply_nested_body_is_never_a_server_fault(server: Server, admin: Person, name: str,
                                                      body: bytes) -> None:
    ep = BY_NAME[name]
    params = {p.name: "x" for p in ep.query if p.required}
    r = server.http.simulate_request(ep.method, fill(ep.path), params=params or None, body=body,
                                     headers={**admin.headers, "Content-Type": "application/json"})
    assert r.status_code < 500, (name, r.status_code, r.text[:200])
    assert "Traceback" not in r.text and "RecursionError" not in r.text


def test_a_deep_body_on_a_well_formed_call_is_a_400(server: Server, alice: Person) -> None:
    r = server.post("/auth/changePassword", alice, body=DEEP_OBJECT, content_type="application/json")
    assert r.status_code == 200 and r.json["boolValue"] is False and r.json["intValue"] == 400


@pytest.mark.parametrize("method", ["POST", "PUT"])
def test_a_non_admin_gets_401_on_node_whatever_the_body(server: Server, alice: Person, method: str) -> None:
    for body in (DEEP_ARRAY, b"{not json", b""):
        r = server.http.simulate_request(method, "/node", body=body,
                                         headers={**alice.headers, "Content-Type": "application/json"})
        assert r.status_code == 401, (body[:10], r.status_code)


def test_a_body_over_the_size_limit_is_a_400(tmp_path) -> None:
    small = Server(tmp_path / "d", max_json_body_bytes=100)
    try:
        person = small.add_user("p@example.org")
        r = small.post("/auth/changePassword", person, json={"currentPassword": "x" * 200, "newPassword": "y"})
        assert r.status_code == 200 and r.json["intValue"] == 400
    finally:
        small.services.close()


def test_the_session_check_comes_before_the_body(server: Server) -> None:
    r = server.post("/node", body=DEEP_ARRAY, content_type="application/json")
    assert r.status_code == 401
