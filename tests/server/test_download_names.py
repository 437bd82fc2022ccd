"""Download names: one Content-Disposition encoder on the server, the standard parser in the SDK."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.conftest import Person, Server
from tests.server.geodata import folder, http, new_workspace

from wasdi_sdk._disposition import disposition_filename
from wasdi_server.api.content_disposition import content_disposition

HOSTILE_NAMES = ["Ж.txt", "a\";filename*=UTF-8''evil.exe;x=\".txt", "it's.tif", "a;b.tif", "x y%20.tif",
                 "naïve café.zip", "back\\slash.txt", "名前.png"]


@pytest.mark.parametrize("name", [*HOSTILE_NAMES, "plain.tif"])
def test_the_encoder_and_the_sdk_parser_round_trip_every_name(name: str) -> None:
    header = content_disposition(name.replace("\\", "_"))
    assert header.isascii() and "\r" not in header and "\n" not in header
    assert disposition_filename(header) == name.replace("\\", "_")


def test_a_hostile_name_adds_no_parameter_of_its_own() -> None:
    header = content_disposition("a\";filename*=UTF-8''evil.exe;x=\".txt")
    assert header.count("filename*=") == 1 and header.endswith("%3Bx%3D%22.txt")
    assert disposition_filename(header) != "evil.exe"


def test_the_encoder_keeps_plain_names_plain_and_drops_folders() -> None:
    assert content_disposition("scene.tif") == 'attachment; filename="scene.tif"'
    assert content_disposition("a/b/scene.tif", inline=True) == 'inline; filename="scene.tif"'
    assert content_disposition("") == 'attachment; filename="download"'


@pytest.mark.parametrize("header,name", [
    ('attachment; filename="s.sld"', "s.sld"), ("attachment; filename=plain.tif", "plain.tif"),
    ("attachment", ""), ("", ""), ("attachment; filename*=UTF-8''%D0%96.txt", "Ж.txt"),
    ("attachment; filename=\"fallback.txt\"; filename*=UTF-8''real%20name.txt", "real name.txt"),
])
def test_the_sdk_parser_reads_what_other_servers_send(header: str, name: str) -> None:
    assert disposition_filename(header) == name


@pytest.mark.parametrize("name", ["Ж.txt", "a\";filename*=UTF-8''evil.exe;x=\".txt", "it's.tif", "a;b.tif"])
def test_a_product_with_any_name_downloads_under_that_name(server: Server, alice: Person, tmp_path: Path,
                                                           name: str) -> None:
    ws = new_workspace(server, alice)
    (folder(server, ws) / name).write_bytes(b"payload")
    with http(server, alice) as client:
        r = client.get("/catalog/downloadbyname", params={"filename": name, "workspace": ws})
    assert r.status_code == 200 and r.content == b"payload"
    assert disposition_filename(r.headers["content-disposition"]) == name
    target = tmp_path / "out"
    target.mkdir()
    written = server.sdk(alice).files.download(name, ws, target)
    assert written == target / name and written.read_bytes() == b"payload"
