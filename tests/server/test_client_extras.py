"""The web client's calls beyond the contract: DELETE /node, GET /filebuffer/styles, PUT /catalog/upload/ingest
and the SDK's console calls.  The transfers (SFTP, FTP export, copy to SFTP) and notebooks have their own
tests: test_sftp_service.py, test_transfer_operations.py and test_notebooks.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.conftest import Person, Server
from tests.server.geodata import folder, make_geotiff, new_workspace, share, wait_process


# -- DELETE /node ---------------------------------------------------------------------------------------
def add_node(server: Server, admin: Person, code: str = "n1") -> None:
    r = server.post("/node", admin, json={"nodeCode": code, "apiUrl": f"http://{code}:9000/rest"})
    assert r.status_code == 200, r.text


def test_admin_deletes_a_node_and_its_sharings(server: Server, admin: Person, alice: Person) -> None:
    add_node(server, admin)
    assert server.put("/node/share/add", admin, node="n1", userId=alice.user_id).json["boolValue"] is True
    r = server.delete("/node", admin, node="n1")
    assert r.status_code == 200
    assert server.get("/node", admin, node="n1").status_code == 400
    assert server.services.sharing.sharings.find(resourceType="node") == []
    assert server.delete("/node", admin, node="n1").status_code == 400  # already gone


@pytest.mark.parametrize(("who", "node", "status"), [
    ("alice", "n1", 401), ("admin", "", 400), ("admin", "nope", 400), ("admin", "wasdi", 400), (None, "n1", 401),
])
def test_node_delete_refusals(server: Server, admin: Person, alice: Person, who: str | None, node: str,
                              status: int) -> None:
    add_node(server, admin)
    caller = {"alice": alice, "admin": admin, None: None}[who]
    r = server.delete("/node", caller, node=node) if node else server.delete("/node", caller)
    assert r.status_code == status and r.json["message"]
    assert server.services.nodes.nodes.get("n1") is not None


# -- GET /filebuffer/styles -----------------------------------------------------------------------------
SLD = (b'<?xml version="1.0"?><StyledLayerDescriptor version="1.0.0"><NamedLayer><UserStyle><FeatureTypeStyle>'
       b'<Rule><RasterSymbolizer><ColorMap><ColorMapEntry color="#000000" quantity="0"/></ColorMap>'
       b"</RasterSymbolizer></Rule></FeatureTypeStyle></UserStyle></NamedLayer></StyledLayerDescriptor>")


def test_filebuffer_styles_are_the_styles_a_user_may_apply(server: Server, alice: Person, bob: Person) -> None:
    client = server.sdk(alice)
    for name, public in (("mine", False), ("everyone", True)):
        client.styles.upload(SLD, name=name, public=public)
    assert [s.name for s in server.sdk(bob).file_buffer.styles()] == ["everyone"]
    assert [s.name for s in client.file_buffer.styles()] == ["everyone", "mine"]
    assert server.get("/filebuffer/styles", alice).json == server.get("/styles/getbyuser", alice).json
    assert server.get("/filebuffer/styles").json == []


# -- PUT /catalog/upload/ingest -------------------------------------------------------------------------
@pytest.fixture
def uploaded(server: Server, alice: Person, tmp_path: Path) -> Path:
    account = server.services.uploads.folder(alice.user_id)
    account.mkdir(parents=True)
    return make_geotiff(account / "sftp.tif")


def test_ingest_from_the_upload_account(server: Server, alice: Person, uploaded: Path) -> None:
    ws = new_workspace(server, alice)
    r = server.put("/catalog/upload/ingest", alice, file="sftp.tif", workspace=ws)
    assert r.status_code == 200 and r.json["boolValue"] is True
    assert wait_process(server, r.json["stringValue"])["status"] == "DONE"
    assert server.services.products.get(ws, "sftp.tif") is not None
    assert not uploaded.exists() and (folder(server, ws) / "sftp.tif").is_file()


@pytest.mark.parametrize(("who", "file", "status"), [
    ("alice", "missing.tif", 404), ("alice", "../sftp.tif", 400), ("alice", ".hidden", 400),
    ("stranger", "sftp.tif", 403), ("reader", "sftp.tif", 403), (None, "sftp.tif", 401),
])
def test_ingest_from_the_upload_account_refusals(server: Server, alice: Person, reader: Person, stranger: Person,
                                                 uploaded: Path, who: str | None, file: str, status: int) -> None:
    ws = new_workspace(server, alice)
    share(server, alice, ws, reader, "read")
    caller = {"alice": alice, "reader": reader, "stranger": stranger, None: None}[who]
    r = server.put("/catalog/upload/ingest", caller, file=file, workspace=ws)
    assert r.status_code == status and r.json["message"]
    assert uploaded.exists()


def test_a_writer_ingests_from_their_own_upload_account(server: Server, alice: Person, writer: Person) -> None:
    ws = new_workspace(server, alice)
    share(server, alice, ws, writer, "write")
    account = server.services.uploads.folder(writer.user_id)
    account.mkdir(parents=True)
    make_geotiff(account / "w.tif")
    r = server.put("/catalog/upload/ingest", writer, file="w.tif", workspace=ws)
    assert r.status_code == 200
    assert wait_process(server, r.json["stringValue"])["status"] == "DONE"
    r = server.put("/catalog/upload/ingest", alice, file="w.tif", workspace=ws)  # not in alice's account
    assert r.status_code == 404


def test_sdk_methods_of_the_extras(server: Server, alice: Person, admin: Person, uploaded: Path) -> None:
    ws = new_workspace(server, alice)
    client = server.sdk(alice)
    assert client.console.ready(ws).bool_value is False
    started = client.files.ingest_upload("sftp.tif", ws)
    assert client.wait_for_process(str(started.string_value), poll_interval=0.05, timeout=30).status == "DONE"
    add_node(server, admin, "n2")
    server.sdk(admin).nodes.delete("n2")
    assert server.services.nodes.nodes.get("n2") is None
