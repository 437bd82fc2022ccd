"""/catalog: the file calls of the official library (availability, streamed download, on-node, properties,
ingest), their token authentication, statuses and the path guard."""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

import pytest
from tests.conftest import Person, Server
from tests.server.geodata import (
    BBOX_4326,
    TRAVERSAL_NAMES,
    TRAVERSAL_WORKSPACES,
    folder,
    http,
    ingested,
    make_geotiff,
    new_workspace,
    processes_of,
    share,
    wait_process,
)

FILE_CALLS = [("/catalog/checkdownloadavaialibitybyname", "filename"), ("/catalog/downloadbyname", "filename"),
              ("/catalog/fileOnNode", "filename"), ("/catalog/properties", "file"),
              ("/catalog/upload/ingestinws", "file")]


@pytest.fixture
def tif(tmp_path: Path) -> Path:
    return make_geotiff(tmp_path / "scene.tif")


@pytest.fixture
def ws(server: Server, alice: Person) -> str:
    return new_workspace(server, alice)


def test_check_available(server: Server, alice: Person, bob: Person, ws: str, tif: Path) -> None:
    ingested(server, alice, ws, tif)
    r = server.get("/catalog/checkdownloadavaialibitybyname", alice, filename="scene.tif", workspace=ws, procws="")
    assert r.status_code == 200 and r.json["boolValue"] is True
    assert server.get("/catalog/checkdownloadavaialibitybyname", alice, filename="nope.tif",
                      workspace=ws).status_code == 404
    # the token query parameter replaces the header (the official library sends both)
    r = server.get("/catalog/checkdownloadavaialibitybyname", None, filename="scene.tif", workspace=ws,
                   token=alice.token)
    assert r.status_code == 200
    assert server.get("/catalog/checkdownloadavaialibitybyname", None, filename="scene.tif",
                      workspace=ws).status_code == 401
    assert server.get("/catalog/checkdownloadavaialibitybyname", None, filename="scene.tif", workspace=ws,
                      token="bogus").status_code == 401
    assert server.get("/catalog/checkdownloadavaialibitybyname", bob, filename="scene.tif",
                      workspace=ws).status_code == 403
    # a file uploaded without ingestion is available too (it is on disk)
    (folder(server, ws) / "raw.bin").write_bytes(b"raw")
    assert server.get("/catalog/checkdownloadavaialibitybyname", alice, filename="raw.bin",
                      workspace=ws).status_code == 200


def test_download_streams_the_file_with_its_name(server: Server, alice: Person, bob: Person, ws: str,
                                                 tif: Path) -> None:
    ingested(server, alice, ws, tif)
    with http(server, alice) as client:
        r = client.get("/catalog/downloadbyname", params={"filename": "scene.tif", "workspace": ws, "procws": ""})
    assert r.status_code == 200 and r.content == tif.read_bytes()
    assert r.headers["content-disposition"] == 'attachment; filename="scene.tif"'
    assert r.headers["content-length"] == str(tif.stat().st_size)
    assert r.headers["content-type"] == "application/octet-stream"
    with http(server, None) as client:
        r = client.get("/catalog/downloadbyname", params={"filename": "scene.tif", "workspace": ws,
                                                          "token": alice.token})
        assert r.content == tif.read_bytes()
        assert client.get("/catalog/downloadbyname", params={"filename": "scene.tif",
                                                             "workspace": ws}).status_code == 401
        # the web client's attachment link spells the parameters fileName and worskpaceId
        r = client.get("/catalog/downloadbyname", params={"fileName": "scene.tif", "worskpaceId": ws,
                                                          "token": alice.token})
        assert r.status_code == 200 and r.content == tif.read_bytes()
        assert client.get("/catalog/downloadbyname", params={"workspace": ws, "token": alice.token}
                          ).status_code == 400
        assert client.get("/catalog/downloadbyname", params={"filename": "scene.tif", "token": alice.token}
                          ).status_code == 400
    assert server.get("/catalog/downloadbyname", bob, filename="scene.tif", workspace=ws).status_code == 403
    assert server.get("/catalog/downloadbyname", alice, filename="none.tif", workspace=ws).status_code == 404


def test_a_snap_product_downloads_as_a_zip(server: Server, alice: Person, ws: str, tif: Path) -> None:
    here = folder(server, ws)
    (here / "prod.dim").write_text("<Dimap_Document/>")
    (here / "prod.data").mkdir()
    (here / "prod.data" / "band.img").write_bytes(b"i" * 1000)
    (here / "prod.data" / "band.hdr").write_text("ENVI")
    with http(server, alice) as client:
        r = client.get("/catalog/downloadbyname", params={"filename": "prod.dim", "workspace": ws})
    assert r.status_code == 200 and r.headers["content-disposition"] == 'attachment; filename="prod.zip"'
    with zipfile.ZipFile(io.BytesIO(r.content)) as archive:
        assert sorted(archive.namelist()) == ["prod.data/band.hdr", "prod.data/band.img", "prod.dim"]
        assert archive.read("prod.data/band.img") == b"i" * 1000
    # deleting the product takes the .data folder with it
    assert server.get("/product/addtows", alice, name="prod.dim", workspace=ws).json == {"boolValue": True}
    assert server.get("/product/delete", alice, name="prod.dim", workspace=ws).json["boolValue"] is True
    assert list(here.iterdir()) == []


def test_file_on_node(server: Server, alice: Person, bob: Person, ws: str, tif: Path) -> None:
    ingested(server, alice, ws, tif)
    assert server.get("/catalog/fileOnNode", alice, filename="scene.tif", workspace=ws).json["boolValue"] is True
    r = server.get("/catalog/fileOnNode", None, filename="gone.tif", workspace=ws, token=alice.token)
    assert r.status_code == 200 and r.json == {"boolValue": False}
    assert server.get("/catalog/fileOnNode", bob, filename="scene.tif", workspace=ws).status_code == 403


def test_properties_with_and_without_checksum(server: Server, alice: Person, ws: str, tif: Path) -> None:
    ingested(server, alice, ws, tif)
    server.post("/product/update", alice, params={"workspace": ws},
                json={"fileName": "scene.tif", "productFriendlyName": "Friendly", "style": "s1"})
    plain = server.get("/catalog/properties", alice, file="scene.tif", workspace=ws).json
    assert plain["fileName"] == "scene.tif" and plain["size"] == tif.stat().st_size
    assert plain["friendlyName"] == "Friendly" and plain["style"] == "s1" and "checksum" not in plain
    assert plain["lastUpdateTimestampMs"] > 0
    summed = server.get("/catalog/properties", alice, file="scene.tif", workspace=ws, getchecksum="true").json
    assert summed["checksum"] == hashlib.md5(tif.read_bytes()).hexdigest()
    assert server.get("/catalog/properties", alice, file="none.tif", workspace=ws).status_code == 404
    assert server.get("/catalog/properties", None, file="scene.tif", workspace=ws).status_code == 401


def test_ingestinws_queues_an_ingest(server: Server, alice: Person, bob: Person, ws: str, tif: Path) -> None:
    (folder(server, ws) / "placed.tif").write_bytes(tif.read_bytes())
    share(server, alice, ws, bob, "read")
    assert server.get("/catalog/upload/ingestinws", bob, file="placed.tif", workspace=ws).status_code == 403
    assert server.get("/catalog/upload/ingestinws", alice, file="absent.tif", workspace=ws).status_code == 404
    assert server.get("/catalog/upload/ingestinws", None, file="placed.tif", workspace=ws).status_code == 401
    r = server.get("/catalog/upload/ingestinws", alice, file="placed.tif", workspace=ws, style="grey",
                   parent="parent-1")
    assert r.status_code == 200 and r.json["boolValue"] is True
    process = wait_process(server, r.json["stringValue"])
    assert process["status"] == "DONE" and process["parentId"] == "parent-1"
    product = server.get("/product/byname", alice, name="placed.tif", workspace=ws).json
    assert product["bbox"] == BBOX_4326 and product["style"] == "grey"


@pytest.mark.parametrize("bad", TRAVERSAL_NAMES)
def test_traversal_names_are_refused(server: Server, alice: Person, ws: str, tif: Path, bad: str) -> None:
    ingested(server, alice, ws, tif)
    for path, param in FILE_CALLS:
        r = server.get(path, alice, workspace=ws, **{param: bad})
        assert r.status_code == 400, (path, bad, r.status_code)
        assert r.json["message"]
    assert processes_of(server, ws, "INGEST")[0]["productName"] == "scene.tif"
    assert len(processes_of(server, ws, "INGEST")) == 1


@pytest.mark.parametrize("bad", TRAVERSAL_WORKSPACES)
def test_traversal_workspaces_are_refused(server: Server, alice: Person, bad: str) -> None:
    for path, param in FILE_CALLS:
        assert server.get(path, alice, workspace=bad, **{param: "passwd"}).status_code == 400


def test_every_endpoint_of_the_three_groups_is_served_and_wrapped() -> None:
    import inspect

    from wasdi_sdk.catalog import ENDPOINTS
    from wasdi_sdk.resources import RESOURCES
    from wasdi_server.api.framework import HANDLERS

    for group in ("products", "file_buffer", "files"):
        endpoints = [ep for ep in ENDPOINTS if ep.group == group]
        assert endpoints
        for ep in endpoints:
            assert ep.name in HANDLERS, ep.name
            method = getattr(RESOURCES[group], ep.operation)
            accepted = set(inspect.signature(method).parameters)
            assert {p.python_name for p in ep.query} <= accepted, ep.name
