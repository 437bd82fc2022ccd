"""Names where people have names, and errors that say what happened (issue 31, items 4 and 5)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import respx
from tests.conftest import Person, Server

from wasdi_sdk import (
    APIError,
    AuthenticationError,
    ConflictError,
    NotFoundError,
    NotLoggedInError,
    PermissionDeniedError,
    WasdiClient,
    WasdiConfig,
)
from wasdi_sdk.catalog import endpoint
from wasdi_sdk.models import (
    ChangeUserPasswordViewModel,
    LoginInfo,
    OrganizationEditorViewModel,
    RegistrationInfoViewModel,
    UserViewModel,
)
from wasdi_sdk.models.events import BrokerAddress

BASE = "http://wasdi.test"


# -- before login ------------------------------------------------------------------------------------------
@respx.mock
def test_a_call_before_login_raises_not_logged_in_with_a_sentence_and_sends_nothing() -> None:
    listing = respx.get(f"{BASE}{endpoint('workspaces.list').path}").mock(return_value=httpx.Response(200, json=[]))
    creating = respx.get(f"{BASE}{endpoint('workspaces.create').path}").mock(
        return_value=httpx.Response(200, json=None))
    with WasdiClient(base_url=BASE) as client:
        with pytest.raises(NotLoggedInError, match=r"client\.workspaces\.list\(\) needs a session") as info:
            client.workspaces.list()
        assert "client.auth.login(user, password)" in str(info.value)
        with pytest.raises(NotLoggedInError, match=r"client\.workspaces\.create\(name='floods'\)"):
            client.workspaces.create(name="floods")
    assert not listing.called and not creating.called
    assert issubclass(NotLoggedInError, AuthenticationError)  # one hierarchy: the CLI's exit 4 catches it


@respx.mock
def test_public_calls_and_sessions_given_another_way_are_not_refused() -> None:
    respx.get(f"{BASE}/wasdi/hello").mock(return_value=httpx.Response(200, json={"stringValue": "hello"}))
    respx.get(f"{BASE}{endpoint('workspaces.list').path}").mock(return_value=httpx.Response(200, json=[]))
    with WasdiClient(base_url=BASE) as client:
        assert client.utility.hello().string_value == "hello"
        assert client.workspaces.list(extra_headers={"x-session-token": "s"}) == []
    with WasdiClient(base_url=BASE, default_headers={"X-Session-Token": "s"}) as client:
        assert client.workspaces.list() == []


# -- status_code ------------------------------------------------------------------------------------------
def test_http_errors_carry_status_code_and_status_as_its_alias(server: Server, alice: Person, bob: Person) -> None:
    owner, stranger = server.sdk(alice), server.sdk(bob)
    ws_id = owner.workspaces.create(name="Floods").string_value
    with pytest.raises(PermissionDeniedError) as info:
        stranger.workspaces.delete(ws_id)
    assert info.value.status_code == info.value.status == 403
    assert APIError("x", status=418).status_code == 418


# -- unknown ids and names -----------------------------------------------------------------------------------
def test_an_unknown_id_given_to_a_read_names_the_id_and_the_call(server: Server, alice: Person) -> None:
    with pytest.raises(NotFoundError) as info:
        server.sdk(alice).workspaces.get("no-such-id")
    assert "'no-such-id'" in str(info.value) and "client.workspaces.get(workspace='no-such-id')" in str(info.value)


def test_find_by_name_returns_the_one_or_names_what_was_asked(server: Server, alice: Person) -> None:
    client = server.sdk(alice)
    ws_id = client.workspaces.create(name="Turin 2024").string_value
    client.workspaces.create(name="Floods")
    assert client.workspaces.find("Turin 2024").workspace_id == ws_id
    with pytest.raises(NotFoundError, match=r"no workspace named 'Turin' \(client\.workspaces\.find\('Turin'\)\)"
                                            r"; the workspaces here: 'Floods', 'Turin 2024'"):
        client.workspaces.find("Turin")
    client.organizations.create(OrganizationEditorViewModel(name="ACME"))
    assert client.organizations.find("ACME").name == "ACME"
    for group, find in (("apps", client.apps.find), ("styles", client.styles.find),
                        ("workflows", client.workflows.find), ("organizations", client.organizations.find)):
        with pytest.raises(NotFoundError, match=rf"named 'nope' \(client\.{group}\.find\('nope'\)\)"):
            find("nope")


def test_a_refused_run_names_the_call(server: Server, alice: Person) -> None:
    client = server.sdk(alice)
    ws_id = client.workspaces.create(name="runs").string_value
    with pytest.raises(APIError, match=rf"Processors not found helo \(client\.apps\.run\(name='helo', "
                                       rf"workspace='{ws_id}'\)\)"):
        client.apps.run(name="helo", workspace=ws_id)


@respx.mock
def test_several_things_with_the_name_asked_is_a_conflict_listing_their_ids() -> None:
    respx.get(f"{BASE}{endpoint('workspaces.list').path}").mock(return_value=httpx.Response(200, json=[
        {"workspaceId": "w1", "workspaceName": "Floods", "ownerUserId": "a"},
        {"workspaceId": "w2", "workspaceName": "Floods", "ownerUserId": "b"}]))
    with WasdiClient(base_url=BASE, session_token="s") as client, \
            pytest.raises(ConflictError, match="give the id, one of w1, w2"):
        client.workspaces.find("Floods")


@respx.mock
def test_products_list_reads_a_workspace_name_as_that_workspace() -> None:
    products = respx.get(f"{BASE}{endpoint('products.list').path}")
    products.side_effect = lambda request: httpx.Response(200, json=[{"name": "scene", "fileName": "scene.tif"}]
                                                          if request.url.params["workspace"] == "w1" else [])
    respx.get(f"{BASE}{endpoint('workspaces.list').path}").mock(return_value=httpx.Response(200, json=[
        {"workspaceId": "w1", "workspaceName": "Turin 2024", "ownerUserId": "a"}]))
    respx.get(f"{BASE}{endpoint('workspaces.get').path}").mock(return_value=httpx.Response(200, json={}))
    with WasdiClient(base_url=BASE, session_token="s") as client:
        assert [p.file_name for p in client.products.list("Turin 2024")] == ["scene.tif"]
        assert [p.file_name for p in client.products.list("w1")] == ["scene.tif"]
        with pytest.raises(NotFoundError, match=r"no workspace 'Rome', by id or by name"):
            client.products.list("Rome")
        names = respx.get(f"{BASE}{endpoint('products.list_names').path}")
        names.side_effect = lambda request: httpx.Response(200, json=["scene.tif"] if request.url.params["workspace"]
                                                           == "w1" else [])
        assert client.products.list_names("Turin 2024") == ["scene.tif"]


def test_products_list_of_an_empty_workspace_is_an_empty_list(server: Server, alice: Person) -> None:
    client = server.sdk(alice)
    ws_id = client.workspaces.create(name="empty").string_value
    assert client.products.list(ws_id) == [] and client.products.list("empty") == []


# -- secrets ---------------------------------------------------------------------------------------------------
def test_secrets_are_in_no_repr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shown = [
        repr(WasdiConfig(user="me", password="pw-secret-1", session_id="sid-secret-2")),
        repr(UserViewModel(user_id="me", session_id="sid-secret-2")),
        repr(LoginInfo(user_id="me", user_password="pw-secret-1", google_id_token="tok-secret-3")),
        repr(RegistrationInfoViewModel(user_id="me", password="pw-secret-1", optional_validation_token="tok-secret-3")),
        repr(ChangeUserPasswordViewModel(current_password="pw-secret-1", new_password="pw-secret-1")),
        repr(BrokerAddress(url="ws://broker", login="guest", passcode="pw-secret-1", session_as_passcode=False)),
    ]
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"USER": "me", "PASSWORD": "pw-secret-1", "BASEURL": BASE,
                                  "SESSIONID": "sid-secret-2"}))
    monkeypatch.chdir(tmp_path)
    with WasdiClient.from_config(config, login=False) as client:
        shown += [repr(client.config), str(client.config)]
        assert client.config is not None and client.config.password == "pw-secret-1"  # still readable on purpose
    for text in shown:
        assert "pw-secret-1" not in text and "sid-secret-2" not in text and "tok-secret-3" not in text, text
    assert "user='me'" in shown[0]
