"""The multipart body parsed while it arrives (api/multipart_stream.py), alone and behind a real waitress server:
any chunking gives back the exact body and the parts Falcon's own reader finds; file parts are written once
and renamed into place; a body off the grammar is replayed whole for the ordinary reader; nothing is left in
the spool."""

from __future__ import annotations

import errno
import io
import os
import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import falcon
import httpx
import pytest
from falcon.media.multipart import MultipartFormHandler
from tests import environment
from tests.conftest import Person, Server

from wasdi_sdk import WasdiClient
from wasdi_server.api import multipart_stream
from wasdi_server.api.multipart_stream import MultipartSpool, SpooledBody, boundary_of
from wasdi_server.serving import UPLOAD_SPOOL, make_server


def encoded(files: dict[str, tuple[str, bytes]], data: dict[str, str] | None = None) -> tuple[str, bytes]:
    request = httpx.Request("POST", "http://testserver/", files=files, data=data)
    return request.headers["content-type"], request.read()


def feed(content_type: str, body: bytes, folder: Path, rng: random.Random) -> MultipartSpool:
    boundary = boundary_of(content_type)
    assert boundary is not None
    spool = MultipartSpool(boundary, folder)
    pos = 0
    while pos < len(body):
        size = rng.choice([1, 2, 3, 17, 70, 1000, 65536, 200_000])
        spool.append(body[pos:pos + size])
        pos += size
    return spool


def falcon_parts(content_type: str, body: bytes) -> list[tuple[str | None, str | None, bytes]]:
    form = MultipartFormHandler().deserialize(io.BytesIO(body), content_type, len(body))
    return [(part.name, part.filename, part.stream.read()) for part in form]


def contents(body: SpooledBody) -> list[tuple[str | None, str | None, bytes]]:
    assert body.parts is not None
    return [(p.name, p.filename, p.path.read_bytes() if p.path else bytes(p.data)) for p in body.parts]


NASTY = b"\r\n--\r\n-\r\r\n--x" * 50
"""Content full of what looks like the start of a delimiter."""


@pytest.mark.parametrize("seed", range(6))
def test_any_chunking_gives_the_exact_body_and_falcons_parts(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    size = [0, 1, 5000, 70_000, 300_000, 1_000_000][seed]
    content = bytes(rng.randrange(256) for _ in range(size // 4)) + NASTY + os.urandom(size - size // 4)
    content_type, body = encoded({"file": ("scène 1.tif", content), "other": ("b.txt", b"small")},
                                 data={"name": "x" * rng.randrange(100_000), "empty": ""})
    spool = feed(content_type, body, tmp_path, rng)
    replayed = spool.getfile()
    assert replayed.read() == body
    parsed = spool.getfile()
    assert contents(parsed) == falcon_parts(content_type, body)
    part = parsed.part("file")
    assert part is not None and part.filename == "scène 1.tif" and part.size == len(content)
    assert part.path is not None  # a file part is written to a file however small
    spool.close()
    assert list(tmp_path.iterdir()) == []


def test_a_file_part_is_renamed_into_place_not_copied(tmp_path: Path) -> None:
    content_type, body = encoded({"file": ("big.bin", os.urandom(300_000))})
    spool = feed(content_type, body, tmp_path / "spool", random.Random(1))
    part = spool.getfile().part("file")
    assert part is not None and part.path is not None
    written = part.path.stat().st_ino
    part.move_to(tmp_path / "target.bin")
    assert (tmp_path / "target.bin").stat().st_ino == written
    assert (tmp_path / "target.bin").read_bytes() == falcon_parts(content_type, body)[0][2]
    spool.close()
    assert list((tmp_path / "spool").iterdir()) == []


def test_the_spool_goes_on_receiving_while_the_disk_is_busy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the disk stalls: the parser still takes WRITES_AHEAD chunks without waiting, and the bytes all land once it
    # moves again
    disk_moves = threading.Event()
    real_write_all = multipart_stream._write_all

    def stalled(out: io.FileIO, data: memoryview) -> None:
        disk_moves.wait(30)
        real_write_all(out, data)

    monkeypatch.setattr(multipart_stream, "_write_all", stalled)
    chunk = 64 * 1024
    content = os.urandom(chunk * (multipart_stream.WRITES_AHEAD - 2))
    content_type, body = encoded({"file": ("big.bin", content)})
    boundary = boundary_of(content_type)
    assert boundary is not None
    spool = MultipartSpool(boundary, tmp_path / "spool")
    started = time.monotonic()
    for pos in range(0, len(body), chunk):
        spool.append(body[pos:pos + chunk])
    assert time.monotonic() - started < 10  # not one chunk waited for the disk
    disk_moves.set()
    part = spool.getfile().part("file")
    assert part is not None and part.path is not None and part.path.read_bytes() == content
    spool.close()
    assert list((tmp_path / "spool").iterdir()) == []


def test_an_upload_that_ends_unfinished_skips_the_writes_still_queued(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    disk_moves = threading.Event()
    writes: list[int] = []

    def stalled(out: io.FileIO, data: memoryview) -> None:
        writes.append(len(data))
        disk_moves.wait(30)

    monkeypatch.setattr(multipart_stream, "_write_all", stalled)
    content_type, body = encoded({"file": ("big.bin", os.urandom(64 * 1024 * 8))})
    boundary = boundary_of(content_type)
    assert boundary is not None
    spool = MultipartSpool(boundary, tmp_path / "spool")
    for pos in range(0, len(body) // 2, 64 * 1024):  # the client goes away half way
        spool.append(body[pos:pos + 64 * 1024])
    writer = spool._writer
    assert writer is not None
    deadline = time.monotonic() + 10
    while not writes and time.monotonic() < deadline:  # the writer thread has taken the first chunk
        time.sleep(0.01)
    closing = threading.Thread(target=spool.close)
    closing.start()
    deadline = time.monotonic() + 10
    while not writer._abandoned and time.monotonic() < deadline:
        time.sleep(0.01)
    disk_moves.set()
    closing.join(10)
    assert not closing.is_alive() and len(writes) == 1  # the write under way, and none of those queued behind it
    assert list((tmp_path / "spool").iterdir()) == []


def test_a_write_that_fails_behind_the_parser_is_raised_to_the_server(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    def disk_full(out: io.FileIO, data: memoryview) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(multipart_stream, "_write_all", disk_full)
    content_type, body = encoded({"file": ("big.bin", os.urandom(300_000))})
    spool = feed(content_type, body, tmp_path / "spool", random.Random(2))
    with pytest.raises(OSError) as failed:
        spool.flush()
    assert failed.value.errno == errno.ENOSPC
    spool.close()
    assert list((tmp_path / "spool").iterdir()) == []


@pytest.mark.parametrize("body", [
    b"no delimiter at all",
    b"--BOUNDARY\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\"\r\n\r\ncut short",
    b"--BOUNDARY junk after the delimiter\r\n\r\nx\r\n--BOUNDARY--",
    b"--BOUNDARY\r\nnot a header line\r\n\r\nx\r\n--BOUNDARY--",
    b"--BOUNDARY\r\n" + b"X-Long: " + b"h" * 10_000 + b"\r\n\r\nx\r\n--BOUNDARY--",
    b"".join(b"--BOUNDARY\r\nContent-Disposition: form-data; name=\"f%d\"\r\n\r\nx\r\n" % i for i in range(70))
    + b"--BOUNDARY--",
    b"p" * 100_000 + b"\r\n--BOUNDARY\r\n\r\nx\r\n--BOUNDARY--",
], ids=["no-delimiter", "unterminated", "junk-after-delimiter", "bad-header", "huge-header", "too-many-parts",
        "huge-preamble"])
def test_a_body_off_the_grammar_is_replayed_whole(tmp_path: Path, body: bytes) -> None:
    spool = feed("multipart/form-data; boundary=BOUNDARY", body, tmp_path, random.Random(2))
    replayed = spool.getfile()
    assert replayed.parts is None
    assert replayed.read() == body
    spool.close()
    assert list(tmp_path.iterdir()) == []


def test_only_multipart_form_data_with_a_sane_boundary_is_spooled() -> None:
    assert boundary_of('multipart/form-data; boundary="a b"') == b"a b"
    for content_type in ("application/json", "multipart/mixed; boundary=x", "multipart/form-data",
                         "multipart/form-data; boundary=" + "x" * 71, "multipart/form-data; boundary=é"):
        assert boundary_of(content_type) is None


# -- behind waitress ------------------------------------------------------------------------------------
def emptied(spool: Path) -> bool:
    """Whether the spool empties: waitress closes a request's body (removing its files) just after the answer."""
    deadline = time.monotonic() + 10
    while list(spool.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return list(spool.iterdir()) == []

@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Server, str, Path]]:
    """The app under waitress with the upload spool on, from 1 KiB bodies up (the default is waitress's 512 KiB)."""
    app_server = Server(tmp_path / "data")
    spool = app_server.settings.files_root / UPLOAD_SPOOL
    spool.mkdir(parents=True)
    (spool / f"{multipart_stream.SPOOL_PREFIX}left-by-a-crash").write_bytes(b"x")
    server = make_server(app_server.app, host="127.0.0.1", port=0, threads=2, asyncore_use_poll=True,
                         inbuf_overflow=1024, upload_spool=spool)
    assert list(spool.iterdir()) == []  # a previous run's partial uploads are removed at start
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        yield app_server, f"http://127.0.0.1:{server.effective_port}", spool
    finally:
        server.close()
        thread.join(5)
        app_server.close()


def test_uploads_through_both_endpoints_are_moved_from_the_spool(served: tuple[Server, str, Path],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    app_server, base_url, spool = served
    alice: Person = app_server.add_user("alice@example.org")
    moved: dict[str, int] = {}
    real_move = multipart_stream.SpooledPart.move_to

    def spying_move(part: multipart_stream.SpooledPart, target: Path) -> None:
        assert part.path is not None and part.path.parent == spool
        moved[part.filename or ""] = part.path.stat().st_ino
        real_move(part, target)

    monkeypatch.setattr(multipart_stream.SpooledPart, "move_to", spying_move)
    content = os.urandom(3 * 1024 * 1024) + NASTY
    with WasdiClient(base_url=base_url, session_token=alice.token, max_retries=0) as client:
        ws = client.workspaces.create(name="uploads").string_value or ""
        client.products.upload_without_ingest(ws, io.BytesIO(content), name="lib.bin")
        client.products.upload(ws, io.BytesIO(content), name="ingest.bin")
    folder = app_server.services.workspaces.folder(app_server.services.workspaces.load(ws))
    for name in ("lib.bin", "ingest.bin"):
        stored = folder / name
        assert stored.read_bytes() == content
        assert stored.stat().st_ino == moved[name]  # the very file written while the body arrived
    assert emptied(spool)
    assert [p.name for p in folder.iterdir() if p.name.startswith(".")] == []


def test_a_refused_upload_leaves_nothing_and_a_malformed_one_is_answered_as_before(
        served: tuple[Server, str, Path]) -> None:
    app_server, base_url, spool = served
    alice = app_server.add_user("alice@example.org")
    bob = app_server.add_user("bob@example.org")
    with WasdiClient(base_url=base_url, session_token=alice.token, max_retries=0) as client:
        ws = client.workspaces.create(name="alices").string_value or ""
    content_type, body = encoded({"file": ("x.bin", os.urandom(100_000))})
    with httpx.Client(base_url=base_url, timeout=30) as http:
        refused = http.post("/product/uploadfilebylib", params={"workspace": ws, "name": "x.bin"}, content=body,
                            headers={"content-type": content_type, "x-session-token": bob.token})
        assert refused.status_code == 403
        cut = body[:60_000] + b"-" * 5_000  # no closing delimiter: Falcon's reader refuses it, as before
        malformed = http.post("/product/uploadfilebylib", params={"workspace": ws, "name": "x.bin"}, content=cut,
                              headers={"content-type": content_type, "x-session-token": alice.token})
        assert malformed.status_code == 400 and "multipart" in malformed.json()["message"]
        other_type, other_body = encoded({"other": ("x.bin", os.urandom(5000))})
        no_field = http.post("/product/uploadfilebylib", params={"workspace": ws, "name": "x.bin"},
                             content=other_body, headers={"content-type": other_type, "x-session-token": alice.token})
        assert no_field.status_code == 400 and "no file field" in no_field.json()["message"]
    assert emptied(spool)
    assert falcon.__version__  # the fallback reader is Falcon's own


def test_the_server_reads_sockets_in_big_chunks_and_returns_freed_memory() -> None:
    import platform
    import subprocess
    import sys

    server = make_server(falcon.App(), host="127.0.0.1", port=0)
    try:
        assert server.adj.recv_bytes == 256 * 1024  # 4,096 reads for 1 GiB, not waitress's 131,072
    finally:
        server.close()
    environment.require(platform.libc_ver()[0] == "glibc",
                        f"mallopt is glibc's; this C library is {platform.libc_ver()[0] or 'unknown'}")
    done = subprocess.run([sys.executable, "-c", "from wasdi_server.serving import return_freed_memory as r; "
                           "print(r())"], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "True"


@pytest.mark.parametrize("failing", ["parser", "writer"])
def test_a_spool_that_cannot_be_written_is_a_500_and_leaves_nothing(served: tuple[Server, str, Path],
                                                                    monkeypatch: pytest.MonkeyPatch,
                                                                    failing: str) -> None:
    app_server, base_url, spool = served
    alice = app_server.add_user(f"alice-{failing}@example.org")
    with WasdiClient(base_url=base_url, session_token=alice.token, max_retries=0) as client:
        ws = client.workspaces.create(name="full").string_value or ""

    def disk_full(*args: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    # the parser's own step, or the write its thread does behind it
    if failing == "parser":
        monkeypatch.setattr(MultipartSpool, "_content", disk_full)
    else:
        monkeypatch.setattr(multipart_stream, "_write_all", disk_full)
    content_type, body = encoded({"file": ("x.bin", os.urandom(200_000))})
    with httpx.Client(base_url=base_url, timeout=30) as http:
        try:
            answer = http.post("/product/uploadfilebylib", params={"workspace": ws, "name": "x.bin"}, content=body,
                               headers={"content-type": content_type, "x-session-token": alice.token})
            assert answer.status_code == 500 and b"could not be written" in answer.content
        except httpx.TransportError:
            pass  # the server answered and closed while the client was still sending: also no wait
    monkeypatch.undo()
    assert emptied(spool)
    with WasdiClient(base_url=base_url, session_token=alice.token, max_retries=0) as client:
        assert client.utility.hello().string_value  # the server goes on serving
        assert client.products.list(ws) == []
