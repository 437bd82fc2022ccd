"""Shared fixtures: a real app over a temporary data directory, users with sessions, SDK clients."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from falcon import testing

from wasdi_sdk import WasdiClient
from wasdi_server import create_app, load_settings
from wasdi_server.app import WasdiApp
from wasdi_server.domains.accounts import passwords
from wasdi_server.providers.mail import MaildirMailer

from .postgres import pg_database, pg_url  # noqa: F401  (fixtures: a real PostgreSQL database)

PASSWORD = "correct-horse-1"


TESTS = Path(__file__).resolve().parent
SLOW = (
    "e2e/",  # real `wasdi-server serve` processes, started, stopped and killed
    "examples/",  # the example scripts and notebook against a real server
    "packaging/",  # fresh interpreters importing every module, scans of every source file
    "docs/test_tutorials.py",  # every tutorial against a server started as `make run` starts it
    "docs/test_site.py",  # the site built, then opened in Chromium
    # the server's tests that build app environments, start other programs or draw thousands of cases; together
    # 750 s of the 2,180 s tests/server took one after the other on a busy two-core machine (load 10)
    "server/test_apps.py",  # app environments really built (uv), apps really run
    "server/test_crash_atomic.py",  # a child process killed at each step of a multi-step change
    "server/test_access_matrix.py",  # 1,119 cells, with apps built and run once for the module
    "server/test_fuzz.py",  # hypothesis over every routed endpoint
    "server/test_app_engines.py",  # environments built with uv and with venv + pip
    "server/test_notebooks.py",  # JupyterLab servers in the box
    "server/test_box.py",  # bubblewrap boxes and their limits
    "server/test_rabbitmq.py",  # the machine's RabbitMQ, down, slow and back
    "server/test_broker.py",  # the built-in broker over a real socket
    "server/test_sftp_service.py",  # OpenSSH's sftp client against the SFTP service
    "server/test_stac_real.py",  # stac-fastapi-pgstac over pgstac, loaded for the module, and EODAG
    "server/test_wms_hostile.py",  # attackers' maps against the readers while a user's map is timed (15 s)
    "server/test_box_world.py",  # runs attacking the channels around the box, in bubblewrap worlds
    "server/test_box_proxy_index.py",  # a deploy through the proxy door from the package index
    "server/test_box_package_cache.py",  # hostile builds against other apps' caches
    "server/test_boxed_readers.py",  # hostile rasters against the boxed GDAL readers
    "server/test_notebook_proxy.py",  # a real boxed JupyterLab through the server's own address
)
"""Where the slow tests are (paths under tests/): ``make test`` runs them first, ``make test-quick`` does not run
them."""


ONE_WORKER = (
    "clients/test_shared_suite.py",  # a real server for the module: each of two workers started one (54 s each)
    "server/test_access_matrix.py",  # apps built and run once for the module
    "server/test_notebook_proxy.py",  # a boxed JupyterLab started for the module
    "examples/test_examples.py",  # a real server for the module, with the apps the examples deploy
    "e2e/test_nodes_e2e.py",  # a deployment of several node processes over PostgreSQL for the module
    "e2e/test_connection_storm.py",  # a real server for the module
    "docs/test_site.py",  # the site built once for the module (its xdist_group mark says the same)
    "server/test_stac_real.py",  # the real STAC server (a session fixture: one per worker that runs a test of it)
)
"""Modules whose tests share a costly module-scoped fixture: under ``make test``'s ``-n 4 --dist loadgroup`` each
is one unit of work (``pytest_xdist_make_scheduler`` below), so its tests run on one worker and the fixture is made
once, not once per worker."""

FIRST = (
    # the longest single tests and units of make test's run (--durations, -n 3, idle machine): 49 s, 33 s, 39 s (a
    # unit), 14 s, 13 s, then five of about 10 s and two of 9 s
    "e2e/test_readme_tour.py",
    "docs/test_tutorials.py",
    "server/test_stac_real.py",
    "e2e/test_terminal.py",
    "e2e/test_database_restart_e2e.py",
    "e2e/test_crash_cascades_e2e.py",
    "e2e/test_crash_e2e.py",
    # the longest files one after the other: 54 s, 47 s, 16 s
    "server/test_apps.py",
    "e2e/test_apps_e2e.py",
    "server/test_fuzz.py",
    "e2e/",
)
"""Slow paths that take longest, started first: a run ends when its last test does, and long tests started
last leave the other workers idle while one finishes them. (The modules of ``ONE_WORKER``, each one unit, are
handed out before any single test anyway.) The other tests keep the order they are collected in."""


@pytest.hookimpl(tryfirst=True)  # before ``-m`` selects by the marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Marks ``slow`` every test under a path of ``SLOW``, and puts the tests under a path of ``FIRST`` before the
    other slow tests, and the quick ones last: in ``make test``'s one run of both, the many short tests fill the
    end while the long ones, started first, finish."""
    rank: dict[int, int] = {}
    for item in items:
        where = Path(item.path).resolve().relative_to(TESTS).as_posix()
        if where.startswith(SLOW):
            item.add_marker(pytest.mark.slow)
            rank[id(item)] = next((n for n, path in enumerate(FIRST) if where.startswith(path)), len(FIRST))
    # A stable sort: each module's tests stay together and in their order; every worker sorts alike.
    items.sort(key=lambda item: rank.get(id(item), len(FIRST) + 1))


def one_worker_scope(nodeid: str, rootpath: Path) -> str | None:
    """The unit of work of a test of a module of ``ONE_WORKER`` (its module's node id), else ``None``."""
    module = nodeid.split("::", 1)[0]
    try:
        where = (rootpath / module).resolve().relative_to(TESTS).as_posix()
    except ValueError:
        return None
    return module if where in ONE_WORKER else None


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup``, with each module of ``ONE_WORKER`` one group.

    xdist groups by a suffix it writes into each test's node id, which pytest 9.2's node ids no longer take
    (pytest-dev/pytest-xdist#1386): its groups, ``xdist_group`` marks included, are silently ignored. The
    scheduler sees only node ids, so the modules are named here rather than marked."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class ModuleGroups(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return one_worker_scope(nodeid, config.rootpath) or super()._split_scope(nodeid)

    return ModuleGroups(config, log)


@pytest.fixture(autouse=True)
def _cheap_password_hashing(monkeypatch: pytest.MonkeyPatch) -> None:
    # The stored hash records its own cost, so a lower cost in tests changes speed, not behaviour.
    monkeypatch.setattr(passwords, "SCRYPT_N", 2**8)


@dataclass
class Person:
    user_id: str
    token: str

    @property
    def headers(self) -> dict[str, str]:
        return {"x-session-token": self.token}


class Server:
    """An app over a temporary data dir, with helpers to add users and make calls."""

    def __init__(self, data_dir: Path, **settings: Any) -> None:
        # No package index unless a test serves one: listings must not wait on an index this machine cannot reach.
        settings.setdefault("package_index_url", "")
        # No spare reader started ahead (about half a second of a processor each, and another after every read it
        # does) unless a test asks: tests/server/test_spare_readers.py does; the end-to-end servers keep the default.
        settings.setdefault("map_spare_readers", 0)
        self.settings = load_settings(data_dir=data_dir, environ={}, **settings)
        self.app: WasdiApp = create_app(self.settings)
        self.http = testing.TestClient(self.app)
        self.heard: list[dict[str, Any]] = []
        """Every message the server published, as its wire object (an in-process listener, from the start)."""
        self.services.messages.tap(lambda message: self.heard.append(message.wire()))

    def messages_of(self, workspace_id: str) -> list[dict[str, Any]]:
        """The messages published about one workspace, oldest first."""
        return [m for m in list(self.heard) if m["workspaceId"] == workspace_id]

    @property
    def services(self) -> Any:
        return self.app.services

    def add_user(self, user_id: str, *, admin: bool = False, trial: bool = True) -> Person:
        self.services.users.add(user_id, PASSWORD, admin=admin, name=user_id.split("@")[0].title(), surname="Test")
        if trial:
            self.services.subscriptions.create_trial(user_id)
        token = self.services.sessions.open(user_id)
        return Person(user_id, token)

    def get(self, path: str, who: Person | None = None, **params: Any) -> testing.Result:
        return self.http.simulate_get(path, params=params or None, headers=who.headers if who else None)

    def delete(self, path: str, who: Person | None = None, **params: Any) -> testing.Result:
        return self.http.simulate_delete(path, params=params or None, headers=who.headers if who else None)

    def put(self, path: str, who: Person | None = None, **params: Any) -> testing.Result:
        return self.http.simulate_put(path, params=params or None, headers=who.headers if who else None)

    def post(self, path: str, who: Person | None = None, *, json: Any = None, body: str | bytes | None = None,
             params: dict[str, Any] | None = None, content_type: str | None = None) -> testing.Result:
        headers = dict(who.headers) if who else {}
        if content_type:
            headers["Content-Type"] = content_type
        return self.http.simulate_post(path, params=params, headers=headers, json=json, body=body)

    def mails(self) -> list[Any]:
        self.services.users.later.drain()  # lost-password mails are written after the answer
        mailer = self.services.mailer
        assert isinstance(mailer, MaildirMailer)
        return mailer.messages()

    def sdk(self, who: Person | None = None, *, token: str | None = None) -> WasdiClient:
        """A client of the app, logged in as ``who``, or holding ``token`` (a session the server does not know,
        to see how it answers one), or neither (the SDK then refuses calls that need a session)."""
        transport = httpx.WSGITransport(app=self.app)
        return WasdiClient(base_url="http://testserver", session_token=who.token if who else token,
                           http_client=httpx.Client(transport=transport, base_url="http://testserver"),
                           max_retries=0)

    def close(self) -> None:
        self.services.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    s = Server(tmp_path / "data")
    yield s
    s.close()


@pytest.fixture
def alice(server: Server) -> Person:
    return server.add_user("alice@example.org")


@pytest.fixture
def bob(server: Server) -> Person:
    return server.add_user("bob@example.org")


@pytest.fixture
def carol(server: Server) -> Person:
    return server.add_user("carol@example.org")


@pytest.fixture
def writer(server: Server) -> Person:
    """A user the permission-matrix tests give write rights to."""
    return server.add_user("writer@example.org")


@pytest.fixture
def reader(server: Server) -> Person:
    """A user the permission-matrix tests give read rights to."""
    return server.add_user("reader@example.org")


@pytest.fixture
def stranger(server: Server) -> Person:
    """A user with no rights on anything."""
    return server.add_user("stranger@example.org")


@pytest.fixture
def admin(server: Server) -> Person:
    return server.add_user("root@example.org", admin=True)


@pytest.fixture(autouse=True)
def _no_disk_flush_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    # An fsync makes a write survive a power cut, which no test can cause; what a test can do, kill a process,
    # loses nothing the page cache holds. So in the test's own process a flush returns at once: each one costs
    # milliseconds to tens of milliseconds on a busy disk, and a new app writes ~140 files. The servers that the
    # end-to-end tests start are other processes, and flush for real.
    monkeypatch.setattr(os, "fsync", lambda fd: None)
    monkeypatch.setattr(os, "fdatasync", lambda fd: None)
