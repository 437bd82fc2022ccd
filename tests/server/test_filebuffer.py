"""/filebuffer: sharing products between workspaces, importing (http, https-less local server, file://) with the
quota and mission checks, and publishing bands (WAITFORRABBIT, then PUBLISHBAND)."""

from __future__ import annotations

import base64
import hashlib
import http.server
import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from tests.conftest import Person, Server
from tests.server.geodata import (
    BBOX_4326,
    TRAVERSAL_NAMES,
    folder,
    ingested,
    make_geotiff,
    messages,
    new_workspace,
    processes_of,
    share,
    wait_process,
)
from tests.server.test_search import S2_JANUARY

from wasdi_server.api.bodies import NUL_MESSAGE
from wasdi_server.domains.products.search import item_product_name
from wasdi_server.providers.search import SearchProviders, StacProvider


@pytest.fixture
def tif(tmp_path: Path) -> Path:
    return make_geotiff(tmp_path / "scene.tif")


@pytest.fixture
def ws(server: Server, alice: Person) -> str:
    return new_workspace(server, alice, "origin")


@pytest.fixture
def web(tmp_path: Path, server: Server) -> Iterator[tuple[str, Path]]:
    """A plain HTTP server on 127.0.0.1 serving a folder: (base URL, folder); the server may import from it."""
    server.services.settings.import_allowed_hosts = ["127.0.0.1"]
    root = tmp_path / "web"
    root.mkdir()

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, directory=str(root), **kwargs)

        def log_message(self, *args) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", root
    finally:
        httpd.shutdown()
        httpd.server_close()


def import_body(ws: str, url: str, **extra) -> dict:
    return {"fileUrl": url, "workspace": ws, **extra}


def imports_dir(server: Server) -> Path:
    path = server.settings.data_dir / "imports"
    path.mkdir(exist_ok=True)
    return path


# -- share -------------------------------------------------------------------------------------------------
def test_share_copies_the_product_to_another_workspace(server: Server, alice: Person, ws: str, tif: Path) -> None:
    ingested(server, alice, ws, tif)
    (folder(server, ws) / "scene.tif.aux.xml").write_text("<PAMDataset/>")
    server.post("/product/update", alice, params={"workspace": ws},
                json={"fileName": "scene.tif", "productFriendlyName": "Scene A", "style": "s", "description": "d"})
    dest = new_workspace(server, alice, "destination")
    r = server.get("/filebuffer/share", alice, originWorkspaceId=ws, destinationWorkspaceId=dest,
                   productName="scene.tif")
    assert r.status_code == 200 and r.json["boolValue"] is True and r.json["intValue"] == 200
    process = wait_process(server, r.json["stringValue"])
    assert process["status"] == "DONE" and process["operationType"] == "SHARE" and process["workspaceId"] == dest
    assert (folder(server, dest) / "scene.tif").read_bytes() == tif.read_bytes()
    assert (folder(server, dest) / "scene.tif.aux.xml").exists()
    copy = server.get("/product/byname", alice, name="scene.tif", workspace=dest).json
    assert copy["bbox"] == BBOX_4326 and [b["name"] for b in copy["bandsGroups"]["bands"]] == ["red", "band_2"]
    assert (copy["productFriendlyName"], copy["style"], copy["description"]) == ("Scene A", "s", "d")
    (message,) = messages(server, dest, "SHARE")
    assert message["payload"]["fileName"] == "scene.tif" and message["messageResult"] == "OK"
    assert server.services.workspaces.load(dest)["storageSize"] > 0
    # the same again: PRODUCT_ALREADY_PRESENT, HTTP 200, boolValue true (the contract)
    again = server.get("/filebuffer/share", alice, originWorkspaceId=ws, destinationWorkspaceId=dest,
                       productName="scene.tif")
    assert again.status_code == 200
    assert again.json == {"intValue": 200, "stringValue": "PRODUCT_ALREADY_PRESENT", "boolValue": True}


def test_share_statuses(server: Server, alice: Person, bob: Person, carol: Person, ws: str, tif: Path) -> None:
    ingested(server, alice, ws, tif)
    dest = new_workspace(server, alice, "dest")
    bobs = new_workspace(server, bob, "bob's")
    share(server, alice, dest, bob, "read")
    share(server, alice, ws, carol, "read")

    def call(who: Person | None, **params):
        base = {"originWorkspaceId": ws, "destinationWorkspaceId": dest, "productName": "scene.tif"}
        return server.get("/filebuffer/share", who, **{**base, **params})

    assert call(None).status_code == 401
    assert call(alice, originWorkspaceId="nope").json["message"] == "Invalid origin workspace."
    assert call(alice, originWorkspaceId="nope").status_code == 400
    assert call(alice, destinationWorkspaceId="../x").json["message"] == "Invalid destination workspace."
    assert call(alice, productName="missing.tif").status_code == 400
    assert call(alice, productName="").status_code == 400
    for bad in TRAVERSAL_NAMES:
        r = call(alice, productName=bad)
        # a NUL is refused where the request is parsed, before the endpoint's own check of the name
        expected = NUL_MESSAGE if "\x00" in bad else "Invalid product name."
        assert r.status_code == 400 and r.json["message"] == expected, bad
    assert call(bob, destinationWorkspaceId=bobs).status_code == 403  # no read on the origin
    assert call(bob).status_code == 403  # read only on the destination
    assert call(carol, destinationWorkspaceId=new_workspace(server, carol, "c")).status_code == 200
    assert processes_of(server, dest, "SHARE") == []


# -- import (/filebuffer/download) -------------------------------------------------------------------------
def test_import_from_a_file_url(server: Server, alice: Person, ws: str, tif: Path) -> None:
    source = imports_dir(server) / "S2B_MSIL1C_import.tif"
    source.write_bytes(tif.read_bytes())
    r = server.post("/filebuffer/download", alice, json=import_body(ws, source.as_uri(), provider="local"))
    assert r.status_code == 200 and r.json["boolValue"] is True and r.json["intValue"] == 200
    process = wait_process(server, r.json["stringValue"])
    assert process["status"] == "DONE", process
    assert process["operationType"] == "DOWNLOAD" and process["operationSubType"] == "LOCAL"
    assert process["productName"] == "S2B_MSIL1C_import.tif" and process["fileSize"] and process["progressPerc"] == 100
    assert (folder(server, ws) / "S2B_MSIL1C_import.tif").read_bytes() == tif.read_bytes()
    record = server.services.products.get(ws, "S2B_MSIL1C_import.tif")
    assert record["bbox"] == BBOX_4326 and record["platform"] == "Sentinel-2"
    (message,) = messages(server, ws, "DOWNLOAD")
    assert message["payload"]["fileName"] == "S2B_MSIL1C_import.tif"
    assert sorted(p.name for p in folder(server, ws).iterdir()) == ["S2B_MSIL1C_import.tif"]  # no partial file
    # already present: DONE at once, with a DOWNLOAD message
    again = server.post("/filebuffer/download", alice, json=import_body(ws, source.as_uri()))
    assert again.json == {"intValue": 200, "stringValue": "DONE", "boolValue": True}
    assert [m["payload"] for m in messages(server, ws, "DOWNLOAD")][-1] == {
        "name": "S2B_MSIL1C_import", "fileName": "S2B_MSIL1C_import.tif"}
    assert len(processes_of(server, ws, "DOWNLOAD")) == 1


def test_import_over_http_names_and_footprints(server: Server, alice: Person, ws: str, tif: Path, web,
                                               tmp_path: Path) -> None:
    base, root = web
    (root / "scene.tif").write_bytes(tif.read_bytes())
    (root / "blob.bin").write_bytes(b"\x00" * 300_000)
    r = server.post("/filebuffer/download", alice, json=import_body(ws, f"{base}/scene.tif", name="renamed"))
    process = wait_process(server, r.json["stringValue"])
    assert process["status"] == "DONE" and process["productName"] == "renamed.tif"
    assert (folder(server, ws) / "renamed.tif").read_bytes() == tif.read_bytes()
    # a file the server cannot read as a raster gets the footprint the import gave
    footprint = "POLYGON((7.0 45.0,7.0 46.0,8.0 46.0,8.0 45.0,7.0 45.0))"
    r = server.post("/filebuffer/download", alice, json=import_body(ws, f"{base}/blob.bin", bbox=footprint))
    assert wait_process(server, r.json["stringValue"])["status"] == "DONE"
    assert server.services.products.get(ws, "blob.bin")["bbox"] == (
        "45.000000,7.000000,45.000000,8.000000,46.000000,8.000000,46.000000,7.000000,45.000000,7.000000")
    # the deprecated GET form does the same
    (root / "other.tif").write_bytes(tif.read_bytes())
    r = server.get("/filebuffer/download", alice, fileUrl=f"{base}/other.tif", workspace=ws)
    assert r.json["boolValue"] is True
    assert wait_process(server, r.json["stringValue"])["status"] == "DONE"
    assert server.get("/product/namesbyws", alice, workspace=ws).json == ["blob.bin", "other.tif", "renamed.tif"]


def test_import_failures_end_in_error_with_a_ko_message(server: Server, alice: Person, ws: str, web,
                                                        tmp_path: Path) -> None:
    base, _ = web
    r = server.post("/filebuffer/download", alice, json=import_body(ws, f"{base}/missing.tif"))
    process = wait_process(server, r.json["stringValue"])
    assert process["status"] == "ERROR" and "404" in process["payload"]
    (ko,) = [m for m in messages(server, ws, "DOWNLOAD") if m["messageResult"] == "KO"]
    assert "404" in ko["payload"]
    r = server.post("/filebuffer/download", alice, json=import_body(ws, "http://127.0.0.1:9/nothing.tif"))
    assert wait_process(server, r.json["stringValue"])["status"] == "ERROR"
    assert list(folder(server, ws).iterdir()) == []
    assert server.services.products.of_workspace(ws) == []


def test_file_urls_outside_the_import_roots_are_refused(server: Server, alice: Person, ws: str, tif: Path,
                                                        tmp_path: Path) -> None:
    secret = server.settings.data_dir / "files" / "someone" / "secret.tif"
    secret.parent.mkdir(parents=True)
    secret.write_bytes(b"secret")
    link = imports_dir(server) / "link.tif"
    link.symlink_to(secret)
    for url in (tif.as_uri(), secret.as_uri(), "file:///etc/passwd", link.as_uri(),
                (imports_dir(server) / ".." / "files" / "someone" / "secret.tif").as_uri().replace("%2E", "."),
                "file://otherhost/x.tif"):
        r = server.post("/filebuffer/download", alice, json=import_body(ws, url))
        assert r.status_code == 200 and r.json["boolValue"] is False and r.json["intValue"] == 403, url
    absent = (imports_dir(server) / "no.tif").as_uri()
    missing = server.post("/filebuffer/download", alice, json=import_body(ws, absent))
    assert missing.json["boolValue"] is False and missing.json["intValue"] == 500
    assert list(folder(server, ws).iterdir()) == []


def test_links_of_the_local_search_catalogue_can_be_imported(server: Server, alice: Person, ws: str,
                                                              tif: Path) -> None:
    catalogue = server.settings.data_dir / "catalogue"
    catalogue.mkdir()
    (catalogue / "found.tif").write_bytes(tif.read_bytes())
    r = server.post("/filebuffer/download", alice, json=import_body(ws, (catalogue / "found.tif").as_uri()))
    assert wait_process(server, r.json["stringValue"])["status"] == "DONE"
    assert server.services.products.get(ws, "found.tif")["bbox"] == BBOX_4326


def test_import_roots_setting_allows_more_folders(tmp_path: Path, tif: Path) -> None:
    extra = tmp_path / "catalogue"
    extra.mkdir()
    (extra / "scene.tif").write_bytes(tif.read_bytes())
    s = Server(tmp_path / "data", import_roots=[str(extra)])
    try:
        alice = s.add_user("alice@example.org")
        ws = new_workspace(s, alice)
        r = s.post("/filebuffer/download", alice, json=import_body(ws, (extra / "scene.tif").as_uri()))
        assert wait_process(s, r.json["stringValue"])["status"] == "DONE"
    finally:
        s.close()


def test_import_failure_markers(server: Server, alice: Person, bob: Person, ws: str, tif: Path) -> None:
    source = imports_dir(server) / "scene.tif"
    source.write_bytes(tif.read_bytes())
    share(server, alice, ws, bob, "read")
    cases = [
        (None, import_body(ws, source.as_uri()), 401),
        (bob, import_body(ws, source.as_uri()), 403),
        (alice, import_body("no-such-ws", source.as_uri()), 403),  # not a workspace the caller can write
        (alice, import_body(ws, ""), 500),
        (alice, import_body(ws, "ftp://example.org/x.tif"), 500),
        (alice, import_body(ws, source.as_uri(), name="../evil.tif"), 500),
        (alice, import_body(ws, source.as_uri(), platform="NoSuchSatellite"), 401),
    ]
    for who, body, code in cases:
        r = server.post("/filebuffer/download", who, json=body)
        assert r.status_code == 200 and r.json["boolValue"] is False and r.json["intValue"] == code, (body, r.json)
    r = server.post("/filebuffer/download", alice, body="[1, 2]", content_type="application/json")
    assert r.status_code == 200 and r.json["boolValue"] is False
    assert processes_of(server, ws, "DOWNLOAD") == []


def test_storage_quota_and_its_switch(tmp_path: Path, tif: Path) -> None:
    for checks, expected in ((True, 401), (False, 200)):
        s = Server(tmp_path / f"data-{checks}", activate_subscription_checks=checks)
        try:
            alice = s.add_user("alice@example.org")  # a FREE trial: 20 GB
            ws = new_workspace(s, alice)
            other = new_workspace(s, alice, "big")
            s.services.workspaces.workspaces.update(other, {"storageSize": 20_000_000_001})
            source = s.settings.data_dir / "imports" / "scene.tif"
            source.parent.mkdir()
            source.write_bytes(tif.read_bytes())
            r = s.post("/filebuffer/download", alice, json=import_body(ws, source.as_uri()))
            if expected == 401:
                assert r.json["boolValue"] is False and r.json["intValue"] == 401
                assert r.json["stringValue"].startswith("Exceeding max storage size for FREE subscription")
            else:
                assert r.json["boolValue"] is True
                wait_process(s, r.json["stringValue"])
        finally:
            s.close()


def test_mission_access(tmp_path: Path, tif: Path) -> None:
    missions = {"missions": [
        {"name": "Open", "indexname": "platformname", "indexvalue": "Sentinel-1", "ispublic": True},
        {"name": "Private", "indexname": "platformname", "indexvalue": "SecretSat", "ispublic": False,
         "userid": "bob@example.org"}]}
    path = tmp_path / "missions.json"
    path.write_text(json.dumps(missions))
    s = Server(tmp_path / "data", missions_file=str(path))
    try:
        alice, bob = s.add_user("alice@example.org"), s.add_user("bob@example.org")
        source = s.settings.data_dir / "imports" / "S1A_IW_GRDH_x.tif"
        source.parent.mkdir()
        source.write_bytes(tif.read_bytes())
        ws_a, ws_b = new_workspace(s, alice), new_workspace(s, bob)

        def start(who: Person, ws: str, **extra) -> dict:
            return s.post("/filebuffer/download", who, json=import_body(ws, source.as_uri(), **extra)).json

        denied = start(alice, ws_a, platform="SecretSat")
        assert denied["boolValue"] is False and denied["intValue"] == 401
        assert start(bob, ws_b, platform="SecretSat", name="b1")["boolValue"] is True
        # inferred from the file name: S1A_ is Sentinel-1 (public)
        assert start(alice, ws_a)["boolValue"] is True
        # Sentinel-2 is not a mission of this server: denied even though inferred
        other = source.with_name("S2A_MSIL1C_x.tif")
        other.write_bytes(b"x")
        r = s.post("/filebuffer/download", alice, json=import_body(ws_a, other.as_uri())).json
        assert r["boolValue"] is False and r["intValue"] == 401
    finally:
        s.close()


# -- publishband ---------------------------------------------------------------------------------------------
def test_publishband_queues_then_answers_the_layer(server: Server, alice: Person, ws: str, tif: Path) -> None:
    ingested(server, alice, ws, tif)
    server.post("/product/update", alice, params={"workspace": ws}, json={"fileName": "scene.tif", "style": "mine"})
    first = server.get("/filebuffer/publishband", alice, fileUrl="scene.tif", workspace=ws, band="band_2")
    assert first.status_code == 200
    assert first.json["messageCode"] == "WAITFORRABBIT" and first.json["workspaceId"] == ws
    process = wait_process(server, first.json["payload"])
    assert process["status"] == "DONE" and process["operationType"] == "PUBLISHBAND"
    assert process["parameter"]["style"] == "mine"  # falls back to the product's style
    second = server.get("/filebuffer/publishband", alice, fileUrl="scene.tif", workspace=ws, band="band_2").json
    assert second["messageCode"] == "PUBLISHBAND"
    payload = second["payload"]
    assert payload["bandName"] == "band_2" and payload["productName"] == "scene.tif"
    assert payload["layerId"] and payload["geoserverUrl"].endswith("/wms")
    box = json.loads(payload["boundingBox"])
    assert box["crs"] == "EPSG:4326"
    assert (box["minx"], box["miny"], box["maxx"], box["maxy"]) == pytest.approx((10, 40, 11, 41), abs=1e-6)
    assert json.loads(payload["geoserverBoundingBox"])["crs"] == "EPSG:4326"
    (message,) = messages(server, ws, "PUBLISHBAND")
    assert message["payload"] == payload and message["messageResult"] == "OK"
    band = server.get("/product/byname", alice, name="scene.tif", workspace=ws).json["bandsGroups"]["bands"][1]
    assert band["published"] is True and band["layerId"] == payload["layerId"]
    assert band["geoserverUrl"] == payload["geoserverUrl"]
    assert len(processes_of(server, ws, "PUBLISHBAND")) == 1


def test_publishband_while_queued_gives_the_same_process(server: Server, alice: Person, ws: str, tif: Path,
                                                         monkeypatch) -> None:
    ingested(server, alice, ws, tif)
    gate = threading.Event()
    real = server.services.products.map_server.publish

    def slow(*args, **kwargs):
        gate.wait(10)
        return real(*args, **kwargs)

    monkeypatch.setattr(server.services.products.map_server, "publish", slow)
    ids = {server.get("/filebuffer/publishband", alice, fileUrl="scene.tif", workspace=ws, band="red").json["payload"]
           for _ in range(3)}
    gate.set()
    assert len(ids) == 1
    assert wait_process(server, ids.pop())["status"] == "DONE"


def test_publishband_null_answers(server: Server, alice: Person, bob: Person, carol: Person, ws: str,
                                  tif: Path) -> None:
    ingested(server, alice, ws, tif)
    share(server, alice, ws, carol, "read")
    for who, params in [(None, {"fileUrl": "scene.tif", "band": "red"}),
                        (bob, {"fileUrl": "scene.tif", "band": "red"}),
                        (alice, {"fileUrl": "missing.tif", "band": "red"}),
                        (alice, {"fileUrl": "scene.tif", "band": "nir"}),
                        (alice, {"fileUrl": "../scene.tif", "band": "red"}),
                        (alice, {"fileUrl": "scene.tif"})]:
        r = server.get("/filebuffer/publishband", who, workspace=ws, **params)
        assert r.status_code == 200 and r.text == "null", (who, params)
    assert processes_of(server, ws, "PUBLISHBAND") == []
    # a reader may publish (it only draws a map)
    r = server.get("/filebuffer/publishband", carol, fileUrl="scene.tif", workspace=ws, band="red")
    assert r.json["messageCode"] == "WAITFORRABBIT"


def test_publishing_a_band_that_cannot_be_drawn_fails_with_ko(server: Server, alice: Person, ws: str,
                                                              tif: Path) -> None:
    ingested(server, alice, ws, tif)
    (folder(server, ws) / "scene.tif").write_bytes(b"no longer a raster")
    r = server.get("/filebuffer/publishband", alice, fileUrl="scene.tif", workspace=ws, band="red")
    process = wait_process(server, r.json["payload"])
    assert process["status"] == "ERROR"
    (ko,) = messages(server, ws, "PUBLISHBAND")
    assert ko["messageResult"] == "KO" and ko["payload"] == "Looks we cannot show\nthis file on map"
    band = server.get("/product/byname", alice, name="scene.tif", workspace=ws).json["bandsGroups"]["bands"][0]
    assert band["published"] is False


def test_stopping_an_import_leaves_no_partial_file(server: Server, alice: Person, ws: str) -> None:
    stop_sending = threading.Event()

    class Slow(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", str(1000 * 65536))
            self.end_headers()
            for _ in range(1000):
                if stop_sending.wait(0.05):
                    return
                try:
                    self.wfile.write(b"\x00" * 65536)
                except OSError:
                    return

        def log_message(self, *args) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    server.services.settings.import_allowed_hosts = ["127.0.0.1"]
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/slow.bin"
        r = server.post("/filebuffer/download", alice, json=import_body(ws, url))
        pid = r.json["stringValue"]
        running = wait_process(server, pid, frozenset({"RUNNING"}))
        assert running["operationType"] == "DOWNLOAD"
        deadline = time.monotonic() + 10
        while not any(p.name.endswith(".part") for p in folder(server, ws).iterdir()):
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert server.get("/process/delete", alice, procws=pid).status_code == 200
        assert wait_process(server, pid)["status"] == "STOPPED"
        deadline = time.monotonic() + 10
        while list(folder(server, ws).iterdir()):
            assert time.monotonic() < deadline, list(folder(server, ws).iterdir())
            time.sleep(0.02)
        assert server.services.products.of_workspace(ws) == []
    finally:
        stop_sending.set()
        httpd.shutdown()
        httpd.server_close()


def test_an_import_without_the_geo_extra_says_so(server: Server, alice: Person, ws: str, tif: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from wasdi_server.domains.products import readers

    monkeypatch.setattr(readers, "rasterio_available", lambda: False)
    source = imports_dir(server) / "scene.tif"
    source.write_bytes(tif.read_bytes())
    r = server.post("/filebuffer/download", alice, json=import_body(ws, source.as_uri()))
    pid = r.json["stringValue"]
    assert wait_process(server, pid)["status"] == "DONE"
    lines = [row["logRow"] for row in server.get("/processors/logs/list", alice, processworkspace=pid).json]
    assert any("without the geo extra" in line and "scene.tif" in line for line in lines), lines


# -- issue 30: an import never overwrites, nor silently keeps, a different file of the same name ----------------
def test_a_second_scene_with_the_same_file_name_is_never_silently_kept(server: Server, alice: Person, ws: str,
                                                                      tif: Path, web) -> None:
    base, root = web
    for scene, content in (("S2A_32TMR_20230105_0_L2A", tif.read_bytes()), ("S2B_32TMR_20230110_0_L2A", b"other")):
        (root / scene).mkdir()
        (root / scene / "TCI.tif").write_bytes(content)
    first = server.post("/filebuffer/download", alice, json=import_body(ws, f"{base}/S2A_32TMR_20230105_0_L2A/TCI.tif"))
    assert wait_process(server, first.json["stringValue"])["status"] == "DONE"
    assert (folder(server, ws) / "TCI.tif").read_bytes() == tif.read_bytes()
    # the other scene's TCI.tif: fetched, found different, refused in a sentence; the first is untouched
    second = server.post("/filebuffer/download", alice,
                         json=import_body(ws, f"{base}/S2B_32TMR_20230110_0_L2A/TCI.tif"))
    assert second.json["boolValue"] is True and second.json["stringValue"] != "DONE"
    process = wait_process(server, second.json["stringValue"])
    assert process["status"] == "ERROR"
    logs = server.get("/processors/logs/list", alice, processworkspace=second.json["stringValue"]).json
    assert any("already has a product named TCI.tif with other content" in line["logRow"] for line in logs), logs
    assert (folder(server, ws) / "TCI.tif").read_bytes() == tif.read_bytes()
    assert sorted(p.name for p in folder(server, ws).iterdir()) == ["TCI.tif"]  # no partial file left
    # the same bytes from another URL: DONE, nothing replaced
    (root / "copy").mkdir()
    (root / "copy" / "TCI.tif").write_bytes(tif.read_bytes())
    third = server.post("/filebuffer/download", alice, json=import_body(ws, f"{base}/copy/TCI.tif"))
    assert wait_process(server, third.json["stringValue"])["status"] == "DONE"
    # and the first URL again: DONE at once, as the contract says of a file already there
    again = server.post("/filebuffer/download", alice, json=import_body(ws, f"{base}/S2A_32TMR_20230105_0_L2A/TCI.tif"))
    assert again.json["stringValue"] == "DONE"


def test_a_link_a_search_found_is_named_after_its_item(server: Server, alice: Person, ws: str, tif: Path,
                                                       web) -> None:
    base, root = web
    (root / "S2A_32TMR_20230105_0_L2A").mkdir()
    (root / "S2A_32TMR_20230105_0_L2A" / "TCI.tif").write_bytes(tif.read_bytes())
    link = f"{base}/S2A_32TMR_20230105_0_L2A/TCI.tif"
    item = {"type": "Feature", "id": "S2A_32TMR_20230105_0_L2A", "collection": "sentinel-2-l2a",
            "geometry": None, "properties": {"datetime": "2023-01-05T10:24:27Z", "platform": "sentinel-2a"},
            "assets": {"visual": {"href": link, "roles": ["visual"]}}, "links": []}

    def api(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            return httpx.Response(200, json={"conformsTo": []})
        return httpx.Response(200, json={"type": "FeatureCollection", "features": [item], "links": []})

    stac = StacProvider("EARTH", "https://stac.example.test/v1", transport=httpx.MockTransport(api))
    server.services.search.providers = SearchProviders([stac])
    [found] = server.get("/search/query", alice, query=S2_JANUARY, providers="EARTH").json
    assert found["link"] == link
    r = server.post("/filebuffer/download", alice, json=import_body(ws, link))
    process = wait_process(server, r.json["stringValue"])
    assert process["status"] == "DONE" and process["productName"] == "S2A_32TMR_20230105_0_L2A.tif"
    assert (folder(server, ws) / "S2A_32TMR_20230105_0_L2A.tif").read_bytes() == tif.read_bytes()
    # a link whose file name already names the item keeps it; the official library's name still wins
    assert item_product_name(f"{base}/S2A_X.tif", "S2A_X") is None
    assert item_product_name(link, "S2A_32TMR_20230105_0_L2A") == "S2A_32TMR_20230105_0_L2A.tif"
    r = server.post("/filebuffer/download", alice, json=import_body(ws, link, name="mine"))
    assert wait_process(server, r.json["stringValue"])["productName"] == "mine.tif"


def test_bodies_with_and_without_a_length_are_imported_byte_for_byte(server: Server, alice: Person,
                                                                      ws: str) -> None:
    """A body of known length is read from the socket past httpx's first bytes, one without (chunked) through
    httpx: both land whole, and a Content-MD5 that does not match the bytes fails the import."""
    body = os.urandom(3 * 1024 * 1024 + 12345)
    good_md5 = base64.b64encode(hashlib.md5(body, usedforsecurity=False).digest()).decode()

    class Sender(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            self.send_response(200)
            if self.path.startswith("/chunked"):
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for start in range(0, len(body), 200_000):
                    piece = body[start:start + 200_000]
                    self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                self.wfile.write(b"0\r\n\r\n")
                return
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Content-MD5", good_md5 if self.path.startswith("/sized") else
                             base64.b64encode(b"\x00" * 16).decode())
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Sender)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    server.services.settings.import_allowed_hosts = ["127.0.0.1"]
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        for name in ("sized.bin", "chunked.bin"):
            r = server.post("/filebuffer/download", alice, json=import_body(ws, f"{base}/{name}"))
            assert wait_process(server, r.json["stringValue"])["status"] == "DONE"
            assert (folder(server, ws) / name).read_bytes() == body
        r = server.post("/filebuffer/download", alice, json=import_body(ws, f"{base}/damaged.bin"))
        process = wait_process(server, r.json["stringValue"])
        assert process["status"] == "ERROR" and "md5 checksum" in process["payload"]
        assert not (folder(server, ws) / "damaged.bin").exists()
    finally:
        httpd.shutdown()
        httpd.server_close()
