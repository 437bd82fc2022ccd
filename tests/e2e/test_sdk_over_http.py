"""The SDK against a real server over loopback HTTP (not through the in-process WSGI transport)."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import httpx
import pytest

from wasdi_sdk import (
    APIConnectionError,
    AuthenticationError,
    EmptyResultError,
    PermissionDeniedError,
    WasdiClient,
)

pytestmark = pytest.mark.e2e

LEGACY = "/wasdiwebserver/rest"


@pytest.fixture(autouse=True)
def _no_wasdi_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("WASDI_"):
            monkeypatch.delenv(name)


def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_login_hello_and_logout(server, accounts) -> None:
    with WasdiClient(base_url=server.base_url, max_retries=0) as client:
        assert client.utility.hello().string_value == "Hello Wasdi!!"
        user = client.auth.login(accounts.alice, accounts.password)
        assert user.user_id == accounts.alice
        assert user.session_id and client.session_token == user.session_id
        token = client.session_token
        assert client.auth.check_session().user_id == accounts.alice

        client.auth.logout()
        assert client.session_token is None
        client.session_token = token  # the old token is dead on the server too
        with pytest.raises(AuthenticationError):
            client.auth.check_session()
    r = httpx.get(server.url("/auth/checksession"), headers={"x-session-token": token})
    assert r.status_code == 200 and not r.json().get("userId")


def test_wrong_password(server, accounts) -> None:
    with WasdiClient(base_url=server.base_url, max_retries=0) as client:
        with pytest.raises(AuthenticationError):
            client.auth.login(accounts.alice, "not-the-password")
        assert client.session_token is None


def test_workspace_lifecycle(server, accounts) -> None:
    alice = server.sdk(accounts.alice)
    bob = server.sdk(accounts.bob)
    carol = server.sdk(accounts.carol)
    with alice, bob, carol:
        assert alice.workspaces.list() == []
        ws_id = alice.workspaces.create(name="floods").string_value
        assert ws_id
        again = alice.workspaces.create(name="floods").string_value  # a taken name gets a suffix
        listed = {w.workspace_id: w for w in alice.workspaces.list()}
        assert set(listed) == {ws_id, again}
        assert listed[ws_id].name == "floods"
        assert listed[again].name != "floods" and listed[again].name.startswith("floods")
        assert listed[ws_id].owner_user_id == accounts.alice
        assert (server.data_dir / "files" / accounts.alice / ws_id).is_dir()

        got = alice.workspaces.get(ws_id)
        assert (got.workspace_id, got.name, got.user_id) == (ws_id, "floods", accounts.alice)
        assert got.api_url == server.base_url
        assert got.read_only is False

        renamed = alice.workspaces.rename(ws_id, "floods 2024")
        assert renamed.name == "floods 2024"
        assert alice.workspaces.get(ws_id).name == "floods 2024"
        assert alice.workspaces.name_by_id(ws_id) == "floods 2024"

        with pytest.raises(EmptyResultError):
            bob.workspaces.get(ws_id)  # not shared yet
        assert alice.workspaces.share_add(workspace=ws_id, user_id=accounts.bob).bool_value is True
        sharings = alice.workspaces.share_list(ws_id)
        assert [(s.user_id, s.owner_id, s.permissions) for s in sharings] == [(accounts.bob, accounts.alice, "read")]
        bob_view = {w.workspace_id: w for w in bob.workspaces.list()}
        assert set(bob_view) == {ws_id}
        assert bob_view[ws_id].read_only is True
        assert bob.workspaces.get(ws_id).read_only is True
        assert alice.workspaces.get(ws_id).shared_users == [accounts.bob]

        with pytest.raises(PermissionDeniedError):
            carol.workspaces.delete(ws_id)  # a stranger
        alice.workspaces.share_delete(workspace=ws_id, user_id=accounts.bob)
        assert alice.workspaces.share_list(ws_id) == []
        assert bob.workspaces.list() == []

        alice.workspaces.delete(ws_id)
        assert {w.workspace_id for w in alice.workspaces.list()} == {again}
        assert not (server.data_dir / "files" / accounts.alice / ws_id).exists()
        with pytest.raises(EmptyResultError):
            alice.workspaces.get(ws_id)
    # The server's own view, over plain HTTP.
    assert server.workspace_ids(accounts.alice) == {again}


def test_from_config_with_password(server, accounts, tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"USER": accounts.alice, "PASSWORD": accounts.password, "BASEURL": server.base_url,
                                  "WORKSPACE": "configured", "REQUESTSTIMEOUT": 30}))
    with WasdiClient.from_config(config, max_retries=0) as client:
        assert client.base_url == server.base_url
        assert client.config is not None and client.config.workspace == "configured"
        assert client.session_token
        assert client.auth.check_session().user_id == accounts.alice
        ws_id = client.workspaces.create(name="configured").string_value
    assert server.workspace_ids(accounts.alice) == {ws_id}


def test_from_config_with_session_from_environment(server, accounts, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    token = server.login(accounts.bob)
    monkeypatch.setenv("WASDI_WEBSERVER_URL", server.base_url + "/")
    monkeypatch.setenv("WASDI_USER", accounts.bob)
    monkeypatch.setenv("WASDI_SESSION_ID", token)
    config = tmp_path / "config.json"
    config.write_text("{}")
    with WasdiClient.from_config(config, max_retries=0) as client:
        assert client.base_url == server.base_url
        assert client.session_token == token
        assert client.auth.check_session().user_id == accounts.bob


def test_connection_refused_raises_api_connection_error() -> None:
    port = closed_port()
    with WasdiClient(base_url=f"http://127.0.0.1:{port}", max_retries=0, timeout=5) as client:
        with pytest.raises(APIConnectionError):
            client.utility.hello()
        with pytest.raises(APIConnectionError):
            client.auth.login("someone@example.org", "whatever-password")


def test_connection_refused_after_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(WasdiClient, "_backoff", staticmethod(lambda attempt: 0.0))
    client = WasdiClient(base_url=f"http://127.0.0.1:{closed_port()}", max_retries=2, timeout=5,
                         session_token="any")
    with client, pytest.raises(APIConnectionError):
        client.workspaces.list()


def test_server_that_went_away(servers, data_dir, accounts) -> None:
    server = servers.start(data_dir)
    client = server.sdk(accounts.alice)
    with client:
        assert client.workspaces.list() == []
        server.stop()
        with pytest.raises(APIConnectionError):
            client.workspaces.list()


def test_legacy_base_path(server, accounts) -> None:
    """The server also answers under the original server's ``/wasdiwebserver/rest`` prefix."""
    base = server.base_url + LEGACY
    with WasdiClient(base_url=base, max_retries=0) as client:
        assert client.utility.hello().string_value == "Hello Wasdi!!"
        client.auth.login(accounts.alice, accounts.password)
        ws_id = client.workspaces.create(name="legacy").string_value
        assert [w.workspace_id for w in client.workspaces.list()] == [ws_id]
        assert client.workspaces.get(ws_id).api_url == base  # apiUrl keeps the prefix the caller used
        client.workspaces.delete(ws_id)
    assert server.workspace_ids(accounts.alice) == set()
    assert httpx.get(server.url(LEGACY + "/wasdi/hello")).json()["stringValue"] == "Hello Wasdi!!"
    assert httpx.get(server.url("/wasdiwebserver/other/wasdi/hello")).status_code == 404
