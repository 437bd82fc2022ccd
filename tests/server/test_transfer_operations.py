"""Transfers as queued operations: FTPUPLOAD to real FTP, FTPS and SFTP servers started on loopback, and
COPYTOSFTP into the caller's transfer folder (fetched back over SFTP).

Every export goes through the outbound guard: the test server allows 127.0.0.1 (``import_allowed_hosts``),
as an operator would allow a host of their network; without that, loopback is refused.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import Person, Server
from tests.server.geodata import folder, messages, new_workspace, share, wait_process
from tests.server.transfer_support import (
    FtpServer,
    connect,
    create_account,
    run,
    self_signed_certificate,
    sftp_service,
)

from wasdi_sdk import BadRequestError, NotFoundError
from wasdi_sdk.models.file_buffer import FtpTransferViewModel
from wasdi_server.launcher import OPERATIONS, OperationContext, OperationFailed

FTP_USER, FTP_PASSWORD = "exporter", "ftp-Secret-Word-9"


@pytest.fixture
def allowing(tmp_path: Path) -> Iterator[Server]:
    """A server whose operator allows exports to 127.0.0.1 (where the test's FTP servers listen)."""
    s = Server(tmp_path / "data", import_allowed_hosts=["127.0.0.1"])
    yield s
    s.close()


def workspace_with_file(server: Server, who: Person, name: str = "scene.tif", size: int = 3 * 1024 * 1024) -> str:
    ws = new_workspace(server, who)
    path = folder(server, ws) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bytes(range(256)) * (size // 256))
    return ws


def export(server: Server, who: Person | None, ws: str, body: dict[str, Any] | None) -> dict[str, Any]:
    r = server.http.simulate_put("/catalog/upload/ftp", params={"workspace": ws}, json=body,
                                 headers=who.headers if who else None)
    assert r.status_code == 200
    return dict(r.json)


def as_the_web_client(port: int, *, sftp: bool = False, **more: Any) -> dict[str, Any]:
    """The web client's body (its field names, the port as text), plus the file name it should send."""
    return {"user": FTP_USER, "password": FTP_PASSWORD, "serverIp": "127.0.0.1", "port": str(port), "sftp": sftp,
            "destinationAbsolutePath": "out/2024", "fileName": "scene.tif", **more}


def assert_password_nowhere(server: Server, who: Person, ws: str, process_id: str, password: str,
                            caplog: pytest.LogCaptureFixture) -> None:
    record = server.services.processes.get(process_id)
    seen = [json.dumps(record), server.get("/process/byws", who, workspace=ws).text,
            server.get("/process/paramsbyid", who, procws=process_id).text,
            server.get("/processors/logs/list", who, processworkspace=process_id).text,
            json.dumps(server.messages_of(ws)), caplog.text]
    assert all(password not in text for text in seen)
    assert server.services.transfers.secrets.count() == 0  # dropped when the operation ended


def test_ftp_export_as_the_web_client_sends_it(allowing: Server, tmp_path: Path,
                                                caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    alice = allowing.add_user("alice@example.org")
    ws = workspace_with_file(allowing, alice)
    home = tmp_path / "ftp-home"
    home.mkdir()
    with FtpServer(home, FTP_USER, FTP_PASSWORD) as ftp:
        answer = export(allowing, alice, ws, as_the_web_client(ftp.port))
        assert answer["boolValue"] is True and answer["intValue"] == 200
        record = wait_process(allowing, answer["stringValue"])
    assert record["status"] == "DONE", record["payload"]
    assert record["operationType"] == "FTPUPLOAD" and record["progressPerc"] == 100
    sent = home / "out" / "2024" / "scene.tif"
    assert sent.read_bytes() == (folder(allowing, ws) / "scene.tif").read_bytes()
    assert record["payload"] == f"scene.tif sent to 127.0.0.1:{ftp.port} (out/2024)"
    assert [m["messageResult"] for m in messages(allowing, ws, "FTPUPLOAD")] == ["OK"]
    log = allowing.get("/processors/logs/list", alice, processworkspace=record["processObjId"]).text
    assert "sending scene.tif (3.0 MB) to FTP server 127.0.0.1" in log
    assert_password_nowhere(allowing, alice, ws, record["processObjId"], FTP_PASSWORD, caplog)


def test_ftps_export_needs_a_certificate_it_trusts(allowing: Server, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    alice = allowing.add_user("alice@example.org")
    ws = workspace_with_file(allowing, alice)
    home = tmp_path / "ftps-home"
    home.mkdir()
    certificate = self_signed_certificate(tmp_path)
    with FtpServer(home, FTP_USER, FTP_PASSWORD, certificate) as ftps:
        body = as_the_web_client(ftps.port, ftps=True, destinationAbsolutePath="")
        untrusted = wait_process(allowing, export(allowing, alice, ws, body)["stringValue"])
        assert untrusted["status"] == "ERROR"
        assert "TLS with FTPS server 127.0.0.1" in untrusted["payload"] and "certificate" in untrusted["payload"]
        assert not (home / "scene.tif").exists()
        monkeypatch.setenv("SSL_CERT_FILE", str(certificate))  # the operator trusts the server's CA
        trusted = wait_process(allowing, export(allowing, alice, ws, body)["stringValue"])
    assert trusted["status"] == "DONE", trusted["payload"]
    assert (home / "scene.tif").stat().st_size == 3 * 1024 * 1024  # the server refuses anything but TLS


def test_a_refused_login_ends_in_error_with_the_servers_reply(allowing: Server, tmp_path: Path) -> None:
    alice = allowing.add_user("alice@example.org")
    ws = workspace_with_file(allowing, alice)
    home = tmp_path / "ftp-home"
    home.mkdir()
    with FtpServer(home, FTP_USER, FTP_PASSWORD) as ftp:
        pid = export(allowing, alice, ws, as_the_web_client(ftp.port, password="wrong"))["stringValue"]
        record = wait_process(allowing, pid)
    assert record["status"] == "ERROR"
    assert record["payload"].startswith(f"FTP server 127.0.0.1:{ftp.port} refused while logging in: "
                                        'the server answered "530 Authentication failed."')
    assert [m["messageResult"] for m in messages(allowing, ws, "FTPUPLOAD")] == ["KO"]


def test_loopback_is_refused_unless_the_operator_allows_it(server: Server, alice: Person, tmp_path: Path) -> None:
    ws = workspace_with_file(server, alice)
    home = tmp_path / "ftp-home"
    home.mkdir()
    with FtpServer(home, FTP_USER, FTP_PASSWORD) as ftp:
        record = wait_process(server, export(server, alice, ws, as_the_web_client(ftp.port))["stringValue"])
    assert record["status"] == "ERROR"
    assert "exports to 127.0.0.1 are refused: it is a loopback address" in record["payload"]
    assert "import_allowed_hosts" in record["payload"]
    assert list(home.rglob("*")) == []


def test_sftp_export_the_web_clients_default(allowing: Server, tmp_path: Path) -> None:
    alice = allowing.add_user("alice@example.org")
    bob = allowing.add_user("bob@example.org")
    ws = workspace_with_file(allowing, alice)
    password = create_account(allowing, bob)
    with sftp_service(allowing) as service:
        body = as_the_web_client(service.port, sftp=True, user=bob.user_id, password=password)
        record = wait_process(allowing, export(allowing, alice, ws, body)["stringValue"])
        wrong = wait_process(allowing, export(allowing, alice, ws, {**body, "password": "nope"})["stringValue"])
    assert record["status"] == "DONE", record["payload"]
    assert (allowing.services.uploads.folder(bob.user_id) / "out" / "2024" / "scene.tif").stat().st_size == 3 << 20
    assert wrong["status"] == "ERROR" and "refused the login of bob@example.org" in wrong["payload"]


@pytest.mark.parametrize(("who", "change", "status", "says"), [
    ("alice", None, 400, "the transfer is missing"),
    ("alice", {"fileName": None}, 400, "fileName"),
    ("alice", {"fileName": "missing.tif"}, 404, "missing.tif"),
    ("alice", {"fileName": "../x.tif"}, 400, "fileName"),
    ("alice", {"serverIp": "ftp://example.org/x"}, 400, "server"),
    ("alice", {"serverIp": ""}, 400, "server"),
    ("alice", {"port": 70000}, 400, "port"),
    ("alice", {"sftp": True, "user": ""}, 400, "user"),
    ("alice", {"destinationAbsolutePath": "a\nb"}, 400, "destinationAbsolutePath"),
    ("reader", {}, 403, ""),
    ("stranger", {}, 403, ""),
    (None, {}, 401, ""),
])
def test_bad_exports_are_refused_at_once(server: Server, alice: Person, reader: Person, stranger: Person,
                                         who: str | None, change: dict[str, Any] | None, status: int,
                                         says: str) -> None:
    ws = workspace_with_file(server, alice)
    share(server, alice, ws, reader, "read")
    caller = {"alice": alice, "reader": reader, "stranger": stranger, None: None}[who]
    body = None if change is None else {k: v for k, v in {**as_the_web_client(21), **change}.items() if v is not None}
    answer = export(server, caller, ws, body)
    assert answer["boolValue"] is False and answer["intValue"] == status
    assert says in (answer.get("stringValue") or "")
    assert server.services.processes.by_workspace(ws) == []
    assert server.services.transfers.secrets.count() == 0


def test_an_export_whose_password_was_lost_says_so(server: Server, alice: Person) -> None:
    ws = workspace_with_file(server, alice)
    server.services.launcher.stop()  # queued, not started: as when the server stops before it runs
    pid = export(server, alice, ws, as_the_web_client(21))["stringValue"]
    assert server.services.transfers.password_of(pid) == FTP_PASSWORD
    server.services.transfers.secrets.delete(pid)
    with pytest.raises(OperationFailed, match="password is gone"):
        OPERATIONS["FTPUPLOAD"](OperationContext(server.services.processes.get(pid), server.services))


def test_secrets_of_finished_or_deleted_exports_are_dropped_at_start(server: Server, alice: Person) -> None:
    ws = workspace_with_file(server, alice)
    transfers = server.services.transfers
    transfers.secrets.insert({"processObjId": "gone", "password": "p"})
    server.services.launcher.stop()
    queued = export(server, alice, ws, as_the_web_client(21))["stringValue"]
    assert transfers.forget_finished() == 1
    assert transfers.password_of(queued) == FTP_PASSWORD and transfers.password_of("gone") is None


# -- COPYTOSFTP --------------------------------------------------------------------------------------------
def test_copy_to_sftp_then_fetch_it_over_sftp(server: Server, alice: Person) -> None:
    ws = workspace_with_file(server, alice, "S1_scene.dim", size=4096)
    data = folder(server, ws) / "S1_scene.data"
    data.mkdir()
    (data / "band.img").write_bytes(b"band")
    password = create_account(server, alice)
    client = server.sdk(alice)
    started = client.files.copy_to_sftp("S1_scene.dim", ws, path="exports/s1")
    done = client.wait_for_process(str(started.string_value), poll_interval=0.05, timeout=30)
    assert done.status == "DONE"
    assert [m["payload"] for m in messages(server, ws, "COPYTOSFTP")] == ["exports/s1/S1_scene.dim"]

    async def fetch(service: object) -> tuple[bytes, bytes]:
        async with connect(service, alice.user_id, password) as conn, conn.start_sftp_client() as sftp:  # type: ignore[arg-type]
            async with sftp.open("/exports/s1/S1_scene.dim", "rb") as handle:
                product = await handle.read()
            async with sftp.open("/exports/s1/S1_scene.data/band.img", "rb") as handle:
                return product, await handle.read()

    with sftp_service(server) as service:
        product, band = run(fetch(service))
    assert product == (folder(server, ws) / "S1_scene.dim").read_bytes() and band == b"band"


def test_copy_to_sftp_refusals(server: Server, alice: Person, reader: Person, bob: Person) -> None:
    ws = workspace_with_file(server, alice)
    share(server, alice, ws, reader, "read")
    client = server.sdk(alice)
    with pytest.raises(BadRequestError, match="create one first"):
        client.files.copy_to_sftp("scene.tif", ws)
    create_account(server, alice)
    with pytest.raises(NotFoundError):
        client.files.copy_to_sftp("missing.tif", ws)
    for path in ("../up", "bob@example.org;x", "a/../../b"):
        with pytest.raises(BadRequestError):
            client.files.copy_to_sftp("scene.tif", ws, path=path)
    for who, status in ((reader, 403), (bob, 403), (None, 401)):
        r = server.get("/catalog/copytosfpt", who, file="scene.tif", workspace=ws)
        assert r.json["boolValue"] is False and r.json["intValue"] == status
    assert server.services.processes.by_workspace(ws) == []


def test_copy_to_sftp_respects_the_quota(tmp_path: Path) -> None:
    s = Server(tmp_path / "data", sftp_quota_bytes=2 * 1024 * 1024)
    try:
        alice = s.add_user("alice@example.org")
        ws = workspace_with_file(s, alice)
        create_account(s, alice)
        answer = s.get("/catalog/copytosfpt", alice, file="scene.tif", workspace=ws).json
        record = wait_process(s, answer["stringValue"])
        assert record["status"] == "ERROR" and "does not fit in your transfer folder" in record["payload"]
        assert s.get("/auth/upload/list", alice).json == []
    finally:
        s.close()


def test_the_sdk_model_hides_the_password() -> None:
    transfer = FtpTransferViewModel(server="h", password="s3cret-value", file_name="f")
    assert "s3cret-value" not in repr(transfer)
    assert transfer.model_dump(by_alias=True, exclude_none=True)["password"] == "s3cret-value"
