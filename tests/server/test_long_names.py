"""Names are checked in bytes, as file systems count them: a name of at most 255 characters may still be
longer than the 255 bytes a file name may have (``Ω`` is 2 bytes in UTF-8).  Such names are a 400 that
says the limit, zips holding them are refused in the upload's own style, the server's temporary names
stay within the limit, and nothing a user reads names the server's folders."""

from __future__ import annotations

import io
import struct
import zipfile
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.app_support import app_zip
from tests.conftest import Person, Server
from tests.server.geodata import folder, new_workspace, wait_process

from wasdi_server.launcher import operations
from wasdi_server.paths import MAX_NAME_BYTES, hide_server_paths, name_bytes, temporary_name

OMEGAS = "Ω" * 204
"""204 characters, 408 bytes."""


def sdk_http(server: Server) -> httpx.Client:
    return httpx.Client(transport=httpx.WSGITransport(app=server.app), base_url="http://testserver")


def test_a_name_too_long_in_bytes_is_a_400_saying_the_limit(server: Server, alice: Person) -> None:
    ws = new_workspace(server, alice)
    with sdk_http(server) as client:
        up = client.post("/product/uploadfile", params={"workspace": ws, "name": OMEGAS}, headers=alice.headers,
                         files={"file": ("x.bin", b"payload")})
        down = client.get("/catalog/downloadbyname", params={"filename": OMEGAS, "workspace": ws},
                          headers=alice.headers)
    for r in (up, down):
        assert r.status_code == 400, r.text[:300]
        assert "408 bytes" in r.json()["message"] and "255 bytes" in r.json()["message"]
    assert [p.name for p in folder(server, ws).iterdir()] == []  # nothing half-written is left


def test_a_name_of_255_bytes_is_fine_end_to_end(server: Server, alice: Person) -> None:
    ws = new_workspace(server, alice)
    name = "Ω" * 123 + "abcde.bin"
    assert name_bytes(name) == MAX_NAME_BYTES
    with sdk_http(server) as client:
        up = client.post("/product/uploadfilebylib", params={"workspace": ws, "name": name},
                         headers=alice.headers, files={"file": ("x.bin", b"payload")})
        assert up.status_code == 200, up.text[:300]
        down = client.get("/catalog/downloadbyname", params={"filename": name, "workspace": ws},
                          headers=alice.headers)
    assert down.status_code == 200 and down.content == b"payload"


@pytest.mark.parametrize("name", ["a", "Ω" * 127, "x" * 255, "Ω" * 200 + ".tif", "\U0001d518" * 63 + "ab"])
def test_temporary_names_never_pass_the_limit_and_stay_hidden_partial_files(name: str) -> None:
    temp = temporary_name(name)
    assert name_bytes(temp) <= MAX_NAME_BYTES and temp.startswith(".") and temp.endswith(".part")
    assert temp.encode("utf-8").decode("utf-8") == temp  # cut at a character boundary
    assert temporary_name(name) != temp


def test_an_import_with_a_name_near_the_limit_lands(server: Server, alice: Person) -> None:
    """Its partial file is named within the limit (it used to add 19 bytes to the name and fail)."""
    ws = new_workspace(server, alice)
    imports = server.settings.data_dir / "imports"
    imports.mkdir(exist_ok=True)
    name = "n" * 250 + ".bin"
    (imports / name).write_bytes(b"imported")
    r = server.post("/filebuffer/download", alice, json={"fileUrl": (imports / name).as_uri(), "workspace": ws,
                                                         "name": name})
    assert r.json["boolValue"] is True, r.text
    process = wait_process(server, r.json["stringValue"])
    assert process["status"] == "DONE", process
    assert (folder(server, ws) / name).read_bytes() == b"imported"


def test_a_failed_operation_shows_no_server_path(server: Server, alice: Person,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    ws = new_workspace(server, alice)
    secret_place = server.settings.data_dir.resolve() / "files" / alice.user_id / ws / ".file.0123.part"

    def failing(ctx: Any) -> bool:
        raise OSError(36, "File name too long", str(secret_place))

    monkeypatch.setitem(operations.OPERATIONS, "INGEST", failing)
    record = server.services.processes.create(server.services.sessions.resolve(alice.token), ws, "INGEST", "x")
    server.services.launcher.wake()
    done = wait_process(server, record["processObjId"])
    logs = server.get("/processors/logs/list", alice, processworkspace=record["processObjId"]).json
    shown = done["payload"] + " ".join(str(row.get("logRow")) for row in logs)
    assert done["status"] == "ERROR" and ".file.0123.part" in shown
    assert str(server.settings.data_dir.resolve()) not in shown and "/files/" not in shown


def test_server_paths_are_hidden_in_any_text() -> None:
    root = Path("/srv/wasdi/data")
    text = "cannot open '/srv/wasdi/data/files/a@b/ws/x.tif' (in /srv/wasdi/data), /etc/hosts kept"
    assert hide_server_paths(text, root) == "cannot open 'x.tif' (in <data directory>), /etc/hosts kept"


# -- app zips ---------------------------------------------------------------------------------------------
def lying_zip() -> bytes:
    """A zip whose only entry says it holds 5 bytes but inflates to 5,000 (its checksum is of the 5,000)."""
    entry = zipfile.ZipInfo("myProcessor.py")
    entry.compress_type = zipfile.ZIP_DEFLATED
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        bundle.writestr(entry, "#" * 5000)
    raw = bytearray(buffer.getvalue())
    central = raw.rfind(b"PK\x01\x02")
    struct.pack_into("<I", raw, central + 24, 5)  # the central directory's uncompressed size
    struct.pack_into("<I", raw, 22, 5)  # and the local header's
    return bytes(raw)


ZIPS = {
    "an entry name of 408 bytes": (app_zip({"myProcessor.py": "x", OMEGAS: "x"}), "408 bytes"),
    "30 nested folders of 200 characters": (app_zip({"myProcessor.py": "x", "/".join(["d" * 200] * 30) + "/f.py": "x"}),
                                            "1024 bytes"),
    "an entry that lies about its size": (lying_zip(), "damaged"),
}


@pytest.mark.parametrize("case", list(ZIPS))
def test_app_zips_with_impossible_names_are_refused_in_the_upload_style(server: Server, alice: Person,
                                                                        case: str) -> None:
    data, says = ZIPS[case]
    with sdk_http(server) as client:
        r = client.post("/processors/uploadprocessor", params={"name": "longnames"}, headers=alice.headers,
                        files={"file": ("app.zip", data)})
    assert r.status_code == 200, r.text[:300]
    answer = r.json()
    assert answer["boolValue"] is False and answer["intValue"] == 400 and says in answer["stringValue"], answer
    assert server.services.apps.records.by_name("longnames") is None
