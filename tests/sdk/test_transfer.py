"""Streamed uploads and downloads through the SDK against the app served by waitress on 127.0.0.1 (a real
socket: httpx's in-process WSGI transport reads whole bodies, so it cannot show streaming), and the
``wasdi_sdk.transfer`` helpers."""

from __future__ import annotations

import gc
import hashlib
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.conftest import Person, Server
from tests.server.geodata import BBOX_4326, folder, make_geotiff, new_workspace
from tests.socket_server import on_a_socket

from wasdi_sdk import NotFoundError, PermissionDeniedError, ProcessFailedError, WasdiClient
from wasdi_sdk.transfer import download_file, import_and_wait, upload_and_ingest

BIG = 50 * 1024 * 1024


@pytest.fixture
def served(server: Server) -> Iterator[str]:
    """The test server's app on a real socket; its base URL."""
    with on_a_socket(server.app, max_request_body_size=1024**3) as url:
        yield url


@pytest.fixture
def client(served: str, alice: Person) -> Iterator[WasdiClient]:
    with WasdiClient(base_url=served, session_token=alice.token, max_retries=0, timeout=60) as c:
        yield c


@pytest.fixture
def ws(server: Server, alice: Person) -> str:
    return new_workspace(server, alice)


def zeros(path: Path, size: int) -> Path:
    with open(path, "wb") as handle:
        handle.truncate(size)  # sparse: no memory and almost no disk to make
    return path


def md5(path: Path) -> str:
    digest = hashlib.md5()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def test_upload_and_download_are_byte_identical_with_progress(client: WasdiClient, server: Server, ws: str,
                                                              tmp_path: Path) -> None:
    source = tmp_path / "payload.bin"
    source.write_bytes(bytes(range(256)) * 4099)
    sent: list[int] = []
    client.products.upload_without_ingest(ws, source, on_progress=sent.append)
    assert sum(sent) == source.stat().st_size and len(sent) > 1
    assert (folder(server, ws) / "payload.bin").read_bytes() == source.read_bytes()
    received: list[int] = []
    target = client.files.download("payload.bin", ws, tmp_path / "back.bin", on_progress=received.append)
    assert target == tmp_path / "back.bin" and target.read_bytes() == source.read_bytes()
    assert sum(received) == source.stat().st_size
    # into a folder: the server's file name is used
    out = tmp_path / "out"
    out.mkdir()
    assert download_file(client, ws, "payload.bin", out) == out / "payload.bin"
    assert sorted(p.name for p in out.iterdir()) == ["payload.bin"]


def test_upload_from_an_open_file_object(client: WasdiClient, server: Server, ws: str, tmp_path: Path) -> None:
    source = tmp_path / "x.dat"
    source.write_bytes(b"abc" * 1000)
    with open(source, "rb") as handle:
        client.products.upload_without_ingest(ws, handle, name="renamed.dat")
    assert (folder(server, ws) / "renamed.dat").read_bytes() == source.read_bytes()


def test_a_failed_download_leaves_no_file(client: WasdiClient, ws: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(NotFoundError):
        client.files.download("absent.bin", ws, out / "never.bin")
    with pytest.raises(NotFoundError):
        client.files.download("absent.bin", ws, out)
    assert list(out.iterdir()) == []


def test_streaming_keeps_memory_far_below_the_file_size(client: WasdiClient, server: Server, ws: str,
                                                        tmp_path: Path) -> None:
    source = zeros(tmp_path / "zeros.bin", BIG)
    gc.collect()
    tracemalloc.start()
    try:
        client.products.upload_without_ingest(ws, source)
        _, upload_peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        target = client.files.download("zeros.bin", ws, tmp_path / "back.bin")
        _, download_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # Client and server run in this process: the peaks cover both sides of each transfer.  On the way
    # out waitress reads the file in blocks of the socket's send buffer (about 2 MB each on loopback),
    # a few at a time, so the download peak is a handful of those, whatever the file size.
    assert upload_peak < BIG / 10, f"upload peak {upload_peak} bytes"
    assert download_peak < BIG / 4, f"download peak {download_peak} bytes"
    assert (folder(server, ws) / "zeros.bin").stat().st_size == BIG
    assert target.stat().st_size == BIG and md5(target) == md5(source)


def test_upload_and_ingest_waits_for_the_product(client: WasdiClient, ws: str, tmp_path: Path) -> None:
    tif = make_geotiff(tmp_path / "scene.tif")
    updates = []
    product = upload_and_ingest(client, ws, tif, style="grey", on_update=updates.append)
    assert product.file_name == "scene.tif" and product.bbox == BBOX_4326 and product.style == "grey"
    assert [b.name for b in product.bands_groups.bands] == ["red", "band_2"]
    assert updates and updates[-1].status == "DONE" and updates[-1].operation_type == "INGEST"
    again = client.upload_and_ingest(ws, tif, name="copy.tif")
    assert again.file_name == "copy.tif"


def test_upload_and_ingest_of_an_unnamed_stream_needs_a_name(client: WasdiClient, ws: str) -> None:
    import io

    with pytest.raises(ValueError):
        upload_and_ingest(client, ws, io.BytesIO(b"x"))


def test_import_and_wait(client: WasdiClient, server: Server, ws: str, tmp_path: Path) -> None:
    tif = make_geotiff(tmp_path / "scene.tif")
    imports = server.settings.data_dir / "imports"
    imports.mkdir()
    (imports / "scene.tif").write_bytes(tif.read_bytes())
    final = import_and_wait(client, ws, (imports / "scene.tif").as_uri())
    assert final is not None and final.status == "DONE" and final.product_name == "scene.tif"
    assert client.products.get("scene.tif", ws).bbox == BBOX_4326
    assert client.import_and_wait(ws, (imports / "scene.tif").as_uri()) is None  # already there
    with pytest.raises(ProcessFailedError):
        import_and_wait(client, ws, "http://127.0.0.1:9/unreachable.tif")
    with pytest.raises(PermissionDeniedError):
        import_and_wait(client, ws, tif.as_uri())  # outside the import folders
