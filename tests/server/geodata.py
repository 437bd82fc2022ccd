"""Helpers of the product tests: GeoTIFFs made with rasterio, workspaces, uploads and waits."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import rasterio
from rasterio.transform import from_origin
from tests.conftest import Person, Server

from wasdi_server.domains.accounts.identity import User
from wasdi_server.launcher.box.readers import ReaderPool
from wasdi_server.providers.mapserver import LocalMapServer, StyleSource

BBOX_4326 = "40.000000,10.000000,40.000000,11.000000,41.000000,11.000000,41.000000,10.000000,40.000000,10.000000"
"""The footprint string of ``make_geotiff(..., crs="EPSG:4326")``: lon 10..11, lat 40..41."""


def local_map_server(root: Path, styles: StyleSource | None = None, max_size: int = 2048,
                     cache_bytes: int = 256 * 1024 * 1024) -> LocalMapServer:
    """A local map server at ``root`` over boxed readers, as the server composes it (``close()`` it)."""
    return LocalMapServer(root, ReaderPool(), styles, max_size, cache_bytes)


def make_geotiff(path: Path, *, crs: str | None = "EPSG:4326", count: int = 2, width: int = 100, height: int = 100,
                 descriptions: Sequence[str | None] = ("red", None), nodata: float | None = -9999.0,
                 origin: tuple[float, float] = (10.0, 41.0), pixel: float = 0.01, tags: dict[str, str] | None = None,
                 band_tags: dict[str, str] | None = None) -> Path:
    """A float32 GeoTIFF: band ``i`` holds ``(row * width + col) * i``; pixel (0, 0) is nodata."""
    transform = from_origin(origin[0], origin[1], pixel, pixel) if crs else None
    profile: dict[str, Any] = {"driver": "GTiff", "width": width, "height": height, "count": count,
                               "dtype": "float32"}
    if crs:
        profile.update(crs=crs, transform=transform)
    if nodata is not None:
        profile["nodata"] = nodata
    with rasterio.open(path, "w", **profile) as dst:
        for i in range(count):
            data = np.arange(width * height, dtype="float32").reshape(height, width) * (i + 1)
            if nodata is not None:
                data[0, 0] = nodata
            dst.write(data, i + 1)
            if i < len(descriptions) and descriptions[i]:
                dst.set_band_description(i + 1, descriptions[i])
        dst.update_tags(**(tags or {"AREA": "test-area", "SENSOR": "made-in-test"}))
        if band_tags:
            dst.update_tags(1, **band_tags)
    return path


def user_of(server: Server, who: Person) -> User:
    user = server.services.users.active_user(who.user_id)
    assert user is not None
    return user


def new_workspace(server: Server, who: Person, name: str = "w") -> str:
    return str(server.services.workspaces.create(user_of(server, who), name)["workspaceId"])


def share(server: Server, owner: Person, ws: str, who: Person, rights: str) -> None:
    server.services.workspaces.share(user_of(server, owner), ws, who.user_id, rights)


def folder(server: Server, ws: str) -> Path:
    return server.services.workspaces.folder(server.services.workspaces.load(ws))


def http(server: Server, who: Person | None) -> httpx.Client:
    """An httpx client of the in-process app (multipart bodies, raw answers)."""
    return httpx.Client(transport=httpx.WSGITransport(app=server.app), base_url="http://testserver",
                        headers=who.headers if who else {}, timeout=30)


def upload(server: Server, who: Person | None, ws: str, path: Path, name: str | None = None, *,
           by_lib: bool = False) -> httpx.Response:
    endpoint = "/product/uploadfilebylib" if by_lib else "/product/uploadfile"
    params = {"workspace": ws, "name": path.name if name is None else name}
    with http(server, who) as client, open(path, "rb") as handle:
        return client.post(endpoint, params=params, files={"file": (path.name, handle)})


def wait_process(server: Server, pid: str, statuses: frozenset[str] = frozenset({"DONE", "ERROR", "STOPPED"}),
                 timeout: float = 20.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        record = server.services.processes.get(pid)
        if record and record["status"] in statuses:
            return dict(record)
        time.sleep(0.02)
    raise AssertionError(f"{pid} never reached {set(statuses)}: {server.services.processes.get(pid)}")


def processes_of(server: Server, ws: str, operation: str) -> list[dict[str, Any]]:
    return [r for r in server.services.processes.by_workspace(ws) if r["operationType"] == operation]


def wait_all(server: Server, ws: str, operation: str, count: int = 1, timeout: float = 20.0) -> list[dict[str, Any]]:
    """The ``operation`` processes of ``ws`` once ``count`` of them have ended (all DONE/ERROR/STOPPED)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = processes_of(server, ws, operation)
        if len(found) >= count and all(r["status"] in ("DONE", "ERROR", "STOPPED") for r in found):
            return found
        time.sleep(0.02)
    raise AssertionError(f"{operation} in {ws}: {processes_of(server, ws, operation)}")


def ingested(server: Server, who: Person, ws: str, path: Path, name: str | None = None) -> dict[str, Any]:
    """Upload with /product/uploadfile and wait for the INGEST; the product record."""
    before = len(processes_of(server, ws, "INGEST"))
    response = upload(server, who, ws, path, name)
    assert response.status_code == 200, response.text
    done = wait_all(server, ws, "INGEST", before + 1)
    assert all(r["status"] == "DONE" for r in done), done
    record = server.services.products.get(ws, name or path.name)
    assert record is not None
    return dict(record)


def messages(server: Server, ws: str, code: str | None = None) -> list[dict[str, Any]]:
    return [m for m in server.messages_of(ws)
            if m["messageCode"] != "UPDATEPROCESSES" and (code is None or m["messageCode"] == code)]


TRAVERSAL_NAMES = ("../evil.tif", "..", "a/b.tif", "a\\b.tif", "/etc/passwd", "x/../../y.tif", ".hidden.tif",
                   "nul\x00.tif", "..%2f..%2fevil.tif")
"""Product names the path guard must refuse (the URL-encoded one only after decoding once)."""
TRAVERSAL_WORKSPACES = ("../..", "..", "a/b", "../../etc", "x\\y")
