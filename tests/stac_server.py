"""A real STAC API for the tests: stac-fastapi-pgstac over pgstac, on this machine's PostgreSQL (with PostGIS),
loaded with Sentinel-1 and Sentinel-2 items that carry the field names Earth Search and Planetary Computer use,
and their assets served over HTTP with range requests by a small file server of the test's own.

One per test session (per xdist worker), in a database of its own that is dropped at the end.  Where PostgreSQL,
PostGIS or the STAC server's packages are missing, the tests that need it skip with the reason, except under
``CI=true``, where they fail (``.ci/run`` installs PostGIS; the packages come with the ``test`` extra).
"""

from __future__ import annotations

import contextlib
import hashlib
import http.server
import os
import re
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests import environment
from tests.postgres import ADMIN_URL, admin_connection, with_database

S2_COUNT = 240
"""Sentinel-2 L2A items: past pgstac's and our old limits (100), as a real catalogue is."""
S1_COUNT = 60
DAMAGED_ITEM = 7
"""The Sentinel-2 item whose ``file:checksum`` does not match the bytes its asset server sends."""
FIRST_DAY = datetime(2024, 1, 1, tzinfo=UTC)
TILES = ("32TLR", "32TMR", "32TLQ", "32TMQ")
TILE_BOUNDS = {"32TLR": (6.3, 45.0, 7.7, 46.0), "32TMR": (7.6, 45.0, 9.0, 46.0),
               "32TLQ": (6.3, 44.1, 7.7, 45.1), "32TMQ": (7.6, 44.1, 9.0, 45.1)}


def s2_item(index: int, assets_url: str) -> dict[str, Any]:
    """An Earth Search v1 ``sentinel-2-l2a`` item: every true-colour asset is called ``TCI.tif``."""
    tile = TILES[index % len(TILES)]
    when = FIRST_DAY + timedelta(hours=10 * index)
    serial = "AB"[index % 2]
    item_id = f"S2{serial}_{tile}_{when:%Y%m%d}_{index}_L2A"
    west, south, east, north = TILE_BOUNDS[tile]
    folder = f"{assets_url}/sentinel-s2-l2a-cogs/{tile[:2]}/{tile[2]}/{tile[3:]}/{when:%Y/%-m}/{item_id}"
    visual_path = folder.removeprefix(assets_url) + "/TCI.tif"
    # file:checksum as the file extension writes it (a multihash: sha2-256); item 7's does not match its bytes
    digest = hashlib.sha256(asset_bytes(visual_path) + (b"damaged" if index == DAMAGED_ITEM else b"")).hexdigest()
    return {
        "type": "Feature", "stac_version": "1.0.0", "id": item_id, "collection": "sentinel-2-l2a",
        "bbox": [west, south, east, north],
        "geometry": {"type": "Polygon", "coordinates": [[[west, south], [east, south], [east, north],
                                                         [west, north], [west, south]]]},
        "properties": {
            "datetime": when.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), "platform": f"sentinel-2{serial.lower()}",
            "constellation": "sentinel-2", "instruments": ["msi"], "eo:cloud_cover": float(index * 7 % 100),
            "s2:product_type": "S2MSI2A", "sat:relative_orbit": 1 + index % 143, "mgrs:utm_zone": int(tile[:2]),
            "mgrs:latitude_band": tile[2], "mgrs:grid_square": tile[3:], "proj:epsg": 32632,
        },
        "links": [],
        "assets": {
            "visual": {"href": f"{folder}/TCI.tif", "type": "image/tiff; application=geotiff; profile=cloud-optimized",
                       "roles": ["visual"], "file:checksum": "1220" + digest,
                       "file:size": len(asset_bytes(visual_path))},
            "thumbnail": {"href": f"{folder}/thumbnail.jpg", "type": "image/jpeg", "roles": ["thumbnail"]},
        },
    }


def s1_item(index: int, assets_url: str) -> dict[str, Any]:
    """A Planetary Computer ``sentinel-1-grd`` item."""
    start = FIRST_DAY + timedelta(hours=12 * index, minutes=23)
    end = start + timedelta(seconds=25)
    serial = "AB"[index % 2]
    item_id = f"S1{serial}_IW_GRDH_1SDV_{start:%Y%m%dT%H%M%S}_{end:%Y%m%dT%H%M%S}_0{51000 + index}_0{index:05X}"
    return {
        "type": "Feature", "stac_version": "1.0.0", "id": item_id, "collection": "sentinel-1-grd",
        "bbox": [6.5, 44.5, 9.9, 46.6],
        "geometry": {"type": "Polygon", "coordinates": [[[6.5, 44.5], [9.9, 44.9], [9.5, 46.6], [6.5, 46.2],
                                                         [6.5, 44.5]]]},
        "properties": {
            "datetime": (start + timedelta(seconds=12)).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "start_datetime": start.strftime("%Y-%m-%dT%H:%M:%SZ"), "end_datetime": end.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "platform": f"SENTINEL-1{serial}", "constellation": "Sentinel-1", "instruments": ["c-sar"],
            "sar:instrument_mode": "IW", "sar:polarizations": ["VV", "VH"], "sar:product_type": "GRD",
            "sat:orbit_state": "ascending" if index % 2 else "descending", "sat:relative_orbit": 1 + index % 175,
        },
        "links": [],
        "assets": {"vv": {"href": f"{assets_url}/sentinel-1-grd/{item_id}/measurement/iw-vv.tiff",
                          "type": "image/tiff; application=geotiff; profile=cloud-optimized", "roles": ["data"]}},
    }


def collection(collection_id: str, description: str) -> dict[str, Any]:
    return {"type": "Collection", "stac_version": "1.0.0", "id": collection_id, "description": description,
            "license": "proprietary", "links": [],
            "extent": {"spatial": {"bbox": [[-180, -90, 180, 90]]},
                       "temporal": {"interval": [["2014-10-03T00:00:00Z", None]]}}}


def asset_bytes(path: str) -> bytes:
    """The content of an asset: different for every path, a few hundred KiB (so a transfer can be cut)."""
    seed = hashlib.sha256(path.encode()).digest()
    return (seed * (300_000 // len(seed) + 1))[:300_000 + seed[0] * 37]


@dataclass
class AssetServer:
    """Assets over HTTP/1.1 with ``Range`` (206 / 416), ``ETag`` and ``Content-Length``, and a switch to cut the
    next transfer of a path after some bytes, as a dropped connection does."""

    url: str = ""
    cut_after: dict[str, int] = field(default_factory=dict)
    requests: list[tuple[str, str | None]] = field(default_factory=list)
    """(path, Range header) of every GET."""
    api_keys: list[str | None] = field(default_factory=list)
    """The ``X-Api-Key`` header of every GET (EODAG's header authentication, in its tests)."""
    seconds_per_request: float = 0.0
    """How long each GET waits before it answers (a slow provider)."""
    busy: int = 0
    most_busy: int = 0
    """GETs under way now, and the most at once."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    files: dict[str, Path] = field(default_factory=dict)
    """Paths served from a file on disk instead of generated bytes (a big asset for the benchmark)."""


@contextlib.contextmanager
def asset_server() -> Iterator[AssetServer]:
    state = AssetServer()
    ranges = re.compile(r"^bytes=(\d*)-(\d*)$")

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_HEAD(self) -> None:
            self.answer(head=True)

        def do_GET(self) -> None:
            with state.lock:
                state.busy += 1
                state.most_busy = max(state.most_busy, state.busy)
            try:
                time.sleep(state.seconds_per_request)
                self.answer(head=False)
            finally:
                with state.lock:
                    state.busy -= 1

        def answer(self, *, head: bool) -> None:
            path = self.path.split("?", 1)[0]
            wanted = self.headers.get("Range")
            if not head:
                state.requests.append((path, wanted))
                state.api_keys.append(self.headers.get("X-Api-Key"))
            on_disk = state.files.get(path)
            size = on_disk.stat().st_size if on_disk is not None else 0
            body = asset_bytes(path) if on_disk is None else b""
            length = size if on_disk is not None else len(body)
            start, end, status = 0, length - 1, 200
            if wanted:
                match = ranges.match(wanted.strip())
                if not match or (match.group(1) and int(match.group(1)) >= length):
                    self.send_response(416)
                    self.send_header("Content-Range", f"bytes */{length}")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if match.group(1):
                    start = int(match.group(1))
                    end = min(int(match.group(2)), length - 1) if match.group(2) else length - 1
                else:
                    start = max(0, length - int(match.group(2)))
                status = 206
            self.send_response(status)
            self.send_header("Content-Type", "image/tiff")
            self.send_header("Accept-Ranges", "bytes")
            tag = hashlib.md5(body or f"{path}:{size}".encode(), usedforsecurity=False).hexdigest()
            self.send_header("ETag", f'"{tag}"')
            self.send_header("Content-Length", str(end - start + 1))
            if status == 206:
                self.send_header("Content-Range", f"bytes {start}-{end}/{length}")
            self.end_headers()
            if head:
                return
            if on_disk is not None:
                with open(on_disk, "rb") as handle:
                    handle.seek(start)
                    left = end - start + 1
                    while left > 0 and (chunk := handle.read(min(left, 1 << 20))):
                        self.wfile.write(chunk)
                        left -= len(chunk)
                return
            chunk = body[start:end + 1]
            cut = state.cut_after.pop(path, None)
            if cut is not None:
                self.wfile.write(chunk[:cut])
                self.wfile.flush()
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self.connection.shutdown(socket.SHUT_RDWR)
                return
            self.wfile.write(chunk)

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()


@dataclass
class RealStac:
    """The running STAC API (``url``), the items it holds, and the server of their assets."""

    url: str
    database_url: str
    assets: AssetServer
    s2_items: list[dict[str, Any]]
    s1_items: list[dict[str, Any]]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _load(database_url: str, items: list[dict[str, Any]], collections: list[dict[str, Any]]) -> None:
    from pypgstac.db import PgstacDB
    from pypgstac.load import Loader, Methods
    from pypgstac.migrate import Migrate

    with PgstacDB(dsn=database_url) as db:
        Migrate(db).run_migration()
        loader = Loader(db=db)
        loader.load_collections(iter(collections), insert_mode=Methods.insert)
        loader.load_items(iter(items), insert_mode=Methods.insert)


@pytest.fixture(scope="session")
def real_stac(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealStac]:
    """stac-fastapi-pgstac on 127.0.0.1, over a pgstac database of its own, holding ``S2_COUNT`` Sentinel-2 and
    ``S1_COUNT`` Sentinel-1 items whose assets the test's asset server serves."""
    try:
        import pypgstac  # noqa: F401
        import stac_fastapi.pgstac  # noqa: F401
    except ImportError as e:
        environment.unavailable(f"the real STAC server's packages are missing ({e.name}): pip install -e '.[test]'")
    with contextlib.ExitStack() as stack:
        try:
            stac = stack.enter_context(running_stac(tmp_path_factory.mktemp("stac")))
        except StacUnavailable as e:
            environment.unavailable(str(e))
        yield stac


class StacUnavailable(Exception):
    """PostgreSQL or PostGIS cannot be had here (the message says which)."""


@contextlib.contextmanager
def running_stac(work: Path, *, s2_count: int = S2_COUNT, s1_count: int = S1_COUNT) -> Iterator[RealStac]:
    """The STAC server over a database of its own (dropped at the end) with ``s2_count`` and ``s1_count`` items;
    ``StacUnavailable`` where the machine lacks PostgreSQL or PostGIS."""
    name = f"wasdi_test_stac_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    try:
        with admin_connection() as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
    except Exception as e:
        raise StacUnavailable(f"no PostgreSQL for the real STAC server: {str(e).strip()[:200]}") from e
    database_url = with_database(ADMIN_URL, name)
    process: subprocess.Popen[bytes] | None = None
    try:
        try:
            with admin_connection(database_url) as conn:
                conn.execute("CREATE EXTENSION IF NOT EXISTS postgis")
        except Exception as e:
            raise StacUnavailable("PostGIS is not installed for this PostgreSQL (Debian: apt-get install "
                                  f"postgresql-15-postgis-3): {str(e).strip().splitlines()[0][:200]}") from e
        with asset_server() as assets:
            s2 = [s2_item(i, assets.url) for i in range(s2_count)]
            s1 = [s1_item(i, assets.url) for i in range(s1_count)]
            _load(database_url, s2 + s1, [collection("sentinel-2-l2a", "Sentinel-2 Level-2A"),
                                          collection("sentinel-1-grd", "Sentinel-1 GRD")])
            port = _free_port()
            log = work / "stac-fastapi.log"
            from urllib.parse import urlsplit

            parts = urlsplit(database_url)
            env = {**os.environ, "PGUSER": parts.username or "postgres", "PGPASSWORD": parts.password or "unused",
                   "PGHOST": parts.hostname or "127.0.0.1", "PGPORT": str(parts.port or 5432), "PGDATABASE": name,
                   "DB_MIN_CONN_SIZE": "1", "DB_MAX_CONN_SIZE": "4"}
            with open(log, "wb") as out:
                process = subprocess.Popen(
                    [sys.executable, "-m", "uvicorn", "stac_fastapi.pgstac.app:create_app", "--factory",
                     "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
                    env=env, stdout=out, stderr=subprocess.STDOUT)
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 60
            while True:
                try:
                    if httpx.get(f"{url}/", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the STAC server did not start: {log.read_text()[-2000:]}")
                time.sleep(0.2)
            yield RealStac(url=url, database_url=database_url, assets=assets, s2_items=s2, s1_items=s1)
    finally:
        if process is not None:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
        with admin_connection() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def stac_providers_setting(stac: RealStac, **options: Any) -> list[dict[str, Any]]:
    """The ``search_providers`` of a server that searches the real STAC API (as ``EARTH``)."""
    return [{"code": "EARTH", "type": "stac", "url": stac.url, "description": "a real STAC API (pgstac)",
             **options}]


__all__ = ["RealStac", "StacUnavailable", "asset_bytes", "asset_server", "real_stac", "running_stac",
           "stac_providers_setting"]

