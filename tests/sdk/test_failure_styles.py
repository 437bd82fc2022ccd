"""The SDK's transport behaviour against mocked answers (respx): every failure style to its exception."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import respx

from wasdi_sdk import (
    APIConnectionError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    EmptyResultError,
    NoContentError,
    NotFoundError,
    NotModifiedError,
    PermissionDeniedError,
    ServerError,
    UnexpectedResponseError,
    UnknownIdError,
    WasdiClient,
    load_config,
)
from wasdi_sdk.catalog import Style
from wasdi_sdk.models import WorkspaceEditorViewModel

BASE = "http://wasdi.test/rest"


def on_the_main_node() -> respx.Route:
    """``/ws/getws`` of a workspace of the main node: the SDK asks it once before a workspace's first call."""
    return respx.get(f"{BASE}/ws/getws").mock(return_value=httpx.Response(200, json={
        "workspaceId": "w1", "name": "w", "nodeCode": "wasdi", "apiUrl": BASE}))


@pytest.fixture
def client() -> WasdiClient:
    c = WasdiClient(base_url=BASE, session_token="tok", max_retries=2)
    c._backoff = staticmethod(lambda attempt: 0.0)  # type: ignore[method-assign]
    return c


# -- style A: HTTP status ----------------------------------------------------------------------------
@pytest.mark.parametrize("status,cls", [
    (400, BadRequestError), (401, AuthenticationError), (403, PermissionDeniedError), (404, NotFoundError),
])
@respx.mock
def test_status_codes_map_to_exceptions(client: WasdiClient, status: int, cls: type) -> None:
    on_the_main_node()
    respx.delete(f"{BASE}/ws/delete").mock(return_value=httpx.Response(status, json={"message": "nope"}))
    with pytest.raises(cls) as info:
        client.workspaces.delete("w1")
    assert info.value.style is Style.STATUS and info.value.status == status and info.value.message == "nope"
    assert info.value.endpoint == "workspaces.delete"


@respx.mock
def test_server_error_is_not_retried_for_a_delete(client: WasdiClient) -> None:
    on_the_main_node()
    route = respx.delete(f"{BASE}/ws/delete").mock(return_value=httpx.Response(500, json={"message": "boom"}))
    with pytest.raises(ServerError):
        client.workspaces.delete("w1")
    assert route.call_count == 1


@respx.mock
def test_idempotent_reads_are_retried_on_503(client: WasdiClient) -> None:
    route = respx.get(f"{BASE}/ws/wsnamebyid").mock(side_effect=[httpx.Response(503), httpx.Response(200, text="ok")])
    assert client.workspaces.name_by_id("w1") == "ok"
    assert route.call_count == 2


@respx.mock
def test_posts_are_not_retried(client: WasdiClient) -> None:
    route = respx.post(f"{BASE}/auth/login").mock(return_value=httpx.Response(503))
    with pytest.raises(ServerError):
        client.auth.login("a@b.org", "pw")
    assert route.call_count == 1


@respx.mock
def test_connection_errors_retry_then_raise(client: WasdiClient) -> None:
    route = respx.get(f"{BASE}/ws/byuser").mock(side_effect=httpx.ConnectError("refused"))
    with pytest.raises(APIConnectionError):
        client.workspaces.list()
    assert route.call_count == 3


@respx.mock
def test_timeouts_raise_timeout_error(client: WasdiClient) -> None:
    respx.get(f"{BASE}/ws/byuser").mock(side_effect=httpx.ReadTimeout("slow"))
    with pytest.raises(APITimeoutError):
        client.workspaces.list()
    assert issubclass(APITimeoutError, APIConnectionError)


@respx.mock
def test_304_and_204(client: WasdiClient) -> None:
    respx.post(f"{BASE}/auth/register").mock(return_value=httpx.Response(304))
    with pytest.raises(NotModifiedError):
        client.auth.register(user_id="a@b.org", password="long-enough")
    respx.get(f"{BASE}/ws/wsnamebyid").mock(return_value=httpx.Response(204))
    with pytest.raises(NoContentError):
        client.workspaces.name_by_id("w")


# -- style B: marker in a 200 body ------------------------------------------------------------------
@respx.mock
def test_failed_login_is_authentication_error(client: WasdiClient) -> None:
    respx.post(f"{BASE}/auth/login").mock(return_value=httpx.Response(200, json={"userId": "", "boolValue": False}))
    with pytest.raises(AuthenticationError) as info:
        client.auth.login("a@b.org", "bad")
    assert info.value.style is Style.MARKER and info.value.status == 401
    assert client.session_token == "tok"


@pytest.mark.parametrize("code,cls", [(400, BadRequestError), (401, AuthenticationError),
                                      (403, PermissionDeniedError), (500, ServerError)])
@respx.mock
def test_marker_int_value_maps_to_exceptions(client: WasdiClient, code: int, cls: type) -> None:
    respx.put(f"{BASE}/ws/share/add").mock(return_value=httpx.Response(
        200, json={"boolValue": False, "intValue": code, "stringValue": "MSG_X"}))
    with pytest.raises(cls) as info:
        client.workspaces.share_add(workspace="w", user_id="b@b.org")
    assert info.value.style is Style.MARKER and info.value.status == code and info.value.code == "MSG_X" \
        and "MSG_" not in info.value.message and info.value.message


@respx.mock
def test_marker_success_is_returned(client: WasdiClient) -> None:
    respx.put(f"{BASE}/ws/share/add").mock(return_value=httpx.Response(
        200, json={"boolValue": True, "intValue": 200, "stringValue": "Already Shared."}))
    assert client.workspaces.share_add(workspace="w", user_id="b").string_value == "Already Shared."


@respx.mock
def test_capitalised_primitive_spelling_is_read(client: WasdiClient) -> None:
    respx.post(f"{BASE}/wasdi/feedback").mock(return_value=httpx.Response(
        200, json={"BoolValue": False, "IntValue": 404, "StringValue": "missing"}))
    with pytest.raises(NotFoundError):
        client.utility.feedback(title="", message="")
    respx.get(f"{BASE}/wasdi/hello").mock(return_value=httpx.Response(200, json={"StringValue": "Hi"}))
    assert client.utility.hello().string_value == "Hi"


@respx.mock
def test_register_status_equals_int_value(client: WasdiClient) -> None:
    respx.post(f"{BASE}/auth/register").mock(return_value=httpx.Response(
        400, json={"boolValue": False, "intValue": 400, "stringValue": "userId is required"}))
    with pytest.raises(BadRequestError) as info:
        client.auth.register(user_id="", password="x")
    assert info.value.message == "userId is required" and info.value.style is Style.MARKER


# -- style C: null, empty, default model -------------------------------------------------------------
@pytest.mark.parametrize("response", [httpx.Response(200, json=None), httpx.Response(200, text=""),
                                      httpx.Response(204)])
@respx.mock
def test_a_null_where_the_contract_says_the_session_is_invalid_is_an_authentication_error(
        client: WasdiClient, response: httpx.Response) -> None:
    respx.get(f"{BASE}/ws/getws").mock(return_value=response)
    with pytest.raises(AuthenticationError, match=r"client\.workspaces\.get\(workspace='w'\)") as info:
        client.workspaces.get("w")
    assert info.value.style is Style.EMPTY


@respx.mock
def test_an_unknown_id_given_to_a_read_is_not_found_naming_the_id_and_the_call(client: WasdiClient) -> None:
    respx.get(f"{BASE}/ws/getws").mock(return_value=httpx.Response(200, json={}))
    with pytest.raises(NotFoundError) as info:
        client.workspaces.get("no-such-id")
    assert isinstance(info.value, UnknownIdError) and isinstance(info.value, EmptyResultError)
    assert "'no-such-id'" in info.value.message and "client.workspaces.get(workspace='no-such-id')" in str(info.value)
    assert info.value.style is Style.EMPTY


@respx.mock
def test_an_empty_result_names_the_call_and_its_arguments(client: WasdiClient) -> None:
    respx.get(f"{BASE}/ws/create").mock(return_value=httpx.Response(200, json=None))
    with pytest.raises(EmptyResultError, match=r"client\.workspaces\.create\(name='floods'\) answered null"):
        client.workspaces.create(name="floods")


@respx.mock
def test_empty_list_is_an_answer_not_an_error(client: WasdiClient) -> None:
    respx.get(f"{BASE}/ws/byuser").mock(return_value=httpx.Response(200, json=[]))
    assert client.workspaces.list() == []


@respx.mock
def test_invalid_session_on_checksession(client: WasdiClient) -> None:
    respx.get(f"{BASE}/auth/checksession").mock(return_value=httpx.Response(200, json={"userId": ""}))
    with pytest.raises(AuthenticationError) as info:
        client.auth.check_session()
    assert info.value.style is Style.EMPTY


@respx.mock
def test_non_json_body_is_unexpected(client: WasdiClient) -> None:
    respx.get(f"{BASE}/ws/byuser").mock(return_value=httpx.Response(200, text="<html>proxy error</html>"))
    with pytest.raises(UnexpectedResponseError):
        client.workspaces.list()


# -- requests ------------------------------------------------------------------------------------------
@respx.mock
def test_request_shape(client: WasdiClient) -> None:
    on_the_main_node()
    route = respx.delete(f"{BASE}/ws/delete").mock(return_value=httpx.Response(200))
    client.workspaces.delete("w 1", deletefile=False, extra_headers={"x-extra": "1"}, extra_query={"future": "y"})
    request = route.calls.last.request
    assert request.headers["x-session-token"] == "tok" and request.headers["x-extra"] == "1"
    assert dict(request.url.params) == {"workspace": "w 1", "deletefile": "false", "future": "y"}


@respx.mock
def test_public_endpoints_do_not_send_the_session(client: WasdiClient) -> None:
    route = respx.get(f"{BASE}/wasdi/hello").mock(return_value=httpx.Response(200, json={"stringValue": "x"}))
    client.utility.hello()
    assert "x-session-token" not in route.calls.last.request.headers


@respx.mock
def test_login_keeps_the_session_and_logout_forgets_it(client: WasdiClient) -> None:
    respx.post(f"{BASE}/auth/login").mock(return_value=httpx.Response(200, json={"userId": "a", "sessionId": "S2"}))
    respx.get(f"{BASE}/auth/logout").mock(return_value=httpx.Response(200, json={"boolValue": True}))
    client.auth.login("a", "pw")
    assert client.session_token == "S2"
    body = json.loads(respx.calls.last.request.content)
    assert body == {"userId": "a", "userPassword": "pw"}
    client.auth.logout()
    assert client.session_token is None


@respx.mock
def test_models_parse_wire_names(client: WasdiClient) -> None:
    respx.get(f"{BASE}/ws/getws").mock(return_value=httpx.Response(200, json={
        "workspaceId": "w", "name": "n", "apiUrl": "http://node", "public": True, "newField": 1}))
    ws = client.workspaces.get("w")
    assert isinstance(ws, WorkspaceEditorViewModel)
    assert ws.api_url == "http://node" and ws.is_public is True and ws.model_extra == {"newField": 1}


@respx.mock
def test_with_raw_response(client: WasdiClient) -> None:
    respx.get(f"{BASE}/ws/wsnamebyid").mock(return_value=httpx.Response(200, text="name", headers={"x-a": "b"}))
    raw = client.workspaces.with_raw_response.name_by_id("w")
    assert raw.status_code == 200 and raw.headers["x-a"] == "b" and raw.parse() == "name"


def test_missing_required_parameter_fails_before_sending(client: WasdiClient) -> None:
    with pytest.raises(BadRequestError):
        client.call("workspaces.get", query={})


# -- configuration -------------------------------------------------------------------------------------
def test_config_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = {"WASDI_WEBSERVER_URL": "http://env/rest/", "WASDI_USER": "env@x.org", "WASDI_SESSION_ID": "envsession",
           "WASDI_WORKSPACE_ID": "envws"}
    monkeypatch.chdir(tmp_path)
    assert load_config(None, environ=env).base_url == "http://env/rest"
    assert load_config(None, environ={}).base_url == "https://www.wasdi.net/wasdiwebserver/rest"
    config_file = tmp_path / "config.json"
    config_file.write_text(json.dumps({"USER": "file@x.org", "PASSWORD": "pw", "BASEURL": "http://file/rest",
                                       "WORKSPACE": "floods", "REQUESTSTIMEOUT": 30}))
    cfg = load_config(config_file, environ=env)
    assert cfg.base_url == "http://file/rest" and cfg.user == "file@x.org" and cfg.password == "pw"
    assert cfg.session_id == "envsession" and cfg.workspace == "floods" and cfg.workspace_id == "envws"
    assert cfg.timeout == 30.0
    only_env = tmp_path / "empty.json"
    only_env.write_text("{}")
    cfg = load_config(only_env, environ=env)
    assert cfg.base_url == "http://env/rest" and cfg.user == "env@x.org"
    with pytest.raises(FileNotFoundError):
        load_config(tmp_path / "missing.json", environ=env)


@respx.mock
def test_from_config_logs_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("WASDI_WEBSERVER_URL", "WASDI_SESSION_ID", "WASDI_USER", "WASDI_WORKSPACE_ID"):
        monkeypatch.delenv(var, raising=False)
    config_file = tmp_path / "config.json"
    config_file.write_text(json.dumps({"USER": "a@x.org", "PASSWORD": "pw", "BASEURL": BASE}))
    respx.post(f"{BASE}/auth/login").mock(return_value=httpx.Response(200, json={"userId": "a@x.org",
                                                                                "sessionId": "S"}))
    with WasdiClient.from_config(config_file) as client:
        assert client.session_token == "S" and client.config is not None and client.config.user == "a@x.org"


# -- several nodes: calls go where the workspace is ----------------------------------------------------------
NODE = "http://node2.test/rest"


@respx.mock
def test_a_workspaces_calls_and_its_processes_calls_go_to_its_node(client: WasdiClient) -> None:
    getws = respx.get(f"{BASE}/ws/getws").mock(return_value=httpx.Response(200, json={
        "workspaceId": "w2", "name": "w", "nodeCode": "node2", "apiUrl": NODE + "/"}))
    run = respx.post(f"{NODE}/processors/run").mock(return_value=httpx.Response(200, json={
        "processorId": "a", "name": "hello", "processingIdentifier": "p1", "status": "CREATED"}))
    status = respx.get(f"{NODE}/process/getstatusbyid").mock(return_value=httpx.Response(200, text="DONE"))
    on_main = respx.get(f"{BASE}/process/getstatusbyid").mock(return_value=httpx.Response(200, text="ERROR"))
    listing = respx.get(f"{BASE}/product/byws").mock(return_value=httpx.Response(200, json=[{"fileName": "a.tif"}]))
    assert client.processors.run(name="hello", workspace="w2").process_id == "p1"
    assert client.processes.get_status("p1") == "DONE"  # learnt from the node's answer
    assert client.processes.get_status("unknown") == "ERROR"  # a process the client never saw: the base URL
    client.products.list("w2")  # answered by any node from the shared store: the base URL
    client.processors.run(name="hello", workspace="w2")
    assert getws.call_count == 1 and run.call_count == 2 and status.call_count == 1 and on_main.call_count == 1
    assert listing.call_count == 1
