"""Products end to end on a real server process: the SDK (upload, bbox and bands, band publishing, the layer
image, download back) and the official ``wasdi`` library (addFileToWASDI, getProductsByActiveWorkspace,
getPath downloading a missing file, deleteProduct, importProduct from file:// and from a local HTTP server).
"""

from __future__ import annotations

import hashlib
import http.server
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest
import rasterio
from rasterio.transform import from_origin

pytestmark = pytest.mark.e2e

BBOX = "40.000000,10.000000,40.000000,11.000000,41.000000,11.000000,41.000000,10.000000,40.000000,10.000000"


def make_geotiff(path: Path, bands: int = 2) -> Path:
    with rasterio.open(path, "w", driver="GTiff", width=80, height=80, count=bands, dtype="uint16",
                       crs="EPSG:4326", transform=from_origin(10.0, 41.0, 1 / 80, 1 / 80)) as dst:
        for i in range(bands):
            dst.write((np.arange(6400, dtype="uint16").reshape(80, 80) * (i + 1)), i + 1)
        dst.set_band_description(1, "vv")
    return path


@pytest.fixture
def web(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    root = tmp_path / "web"
    root.mkdir()

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, directory=str(root), **kwargs)

        def log_message(self, *args) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", root
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_sdk_upload_publish_and_download(server, accounts, tmp_path: Path) -> None:
    tif = make_geotiff(tmp_path / "scene.tif")
    with server.sdk(accounts.alice) as sdk:
        ws = sdk.workspaces.create(name="data").string_value
        product = sdk.upload_and_ingest(ws, tif, poll_interval=0.1)
        assert product.bbox == BBOX
        assert [(b.name, b.width, b.height) for b in product.bands_groups.bands] == [("vv", 80, 80),
                                                                                    ("band_2", 80, 80)]
        queued = sdk.file_buffer.publish_band("scene.tif", ws, "vv")
        assert queued.message_code == "WAITFORRABBIT"
        assert sdk.wait_for_process(queued.payload, poll_interval=0.1).status == "DONE"
        published = sdk.file_buffer.publish_band("scene.tif", ws, "vv")
        assert published.message_code == "PUBLISHBAND"
        url = published.payload["geoserverUrl"]
        assert url == server.base_url + "/wms"
        tile = {"service": "WMS", "request": "GetMap", "version": "1.1.1", "layers": published.payload["layerId"],
                "styles": "", "format": "image/png", "transparent": "true", "srs": "EPSG:4326",
                "bbox": "10,40,11,41", "width": "256", "height": "256"}
        image = httpx.get(url, params={**tile, "token": server.token(accounts.alice)}, timeout=30)
        assert image.status_code == 200 and image.content.startswith(b"\x89PNG")
        assert httpx.get(url, params=tile, timeout=30).status_code == 401
        band = sdk.products.get("scene.tif", ws).bands_groups.bands[0]
        assert band.published and band.layer_id == published.payload["layerId"]
        back = sdk.files.download("scene.tif", ws, tmp_path / "back.tif")
        assert back.read_bytes() == tif.read_bytes()
        assert sdk.files.properties("scene.tif", ws, getchecksum=True)["checksum"] == hashlib.md5(
            tif.read_bytes()).hexdigest()
        assert sdk.workspaces.get(ws).storage_size != "0B"


def test_the_official_library_works_with_products(waspy, server, accounts, tmp_path: Path, web) -> None:
    with server.sdk(accounts.alice) as sdk:
        ws = sdk.workspaces.create(name="waspy data").string_value
        remote = make_geotiff(tmp_path / "remote.tif", bands=1)
        sdk.upload_and_ingest(ws, remote, poll_interval=0.1)
    config = {"USER": accounts.alice, "PASSWORD": accounts.password, "BASEURL": server.base_url,
              "BASEPATH": str(tmp_path / "waspy-data") + "/", "WORKSPACE": "waspy data", "REQUESTSTIMEOUT": 30,
              "POLLINGSLEEPSECONDS": 1, "VERBOSE": False}
    (tmp_path / "config.json").write_text(json.dumps(config))
    assert waspy.init(str(tmp_path / "config.json")) is True
    assert waspy.getActiveWorkspaceId() == ws
    save = Path(waspy.getSavePath())
    assert save == tmp_path / "waspy-data" / accounts.alice / ws

    # addFileToWASDI: a local file is uploaded (uploadfilebylib), ingested (ingestinws) and waited for
    local = make_geotiff(save / "local.tif")
    assert waspy.addFileToWASDI("local.tif") == "DONE"
    with server.sdk(accounts.alice) as sdk:
        assert sdk.products.get("local.tif", ws).bbox == BBOX
    assert (server.data_dir / "files" / accounts.alice / ws / "local.tif").read_bytes() == local.read_bytes()
    assert sorted(waspy.getProductsByActiveWorkspace()) == ["local.tif", "remote.tif"]
    assert waspy.getProductBBOX("local.tif") == BBOX

    # getPath: on WASDI but not here, so it is downloaded
    assert not (save / "remote.tif").exists()
    path = waspy.getPath("remote.tif")
    assert Path(path) == save / "remote.tif" and Path(path).read_bytes() == remote.read_bytes()
    assert waspy.getPath("not-there.tif") == str(save / "not-there.tif")

    # deleteProduct
    assert waspy.deleteProduct("local.tif") is True
    time.sleep(0.2)
    assert waspy.getProductsByActiveWorkspace() == ["remote.tif"]
    assert not (server.data_dir / "files" / accounts.alice / ws / "local.tif").exists()

    # importProduct from a file:// link (the server's import folder) and from a local HTTP server
    imports = server.data_dir / "imports"
    imports.mkdir(exist_ok=True)
    make_geotiff(imports / "from-disk.tif")
    found = {"link": (imports / "from-disk.tif").as_uri(), "title": "from-disk", "footprint": None,
             "provider": "LOCAL", "volumeName": None, "volumePath": None, "platform": None}
    assert waspy.importProduct(found) == "DONE"
    base, root = web
    make_geotiff(root / "from-web.tif", bands=1)
    found = {"link": f"{base}/from-web.tif", "title": "from-web", "provider": "EXT_WEB", "volumeName": None,
             "volumePath": None}
    assert waspy.importProduct(found) == "DONE"
    assert sorted(waspy.getProductsByActiveWorkspace()) == ["from-disk.tif", "from-web.tif", "remote.tif"]
    with server.sdk(accounts.alice) as sdk:
        assert sdk.products.get("from-web.tif", ws).bbox == BBOX
    # importing it again: the product is there, DONE at once
    assert waspy.importProduct(found) == "DONE"
