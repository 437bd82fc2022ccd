"""The dispatcher: parameter parsing as real clients send it, and failures never leak a traceback."""

from __future__ import annotations

import pytest
from tests.conftest import Person, Server

from wasdi_sdk.catalog import ParamType
from wasdi_sdk.catalog._types import q
from wasdi_server.api.framework import parse_bool, parse_param
from wasdi_server.errors import BadRequest


@pytest.mark.parametrize("raw,expected", [("true", True), ("True", True), ("TRUE", True), ("1", True),
                                          ("false", False), ("False", False), ("0", False)])
def test_booleans_in_any_case_or_digits(raw: str, expected: bool) -> None:
    assert parse_bool(raw) is expected


def test_bad_boolean_and_int() -> None:
    with pytest.raises(BadRequest):
        parse_bool("perhaps")
    with pytest.raises(BadRequest):
        parse_param(q("n", ParamType.INT), ["12a"], 100)


def test_repeated_parameter_takes_the_first_and_lists_merge() -> None:
    assert parse_param(q("filename"), ["a.tif", "a.tif"], 100) == "a.tif"
    assert parse_param(q("s", ParamType.STR_LIST), ["A,B", "C"], 100) == ["A", "B", "C"]


def test_blank_values_count_as_missing() -> None:
    assert parse_param(q("x", default="d"), [""], 100) == "d"
    with pytest.raises(BadRequest):
        parse_param(q("x", required=True), [""], 100)


def test_unencoded_query_values_from_real_clients(server: Server, alice: Person) -> None:
    # waspy and the web client concatenate query strings without encoding.
    r = server.http.simulate_get("/ws/create", query_string="name=My Floods: 2024&", headers=alice.headers)
    ws = r.json["stringValue"]
    r = server.http.simulate_get("/ws/wsnamebyid", query_string=f"&workspace={ws}", headers=alice.headers)
    assert r.text == "My Floods: 2024"


def test_unexpected_errors_answer_in_style_without_traceback(server: Server, alice: Person, monkeypatch) -> None:
    def explode(*args, **kwargs):
        raise RuntimeError("secret internal detail")

    monkeypatch.setattr(server.services.workspaces, "list_for", explode)
    monkeypatch.setattr(server.services.workspaces, "readable", explode)
    r = server.get("/ws/byuser", alice)
    assert r.status_code == 200 and r.json == []
    r = server.get("/ws/wsnamebyid", alice, workspace="w")
    assert r.status_code == 500 and r.json == {"message": "internal error"}
    assert "secret" not in r.text and "Traceback" not in r.text


def test_unknown_route_and_method(server: Server, alice: Person) -> None:
    assert server.get("/ws/nothing", alice).status_code == 404
    assert server.http.simulate_patch("/ws/byuser", headers=alice.headers).status_code == 405


def test_oversized_json_body_is_refused(server: Server, alice: Person) -> None:
    big = b'{"title": "' + b"x" * (11 * 1024 * 1024) + b'"}'
    r = server.post("/wasdi/feedback", alice, body=big, content_type="application/json")
    assert r.status_code == 200 and r.json["intValue"] == 400


def test_cached_listing_is_reused_until_its_collections_change(server: Server, alice: Person, bob: Person,
                                                              monkeypatch) -> None:
    calls = []
    real = server.services.workspaces.list_for
    monkeypatch.setattr(server.services.workspaces, "list_for", lambda user: calls.append(user) or real(user))
    assert server.get("/ws/byuser", alice).json == []
    assert server.get("/ws/byuser", alice).json == []
    assert len(calls) == 1  # the second answer came from the cache
    ws = server.get("/ws/create", alice, name="new").json["stringValue"]
    assert [w["workspaceId"] for w in server.get("/ws/byuser", alice).json] == [ws]
    assert server.get("/ws/byuser", bob).json == []  # another caller: its own answer
    server.put("/ws/share/add", alice, workspace=ws, userId=bob.user_id)
    assert [w["workspaceId"] for w in server.get("/ws/byuser", bob).json] == [ws]
    assert len(calls) == 4


def test_cors_only_when_configured(tmp_path) -> None:
    plain = Server(tmp_path / "a")
    try:
        r = plain.http.simulate_get("/wasdi/hello", headers={"Origin": "https://ui.example.org"})
        assert "access-control-allow-origin" not in r.headers
    finally:
        plain.close()
    web = Server(tmp_path / "b", cors_allow_origins=["https://ui.example.org"])
    try:
        r = web.http.simulate_get("/wasdi/hello", headers={"Origin": "https://ui.example.org"})
        assert r.headers["access-control-allow-origin"] == "https://ui.example.org"
    finally:
        web.close()


def test_settings_from_the_environment() -> None:
    from wasdi_server.settings import load_settings

    settings = load_settings(environ={"WASDI_SERVER_CORS_ALLOW_ORIGINS": "https://a.org, https://b.org",
                                      "WASDI_SERVER_PORT": "9000", "WASDI_SERVER_DISABLE_AUTHENTICATION": "false"})
    assert settings.cors_allow_origins == ["https://a.org", "https://b.org"] and settings.port == 9000
    assert settings.disable_authentication is False
