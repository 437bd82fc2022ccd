"""The presets of the public STAC catalogues (``earth-search``, ``planetary-computer``, ``copernicus-dataspace``):
each against its recorded answers (``stac_answers/``, written after the API's documentation), and each download
flow that needs credentials against a local server that demands the same authentication."""

from __future__ import annotations

import contextlib
import http.server
import json
import logging
import threading
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
from tests.conftest import Server
from tests.server.geodata import folder, new_workspace, wait_process
from tests.server.test_search import S2_JANUARY

from wasdi_server.providers.search import PRESETS, build_provider
from wasdi_server.providers.search.credentials import OidcPasswordToken, SasSigner
from wasdi_server.providers.search.stac import StacProvider
from wasdi_server.search_grammar import parse_query

ANSWERS = Path(__file__).parent / "stac_answers"
S2_2024 = S2_JANUARY.replace("2023-01-01", "2024-01-01").replace("2023-01-31", "2024-01-31")


def answers(preset: str) -> dict[str, Any]:
    return dict(json.loads((ANSWERS / f"{preset}.json").read_text()))


def preset_provider(preset: str, **options: Any) -> StacProvider:
    provider = build_provider({"code": preset.upper(), "preset": preset, **options}, Path("."))
    assert isinstance(provider, StacProvider)
    return provider


def replay(router: respx.MockRouter, url: str, recorded: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorded landing page and search answer at ``url``; the bodies the provider sent."""
    bodies: list[dict[str, Any]] = []
    router.get(f"{url}/").mock(return_value=httpx.Response(200, json=recorded["landing"]))

    def search(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return httpx.Response(200, json=recorded["search"])

    router.post(f"{url}/search").mock(side_effect=search)
    return bodies


# -- against the recorded answers -----------------------------------------------------------------------------------
def test_earth_search_preset() -> None:
    provider = preset_provider("earth-search")
    assert provider.url == "https://earth-search.aws.element84.com/v1" and provider.download_auth is None
    with respx.mock(assert_all_called=False) as router:
        bodies = replay(router, provider.url, answers("earth-search"))
        query = parse_query(S2_2024)
        assert provider.count(query) == 2
        results = provider.search(query, 0, 10)
    assert bodies[0]["collections"] == ["sentinel-2-l2a"] and "datetime" in bodies[0] and "bbox" in bodies[0]
    assert [r.title for r in results] == ["S2A_32TLR_20240108_0_L2A", "S2B_32TLR_20240113_0_L2A"]
    assert results[0].link is not None and results[0].link.endswith("/S2A_32TLR_20240108_0_L2A/TCI.tif")
    assert results[0].platform == "Sentinel-2" and results[0].properties["cloudcoverpercentage"] == "12.1"


def test_planetary_computer_preset() -> None:
    provider = preset_provider("planetary-computer")
    assert isinstance(provider.download_auth, SasSigner)
    recorded = answers("planetary-computer")
    with respx.mock(assert_all_called=False) as router:
        bodies = replay(router, provider.url, recorded)
        query = parse_query(S2_2024.replace("( platformname", "S2A_MSIL2A( platformname"))
        [result] = provider.search(query, 0, 10)
        assert provider.count(query) == 1  # no numberMatched: counted over a page
    assert bodies[0]["filter-lang"] == "cql2-json"  # the API has the Filter extension: the name went as like
    assert bodies[0]["filter"] == {"op": "like", "args": [{"property": "id"}, "%S2A\\_MSIL2A%"]}
    assert result.link is not None and result.link.startswith("https://sentinel2l2a01.blob.core.windows.net/")
    assert result.preview is not None and "preview.png" in result.preview


def test_copernicus_dataspace_preset() -> None:
    provider = preset_provider("copernicus-dataspace", username="someone@example.org", password="secret-1")
    assert isinstance(provider.download_auth, OidcPasswordToken)
    assert "secret-1" not in repr(provider.download_auth)
    recorded = answers("copernicus-dataspace")
    with respx.mock(assert_all_called=False) as router:
        replay(router, provider.url, recorded)
        [product] = provider.search(parse_query(S2_2024), 0, 10)
        tci = preset_provider("copernicus-dataspace", username="u", password="p", asset_keys=["TCI_10m"])
        [visual] = tci.search(parse_query(S2_2024), 0, 10)
    assert product.link == recorded["search"]["features"][0]["assets"]["Product"]["href"]
    # an s3:// asset is downloaded through its https alternate
    assert visual.link is not None and visual.link.startswith("https://download.dataspace.copernicus.eu/")


def test_preset_options_and_mistakes(monkeypatch: pytest.MonkeyPatch) -> None:
    assert preset_provider("earth-search", url="https://mirror.example.org/v1").url == "https://mirror.example.org/v1"
    with pytest.raises(ValueError, match="unknown preset 'sentinelhub'"):
        build_provider({"code": "X", "preset": "sentinelhub"}, Path("."))
    with pytest.raises(ValueError, match="need username, password"):
        build_provider({"code": "CDSE", "preset": "copernicus-dataspace"}, Path("."))
    with pytest.raises(ValueError, match="the environment variable CDSE_PASSWORD is empty"):
        build_provider({"code": "CDSE", "preset": "copernicus-dataspace", "username": "u",
                        "password_env": "CDSE_PASSWORD"}, Path("."))
    monkeypatch.setenv("CDSE_PASSWORD", "from-the-environment")
    provider = preset_provider("copernicus-dataspace", username="u", password_env="CDSE_PASSWORD")
    assert isinstance(provider.download_auth, OidcPasswordToken)
    assert set(PRESETS) == {"earth-search", "planetary-computer", "copernicus-dataspace"}


# -- the download flows, against a local server that demands the same authentication -------------------------------
@dataclass
class ProviderServer:
    """One local server standing for a provider: its STAC API (the recorded answer, links pointing here), its
    token or signing service, and its files, which it serves only to a request that authenticates as the real
    service demands."""

    recorded: dict[str, Any]
    url: str = ""
    grants: list[dict[str, str]] = field(default_factory=list)
    authorizations: list[str | None] = field(default_factory=list)
    elsewhere: list[str | None] = field(default_factory=list)
    """The Authorization header of each request that reached the other host (127.0.0.2)."""
    signs: int = 0
    expires_in: int = 600
    issued: int = 0

    def rewrite(self, href: str) -> str:
        parts = urllib.parse.urlsplit(href)
        return f"{self.url}/files{parts.path}"


@contextlib.contextmanager
def provider_server(recorded: dict[str, Any], *, mode: str) -> Iterator[ProviderServer]:
    state = ProviderServer(recorded)
    content = b"the product's bytes " * 5000

    class Elsewhere(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            state.elsewhere.append(self.headers.get("Authorization"))
            self.send_response(200)
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)

    other = http.server.ThreadingHTTPServer(("127.0.0.2", 0), Elsewhere)

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def reply(self, status: int, body: bytes, kind: str = "application/json", **headers: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.path == "/search":
                page = json.loads(json.dumps(state.recorded["search"]))
                for feature in page["features"]:
                    for asset in feature["assets"].values():
                        asset["href"] = state.rewrite(asset["href"])
                        asset.pop("alternate", None)
                self.reply(200, json.dumps(page).encode())
            elif self.path == "/token":  # the OpenID Connect token endpoint of Copernicus Data Space
                form = dict(urllib.parse.parse_qsl(raw.decode()))
                state.grants.append(form)
                good = form.get("client_id") == "cdse-public" and (
                    (form.get("grant_type") == "password" and form.get("password") == "right-password")
                    or (form.get("grant_type") == "refresh_token" and form.get("refresh_token") == "refresh-1"))
                if not good:
                    self.reply(401, b'{"error": "invalid_grant", "error_description": "Invalid user credentials"}')
                    return
                state.issued += 1
                self.reply(200, json.dumps({"access_token": f"access-{state.issued}", "expires_in": state.expires_in,
                                            "refresh_token": "refresh-1", "refresh_expires_in": 3600,
                                            "token_type": "Bearer"}).encode())
            else:
                self.reply(404, b"{}")

        def do_GET(self) -> None:
            path, _, query = self.path.partition("?")
            if path == "/":
                self.reply(200, json.dumps(state.recorded["landing"]).encode())
            elif path == "/sign":  # Planetary Computer's SAS API
                state.signs += 1
                href = dict(urllib.parse.parse_qsl(query))["href"]
                self.reply(200, json.dumps({"href": href + "?se=2099-01-01T00%3A00%3A00Z&sig=right-signature",
                                            "msft:expiry": "2099-01-01T00:00:00Z"}).encode())
            elif path.startswith("/files/"):
                state.authorizations.append(self.headers.get("Authorization"))
                if mode == "oidc" and self.headers.get("Authorization") != f"Bearer access-{state.issued}":
                    self.reply(401, b'{"detail": "Unauthorized"}')
                elif mode == "sas" and "sig=right-signature" not in query:
                    self.reply(403, b"<Error><Code>AuthenticationFailed</Code></Error>", "application/xml")
                elif path.endswith("/moved"):  # a redirect to another host: the token must not follow
                    self.reply(302, b"", Location=f"http://127.0.0.2:{other.server_address[1]}/elsewhere")
                else:
                    self.reply(200, content, "application/octet-stream")
            else:
                self.reply(404, b"{}")

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in (httpd, other)]
    for thread in threads:
        thread.start()
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        yield state
    finally:
        for s in (httpd, other):
            s.shutdown()
            s.server_close()


def serve_with(tmp_path: Path, entry: dict[str, Any]) -> Server:
    return Server(tmp_path / "data", search_providers=[entry], search_catalogues={"Sentinel-2": [entry["code"]]},
                  import_allowed_hosts=["127.0.0.1", "127.0.0.2"])


def test_copernicus_dataspace_downloads_with_a_refreshed_bearer_token(tmp_path: Path,
                                                                       caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with provider_server(answers("copernicus-dataspace"), mode="oidc") as remote:
        server = serve_with(tmp_path, {"code": "CDSE", "preset": "copernicus-dataspace", "url": remote.url,
                                       "token_url": f"{remote.url}/token", "auth_hosts": ["127.0.0.1"],
                                       "username": "someone@example.org", "password": "right-password"})
        try:
            alice = server.add_user("alice@example.org")
            ws = new_workspace(server, alice, "cdse")
            [found] = server.post("/search/querylist", alice, json=[S2_2024]).json
            r = server.post("/filebuffer/download", alice, json={"fileUrl": found["link"], "workspace": ws})
            process = wait_process(server, r.json["stringValue"])
            assert process["status"] == "DONE", process
            assert (folder(server, ws) / process["productName"]).stat().st_size == 100_000
            assert remote.authorizations == ["Bearer access-1"]
            assert [g["grant_type"] for g in remote.grants] == ["password"]
            # a token about to expire is refreshed with the refresh token, not the password
            auth = server.services.search.providers.get("CDSE").download_auth
            auth._access_until = 0.0
            # a link no search of this server handed out (as after a restart), provider AUTO as the official library
            # sends it: the credentials of the provider whose download hosts serve it
            moved = found["link"] + "/moved"
            r = server.post("/filebuffer/download", alice, json={"fileUrl": moved, "workspace": ws, "name": "m",
                                                                 "provider": "AUTO"})
            assert wait_process(server, r.json["stringValue"])["status"] == "DONE"
            assert [g["grant_type"] for g in remote.grants] == ["password", "refresh_token"]
            assert remote.authorizations[-1] == "Bearer access-2"
            assert remote.elsewhere == [None]  # the redirect to another host went without the token
        finally:
            server.close()
    logged = caplog.text + json.dumps([server.settings.data_dir.as_posix()])
    assert "right-password" not in logged and "access-1" not in logged and "refresh-1" not in logged


def test_copernicus_dataspace_wrong_credentials_fail_in_a_sentence(tmp_path: Path) -> None:
    with provider_server(answers("copernicus-dataspace"), mode="oidc") as remote:
        server = serve_with(tmp_path, {"code": "CDSE", "preset": "copernicus-dataspace", "url": remote.url,
                                       "token_url": f"{remote.url}/token", "auth_hosts": ["127.0.0.1"],
                                       "username": "someone@example.org", "password": "wrong-password"})
        try:
            alice = server.add_user("alice@example.org")
            ws = new_workspace(server, alice, "cdse")
            [found] = server.post("/search/querylist", alice, json=[S2_2024]).json
            r = server.post("/filebuffer/download", alice, json={"fileUrl": found["link"], "workspace": ws})
            process = wait_process(server, r.json["stringValue"])
            assert process["status"] == "ERROR"
            rows = [row["logRow"] for row in server.get("/processors/logs/list", alice,
                                                        processworkspace=r.json["stringValue"]).json]
            assert any("refused the credentials of someone@example.org (401: invalid_grant)" in row for row in rows)
            assert not any("wrong-password" in row for row in rows)
            assert remote.authorizations == []  # nothing was asked of the download server without a token
        finally:
            server.close()


def test_planetary_computer_downloads_through_signed_links(tmp_path: Path) -> None:
    with provider_server(answers("planetary-computer"), mode="sas") as remote:
        server = serve_with(tmp_path, {"code": "PC", "preset": "planetary-computer", "url": remote.url,
                                       "sign_url": f"{remote.url}/sign", "auth_hosts": ["127.0.0.1"]})
        try:
            alice = server.add_user("alice@example.org")
            ws = new_workspace(server, alice, "pc")
            [found] = server.post("/search/querylist", alice, json=[S2_2024]).json
            assert "sig=" not in found["link"]  # the link a user sees is not signed
            for name in ("first", "second"):
                r = server.post("/filebuffer/download", alice, json={"fileUrl": found["link"], "workspace": ws,
                                                                     "name": name})
                assert wait_process(server, r.json["stringValue"])["status"] == "DONE"
            assert remote.signs == 1  # the container's token was reused until it expires
            assert sorted(p.name for p in folder(server, ws).iterdir()) == ["first.tif", "second.tif"]
        finally:
            server.close()
