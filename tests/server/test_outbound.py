"""The outbound guard: imports never reach loopback, private, link-local, multicast or unspecified
addresses unless an operator allows the host, judged on the address actually connected to, hop by hop."""

from __future__ import annotations

import http.server
import ipaddress
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from tests.conftest import Person, Server
from tests.server.geodata import folder, new_workspace, wait_process

from wasdi_server.providers.outbound import (
    OutboundPolicy,
    OutboundRefused,
    open_stream,
    redact,
    refusal_reason,
    resolve,
)


class Recorder:
    """A loopback web server that records the Host header of every request it gets."""

    def __init__(self) -> None:
        self.hosts: list[str] = []
        self.redirect_to: str | None = None
        recorder = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                recorder.hosts.append(self.headers.get("Host", ""))
                if recorder.redirect_to and self.path == "/hop":
                    self.send_response(302)
                    self.send_header("Location", recorder.redirect_to)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = b"secret-of-the-internal-service"
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    r = Recorder()
    yield r
    r.close()


@pytest.mark.parametrize("address", [
    "127.0.0.1", "127.9.9.9", "::1", "0.0.0.0", "::", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "10.1.2.3",
    "172.16.0.1", "192.168.1.1", "169.254.169.254", "fe80::1", "fc00::1", "224.0.0.1", "ff02::1",
    "100.64.0.1", "2002:7f00:1::1",
])
def test_non_public_addresses_are_refused(address: str) -> None:
    assert refusal_reason(ipaddress.ip_address(address)) is not None


@pytest.mark.parametrize("address", ["8.8.8.8", "151.101.1.69", "2a00:1450:4001:80b::200e"])
def test_public_addresses_pass(address: str) -> None:
    assert refusal_reason(ipaddress.ip_address(address)) is None


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "[::1]", "0.0.0.0", "[::ffff:127.0.0.1]"])
def test_loopback_names_and_literals_are_refused_without_an_allowance(host: str) -> None:
    with pytest.raises(OutboundRefused, match="import_allowed_hosts"):
        resolve(host.strip("[]"), 80, OutboundPolicy())


def test_an_operator_allows_hosts_by_name_address_or_network() -> None:
    assert resolve("localhost", 80, OutboundPolicy.from_hosts(["LOCALHOST"])) in {"127.0.0.1", "::1"}
    assert resolve("127.0.0.1", 80, OutboundPolicy.from_hosts(["127.0.0.1"])) == "127.0.0.1"
    assert resolve("127.5.6.7", 80, OutboundPolicy.from_hosts(["127.0.0.0/8"])) == "127.5.6.7"
    with pytest.raises(OutboundRefused):
        resolve("127.0.0.2", 80, OutboundPolicy.from_hosts(["127.0.0.1", "example.org"]))


def test_the_connection_goes_to_the_checked_address_with_the_original_host(recorder: Recorder) -> None:
    policy = OutboundPolicy.from_hosts(["localhost"])
    with httpx.Client() as client, open_stream(client, f"http://localhost:{recorder.port}/x?sig=1", policy) as r:
        assert r.read() == b"secret-of-the-internal-service"
    assert recorder.hosts == [f"localhost:{recorder.port}"]


def test_every_redirect_hop_is_judged_again(recorder: Recorder) -> None:
    # The first hop is an allowed name; the redirect aims at a loopback literal nobody allowed.
    recorder.redirect_to = f"http://127.0.0.1:{recorder.port}/target"
    policy = OutboundPolicy.from_hosts(["localhost"])
    with httpx.Client() as client, pytest.raises(OutboundRefused, match=r"127\.0\.0\.1"), \
            open_stream(client, f"http://localhost:{recorder.port}/hop", policy):
        pass
    assert recorder.hosts == [f"localhost:{recorder.port}"]  # the target was never asked


def test_only_http_and_https_are_fetched() -> None:
    with httpx.Client() as client:
        for url in ("ftp://example.org/a", "gopher://example.org/", "http:///nohost"):
            with pytest.raises(OutboundRefused), open_stream(client, url, OutboundPolicy()):
                pass


def test_redact_drops_queries_and_credentials() -> None:
    assert redact("https://user:pw@bucket.example.org/a/b.tif?X-Amz-Signature=abc") == \
        "https://bucket.example.org/a/b.tif?…"
    assert "pw" not in redact("http://user:pw@h/x") and redact("http://h/x") == "http://h/x"


def test_an_import_from_loopback_ends_error_with_a_sentence_in_its_log(server: Server, alice: Person,
                                                                      recorder: Recorder, tmp_path: Path) -> None:
    ws = new_workspace(server, alice, "ssrf")
    for url in (f"http://127.0.0.1:{recorder.port}/scene.tif?token=s3cr3t", f"http://localhost:{recorder.port}/a.tif",
                f"http://[::ffff:127.0.0.1]:{recorder.port}/b.tif", f"http://0.0.0.0:{recorder.port}/c.tif"):
        r = server.post("/filebuffer/download", alice, json={"fileUrl": url, "workspace": ws})
        assert r.json["boolValue"] is True
        pid = r.json["stringValue"]
        assert wait_process(server, pid)["status"] == "ERROR"
        log = server.get("/processors/logs/list", alice, processworkspace=pid).json
        assert any("refused" in row["logRow"] and "import_allowed_hosts" in row["logRow"] for row in log), log
        assert all("s3cr3t" not in row["logRow"] for row in log)
    assert recorder.hosts == []
    assert list(folder(server, ws).iterdir()) == []
    # Allowed by the operator: the same import goes through.
    server.services.settings.import_allowed_hosts = ["127.0.0.1"]
    r = server.post("/filebuffer/download", alice,
                    json={"fileUrl": f"http://127.0.0.1:{recorder.port}/scene.bin", "workspace": ws})
    assert wait_process(server, r.json["stringValue"])["status"] == "DONE"
    assert (folder(server, ws) / "scene.bin").read_bytes() == b"secret-of-the-internal-service"
