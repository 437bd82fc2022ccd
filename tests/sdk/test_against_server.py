"""The SDK against the real app in-process (httpx.WSGITransport): contract behaviour end to end."""

from __future__ import annotations

import pytest
from tests.conftest import PASSWORD, Person, Server

from wasdi_sdk import (
    AuthenticationError,
    BadRequestError,
    EmptyResultError,
    NotModifiedError,
    PermissionDeniedError,
)
from wasdi_sdk.catalog import Style


def test_login_workspace_cycle_logout(server: Server, alice: Person) -> None:
    with server.sdk() as client:
        user = client.auth.login("alice@example.org", PASSWORD)
        assert user.user_id == "alice@example.org" and client.session_token == user.session_id
        assert client.auth.check_session().user_id == "alice@example.org"
        ws_id = client.workspaces.create(name="Floods").string_value
        assert ws_id
        listed = client.workspaces.list()
        assert [w.name for w in listed] == ["Floods"] and listed[0].read_only is False
        ws = client.workspaces.get(ws_id)
        assert ws.name == "Floods" and ws.api_url == "http://testserver"
        assert client.workspaces.rename(ws_id, "Droughts").name == "Droughts"
        assert client.workspaces.name_by_id(ws_id) == "Droughts"
        client.workspaces.delete(ws_id)
        assert client.workspaces.list() == []
        client.auth.logout()
        with pytest.raises(AuthenticationError):
            client.workspaces.name_by_id(ws_id)


def test_wrong_password(server: Server, alice: Person) -> None:
    with server.sdk() as client, pytest.raises(AuthenticationError) as info:
        client.auth.login("alice@example.org", "not-the-password")
    assert info.value.style is Style.MARKER
    assert info.value.message == "wrong user or password" and str(info.value).startswith("wrong user or password")


def test_sharing_errors_by_meaning(server: Server, alice: Person, bob: Person) -> None:
    owner = server.sdk(alice)
    stranger = server.sdk(bob)
    ws_id = owner.workspaces.create(name="s").string_value
    assert ws_id
    with pytest.raises(BadRequestError) as self_share:
        owner.workspaces.share_add(workspace=ws_id, user_id=alice.user_id)
    assert self_share.value.code == "MSG_ERROR_SHARING_WITH_ONESELF"
    assert self_share.value.message == "you cannot share something with yourself"
    with pytest.raises(PermissionDeniedError) as denied:
        stranger.workspaces.delete(ws_id)
    assert denied.value.style is Style.STATUS
    # a sentence for people, the server's code for programs
    assert denied.value.message.startswith("you have no access to this workspace")
    assert denied.value.code == "MSG_ERROR_NO_ACCESS_RIGHTS_OBJECT_WORKSPACE" and "MSG_" not in denied.value.message
    with pytest.raises(EmptyResultError):
        stranger.workspaces.get(ws_id)
    assert stranger.workspaces.share_list(ws_id) == []
    assert owner.workspaces.share_add(workspace=ws_id, user_id=bob.user_id, rights="write").string_value == "Done"
    assert stranger.workspaces.get(ws_id).read_only is False
    assert [s.user_id for s in owner.workspaces.share_list(ws_id)] == [bob.user_id]
    owner.workspaces.share_delete(workspace=ws_id, user_id=bob.user_id)
    with pytest.raises(PermissionDeniedError) as marker:
        stranger.workspaces.share_add(workspace=ws_id, user_id="carol@example.org")
    assert marker.value.style is Style.MARKER


def test_register_twice_and_feedback(server: Server, alice: Person) -> None:
    client = server.sdk()
    assert client.auth.register(user_id="new@example.org", password="long-enough").bool_value is True
    with pytest.raises(NotModifiedError):
        client.auth.register(user_id="new@example.org", password="long-enough")
    authed = server.sdk(alice)
    assert authed.utility.feedback(title="Bug", message="It broke").int_value == 201
    assert any(m["Subject"] == "WASDI feedback: Bug" for m in server.mails())
    assert client.utility.hello().string_value == "Hello Wasdi!!"


def test_profile_and_upload_account(server: Server, alice: Person) -> None:
    client = server.sdk(alice)
    assert client.auth.edit_user_details(name="Al").name == "Al"
    client.auth.change_password(current_password=PASSWORD, new_password="another-password")
    client.auth.create_upload_account(email="alice@example.org")
    assert client.auth.exists_upload_account() is True
    assert client.auth.list_upload_files() == []
    client.auth.remove_upload_account()
    assert client.auth.exists_upload_account() is False
    assert client.auth.skin().tab_title == "Wasdi 2.0"
    assert any(m.indexvalue == "Sentinel-1" for m in client.auth.config().missions or [])
    assert client.auth.private_missions() == []
