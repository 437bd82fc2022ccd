"""Transport behaviour both clients share, against mocked answers (respx): retries where they are safe,
timeouts and unreachable servers as exceptions, and the three failure styles."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
import respx

from tests.clients.conftest import Awaited
from wasdi_sdk import (
    APIConnectionError,
    APITimeoutError,
    AsyncWasdiClient,
    AuthenticationError,
    EmptyResultError,
    ServerError,
    WasdiClient,
)
from wasdi_sdk._async._base_client import AsyncBaseClient
from wasdi_sdk._base_client import BaseClient

pytestmark = pytest.mark.anyio
BASE = "http://wasdi.test"


@pytest.fixture(autouse=True)
def _no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    for cls in (BaseClient, AsyncBaseClient):
        monkeypatch.setattr(cls, "_backoff", staticmethod(lambda attempt: 0.0))


@pytest.fixture(params=["sync", "async"])
def client(request: pytest.FixtureRequest) -> Any:
    if request.param == "sync":
        return Awaited(WasdiClient(base_url=BASE, session_token="t", max_retries=2))
    return AsyncWasdiClient(base_url=BASE, session_token="t", max_retries=2)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@respx.mock
async def test_an_idempotent_call_is_retried_on_503_and_on_a_dropped_connection(client: Any) -> None:
    route = respx.get(f"{BASE}/wasdi/hello").mock(side_effect=[
        httpx.Response(503), httpx.ConnectError("reset"), httpx.Response(200, json={"stringValue": "Hello Wasdi!!"})])
    assert (await client.utility.hello()).string_value == "Hello Wasdi!!"
    assert route.call_count == 3


@respx.mock
async def test_a_call_that_is_not_idempotent_is_sent_once(client: Any) -> None:
    route = respx.get(f"{BASE}/ws/create").mock(return_value=httpx.Response(503, json={"message": "busy"}))
    with pytest.raises(ServerError) as failed:
        await client.workspaces.create(name="x")
    assert failed.value.status == 503 and route.call_count == 1


@respx.mock
async def test_timeouts_and_unreachable_servers(client: Any) -> None:
    respx.get(f"{BASE}/wasdi/hello").mock(side_effect=httpx.ReadTimeout("slow"))
    with pytest.raises(APITimeoutError):
        await client.utility.hello()
    respx.get(f"{BASE}/ws/byuser").mock(side_effect=httpx.ConnectError("refused"))
    with pytest.raises(APIConnectionError):
        await client.workspaces.list()


@respx.mock
async def test_style_c_null_is_an_exception_and_an_empty_list_an_answer(client: Any) -> None:
    respx.get(f"{BASE}/ws/getws").mock(return_value=httpx.Response(200, content=b"null"))
    respx.get(f"{BASE}/ws/create").mock(return_value=httpx.Response(200, content=b"null"))
    respx.get(f"{BASE}/ws/byuser").mock(return_value=httpx.Response(200, json=[]))
    with pytest.raises(EmptyResultError, match=r"client\.workspaces\.create\(name='w'\) answered null"):
        await client.workspaces.create(name="w")
    with pytest.raises(AuthenticationError, match="session is not valid"):  # the contract's null here: a bad session
        await client.workspaces.get("w")
    assert await client.workspaces.list() == []
