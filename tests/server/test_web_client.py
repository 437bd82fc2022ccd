"""``--web-client DIR``: a built web client served at ``/`` from the API's origin (a stand-in site here)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.conftest import Server

from wasdi_server.cli import app as server_app


@pytest.fixture
def site(tmp_path: Path) -> Path:
    folder = tmp_path / "client"
    (folder / "assets").mkdir(parents=True)
    (folder / "index.html").write_text("<html><script src='assets/environment.js'></script>stand-in</html>")
    (folder / "main.js").write_text("console.log('client');")
    (folder / "assets" / "logo.svg").write_text("<svg/>")
    (tmp_path / "secret.txt").write_text("outside")
    return folder


@pytest.fixture
def served(tmp_path: Path, site: Path) -> Iterator[Server]:
    s = Server(tmp_path / "data", web_client_dir=str(site))
    yield s
    s.close()


def test_files_index_and_client_routes(served: Server) -> None:
    page = served.http.simulate_get("/", headers={"Accept": "text/html"})
    assert page.status_code == 200 and "stand-in" in page.text and page.headers["content-type"].startswith("text/html")
    script = served.http.simulate_get("/main.js")
    assert script.status_code == 200 and script.text == "console.log('client');"
    assert served.http.simulate_get("/assets/logo.svg").text == "<svg/>"
    route = served.http.simulate_get("/edit/some-workspace", headers={"Accept": "text/html,*/*"})
    assert route.status_code == 200 and "stand-in" in route.text
    assert served.http.simulate_get("/missing.js").status_code == 404
    assert served.http.simulate_get("/edit/x", headers={"Accept": "application/json"}).status_code == 404


def test_environment_js_points_at_this_origin(served: Server) -> None:
    env = served.http.simulate_get("/assets/environment.js", host="wasdi.example.org")
    assert env.status_code == 200 and env.headers["content-type"].startswith("application/javascript")
    assert '"url": "http://wasdi.example.org/wasdiwebserver/"' in env.text
    assert '"authUrl": ""' in env.text


def test_the_api_wins_and_nothing_outside_is_served(served: Server) -> None:
    hello = served.http.simulate_get("/wasdi/hello")
    assert hello.json["stringValue"] == "Hello Wasdi!!"
    login = served.http.simulate_post("/wasdiwebserver/rest/auth/login", json={"userId": "x", "userPassword": "y"})
    assert login.status_code in (200, 401) and login.headers["content-type"].startswith("application/json")
    for path in ("/../secret.txt", "/%2e%2e/secret.txt", "/assets/../../secret.txt"):
        assert served.http.simulate_get(path).status_code == 404, path
    assert served.http.simulate_post("/main.js").status_code in (404, 405)


def test_without_the_setting_there_is_no_site(server: Server) -> None:
    assert server.http.simulate_get("/", headers={"Accept": "text/html"}).status_code == 404


def test_a_folder_without_a_client_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"index\.html"):
        Server(tmp_path / "data", web_client_dir=str(tmp_path))


def test_serve_takes_the_folder(site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    import wasdi_server.cli

    seen = {}
    monkeypatch.setattr(wasdi_server.cli, "serve", lambda settings, init_admin=False: seen.update(s=settings))
    result = CliRunner().invoke(server_app, ["serve", "--data-dir", str(tmp_path / "d"), "--web-client", str(site)])
    assert result.exit_code == 0, result.output
    assert seen["s"].web_client_dir == str(site.resolve())
