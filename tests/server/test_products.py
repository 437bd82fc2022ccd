"""/product: uploads and ingestion, reading GeoTIFFs (bands, bbox, metadata), lists, update, deletion,
the permission matrix, and the path guard on every file-taking endpoint."""

from __future__ import annotations

import json
import threading
import time
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
    messages,
    new_workspace,
    processes_of,
    share,
    upload,
    user_of,
    wait_all,
    wait_process,
)

from wasdi_server.domains.products import product_files


@pytest.fixture
def tif(tmp_path: Path) -> Path:
    return make_geotiff(tmp_path / "scene.tif")


@pytest.fixture
def ws(server: Server, alice: Person) -> str:
    return new_workspace(server, alice)


def storage(server: Server, ws: str) -> int:
    return int(server.services.workspaces.load(ws)["storageSize"])


# -- upload, ingest, read ---------------------------------------------------------------------------------
def test_uploadfile_ingests_a_geotiff_with_bands_and_bbox(server: Server, alice: Person, ws: str, tif: Path) -> None:
    record = ingested(server, alice, ws, tif)
    assert (folder(server, ws) / "scene.tif").read_bytes() == tif.read_bytes()
    r = server.get("/product/byname", alice, name="scene.tif", workspace=ws)
    assert r.status_code == 200
    product = r.json
    assert product["name"] == "scene" and product["fileName"] == "scene.tif"
    assert product["productFriendlyName"] == "scene"
    assert product["bbox"] == BBOX_4326
    assert product["bandsGroups"]["nodeName"] == "Bands"
    assert product["bandsGroups"]["bands"] == [
        {"name": "red", "published": False, "width": 100, "height": 100},
        {"name": "band_2", "published": False, "width": 100, "height": 100},
    ]
    assert product["metadataFileCreated"] is False and "metadata" not in product
    assert record["readable"] is True
    # the INGEST broker message carries the ProductViewModel; the process knows the file size
    (message,) = messages(server, ws, "INGEST")
    assert message["messageResult"] == "OK"
    assert message["payload"]["fileName"] == "scene.tif" and message["payload"]["name"] == "scene"
    (process,) = processes_of(server, ws, "INGEST")
    assert process["productName"] == "scene.tif" and process["fileSize"] and process["progressPerc"] == 100
    assert storage(server, ws) == tif.stat().st_size


def test_a_projected_raster_gets_its_footprint_in_wgs84(server: Server, alice: Person, ws: str,
                                                        tmp_path: Path) -> None:
    utm = make_geotiff(tmp_path / "utm.tif", crs="EPSG:32632", origin=(500000, 5000000), pixel=100, width=60,
                       height=40, count=1)
    ingested(server, alice, ws, utm)
    bbox = server.get("/product/byname", alice, name="utm.tif", workspace=ws).json["bbox"]
    numbers = [float(v) for v in bbox.split(",")]
    assert len(numbers) == 10 and all(len(v.split(".")[1]) == 6 for v in bbox.split(","))
    lats, lons = numbers[0::2], numbers[1::2]
    # UTM 32N easting 500000 is the 9 degrees E meridian; 5 000 000 m north is about 45.1 degrees N
    assert min(lons) == pytest.approx(9.0, abs=1e-6) and 9.07 < max(lons) < 9.08
    assert 45.11 < min(lats) < 45.12 and 45.15 < max(lats) < 45.16
    assert numbers[:2] == numbers[-2:]  # a closed ring


def test_a_file_that_is_not_a_raster_is_a_file_level_product(server: Server, alice: Person, ws: str,
                                                            tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("not a raster at all\n")
    record = ingested(server, alice, ws, notes)
    assert record["readable"] is False
    product = server.get("/product/byname", alice, name="notes.txt", workspace=ws).json
    assert product["bandsGroups"]["bands"] == [] and "bbox" not in product
    tree = metadata_when_ready(server, alice, ws, "notes.txt")
    assert tree["name"] == "notes.txt"
    assert "File-level metadata only" in tree["attributes"][0]["data"]
    names = [e["name"] for e in tree["elements"]]
    assert names[0].startswith("File-level metadata only: not a raster format")
    file_element = next(e for e in tree["elements"] if e["name"] == "File")
    facts = {a["description"]: a["data"] for a in file_element["attributes"]}
    assert facts["size"] == str(notes.stat().st_size) and facts["lastModified"].endswith("Z")
    assert str(server.settings.data_dir) not in json.dumps(tree)  # no server path leaks


def test_a_zip_is_one_product_read_through_its_raster_member(server: Server, alice: Person, ws: str, tif: Path,
                                                             tmp_path: Path) -> None:
    archive = tmp_path / "S2A_MSIL2A_test.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("README.txt", "hello")
        z.write(tif, "granule/scene.tif")
    record = ingested(server, alice, ws, archive)
    assert record["fileName"] == "S2A_MSIL2A_test.zip" and record["platform"] == "Sentinel-2"
    product = server.get("/product/byname", alice, name=archive.name, workspace=ws).json
    assert product["name"] == "S2A_MSIL2A_test"
    assert [b["name"] for b in product["bandsGroups"]["bands"]] == ["red", "band_2"]
    assert product["bbox"] == BBOX_4326


def test_an_empty_name_gets_a_random_one(server: Server, alice: Person, ws: str, tif: Path) -> None:
    assert upload(server, alice, ws, tif, name="").status_code == 200
    (process,) = wait_all(server, ws, "INGEST")
    assert process["status"] == "DONE" and process["productName"].startswith("defaultName-")
    assert server.get("/product/namesbyws", alice, workspace=ws).json == [process["productName"]]


def test_uploadfilebylib_stores_without_ingesting(server: Server, alice: Person, ws: str, tif: Path) -> None:
    assert upload(server, alice, ws, tif, by_lib=True).status_code == 200
    assert (folder(server, ws) / "scene.tif").read_bytes() == tif.read_bytes()
    time.sleep(0.2)
    assert processes_of(server, ws, "INGEST") == []
    assert server.get("/product/namesbyws", alice, workspace=ws).json == []
    assert storage(server, ws) == tif.stat().st_size
    # a re-upload replaces the file atomically and leaves no partial file behind
    other = make_geotiff(tif.parent / "other.tif", count=1)
    assert upload(server, alice, ws, other, name="scene.tif", by_lib=True).status_code == 200
    assert (folder(server, ws) / "scene.tif").read_bytes() == other.read_bytes()
    assert sorted(p.name for p in folder(server, ws).iterdir()) == ["scene.tif"]


def test_reingesting_keeps_user_fields_and_rereads_bands(server: Server, alice: Person, ws: str, tif: Path) -> None:
    ingested(server, alice, ws, tif)
    assert server.post("/product/update", alice, params={"workspace": ws},
                       json={"fileName": "scene.tif", "productFriendlyName": "My scene", "description": "d"}
                       ).status_code == 200
    replacement = make_geotiff(tif.parent / "three.tif", count=3, descriptions=("a", "b", "c"))
    ingested(server, alice, ws, replacement, name="scene.tif")
    product = server.get("/product/byname", alice, name="scene.tif", workspace=ws).json
    assert [b["name"] for b in product["bandsGroups"]["bands"]] == ["a", "b", "c"]
    assert product["productFriendlyName"] == "My scene" and product["description"] == "d"
    assert server.get("/product/namesbyws", alice, workspace=ws).json == ["scene.tif"]


# -- lists --------------------------------------------------------------------------------------------------
def test_byws_bywslight_and_namesbyws(server: Server, alice: Person, ws: str, tif: Path, tmp_path: Path) -> None:
    ingested(server, alice, ws, tif)
    ingested(server, alice, ws, make_geotiff(tmp_path / "b.tif", count=1))
    server.post("/product/update", alice, params={"workspace": ws},
                json={"fileName": "b.tif", "style": "ndvi", "description": "second"})
    full = server.get("/product/byws", alice, workspace=ws).json
    assert [p["fileName"] for p in full] == ["b.tif", "scene.tif"]
    assert full[0]["style"] == "ndvi" and full[0]["description"] == "second"
    assert all("metadata" not in p and p["bbox"] == BBOX_4326 and p["bandsGroups"]["bands"] for p in full)
    light = server.get("/product/bywslight", alice, workspace=ws).json
    assert all(set(p) <= {"name", "fileName", "productFriendlyName", "bbox"} for p in light)
    assert [p["name"] for p in light] == ["b", "scene"] and light[1]["bbox"] == BBOX_4326
    assert server.get("/product/namesbyws", alice, workspace=ws).json == ["b.tif", "scene.tif"]


# -- metadata ----------------------------------------------------------------------------------------------
def metadata_when_ready(server: Server, who: Person, ws: str, name: str) -> dict:
    first = server.get("/product/metadatabyname", who, name=name, workspace=ws)
    assert first.status_code == 200
    if first.json != {"name": "Generating Metadata, try later"}:
        return first.json
    wait_all(server, ws, "READMETADATA")
    return server.get("/product/metadatabyname", who, name=name, workspace=ws).json


def test_metadata_is_generated_once_then_served(server: Server, alice: Person, ws: str, tmp_path: Path) -> None:
    tif = make_geotiff(tmp_path / "scene.tif", band_tags={"UNIT": "metre"})
    ingested(server, alice, ws, tif)
    first = server.get("/product/metadatabyname", alice, name="scene.tif", workspace=ws)
    assert first.status_code == 200 and first.json == {"name": "Generating Metadata, try later"}
    (read,) = wait_all(server, ws, "READMETADATA")
    assert read["status"] == "DONE"
    tree = server.get("/product/metadatabyname", alice, name="scene.tif", workspace=ws).json
    assert tree["name"] == "scene.tif"
    by_name = {e["name"]: e for e in tree["elements"]}
    tags = {a["description"]: a["data"] for a in by_name["Tags"]["attributes"]}
    assert tags["AREA"] == "test-area" and tags["SENSOR"] == "made-in-test"
    crs = {a["description"]: a["data"] for a in by_name["CRS"]["attributes"]}
    assert crs["epsg"] == "4326"
    assert [e["name"] for e in by_name["Bounds"]["elements"]] == ["Native", "WGS84", "Footprint"]
    transform = {a["description"]: a["data"] for a in by_name["Transform"]["attributes"]}
    assert float(transform["a"]) == pytest.approx(0.01) and float(transform["c"]) == 10.0
    red = by_name["Bands"]["elements"][0]
    assert red["name"] == "red"
    attrs = {a["description"]: a["data"] for a in red["attributes"]}
    assert attrs["dtype"] == "float32" and attrs["nodata"] == "-9999.0"
    assert red["elements"][0]["attributes"][0] == {"description": "UNIT", "data": "metre", "dataType": 0,
                                                   "numElems": 0}
    product = server.get("/product/byname", alice, name="scene.tif", workspace=ws).json
    assert product["metadataFileCreated"] is True and product["metadataFileReference"].endswith(".json")
    assert (server.settings.data_dir / "metadata" / product["metadataFileReference"]).is_file()
    server.get("/product/metadatabyname", alice, name="scene.tif", workspace=ws)
    assert len(processes_of(server, ws, "READMETADATA")) == 1


def test_metadata_asked_again_while_generating_queues_nothing_more(server: Server, alice: Person, ws: str,
                                                                    tif: Path, monkeypatch) -> None:
    ingested(server, alice, ws, tif)
    release = threading.Event()
    real = server.services.products.read_metadata

    def slow(workspace: dict, path: Path) -> dict:
        release.wait(10)
        return real(workspace, path)

    monkeypatch.setattr(server.services.products, "read_metadata", slow)
    answer = server.get("/product/metadatabyname", alice, name="scene.tif", workspace=ws).json
    assert answer == {"name": "Generating Metadata, try later"}
    (queued,) = processes_of(server, ws, "READMETADATA")
    wait_process(server, queued["processObjId"], frozenset({"RUNNING"}))  # reading now
    for _ in range(2):
        answer = server.get("/product/metadatabyname", alice, name="scene.tif", workspace=ws).json
        assert answer == {"name": "Generating Metadata, try later"}
    release.set()
    assert len(wait_all(server, ws, "READMETADATA")) == 1


def test_metadata_that_cannot_be_read_is_null_afterwards(server: Server, alice: Person, ws: str, tif: Path) -> None:
    ingested(server, alice, ws, tif)
    (folder(server, ws) / "scene.tif").unlink()
    assert server.get("/product/metadatabyname", alice, name="scene.tif", workspace=ws).json["name"].startswith(
        "Generating")
    (read,) = wait_all(server, ws, "READMETADATA")
    assert read["status"] == "ERROR"
    r = server.get("/product/metadatabyname", alice, name="scene.tif", workspace=ws)
    assert r.status_code == 200 and r.json is None
    assert len(processes_of(server, ws, "READMETADATA")) == 1


@pytest.mark.parametrize("path", ["/product/byname", "/product/metadatabyname"])
def test_read_endpoints_answer_null(server: Server, alice: Person, bob: Person, ws: str, tif: Path,
                                    path: str) -> None:
    ingested(server, alice, ws, tif)
    for who, params in [(None, {"name": "scene.tif", "workspace": ws}),
                        (bob, {"name": "scene.tif", "workspace": ws}),
                        (alice, {"name": "missing.tif", "workspace": ws}),
                        (alice, {"name": "scene.tif", "workspace": "no-such-workspace"}),
                        (alice, {"workspace": ws})]:
        r = server.get(path, who, **params)
        assert r.status_code == 200 and r.text == "null", (who, params, r.text)


@pytest.mark.parametrize("path", ["/product/byws", "/product/bywslight", "/product/namesbyws"])
def test_list_endpoints_answer_an_empty_list(server: Server, alice: Person, bob: Person, ws: str, tif: Path,
                                             path: str) -> None:
    ingested(server, alice, ws, tif)
    assert len(server.get(path, alice, workspace=ws).json) == 1
    for who, params in [(None, {"workspace": ws}), (bob, {"workspace": ws}), (alice, {"workspace": "nope"}),
                        (alice, {})]:
        r = server.get(path, who, **params)
        assert r.status_code == 200 and r.json == [], (who, params)


# -- addtows ----------------------------------------------------------------------------------------------
def test_addtows_links_a_file_already_in_the_folder(server: Server, alice: Person, bob: Person, ws: str,
                                                    tif: Path) -> None:
    (folder(server, ws) / "placed.tif").write_bytes(tif.read_bytes())
    r = server.get("/product/addtows", alice, name="placed.tif", workspace=ws)
    assert r.status_code == 200 and r.json == {"boolValue": True}
    assert server.get("/product/byname", alice, name="placed.tif", workspace=ws).json["bbox"] == BBOX_4326
    assert server.get("/product/addtows", alice, name="placed.tif", workspace=ws).json == {"boolValue": True}
    assert server.get("/product/namesbyws", alice, workspace=ws).json == ["placed.tif"]
    for who, name in [(alice, "absent.tif"), (bob, "placed.tif"), (None, "placed.tif"), (alice, "../x.tif")]:
        r = server.get("/product/addtows", who, name=name, workspace=ws)
        assert r.status_code == 200 and r.text == "null"
    share(server, alice, ws, bob, "read")
    assert server.get("/product/addtows", bob, name="placed.tif", workspace=ws).text == "null"


# -- update ------------------------------------------------------------------------------------------------
def test_update_changes_only_friendly_name_style_and_description(server: Server, alice: Person, ws: str,
                                                                 tif: Path) -> None:
    ingested(server, alice, ws, tif)
    r = server.post("/product/update", alice, params={"workspace": ws}, json={
        "fileName": "scene.tif", "productFriendlyName": "Nice", "style": "viridis", "description": "about",
        "name": "hacked", "bbox": "0,0,0,0,0,0,0,0,0,0", "bandsGroups": {"nodeName": "x", "bands": []},
        "metadataFileReference": "../../etc/passwd"})
    assert r.status_code == 200
    product = server.get("/product/byname", alice, name="scene.tif", workspace=ws).json
    assert (product["productFriendlyName"], product["style"], product["description"]) == ("Nice", "viridis", "about")
    assert product["name"] == "scene" and product["bbox"] == BBOX_4326 and len(product["bandsGroups"]["bands"]) == 2
    assert "metadataFileReference" not in product
    # fields left out are kept; an explicit null clears
    server.post("/product/update", alice, params={"workspace": ws}, json={"fileName": "scene.tif", "style": None})
    product = server.get("/product/byname", alice, name="scene.tif", workspace=ws).json
    assert "style" not in product and product["productFriendlyName"] == "Nice"


def test_update_statuses(server: Server, alice: Person, bob: Person, carol: Person, ws: str, tif: Path) -> None:
    ingested(server, alice, ws, tif)
    share(server, alice, ws, bob, "read")
    share(server, alice, ws, carol, "write")
    body = {"fileName": "scene.tif", "description": "x"}
    assert server.post("/product/update", None, params={"workspace": ws}, json=body).status_code == 401
    assert server.post("/product/update", bob, params={"workspace": ws}, json=body).status_code == 403
    assert server.post("/product/update", carol, params={"workspace": ws}, json=body).status_code == 200
    # a caller's mistake is a 400, never a 500 (gaps.md, first section)
    assert server.post("/product/update", alice, params={"workspace": ws},
                       json={"fileName": "missing.tif"}).status_code == 400
    assert server.post("/product/update", alice, params={"workspace": ws}, json={}).status_code == 400
    assert server.post("/product/update", alice, params={"workspace": ws}, body="{not json",
                       content_type="application/json").status_code == 400
    r = server.post("/product/update", alice, params={"workspace": ws}, json={"fileName": "../scene.tif"})
    assert r.status_code == 400 and r.json["message"]


# -- delete ------------------------------------------------------------------------------------------------
def test_delete_removes_file_sidecars_record_and_updates_storage(server: Server, alice: Person, ws: str,
                                                                 tif: Path) -> None:
    ingested(server, alice, ws, tif)
    here = folder(server, ws)
    (here / "scene.tif.aux.xml").write_text("<PAMDataset/>")
    (here / "scene.tif.ovr").write_bytes(b"o" * 10)
    (here / "scene.tfw").write_text("0.01\n0\n0\n-0.01\n10\n41\n")
    (here / "keep.tif").write_bytes(b"k")
    metadata_when_ready(server, alice, ws, "scene.tif")
    reference = server.services.products.get(ws, "scene.tif")["metadataFileReference"]
    r = server.get("/product/delete", alice, name="scene.tif", workspace=ws)
    assert r.status_code == 200 and r.json == {"intValue": 200, "boolValue": True}
    assert sorted(p.name for p in here.iterdir()) == ["keep.tif"]
    assert server.get("/product/namesbyws", alice, workspace=ws).json == []
    assert not (server.settings.data_dir / "metadata" / reference).exists()
    assert storage(server, ws) == 1
    (message,) = messages(server, ws, "DELETE")
    assert message["payload"] is None and message["messageResult"] == "OK" and message["workspaceId"] == ws


def test_delete_flags(server: Server, alice: Person, ws: str, tmp_path: Path) -> None:
    for name in ("a.tif", "b.tif"):
        ingested(server, alice, ws, make_geotiff(tmp_path / name, count=1))
    r = server.get("/product/delete", alice, name="a.tif", workspace=ws, deletefile="false")
    assert r.json["boolValue"] is True
    assert (folder(server, ws) / "a.tif").exists() and server.services.products.get(ws, "a.tif") is None
    server.get("/product/delete", alice, name="b.tif", workspace=ws, deletefile="true", deletelayer="false")
    assert not (folder(server, ws) / "b.tif").exists()


def test_delete_failures_are_markers(server: Server, alice: Person, bob: Person, ws: str, tif: Path) -> None:
    ingested(server, alice, ws, tif)
    share(server, alice, ws, bob, "read")
    cases = [(None, "scene.tif", 401), (bob, "scene.tif", 403), (alice, "missing.tif", 404),
             (alice, "../scene.tif", 400)]
    for who, name, code in cases:
        r = server.get("/product/delete", who, name=name, workspace=ws)
        assert r.status_code == 200 and r.json["boolValue"] is False and r.json["intValue"] == code, (who, name)
    assert (folder(server, ws) / "scene.tif").exists()
    assert server.get("/product/delete", alice, name="scene.tif", workspace="nope").json["intValue"] == 400


def test_deletelist_deletes_in_the_background(server: Server, alice: Person, ws: str, tmp_path: Path) -> None:
    for name in ("a.tif", "b.tif", "c.tif"):
        ingested(server, alice, ws, make_geotiff(tmp_path / name, count=1))
    r = server.post("/product/deletelist", alice, params={"workspace": ws}, json=["a.tif", "b.tif"])
    assert r.status_code == 200 and r.json["boolValue"] is True and r.json["intValue"] == 200
    process = wait_process(server, r.json["stringValue"])
    assert process["status"] == "DONE" and process["operationType"] == "DELETE"
    assert server.get("/product/namesbyws", alice, workspace=ws).json == ["c.tif"]
    assert sorted(p.name for p in folder(server, ws).iterdir()) == ["c.tif"]
    assert [m["messageResult"] for m in messages(server, ws, "DELETE")] == ["OK"]
    # a name that is not there: the others go, the process ends in ERROR saying which
    r = server.post("/product/deletelist", alice, params={"workspace": ws}, json=["c.tif", "ghost.tif"])
    process = wait_process(server, r.json["stringValue"])
    assert process["status"] == "ERROR" and "ghost.tif" in process["payload"]
    assert server.get("/product/namesbyws", alice, workspace=ws).json == []


def test_deletelist_failures(server: Server, alice: Person, bob: Person, ws: str, tif: Path) -> None:
    ingested(server, alice, ws, tif)
    share(server, alice, ws, bob, "read")
    for who, body in [(bob, ["scene.tif"]), (alice, ["../scene.tif"]), (alice, ["scene.tif", None]), (alice, [3])]:
        r = server.post("/product/deletelist", who, params={"workspace": ws}, json=body)
        assert r.status_code == 200 and r.json["boolValue"] is False and r.json["intValue"] == 500, (who, body)
    r = server.post("/product/deletelist", alice, params={"workspace": "nope"}, json=["scene.tif"])
    assert r.json == {"intValue": 500, "stringValue": "MSG_ERROR_INVALID_WORKSPACE", "boolValue": False}
    assert server.post("/product/deletelist", None, params={"workspace": ws}, json=["x"]).json["boolValue"] is False
    assert server.post("/product/deletelist", alice, params={"workspace": ws}, json=[]).json == {
        "intValue": 200, "boolValue": True}
    assert processes_of(server, ws, "DELETE") == []
    assert server.get("/product/namesbyws", alice, workspace=ws).json == ["scene.tif"]


# -- permissions -------------------------------------------------------------------------------------------
def test_permission_matrix(server: Server, alice: Person, bob: Person, carol: Person, admin: Person, ws: str,
                           tif: Path) -> None:
    dave = server.add_user("dave@example.org")
    ingested(server, alice, ws, tif)
    share(server, alice, ws, bob, "read")
    share(server, alice, ws, carol, "write")
    for who, can_read, can_write in [(alice, True, True), (carol, True, True), (bob, True, False),
                                     (dave, False, False), (admin, True, True)]:
        names = server.get("/product/namesbyws", who, workspace=ws).json
        assert (names == ["scene.tif"]) is can_read, who
        assert (server.get("/product/byname", who, name="scene.tif", workspace=ws).json is not None) is can_read
        r = upload(server, who, ws, tif, name=f"by-{who.user_id.split('@')[0]}.tif", by_lib=True)
        assert r.status_code == (200 if can_write else 403), (who, r.text)
        r = server.post("/product/update", who, params={"workspace": ws},
                        json={"fileName": "scene.tif", "description": who.user_id})
        assert r.status_code == (200 if can_write else 403)
    # a public workspace is readable by anyone logged in
    server.services.workspaces.workspaces.update(ws, {"isPublic": True})
    assert server.get("/product/namesbyws", dave, workspace=ws).json == ["scene.tif"]
    assert upload(server, dave, ws, tif, name="x.tif", by_lib=True).status_code == 403


def test_upload_statuses_and_bad_bodies_are_never_500(server: Server, alice: Person, ws: str, tif: Path) -> None:
    assert upload(server, None, ws, tif).status_code == 401
    assert upload(server, alice, "no-such-ws", tif).status_code == 400
    for body, ctype in [(b"plain bytes", "application/octet-stream"), (b"", "multipart/form-data; boundary=x"),
                        (b"--x\r\ngarbage", "multipart/form-data; boundary=x"),
                        (b'--x\r\nContent-Disposition: form-data; name="other"\r\n\r\nv\r\n--x--\r\n',
                         "multipart/form-data; boundary=x"),
                        (b"--x--\r\n", "multipart/form-data")]:
        for path in ("/product/uploadfile", "/product/uploadfilebylib"):
            r = server.post(path, alice, params={"workspace": ws, "name": "a.tif"}, body=body, content_type=ctype)
            assert r.status_code == 400, (path, body, ctype, r.status_code, r.text)
            assert r.json["message"]
    assert list(folder(server, ws).iterdir()) == []
    assert processes_of(server, ws, "INGEST") == []


# -- the path guard ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", TRAVERSAL_NAMES)
def test_traversal_names_are_refused_everywhere(server: Server, alice: Person, ws: str, tif: Path,
                                                bad: str) -> None:
    ingested(server, alice, ws, tif)
    root = server.settings.data_dir
    before = sorted(p for p in root.rglob("*") if "process" not in p.name and "message" not in p.name)
    assert upload(server, alice, ws, tif, name=bad).status_code == 400
    assert upload(server, alice, ws, tif, name=bad, by_lib=True).status_code == 400
    assert server.get("/product/addtows", alice, name=bad, workspace=ws).text == "null"
    assert server.get("/product/byname", alice, name=bad, workspace=ws).text == "null"
    assert server.get("/product/metadatabyname", alice, name=bad, workspace=ws).text == "null"
    assert server.post("/product/update", alice, params={"workspace": ws}, json={"fileName": bad}).status_code in (
        400, 500)
    assert server.get("/product/delete", alice, name=bad, workspace=ws).json["boolValue"] is False
    assert server.post("/product/deletelist", alice, params={"workspace": ws}, json=[bad]).json["intValue"] == 500
    after = sorted(p for p in root.rglob("*") if "process" not in p.name and "message" not in p.name)
    assert [p for p in after if p not in before and p.suffix != ".json"] == []
    assert (folder(server, ws) / "scene.tif").exists()


@pytest.mark.parametrize("bad", TRAVERSAL_WORKSPACES)
def test_traversal_workspaces_are_refused(server: Server, alice: Person, tif: Path, bad: str) -> None:
    assert upload(server, alice, bad, tif).status_code == 400
    assert upload(server, alice, bad, tif, by_lib=True).status_code == 400
    assert server.get("/product/byws", alice, workspace=bad).json == []
    assert server.get("/product/delete", alice, name="scene.tif", workspace=bad).json["intValue"] == 400
    assert not any(p.name == "scene.tif" for p in server.settings.data_dir.rglob("*"))


# -- workspace deletion ------------------------------------------------------------------------------------
def test_deleting_the_workspace_removes_records_metadata_and_layers(server: Server, alice: Person, ws: str,
                                                                    tif: Path) -> None:
    ingested(server, alice, ws, tif)
    metadata_when_ready(server, alice, ws, "scene.tif")
    r = server.get("/filebuffer/publishband", alice, fileUrl="scene.tif", workspace=ws, band="red")
    wait_process(server, r.json["payload"])
    layers = list((server.settings.data_dir / "layers").glob("*.png"))
    assert len(layers) == 1
    assert server.delete("/ws/delete", alice, workspace=ws, deletefile="true", deletelayer="true").status_code == 200
    assert server.services.products.products.find(workspaceId=ws) == []
    assert server.services.products.layers.find(workspaceId=ws) == []
    assert list((server.settings.data_dir / "metadata").iterdir()) == []
    assert not layers[0].exists()


def test_sdk_update_sends_only_the_fields_set(server: Server, alice: Person, ws: str, tif: Path) -> None:
    from wasdi_sdk.models import ProductViewModel

    ingested(server, alice, ws, tif)
    with server.sdk(alice) as sdk:
        sdk.products.update(ws, ProductViewModel(file_name="scene.tif", description="only this"))
        sdk.products.update(ws, ProductViewModel(file_name="scene.tif", style="grey"))
        product = sdk.products.get("scene.tif", ws)
    assert product.description == "only this" and product.style == "grey" and product.product_friendly_name == "scene"
    assert user_of(server, alice).user_id == alice.user_id


def test_http_client_helper_sees_the_legacy_base_path(server: Server, alice: Person, ws: str, tif: Path) -> None:
    ingested(server, alice, ws, tif)
    with http(server, alice) as client:
        r = client.get("/wasdiwebserver/rest/product/namesbyws", params={"workspace": ws})
    assert r.json() == ["scene.tif"]


# -- without rasterio, sidecars, bad input -----------------------------------------------------------------
def test_the_server_never_imports_rasterio_or_numpy_by_itself(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['rasterio'] = None; sys.modules['numpy'] = None\n"
        "from wasdi_server import create_app, load_settings\n"
        f"app = create_app(load_settings(data_dir={str(tmp_path / 'd')!r}, environ={{}}))\n"
        "app.services.close()\n"
        "print('ok')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={"PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}, check=False)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_without_rasterio_a_geotiff_is_a_file_level_product(server: Server, alice: Person, ws: str, tif: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "rasterio", None)  # "import rasterio" now raises ImportError
    record = ingested(server, alice, ws, tif)
    assert record["readable"] is False and record["bands"] == [] and record["bbox"] is None
    tree = metadata_when_ready(server, alice, ws, "scene.tif")
    assert "the 'geo' extra, rasterio, is not installed" in tree["elements"][0]["name"]
    r = server.get("/filebuffer/publishband", alice, fileUrl="scene.tif", workspace=ws, band="red")
    assert r.text == "null"


@pytest.mark.parametrize(("name", "present", "expected"), [
    ("scene.tif", ["scene.tif.aux.xml", "scene.tif.ovr", "scene.tfw", "scene.tif.msk", "other.tif"],
     ["scene.tfw", "scene.tif.aux.xml", "scene.tif.msk", "scene.tif.ovr"]),
    ("roads.shp", ["roads.dbf", "roads.shx", "roads.prj", "roads.cpg", "roads.qix", "roads2.dbf"],
     ["roads.cpg", "roads.dbf", "roads.prj", "roads.qix", "roads.shx"]),
    ("band.img", ["band.hdr", "band.img.aux.xml", "band2.hdr"], ["band.hdr", "band.img.aux.xml"]),
    ("cube.bin", ["cube.hdr", "cube.bin.hdr"], ["cube.bin.hdr", "cube.hdr"]),
    ("prod.dim", ["prod.data", "prod.dim.aux.xml", "prod2.data"], ["prod.data", "prod.dim.aux.xml"]),
    ("dem.asc", ["dem.prj"], ["dem.prj"]),
    ("gfs.grib", ["gfs.grib.gbx9", "gfs.grib.ncx4"], ["gfs.grib.gbx9", "gfs.grib.ncx4"]),
    ("notes.txt", ["notes.hdr", "notes.dbf"], []),
])
def test_sidecars_of_known_formats(tmp_path: Path, name: str, present: list[str], expected: list[str]) -> None:
    (tmp_path / name).write_bytes(b"x")
    for other in present:
        if other.endswith(".data"):
            (tmp_path / other).mkdir()
        else:
            (tmp_path / other).write_bytes(b"s")
    assert sorted(p.name for p in product_files.sidecars(tmp_path, name)) == expected


def test_no_bad_input_is_a_500(server: Server, alice: Person, ws: str, tif: Path) -> None:
    """Garbage in every parameter of every /product, /filebuffer and /catalog endpoint: never HTTP 500 (except
    /product/update, whose contract lists 500 for a product it does not know)."""
    ingested(server, alice, ws, tif)
    junk = ["", " ", "x" * 300, "../..", "\u00e9\u00e8\u4e2d.tif", "scene.tif\n", "%00", "{}", "true", "-1"]
    gets = {
        "/product/addtows": ("name", "workspace"), "/product/byname": ("name", "workspace"),
        "/product/metadatabyname": ("name", "workspace"), "/product/byws": ("workspace",),
        "/product/bywslight": ("workspace",), "/product/namesbyws": ("workspace",),
        "/product/delete": ("name", "workspace", "deletefile", "deletelayer"),
        "/filebuffer/share": ("originWorkspaceId", "destinationWorkspaceId", "productName", "parent"),
        "/filebuffer/download": ("fileUrl", "name", "provider", "bbox", "parent", "platform", "workspace"),
        "/filebuffer/publishband": ("fileUrl", "workspace", "band", "style", "parent"),
        "/catalog/checkdownloadavaialibitybyname": ("filename", "workspace", "procws"),
        "/catalog/downloadbyname": ("filename", "workspace", "procws"),
        "/catalog/fileOnNode": ("filename", "workspace"),
        "/catalog/properties": ("file", "workspace", "getchecksum"),
        "/catalog/upload/ingestinws": ("file", "workspace", "style", "parent", "platform"),
    }
    for path, names in gets.items():
        for value in junk:
            for name in names:
                params = {n: ("scene.tif" if "name" in n.lower() or n in ("file", "filename", "fileUrl")
                              else ws if "orkspace" in n else "red") for n in names}
                params[name] = value
                r = server.get(path, alice, **params)
                assert r.status_code != 500, (path, params, r.text)
    bodies = [b"", b"null", b"[]", b"{}", b"[1]", b"\xff\xfe", b'{"fileName": 3}', b'{"fileUrl": []}',
              b'"text"', b"{" * 1000]
    for path, params in [("/product/deletelist", {"workspace": ws}), ("/filebuffer/download", {}),
                         ("/product/update", {"workspace": ws})]:
        for body in bodies:
            r = server.post(path, alice, params=params, body=body, content_type="application/json")
            assert r.status_code != 500, (path, body, r.text)
    assert (folder(server, ws) / "scene.tif").read_bytes() == tif.read_bytes()


def test_a_snap_product_has_one_band_per_envi_image(server: Server, alice: Person, ws: str) -> None:
    here = folder(server, ws)
    (here / "S1A_IW_GRDH_x.dim").write_text("<Dimap_Document/>")
    data = here / "S1A_IW_GRDH_x.data"
    data.mkdir()
    for band in ("Amplitude_VV", "Sigma0_VV"):
        make_geotiff(data / f"{band}.img", count=1, descriptions=(None,))
    # rasterio wrote GeoTIFFs named .img; GDAL reads them by content, as it reads SNAP's ENVI images
    r = server.get("/product/addtows", alice, name="S1A_IW_GRDH_x.dim", workspace=ws)
    assert r.json == {"boolValue": True}
    product = server.get("/product/byname", alice, name="S1A_IW_GRDH_x.dim", workspace=ws).json
    assert [b["name"] for b in product["bandsGroups"]["bands"]] == ["Amplitude_VV", "Sigma0_VV"]
    assert product["bbox"] == BBOX_4326
    assert server.services.products.get(ws, "S1A_IW_GRDH_x.dim")["platform"] == "Sentinel-1"
    r = server.get("/filebuffer/publishband", alice, fileUrl="S1A_IW_GRDH_x.dim", workspace=ws, band="Sigma0_VV")
    assert wait_process(server, r.json["payload"])["status"] == "DONE"
    assert storage(server, ws) == sum(p.stat().st_size for p in here.rglob("*") if p.is_file())
