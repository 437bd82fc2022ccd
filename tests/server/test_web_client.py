"""``--web-client DIR``: a built web client served at ``/`` from the API's origin (a stand-in site here)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests import environment
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


# The keys wasdiClient2's EnvService reads from ``window.__env`` (read once at start).  A missing or
# empty key falls back to a wasdi.net address there (``value || default``), so each must be set here.
CLIENT_KEYS = ("production", "url", "baseurl", "authUrl", "keycloakJs", "webstompUrl", "wmsUrl", "RABBIT_USER",
               "RABBIT_PASSWORD")

# A stand-in for the client's reader: the served script runs as the page's first script, then the
# globals are read the way the client reads them (``window.__env``, each key ``|| fallback``).
STAND_IN_READER = """
const window = {};
eval(require("fs").readFileSync(0, "utf8"));
const env = typeof window !== "undefined" && window.__env ? window.__env : {};
const seen = {};
for (const key of KEYS) { seen[key] = env[key] || "FELL_BACK_TO_WASDI_NET"; }
seen.production = env.production === "false" ? false : true;
seen.apiUrl = seen.url + "rest";
process.stdout.write(JSON.stringify(seen));
"""


def read_as_the_client(script: str) -> dict[str, object]:
    node = shutil.which("node")
    if node is None:
        environment.unavailable("node is not installed: the stand-in reader runs the served script in it")
    program = f"const KEYS = {json.dumps(CLIENT_KEYS)};" + STAND_IN_READER
    done = subprocess.run([node, "-e", program], input=script, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_environment_js_gives_the_client_this_origin_for_every_key(served: Server) -> None:
    env = served.http.simulate_get("/assets/environment.js", host="wasdi.example.org")
    assert env.status_code == 200 and env.headers["content-type"].startswith("application/javascript")
    assert env.headers["cache-control"] == "no-store"
    seen = read_as_the_client(env.text)
    assert seen["apiUrl"] == "http://wasdi.example.org/wasdiwebserver/rest"
    assert seen["production"] is True
    assert seen["authUrl"] == "http://wasdi.example.org/auth/realms/wasdi"
    assert seen["wmsUrl"] == "http://wasdi.example.org/wms?"
    # The built-in broker, on the API's port + 1 of the host the browser used (the cookie goes to any port).
    assert seen["webstompUrl"] == "ws://wasdi.example.org:8081/rabbit-stomp/ws"
    assert seen["RABBIT_USER"] == "wasdi-web-client" and seen["RABBIT_PASSWORD"] == "session-cookie"
    for key in CLIENT_KEYS[1:7]:
        assert str(seen[key]).startswith(("http://wasdi.example.org/", "ws://wasdi.example.org:")), key


def test_environment_js_names_rabbitmq_web_stomp_with_its_client_user(tmp_path: Path, site: Path) -> None:
    s = Server(tmp_path / "data", web_client_dir=str(site), broker_url="amqp://publisher:secret@mq.internal:5672/",
               webstomp_login="webclient", webstomp_passcode="read-only")
    try:
        seen = read_as_the_client(s.http.simulate_get("/assets/environment.js", host="wasdi.example.org").text)
    finally:
        s.close()
    assert seen["webstompUrl"] == "ws://mq.internal:15674/ws"
    assert seen["RABBIT_USER"] == "webclient" and seen["RABBIT_PASSWORD"] == "read-only"
    assert "secret" not in json.dumps(seen) and "publisher" not in json.dumps(seen)


def test_the_api_root_the_client_computes_answers(served: Server) -> None:
    seen = read_as_the_client(served.http.simulate_get("/assets/environment.js").text)
    path = str(seen["apiUrl"]).split("://", 1)[1].split("/", 1)[1]
    hello = served.http.simulate_get(f"/{path}/wasdi/hello")
    assert hello.status_code == 200 and hello.json["stringValue"] == "Hello Wasdi!!"


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
