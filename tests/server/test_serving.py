"""When waitress cannot spill a large answer to its temporary file, the client is not left waiting."""

from __future__ import annotations

import errno
import http.client
import logging
import threading
from pathlib import Path

import pytest
from tests.conftest import Server
from waitress import buffers

from wasdi_server.serving import make_server


def no_space(self: object, *args: object) -> object:
    raise OSError(errno.ENOSPC, "No space left on device")


def test_a_failed_spill_closes_the_connection_and_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    app_server = Server(tmp_path / "data")
    monkeypatch.setattr(buffers.TempfileBasedBuffer, "newfile", no_space)
    # A tiny overflow limit: the 190 KB OpenAPI document must go through the temporary file.
    # poll() instead of select(): closing the socket at teardown must not break the loop's wait
    server = make_server(app_server.app, host="127.0.0.1", port=0, threads=2, outbuf_overflow=1024,
                         asyncore_use_poll=True)
    port = server.effective_port
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        with caplog.at_level(logging.ERROR, logger="wasdi_server"):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
            try:
                conn.request("GET", "/openapi.json")
                response = conn.getresponse()
                with pytest.raises((http.client.IncompleteRead, ConnectionError, http.client.HTTPException)):
                    data = response.read()
                    assert len(data) < int(response.headers.get("content-length") or 10**9)
                    raise http.client.IncompleteRead(data)
            except (ConnectionError, http.client.RemoteDisconnected):
                pass  # closed before any header: also an answer, not a wait
            finally:
                conn.close()
        assert any("could not buffer the answer" in r.getMessage() and "No space left" in r.getMessage()
                   for r in caplog.records)
    finally:
        server.close()
        thread.join(5)
        app_server.close()


def test_answers_that_fit_are_served_as_usual(tmp_path: Path) -> None:
    app_server = Server(tmp_path / "data")
    server = make_server(app_server.app, host="127.0.0.1", port=0, threads=2, asyncore_use_poll=True)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", server.effective_port, timeout=20)
        conn.request("GET", "/openapi.json")
        response = conn.getresponse()
        assert response.status == 200 and len(response.read()) > 100_000
        conn.close()
    finally:
        server.close()
        thread.join(5)
        app_server.close()
