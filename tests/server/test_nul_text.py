"""Text with a NUL character is refused (400, in each endpoint's failure style) before any store sees it, on
every engine: the journaled TinyDB-format store, SQLite, and PostgreSQL (which cannot keep such text at all;
before, ``GET /node?node=%00`` there was a 500 and login, the ``/process/byws`` filter and ``/ws/share/add``
logged tracebacks)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.conftest import PASSWORD, Server
from tests.server.geodata import new_workspace

from wasdi_server.store import TextWithNulError

ENGINES = ["tinydb", "sqlite", "postgres"]


@pytest.fixture(params=ENGINES)
def engine_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Server]:
    if request.param == "postgres":
        url = request.getfixturevalue("pg_url")
        server = Server(tmp_path / "data", store_url=url, node_secret="s" * 16, public_url="http://127.0.0.1:1")
    else:
        server = Server(tmp_path / "data", store_engine=request.param)
    yield server
    server.close()


def test_nul_text_is_refused_in_each_endpoints_style(engine_server: Server,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    server = engine_server
    alice = server.add_user("alice@example.org")
    server.add_user("bob@example.org")
    ws = new_workspace(server, alice)
    caplog.set_level(logging.WARNING)

    # style A: a status and a message (an admin's, who may read nodes: before, a 500 on PostgreSQL)
    admin = server.add_user("admin@example.org", admin=True)
    r = server.get("/node", admin, node="\x00")
    assert r.status_code == 400 and "NUL" in r.json["message"]
    r = server.get("/ws/getws", alice, workspace="w\x00")
    assert r.status_code == 400 or r.json in (None, {}), r.text
    # style B: 200 with the failure marker
    r = server.post("/auth/login", json={"userId": "alice@example.org\x00", "userPassword": PASSWORD})
    assert r.status_code == 200 and r.json.get("userId") in (None, "")
    r = server.put("/ws/share/add", alice, workspace=ws, userId="bob@example.org\x00", rights="read")
    assert r.status_code == 200 and r.json["boolValue"] is False and r.json["intValue"] == 400
    # style C: the empty answer
    r = server.get("/process/byws", alice, workspace=ws, namePattern="a\x00b")
    assert r.status_code == 200 and r.json == []
    # a body (JSON) with a NUL in a key: refused, where the same body without it logs in
    body = {"userId": "alice@example.org", "userPassword": PASSWORD}
    assert server.post("/auth/login", json={**body, "extra\x00": 1}).json.get("userId") in (None, "")
    assert server.post("/auth/login", json={**body, "extra": 1}).json["userId"] == "alice@example.org"
    # a session id with a NUL is no session (and is not looked up)
    assert server.get("/catalog/downloadbyname", None, token="x\x00", filename="a", workspace=ws).status_code == 401
    # nothing reached a store: no traceback, no "unexpected failure"
    assert not [rec for rec in caplog.records if rec.levelno >= logging.ERROR or rec.exc_info], \
        [rec.getMessage() for rec in caplog.records]
    assert server.get("/ws/share/byworkspace", alice, workspace=ws).json == []  # the sharing was not made


def test_the_store_is_the_last_guard(engine_server: Server) -> None:
    """Should a NUL get past the request checks, every engine refuses it with ``TextWithNulError`` (answered as
    a 400), not a database error; a text holding a backslash and ``u0000`` (no NUL) is kept as it is."""
    users = engine_server.services.store.collection("users")
    with pytest.raises(TextWithNulError):
        users.insert({"userId": "nul@example.org", "name": "a\x00b"})
    with pytest.raises(TextWithNulError):
        users.insert({"userId": "nul@example.org", "notes": {"key\x00": ["x"]}})
    assert users.get("nul@example.org") is None
    users.insert({"userId": "nul@example.org", "name": "a\\u0000b"})
    assert users.get("nul@example.org")["name"] == "a\\u0000b"
    with pytest.raises(TextWithNulError):
        users.update("nul@example.org", {"name": "\x00"})


def test_a_lookup_with_a_nul_on_postgres_is_refused_not_a_database_error(pg_url: str, tmp_path: Path) -> None:
    server = Server(tmp_path / "data", store_url=pg_url, node_secret="s" * 16, public_url="http://127.0.0.1:1")
    try:
        with pytest.raises(TextWithNulError):
            server.services.store.collection("users").get("a\x00b")
    finally:
        server.close()
