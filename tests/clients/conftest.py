"""One suite, four ways: the sync and the async client, each against the in-process app and a real server.

Test bodies are written once, as coroutines.  The async client is used as it is; the sync client is seen
through ``Awaited``, which makes each of its calls awaitable without changing what it does, so both clients
meet exactly the same calls, arguments, results and exceptions.

- in-process: the sync client over ``httpx.WSGITransport``, the async one over ``AsyncWSGIBridge`` (the same
  app object in worker threads; see ``bridge.py`` for why a bridge rather than a socket);
- real server: ``python -m wasdi_server serve`` on 127.0.0.1 and a free port (one per module, shared by both
  clients; tests use names of their own), with apps built offline from the test wheelhouse.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx
import pytest

from tests.app_support import HELLO_APP, app_zip, wheelhouse
from tests.clients.bridge import AsyncWSGIBridge
from tests.conftest import PASSWORD as IN_PROCESS_PASSWORD
from tests.conftest import Server
from tests.e2e.conftest import PASSWORD as E2E_PASSWORD
from tests.e2e.conftest import ServerFactory, add_user
from wasdi_sdk import AsyncWasdiClient, WasdiClient
from wasdi_sdk._resource import APIResource

ALICE = "alice@example.org"
BOB = "bob@example.org"
HELLO = "hello"
"""An app deployed on the real server (the README's hello app: a payload, a log line)."""


class Awaited:
    """A sync client (or one of its groups) whose calls are awaited like the async client's."""

    def __init__(self, target: Any) -> None:
        self._target = target

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if isinstance(value, APIResource):
            return Awaited(value)
        if callable(value) and not isinstance(value, type):
            async def call(*args: Any, **kwargs: Any) -> Any:
                return value(*args, **kwargs)
            return call
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "_target":
            object.__setattr__(self, name, value)
        else:
            setattr(self._target, name, value)

    async def __aenter__(self) -> Awaited:
        self._target.__enter__()
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        tb: TracebackType | None) -> None:
        self._target.__exit__(kind, error, tb)


@dataclass
class Target:
    """Where the clients connect, and how to make one for a user."""

    name: str
    base_url: str
    password: str
    tokens: dict[str, str]
    app: Any = None
    data_dir: Path | None = None

    def client(self, flavour: str, user: str | None) -> Any:
        token = self.tokens.get(user) if user else None
        if flavour == "sync":
            http = httpx.Client(transport=httpx.WSGITransport(app=self.app), base_url=self.base_url) \
                if self.app is not None else None
            return Awaited(WasdiClient(base_url=self.base_url, session_token=token, max_retries=0, timeout=60,
                                       http_client=http))
        ahttp = httpx.AsyncClient(transport=AsyncWSGIBridge(self.app), base_url=self.base_url) \
            if self.app is not None else None
        return AsyncWasdiClient(base_url=self.base_url, session_token=token, max_retries=0, timeout=60,
                                http_client=ahttp)


@pytest.fixture(scope="module")
def in_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    server = Server(tmp_path_factory.mktemp("clients") / "data")
    tokens = {user: server.add_user(user).token for user in (ALICE, BOB)}
    try:
        yield Target("in-process", "http://testserver", IN_PROCESS_PASSWORD, tokens, app=server.app,
                     data_dir=server.settings.data_dir)
    finally:
        server.close()


@pytest.fixture(scope="module")
def real_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    work = tmp_path_factory.mktemp("clients-real")
    data_dir = work / "data"
    for user in (ALICE, BOB):
        add_user(data_dir, user)
    config = work / "apps.toml"
    config.write_text(f"apps_find_links = [{json.dumps(str(wheelhouse()))}]\napps_offline = true\n")
    factory = ServerFactory(work)
    try:
        running = factory.start(data_dir, extra_args=("--config", str(config)))
        tokens = {user: running.login(user) for user in (ALICE, BOB)}
        with WasdiClient(base_url=running.base_url, session_token=tokens[ALICE], timeout=60) as sync:
            ws = str(sync.workspaces.create(name="apps").string_value)
            bundle = work / "hello.zip"
            bundle.write_bytes(app_zip({"myProcessor.py": HELLO_APP}))
            deploy = sync.processors.upload(bundle, name=HELLO, workspace=ws)
            sync.processes.wait(str(deploy.string_value), poll_interval=0.2, timeout=120)
        yield Target("real server", running.base_url, E2E_PASSWORD, tokens, data_dir=data_dir)
    finally:
        factory.close()


@pytest.fixture(params=["in-process", pytest.param("real server", marks=pytest.mark.e2e)])
def target(request: pytest.FixtureRequest) -> Target:
    return request.getfixturevalue("in_process" if request.param == "in-process" else "real_server")  # type: ignore[no-any-return]


@pytest.fixture(params=["sync", "async"])
def flavour(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


Connect = Callable[..., Any]


@pytest.fixture
def connect(target: Target, flavour: str) -> Connect:
    """``async with connect(ALICE) as client``: a client of the chosen flavour and target (``None``: no session)."""

    @asynccontextmanager
    async def open_client(user: str | None = ALICE) -> AsyncIterator[Any]:
        async with target.client(flavour, user) as client:
            yield client

    return open_client


@pytest.fixture
def unique() -> str:
    """A name no other test (nor the other client) uses on the shared server."""
    return uuid.uuid4().hex[:10]
