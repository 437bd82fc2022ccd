"""Users' rasters are read only inside a box, as an attacker would try otherwise: a VRT uploaded as a product (or
put in place of a published one) whose raw band points at the server's ``admin.key`` or ``/etc/passwd``,
whose source is another user's product, or a ``/vsicurl/`` URL, is refused, at ingestion and when drawn or
queried through the WMS, while a normal GeoTIFF of the same workspace is still drawn and read."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.conftest import Person, Server
from tests.environment import require
from tests.png_decoding import decode_png
from tests.server.geodata import folder, ingested, make_geotiff, new_workspace, wait_process
from tests.server.test_wms import WEB_CLIENT_TILE, exception_code, publish, wms

from wasdi_server.launcher.box import world

SECRET = b"ADMIN-KEY-" + b"s3cr3t" * 6
TILE = "1113194,4865942,1224514,5012341"
"""A web-mercator tile over the scenes of ``make_geotiff`` (lon 10..11, lat 40..41)."""


@pytest.fixture(autouse=True)
def _bubblewrap() -> None:
    require(world.probe().works, "bubblewrap (/usr/bin/bwrap) cannot build a reader's world here: "
                                 + "; ".join(world.probe().missing()))


def raw_band_vrt(target: str, size: int = len(SECRET)) -> str:
    """A VRT whose one band is the raw bytes of ``target`` (one row of ``size`` bytes)."""
    return (f'<VRTDataset rasterXSize="{size}" rasterYSize="1"><SRS>EPSG:4326</SRS>'
            "<GeoTransform>10, 0.02, 0, 41, 0, -0.5</GeoTransform>"
            '<VRTRasterBand dataType="Byte" band="1" subClass="VRTRawRasterBand">'
            f'<SourceFilename relativetoVRT="0">{target}</SourceFilename><ImageOffset>0</ImageOffset>'
            f"<PixelOffset>1</PixelOffset><LineOffset>{size}</LineOffset></VRTRasterBand></VRTDataset>")


def source_vrt(target: str) -> str:
    """A VRT whose band 1 is band 1 of ``target`` (another raster, or a URL)."""
    return ('<VRTDataset rasterXSize="100" rasterYSize="100"><SRS>EPSG:4326</SRS>'
            "<GeoTransform>10, 0.01, 0, 41, 0, -0.01</GeoTransform>"
            '<VRTRasterBand dataType="Float32" band="1"><SimpleSource>'
            f'<SourceFilename relativeToVRT="0">{target}</SourceFilename><SourceBand>1</SourceBand>'
            "</SimpleSource></VRTRasterBand></VRTDataset>")


def admin_key(server: Server, bob: Person, tmp_path: Path) -> str:
    path = server.settings.data_dir / "admin.key"
    path.write_bytes(SECRET)
    return raw_band_vrt(str(path))


def etc_passwd(server: Server, bob: Person, tmp_path: Path) -> str:
    return raw_band_vrt("/etc/passwd", 16)


def bobs_product(server: Server, bob: Person, tmp_path: Path) -> str:
    bobs = new_workspace(server, bob, "bobs")
    (tmp_path / "bob").mkdir()
    ingested(server, bob, bobs, make_geotiff(tmp_path / "bob" / "private.tif", count=1))
    return source_vrt(str(folder(server, bobs) / "private.tif"))


def a_url(server: Server, bob: Person, tmp_path: Path) -> str:
    return source_vrt("/vsicurl/http://127.0.0.1:9/scene.tif")


HOSTILE: dict[str, Callable[[Server, Person, Path], str]] = {
    "raw band at <data_dir>/admin.key": admin_key, "raw band at /etc/passwd": etc_passwd,
    "source in another user's workspace": bobs_product, "/vsicurl/ source": a_url,
}
WHY = {"raw band at <data_dir>/admin.key": b"outside the workspace",
       "raw band at /etc/passwd": b"outside the workspace",
       "source in another user's workspace": b"outside the workspace", "/vsicurl/ source": b"/vsicurl/"}


@pytest.fixture
def normal(server: Server, alice: Person, tmp_path: Path) -> tuple[str, str]:
    """Alice's workspace with scene.tif published: (workspace id, layer id)."""
    ws = new_workspace(server, alice)
    ingested(server, alice, ws, make_geotiff(tmp_path / "scene.tif", count=1))
    return ws, publish(server, alice, ws)


def assert_normal_layer_still_works(server: Server, alice: Person, layer: str) -> None:
    drawn = wms(server, alice, **WEB_CLIENT_TILE, layers=layer, bbox=TILE)
    assert drawn.status_code == 200 and decode_png(drawn.content)[..., 3].any()
    value = wms(server, alice, **{**WEB_CLIENT_TILE, "request": "GetFeatureInfo"}, layers=layer, query_layers=layer,
                bbox=TILE, x="128", y="128", info_format="application/json")
    assert value.status_code == 200 and value.json()["features"][0]["properties"]["value"] > 0


@pytest.mark.parametrize("attack", list(HOSTILE))
def test_a_hostile_vrt_uploaded_as_a_product_is_not_read(server: Server, alice: Person, bob: Person,
                                                         tmp_path: Path, normal: tuple[str, str], attack: str) -> None:
    ws, layer = normal
    vrt = tmp_path / "steal.vrt"
    vrt.write_text(HOSTILE[attack](server, bob, tmp_path))
    record = ingested(server, alice, ws, vrt)
    assert not record["readable"] and record["bands"] == []  # nothing of it to publish, nothing read
    metadata = server.services.products.read_metadata(server.services.workspaces.load(ws),
                                                      folder(server, ws) / "steal.vrt")
    assert WHY[attack].decode() in str(metadata) and SECRET.decode() not in str(metadata)
    assert_normal_layer_still_works(server, alice, layer)


@pytest.mark.parametrize("attack", list(HOSTILE))
def test_a_published_product_swapped_for_a_hostile_vrt_is_refused_by_the_wms(
        server: Server, alice: Person, bob: Person, tmp_path: Path, normal: tuple[str, str], attack: str) -> None:
    """An app of the workspace (or an upload) replaces a published product by a VRT: the layer's next map and
    value are refused with a ServiceException, and nothing of the target comes back."""
    ws, layer = normal
    swap = make_geotiff(tmp_path / "swap.tif", count=1)
    ingested(server, alice, ws, swap)
    params = {"fileUrl": "swap.tif", "workspace": ws, "band": "red"}
    assert wait_process(server, server.get("/filebuffer/publishband", alice, **params).json["payload"])["status"] \
        == "DONE"
    swapped = str(server.get("/filebuffer/publishband", alice, **params).json["payload"]["layerId"])
    assert wms(server, alice, **WEB_CLIENT_TILE, layers=swapped, bbox=TILE).status_code == 200  # drawn, reader warm
    hostile = folder(server, ws) / "swap.tif"
    staged = hostile.with_name(".swap.part")
    staged.write_text(HOSTILE[attack](server, bob, tmp_path))
    os.replace(staged, hostile)

    value = wms(server, alice, **{**WEB_CLIENT_TILE, "request": "GetFeatureInfo"}, layers=swapped,
                query_layers=swapped, bbox=TILE, x="1", y="1", info_format="text/plain")
    drawn = wms(server, alice, **WEB_CLIENT_TILE, layers=swapped, bbox="1113000,4865942,1224514,5012341")
    for answer in (value, drawn):
        assert answer.status_code == 400 and exception_code(answer) == "NoApplicableCode", answer.text
        assert WHY[attack] in answer.content and SECRET not in answer.content and b"root:" not in answer.content
    assert_normal_layer_still_works(server, alice, layer)


def test_a_reader_lives_in_namespaces_of_its_own(server: Server, alice: Person, normal: tuple[str, str]) -> None:
    """The reader that drew the map is in a mount and a network namespace of its own (bubblewrap's), with no
    capability."""
    _, layer = normal
    assert wms(server, alice, **WEB_CLIENT_TILE, layers=layer, bbox=TILE).status_code == 200
    pids = server.services.maps.map_server.reads.process_ids()
    assert pids
    found = []
    held = []
    for pid in pids:
        for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
            for grandchild in [child, *Path(f"/proc/{child}/task/{child}/children").read_text().split()]:
                found.append({ns: os.readlink(f"/proc/{grandchild}/ns/{ns}") for ns in ("mnt", "net", "pid")})
                held.append(_capabilities(grandchild))
    mine = {ns: os.readlink(f"/proc/self/ns/{ns}") for ns in ("mnt", "net", "pid")}
    assert found and all(all(spaces[ns] != mine[ns] for ns in mine) for spaces in found), (found, mine)
    # a server run as root (as here in CI) would otherwise give the reader every capability of its namespace
    assert held and all(caps == {"CapEff": 0, "CapPrm": 0, "CapBnd": 0} for caps in held), held


def _capabilities(pid: str) -> dict[str, int]:
    """The effective, permitted and bounding capability sets of a process, as numbers."""
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return {key: int(value, 16) for key, _, value in (line.partition(":\t") for line in lines)
            if key in ("CapEff", "CapPrm", "CapBnd")}


def test_readers_of_the_last_published_layers_start_with_the_server(tmp_path: Path) -> None:
    """A server starting again starts a reader for its last published layer; the first tile uses it."""
    first = Server(tmp_path / "data")
    try:
        alice = first.add_user("alice@example.org")
        ws = new_workspace(first, alice)
        ingested(first, alice, ws, make_geotiff(tmp_path / "scene.tif", count=1))
        layer = publish(first, alice, ws)
    finally:
        first.close()
    again = Server(tmp_path / "data")
    try:
        readers = again.services.maps.map_server.reads
        # (on a busy machine the first server's last queued operation may already have started a reader here)
        again.services.maps.start_readers(2)
        deadline = time.monotonic() + 30
        while len(readers._idle) < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        started = readers.process_ids()
        assert started
        alice = Person("alice@example.org", again.services.sessions.open("alice@example.org"))
        assert wms(again, alice, **WEB_CLIENT_TILE, layers=layer, bbox=TILE).status_code == 200
        assert readers.process_ids() == started, [r.key for r in readers._started]  # drawn by the reader started ahead
    finally:
        again.close()


def test_a_layer_published_before_layers_named_their_folder_is_still_drawn(server: Server, alice: Person,
                                                                           normal: tuple[str, str]) -> None:
    """Older layers have no ``sourceFolder``: the reader is given the folder of the product their VRT reads."""
    _, layer = normal
    meta = server.settings.data_dir / "layers" / layer / "layer.json"
    data = json.loads(meta.read_text())
    del data["sourceFolder"]
    meta.write_text(json.dumps(data))
    drawn = wms(server, alice, **WEB_CLIENT_TILE, layers=layer, bbox="1113000,4865000,1224514,5012341")
    assert drawn.status_code == 200 and decode_png(drawn.content)[..., 3].any()
