"""The official ``wasdi`` library (PyPI 0.8.7.8, "waspy") against a real server over HTTP.

waspy keeps its whole state in module globals, so every test gets a freshly reloaded module (the
``waspy`` fixture of conftest.py: own ``HOME``, no outside ``WASDI_*`` variables); ``BASEPATH``
points into the temp dir so it writes nothing anywhere else.
Results are checked against the server's own state through the SDK, never only through waspy.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from wasdi_sdk import EmptyResultError

pytestmark = pytest.mark.e2e

LEGACY = "/wasdiwebserver/rest"


def write_config(tmp_path: Path, base_url: str | None, **keys: Any) -> Path:
    """A waspy ``config.json``; keys given as ``None`` are left out."""
    config = {"BASEURL": base_url, "BASEPATH": str(tmp_path / "waspy-data") + "/", "REQUESTSTIMEOUT": 30,
              "VERBOSE": False, **keys}
    path = tmp_path / "config.json"
    path.write_text(json.dumps({k: v for k, v in config.items() if v is not None}))
    return path


def listed(server, user_id: str) -> dict[str, Any]:
    """The server's own GET /ws/byuser for ``user_id``, by workspace id (through the SDK)."""
    with server.sdk(user_id) as sdk:
        return {w.workspace_id: w for w in sdk.workspaces.list()}


def test_hello(waspy, server, accounts, tmp_path: Path) -> None:
    assert waspy.init(str(write_config(tmp_path, server.base_url, USER=accounts.alice,
                                       PASSWORD=accounts.password))) is True
    assert json.loads(waspy.hello())["stringValue"] == "Hello Wasdi!!"


def test_workspace_lifecycle(waspy, server, accounts, tmp_path: Path) -> None:
    config = write_config(tmp_path, server.base_url, USER=accounts.alice, PASSWORD=accounts.password,
                          WORKSPACE="not yet there")
    assert waspy.init(str(config)) is True
    session = waspy.getSessionId()
    with server.sdk(None) as sdk:
        sdk.session_token = session
        assert sdk.auth.check_session().user_id == accounts.alice  # the session waspy got is a real one
    assert waspy.getActiveWorkspaceId() == ""  # the configured name does not exist (yet)

    ws_id = waspy.createWorkspace("floods 2024")
    assert ws_id
    on_server = listed(server, accounts.alice)
    assert set(on_server) == {ws_id}
    assert on_server[ws_id].name == "floods 2024"
    assert on_server[ws_id].owner_user_id == accounts.alice
    assert (server.data_dir / "files" / accounts.alice / ws_id).is_dir()
    assert waspy.getActiveWorkspaceId() == ws_id  # createWorkspace opens the new workspace
    assert waspy.getWorkspaceBaseUrl() == server.base_url  # apiUrl of /ws/getws
    assert Path(waspy.getSavePath()) == tmp_path / "waspy-data" / accounts.alice / ws_id
    assert Path(waspy.getSavePath()).is_dir()

    other_id = waspy.createWorkspace("other")
    workspaces = waspy.getWorkspaces()
    assert {w["workspaceId"] for w in workspaces} == set(listed(server, accounts.alice)) == {ws_id, other_id}
    by_id = {w["workspaceId"]: w for w in workspaces}
    assert by_id[ws_id]["workspaceName"] == "floods 2024"
    assert by_id[ws_id]["ownerUserId"] == accounts.alice
    assert by_id[ws_id]["sharedUsers"] == []
    assert waspy.getActiveWorkspaceId() == other_id

    assert waspy.openWorkspace("floods 2024") == ws_id
    assert waspy.getActiveWorkspaceId() == ws_id
    assert waspy.getWorkspaceIdByName("floods 2024") == ws_id
    assert waspy.getWorkspaceIdByName("no such workspace") == ""
    assert waspy.getWorkspaceOwnerByName("floods 2024") == accounts.alice
    assert waspy.getWorkspaceNameById(other_id) == "other"
    assert waspy.getWorkspaceOwnerByWsId(other_id) == accounts.alice
    assert waspy.getWorkspaceUrlByWsId(other_id) == server.base_url

    assert waspy.deleteWorkspace(other_id) is True
    assert set(listed(server, accounts.alice)) == {ws_id}
    assert not (server.data_dir / "files" / accounts.alice / other_id).exists()  # deletefile=True
    with server.sdk(accounts.alice) as sdk, pytest.raises(EmptyResultError):
        sdk.workspaces.get(other_id)
    assert waspy.getActiveWorkspaceId() == ws_id  # deleteWorkspace re-opens the previously active one
    assert waspy.getWorkspaceIdByName("other") == ""


def test_init_opens_the_configured_workspace_by_name(waspy, server, accounts, tmp_path: Path) -> None:
    with server.sdk(accounts.alice) as sdk:
        ws_id = sdk.workspaces.create(name="by name").string_value
        sdk.workspaces.create(name="decoy")
    config = write_config(tmp_path, server.base_url, USER=accounts.alice, PASSWORD=accounts.password,
                          WORKSPACE="by name", WORKSPACEID="ignored: WORKSPACE wins")
    assert waspy.init(str(config)) is True
    assert waspy.getActiveWorkspaceId() == ws_id
    assert waspy.getWorkspaceBaseUrl() == server.base_url
    assert (tmp_path / "waspy-data" / accounts.alice / ws_id).is_dir()


def test_init_opens_the_configured_workspace_by_id(waspy, server, accounts, tmp_path: Path) -> None:
    with server.sdk(accounts.alice) as sdk:
        sdk.workspaces.create(name="decoy")
        ws_id = sdk.workspaces.create(name="by id").string_value
    config = write_config(tmp_path, server.base_url, USER=accounts.alice, PASSWORD=accounts.password,
                          WORKSPACEID=ws_id)
    assert waspy.init(str(config)) is True
    assert waspy.getActiveWorkspaceId() == ws_id
    assert (tmp_path / "waspy-data" / accounts.alice / ws_id).is_dir()


def test_init_with_a_session_from_the_environment(waspy, server, accounts, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """How processors start on a node: WASDI_USER + WASDI_SESSION_ID (+ WASDI_WORKSPACE_ID), no password."""
    with server.sdk(accounts.alice) as sdk:
        ws_id = sdk.workspaces.create(name="processor ws").string_value
    token = server.login(accounts.alice)
    monkeypatch.setenv("WASDI_USER", accounts.alice)
    monkeypatch.setenv("WASDI_SESSION_ID", token)
    monkeypatch.setenv("WASDI_WORKSPACE_ID", ws_id)
    config = write_config(tmp_path, server.base_url)  # no USER, no PASSWORD
    assert waspy.init(str(config)) is True
    assert waspy.getUser() == accounts.alice
    assert waspy.getPassword() is None
    assert waspy.getSessionId() == token
    assert waspy.getActiveWorkspaceId() == ws_id
    assert waspy.getWorkspaceOwnerByWsId(ws_id) == accounts.alice
    assert {w["workspaceId"] for w in waspy.getWorkspaces()} == {ws_id}


def test_init_with_the_base_url_from_the_environment(waspy, server, accounts, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WASDI_WEBSERVER_URL", server.base_url + "/")
    monkeypatch.setenv("WASDI_USER", accounts.alice)
    monkeypatch.setenv("WASDI_SESSION_ID", server.login(accounts.alice))
    config = write_config(tmp_path, None)  # no BASEURL: the environment's (trailing slash stripped)
    assert waspy.init(str(config)) is True
    assert waspy.getBaseUrl() == server.base_url


def test_session_of_another_user_is_not_accepted(waspy, server, accounts, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WASDI_USER", accounts.bob)
    monkeypatch.setenv("WASDI_SESSION_ID", server.login(accounts.alice))
    assert waspy.init(str(write_config(tmp_path, server.base_url))) is False


def test_unknown_session_is_not_accepted(waspy, server, accounts, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WASDI_USER", accounts.alice)
    monkeypatch.setenv("WASDI_SESSION_ID", "not-a-session")
    assert waspy.init(str(write_config(tmp_path, server.base_url))) is False


def test_wrong_password_is_not_accepted(waspy, server, accounts, tmp_path: Path) -> None:
    config = write_config(tmp_path, server.base_url, USER=accounts.alice, PASSWORD="wrong-password")
    assert waspy.init(str(config)) is False
    assert waspy.getSessionId() in ("", "None", None)


def test_legacy_base_path(waspy, server, accounts, tmp_path: Path) -> None:
    """The URL of the original server (``.../wasdiwebserver/rest``) works, and apiUrl keeps it."""
    base = server.base_url + LEGACY
    config = write_config(tmp_path, base, USER=accounts.alice, PASSWORD=accounts.password)
    assert waspy.init(str(config)) is True
    assert json.loads(waspy.hello())["stringValue"] == "Hello Wasdi!!"
    ws_id = waspy.createWorkspace("legacy")
    assert ws_id in listed(server, accounts.alice)
    assert waspy.getWorkspaceUrlByWsId(ws_id) == base
    assert waspy.getWorkspaceBaseUrl() == base
    assert waspy.deleteWorkspace(ws_id) is True  # goes to {apiUrl}/ws/delete
    assert listed(server, accounts.alice) == {}


def test_shared_workspaces_and_leaving_one(waspy, server, accounts, tmp_path: Path) -> None:
    """A workspace shared with the caller is listed with its owner; deleting it only removes the sharing."""
    with server.sdk(accounts.alice) as sdk:
        ws_id = sdk.workspaces.create(name="team").string_value
        sdk.workspaces.share_add(workspace=ws_id, user_id=accounts.bob)
    config = write_config(tmp_path, server.base_url, USER=accounts.bob, PASSWORD=accounts.password,
                          WORKSPACE="team")
    assert waspy.init(str(config)) is True
    assert waspy.getActiveWorkspaceId() == ws_id
    assert waspy.getWorkspaceOwnerByName("team") == accounts.alice
    assert Path(waspy.getSavePath()) == tmp_path / "waspy-data" / accounts.alice / ws_id
    assert [w["sharedUsers"] for w in waspy.getWorkspaces()] == [[accounts.bob]]

    assert waspy.deleteWorkspace(ws_id) is True
    assert listed(server, accounts.bob) == {}
    on_server = listed(server, accounts.alice)
    assert set(on_server) == {ws_id}  # still there for its owner
    assert on_server[ws_id].shared_users == []
    assert (server.data_dir / "files" / accounts.alice / ws_id).is_dir()


def test_a_stranger_cannot_delete(waspy, server, accounts, tmp_path: Path) -> None:
    with server.sdk(accounts.alice) as sdk:
        ws_id = sdk.workspaces.create(name="private").string_value
    config = write_config(tmp_path, server.base_url, USER=accounts.carol, PASSWORD=accounts.password)
    assert waspy.init(str(config)) is True
    # waspy's deleteWorkspace re-opens the active workspace afterwards and crashes (TypeError) when
    # there is none, so give carol one first.
    own_id = waspy.createWorkspace("mine")
    assert [w["workspaceId"] for w in waspy.getWorkspaces()] == [own_id]
    assert waspy.getWorkspaceIdByName("private") == ""
    assert waspy.deleteWorkspace(ws_id) is False
    assert set(listed(server, accounts.alice)) == {ws_id}
    assert waspy.getActiveWorkspaceId() == own_id


def test_base_url_with_a_trailing_slash(waspy, server, accounts, tmp_path: Path) -> None:
    """waspy does not strip BASEURL from config.json, so every call goes to ``//...``: that must work too."""
    config = write_config(tmp_path, server.base_url + "/", USER=accounts.alice, PASSWORD=accounts.password)
    assert waspy.init(str(config)) is True
    ws_id = waspy.createWorkspace("slashed")
    assert set(listed(server, accounts.alice)) == {ws_id}
    assert waspy.getWorkspaceIdByName("slashed") == ws_id
    assert waspy.deleteWorkspace(ws_id) is True
    assert listed(server, accounts.alice) == {}


def test_copy_file_to_sftp_then_fetch_it_from_the_servers_sftp_service(waspy, server, accounts,
                                                                       tmp_path: Path) -> None:
    import asyncio
    import mailbox
    import re

    import asyncssh

    scene = tmp_path / "scene.txt"
    scene.write_bytes(b"a scene, more or less")
    with server.sdk(accounts.alice) as sdk:
        ws_id = str(sdk.workspaces.create(name="transfers").string_value)
        sdk.products.upload_without_ingest(ws_id, scene)
        sdk.auth.create_upload_account(email=accounts.alice)
    outbox = mailbox.Maildir(server.data_dir / "mail" / "outbox", create=False)
    password = re.findall(r"PASSWORD: (\S+)", "".join(m.get_payload() for m in outbox))[-1]
    found = re.search(r"SFTP service on 127\.0\.0\.1:(\d+)", server.output())
    assert found, server.output()

    assert waspy.init(str(write_config(tmp_path, server.base_url, USER=accounts.alice, PASSWORD=accounts.password,
                                       WORKSPACEID=ws_id))) is True
    assert waspy.copyFileToSftp("scene.txt") == "DONE"

    async def fetch() -> bytes:
        async with asyncssh.connect("127.0.0.1", int(found.group(1)), username=accounts.alice, password=password,
                                    known_hosts=None, client_keys=None, agent_path=None) as conn, \
                conn.start_sftp_client() as sftp, sftp.open("scene.txt", "rb") as handle:
            return bytes(await handle.read())

    assert asyncio.run(fetch()) == b"a scene, more or less"
