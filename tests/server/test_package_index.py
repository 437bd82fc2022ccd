"""/packageManager/listPackages asks a package index for the latest versions: a fake index on 127.0.0.1 serves PEP
691 JSON for some projects and PEP 503 HTML for others; the listing shows what is outdated, within its time bound,
from the cache the second time, and says when the index could not be asked (down, too slow, or a redirect the
outbound guard refuses)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import Person, Server
from tests.server.app_fixtures import make_app

from wasdi_server.providers.package_index import PackageIndex, is_newer, latest_of

JSON_PAGES: dict[str, dict[str, Any]] = {
    # PEP 700: the versions listed; 2.33.0rc1 is a pre-release, 2.32.1 was yanked
    "requests": {"meta": {"api-version": "1.1"}, "name": "requests",
                 "versions": ["2.0.0", "2.31.0", "2.32.1", "2.32.0", "2.33.0rc1"],
                 "files": [{"filename": f"requests-{v}-py3-none-any.whl", "yanked": v == "2.32.1"}
                           for v in ("2.0.0", "2.31.0", "2.32.1", "2.32.0", "2.33.0rc1")]},
    # PEP 691 1.0: only the files
    "numpy": {"meta": {"api-version": "1.0"}, "name": "numpy",
              "files": [{"filename": "numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.whl"},
                        {"filename": "numpy-2.1.0.tar.gz"}, {"filename": "numpy-2.0.2.tar.gz"}]},
}
HTML_PAGES = {
    "six": '<html><body><a href="six-1.16.0.tar.gz">six-1.16.0.tar.gz</a>'
           '<a href="six-1.17.0-py2.py3-none-any.whl" data-yanked="">six-1.17.0-py2.py3-none-any.whl</a>'
           '<a href="six-1.16.0-py2.py3-none-any.whl">six-1.16.0-py2.py3-none-any.whl</a></body></html>',
}


class FakeIndex:
    """A simple-API index on a free loopback port; ``delay`` slows every answer, ``redirect`` sends every page to
    another address."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.delay = 0.0
        self.redirect = ""
        index = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                index.asked.append(self.path)
                time.sleep(index.delay)
                project = self.path.strip("/").split("/")[-1]
                if index.redirect:
                    self.send_response(302)
                    self.send_header("Location", index.redirect + self.path)
                    self.end_headers()
                    return
                if project in JSON_PAGES and "vnd.pypi.simple.v1+json" in self.headers.get("Accept", ""):
                    self.answer(json.dumps(JSON_PAGES[project]).encode(), "application/vnd.pypi.simple.v1+json")
                elif project in HTML_PAGES:
                    self.answer(HTML_PAGES[project].encode(), "text/html")
                else:
                    self.send_error(404)

            def answer(self, body: bytes, media_type: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", media_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/simple/"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def index() -> Iterator[FakeIndex]:
    fake = FakeIndex()
    yield fake
    fake.close()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_versions_compare_as_releases() -> None:
    assert latest_of(["1.9", "1.10", "1.10rc1", "1.2.post3"]) == "1.10"
    assert is_newer("2.0", "1.99.9") and not is_newer("1.0.0", "1.0") and is_newer("1.0.post1", "1.0")
    assert not is_newer("2.0", "a-local-build") and not is_newer("2.0rc1", "1.0")


def test_the_index_gives_the_latest_final_release_json_and_html(index: FakeIndex) -> None:
    packages = PackageIndex(index.url, timeout=5, cache_seconds=60)
    assert packages.latest_versions(["requests", "NumPy", "six", "our-local-lib"]) == {
        "requests": "2.32.0", "numpy": "2.1.0", "six": "1.16.0", "our-local-lib": None}
    asked = len(index.asked)
    assert asked == 4
    assert packages.latest_versions(["requests", "six"]) == {"requests": "2.32.0", "six": "1.16.0"}
    assert len(index.asked) == asked  # from the cache


def test_a_dead_index_is_said_at_once_and_not_asked_again_at_once() -> None:
    packages = PackageIndex(f"http://127.0.0.1:{closed_port()}/simple/", timeout=5, cache_seconds=60)
    started = time.monotonic()
    assert packages.latest_versions(["requests"]) is None
    assert packages.latest_versions(["requests"]) is None
    assert time.monotonic() - started < 3


def test_a_slow_index_costs_the_time_bound_and_no_more(index: FakeIndex) -> None:
    index.delay = 3.0
    packages = PackageIndex(index.url, timeout=0.5, cache_seconds=60)
    started = time.monotonic()
    assert packages.latest_versions(["requests", "six", "numpy"]) is None
    assert time.monotonic() - started < 1.5


def test_the_index_is_reached_through_the_outbound_guard(index: FakeIndex) -> None:
    # The configured host is allowed; a redirect to another loopback address is not.
    index.redirect = "http://127.0.0.2:9"
    packages = PackageIndex(index.url, timeout=5, cache_seconds=60)
    assert packages.latest_versions(["requests"]) is None
    assert len(index.asked) == 1


def test_the_guard_refuses_an_index_on_a_private_address_it_was_not_given() -> None:
    packages = PackageIndex("http://127.0.0.1:9/simple/", timeout=2, cache_seconds=60)
    packages.policy = type(packages.policy)()  # as if the host had not been configured: nothing allowed
    assert packages.latest_versions(["requests"]) is None


PACKAGE_INFO = {
    "packageManager": {"name": "pip", "version": "24.0", "major": 24, "minor": 0, "patch": 0},
    "outdated": [], "all": [],
    "uptodate": [{"managerName": "pip", "packageName": name, "currentVersion": version, "currentBuild": "",
                  "latestVersion": version, "type": "pypi", "channel": ""}
                 for name, version in (("requests", "2.31.0"), ("six", "1.16.0"), ("our-local-lib", "0.1"))],
}


def listing(server: Server, who: Person) -> tuple[dict[str, Any], list[str], str | None]:
    """Latest version by package, the outdated packages, and the answer's warning."""
    r = server.get("/packageManager/listPackages", who, name="pinned")
    assert r.status_code == 200, r.text
    outdated = [p["packageName"] for p in r.json if is_newer(p.get("latestVersion") or "", p["currentVersion"])]
    return {p["packageName"]: p.get("latestVersion") for p in r.json}, outdated, r.headers.get("Warning")


def test_list_packages_reports_the_latest_versions(tmp_path: Path, index: FakeIndex) -> None:
    server = Server(tmp_path / "data", package_index_url=index.url, package_index_timeout_seconds=5)
    try:
        alice = server.add_user("alice@example.org")
        make_app(server, alice, "pinned", packageInfo=PACKAGE_INFO)
        latest, outdated, warning = listing(server, alice)
        assert latest == {"our-local-lib": None, "requests": "2.32.0", "six": "1.16.0"}
        assert outdated == ["requests"] and warning is None  # 2.31.0 is installed
        asked = len(index.asked)
        assert listing(server, alice)[0] == latest and len(index.asked) == asked  # cached
    finally:
        server.close()


def test_list_packages_says_when_the_index_could_not_be_asked(tmp_path: Path) -> None:
    server = Server(tmp_path / "data", package_index_url=f"http://127.0.0.1:{closed_port()}/simple/",
                    package_index_timeout_seconds=2)
    try:
        alice = server.add_user("alice@example.org")
        make_app(server, alice, "pinned", packageInfo=PACKAGE_INFO)
        latest, outdated, warning = listing(server, alice)
        assert latest == {"our-local-lib": None, "requests": None, "six": None} and outdated == []
        assert warning is not None and "could not be reached" in warning
    finally:
        server.close()
