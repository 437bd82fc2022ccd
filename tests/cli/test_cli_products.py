"""``wasdi products ...`` and ``wasdi import`` against the in-process server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import Cli, lines
from tests.server.geodata import BBOX_4326, make_geotiff
from wasdi_cli import output


@pytest.fixture
def alice(cli: Cli) -> Cli:
    cli.login()
    return cli


@pytest.fixture
def ws(alice: Cli) -> str:
    result = alice("ws", "create", "floods")
    assert result.exit_code == 0, result.output
    return result.stdout.strip()


@pytest.fixture
def tif(tmp_path: Path) -> Path:
    return make_geotiff(tmp_path / "scene.tif")


def upload(cli: Cli, path: Path, *extra: str) -> str:
    result = cli("products", "upload", str(path), "--ws", "floods", *extra)
    assert result.exit_code == 0, result.output
    return result.stdout.strip()


def test_upload_waits_for_the_ingest_and_prints_the_file_name(alice: Cli, ws: str, tif: Path) -> None:
    result = alice("products", "upload", str(tif), "--ws", "floods", "--style", "grey")
    assert result.exit_code == 0, result.output
    assert result.stdout == "scene.tif\n"
    assert "Uploaded and ingested scene.tif" in result.stderr
    product = alice.sdk(alice.token()).products.get("scene.tif", ws)
    assert product.bbox == BBOX_4326 and product.style == "grey"


def test_upload_without_waiting(alice: Cli, ws: str, tif: Path) -> None:
    assert upload(alice, tif, "--no-wait", "--name", "other.tif") == "other.tif"
    sdk = alice.sdk(alice.token())
    import time

    for _ in range(200):
        if sdk.products.list_names(ws):
            break
        time.sleep(0.02)
    assert sdk.products.list_names(ws) == ["other.tif"]


def test_list_json_quiet_and_table(alice: Cli, ws: str, tif: Path, tmp_path: Path) -> None:
    upload(alice, tif)
    upload(alice, make_geotiff(tmp_path / "b.tif", count=1))
    result = alice("products", "list", "--ws", ws, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == [p.to_wire() for p in alice.sdk(alice.token()).products.list(ws)]
    assert alice("products", "list", "--ws", "floods", "-q").stdout.splitlines() == ["b.tif", "scene.tif"]
    table = alice("products", "list", "--ws", "floods").stdout
    assert "red, band_2" in table and "scene.tif" in table and lines(table)[0].split()[:3] == ["file", "name",
                                                                                              "bands"]
    empty = alice("ws", "create", "empty").stdout.strip()
    result = alice("products", "list", "--ws", empty)
    assert result.exit_code == 0 and result.stdout == "" and "No products." in result.stderr


def test_show(alice: Cli, ws: str, tif: Path) -> None:
    upload(alice, tif)
    result = alice("products", "show", "scene.tif", "--ws", "floods")
    assert result.exit_code == 0, result.output
    assert "bbox (N,W,S,E)   41,10,40,11" in result.stdout and "red, band_2" in result.stdout
    data = json.loads(alice("products", "show", "scene.tif", "--ws", "floods", "--json").stdout)
    assert data["fileName"] == "scene.tif" and data["bbox"] == BBOX_4326
    missing = alice("products", "show", "nope.tif", "--ws", "floods")
    assert missing.exit_code == 1 and "no product 'nope.tif'" in missing.stderr


def test_download_writes_the_file_atomically(alice: Cli, ws: str, tif: Path, tmp_path: Path) -> None:
    upload(alice, tif)
    out = tmp_path / "out"
    out.mkdir()
    result = alice("products", "download", "scene.tif", "--ws", "floods", "-o", str(out))
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == str(out / "scene.tif")
    assert (out / "scene.tif").read_bytes() == tif.read_bytes() and len(list(out.iterdir())) == 1
    missing = alice("products", "download", "nope.tif", "--ws", "floods", "-o", str(out))
    assert missing.exit_code == 1 and len(list(out.iterdir())) == 1


def test_download_keeps_an_existing_file_without_force(alice: Cli, ws: str, tif: Path, tmp_path: Path) -> None:
    import os
    import stat

    upload(alice, tif)
    out = tmp_path / "out"
    out.mkdir()
    (out / "scene.tif").write_bytes(b"mine")
    kept = alice("products", "download", "scene.tif", "--ws", "floods", "-o", str(out))
    assert kept.exit_code == 1 and "--force" in kept.stderr
    assert (out / "scene.tif").read_bytes() == b"mine" and len(list(out.iterdir())) == 1
    previous = os.umask(0o022)
    try:
        forced = alice("products", "download", "scene.tif", "--ws", "floods", "-o", str(out), "--force")
    finally:
        os.umask(previous)
    assert forced.exit_code == 0, forced.output
    assert (out / "scene.tif").read_bytes() == tif.read_bytes()
    assert stat.S_IMODE((out / "scene.tif").stat().st_mode) == 0o644  # the umask's, not a temp file's 0600


def test_delete_needs_confirmation_or_yes(alice: Cli, ws: str, tif: Path) -> None:
    upload(alice, tif)
    refused = alice("products", "delete", "scene.tif", "--ws", "floods")
    assert refused.exit_code == 2 and "--yes" in refused.stderr
    result = alice("products", "delete", "scene.tif", "--ws", "floods", "--yes")
    assert result.exit_code == 0, result.output
    assert "Deleted scene.tif" in result.stderr
    assert alice.sdk(alice.token()).products.list_names(ws) == []
    assert alice("products", "delete", "scene.tif", "--ws", "floods", "--yes").exit_code == 1


def test_progress_bars_on_a_terminal(alice: Cli, ws: str, tif: Path, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(output, "stderr_is_tty", lambda: True)
    assert upload(alice, tif) == "scene.tif"
    result = alice("products", "download", "scene.tif", "--ws", "floods", "-o", str(tmp_path / "x.tif"))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "x.tif").read_bytes() == tif.read_bytes()


def test_import_prints_the_process_or_waits(alice: Cli, ws: str, tif: Path, tmp_path: Path) -> None:
    imports = alice.app.services.settings.data_dir / "imports"
    imports.mkdir()
    (imports / "scene.tif").write_bytes(tif.read_bytes())
    url = (imports / "scene.tif").as_uri()
    result = alice("import", url, "--ws", "floods", "--wait")
    assert result.exit_code == 0, result.output
    assert result.stdout == "scene.tif\n" and "Imported scene.tif" in result.stderr
    again = alice("import", url, "--ws", "floods")
    assert again.exit_code == 0 and again.stdout == "DONE\n"
    started = alice("import", url, "--ws", "floods", "--name", "copy.tif")
    assert started.exit_code == 0 and len(started.stdout.strip()) == 36
    assert alice("processes", "wait", started.stdout.strip(), "-q").exit_code == 0
    assert sorted(alice.sdk(alice.token()).products.list_names(ws)) == ["copy.tif", "scene.tif"]
    failed = alice("import", "http://127.0.0.1:9/x.tif", "--ws", "floods", "--wait")
    assert failed.exit_code == 1 and "the import failed" in failed.stderr
    refused = alice("import", tif.as_uri(), "--ws", "floods")
    assert refused.exit_code == 4


def test_not_logged_in(cli: Cli, tif: Path) -> None:
    result = cli("products", "list", "--ws", "x")
    assert result.exit_code == 4 and "not logged in" in result.stderr


def test_list_light_and_quiet_names(alice: Cli, ws: str, tif: Path) -> None:
    upload(alice, tif)
    light = alice("products", "list", "--ws", "floods", "--light")
    assert light.exit_code == 0, light.output
    assert lines(light.stdout)[0].split() == ["file", "name", "N,W,S,E"]
    # The footprint as 'wasdi search --bbox' takes it (north, west, south, east), not the service's ten numbers.
    assert lines(light.stdout)[2].split()[-1] == "41,10,40,11" and BBOX_4326 not in light.stdout
    full = alice("products", "list", "--ws", "floods")
    assert lines(full.stdout)[0].split()[-1] == "N,W,S,E" and "41,10,40,11" in full.stdout
    data = json.loads(alice("products", "list", "--ws", "floods", "--light", "--json").stdout)
    assert data == [p.to_wire() for p in alice.sdk(alice.token()).products.list_light(ws)]
    assert alice("products", "list", "--ws", "floods", "-q", "--light").stdout == "scene.tif\n"


def test_metadata_waits_for_the_tree(alice: Cli, ws: str, tif: Path) -> None:
    upload(alice, tif)
    result = alice("products", "metadata", "scene.tif", "--ws", "floods")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == "scene.tif" and "  CRS" in result.stdout and "epsg: 4326" in result.stdout
    tree = json.loads(alice("products", "metadata", "scene.tif", "--ws", "floods", "--json").stdout)
    assert tree["name"] == "scene.tif" and any(e["name"] == "Bands" for e in tree["elements"])
    missing = alice("products", "metadata", "absent.tif", "--ws", "floods")
    assert missing.exit_code != 0


def test_add_a_file_of_the_folder(alice: Cli, ws: str, tif: Path) -> None:
    services = alice.app.services
    (services.workspaces.folder(services.workspaces.load(ws)) / "placed.tif").write_bytes(tif.read_bytes())
    result = alice("products", "add", "placed.tif", "--ws", "floods")
    assert result.exit_code == 0, result.output
    assert alice.sdk(alice.token()).products.list_names(ws) == ["placed.tif"]
    absent = alice("products", "add", "absent.tif", "--ws", "floods")
    assert absent.exit_code == 1 and "workspace's folder" in absent.stderr


def test_edit(alice: Cli, ws: str, tif: Path) -> None:
    upload(alice, tif)
    assert alice("products", "edit", "scene.tif", "--ws", "floods").exit_code == 2
    result = alice("products", "edit", "scene.tif", "--ws", "floods", "--friendly-name", "Flood scene",
                   "--description", "January")
    assert result.exit_code == 0, result.output
    product = alice.sdk(alice.token()).products.get("scene.tif", ws)
    assert product.product_friendly_name == "Flood scene" and product.description == "January"


def test_copy_to_another_workspace(alice: Cli, ws: str, tif: Path) -> None:
    upload(alice, tif)
    other = alice("ws", "create", "archive").stdout.strip()
    result = alice("products", "copy", "scene.tif", "--ws", "floods", "--to", "archive")
    assert result.exit_code == 0, result.output
    assert "Copied scene.tif" in result.stderr
    assert alice.sdk(alice.token()).products.list_names(other) == ["scene.tif"]
    again = alice("products", "copy", "scene.tif", "--ws", "floods", "--to", other)
    assert again.exit_code == 0 and "already" in again.stderr
    same = alice("products", "copy", "scene.tif", "--ws", "floods", "--to", "floods")
    assert same.exit_code == 2


def test_delete_several_in_the_background(alice: Cli, ws: str, tif: Path, tmp_path: Path) -> None:
    upload(alice, tif)
    upload(alice, make_geotiff(tmp_path / "b.tif", count=1))
    upload(alice, make_geotiff(tmp_path / "c.tif", count=1))
    result = alice("products", "delete", "scene.tif", "b.tif", "--ws", "floods", "--yes")
    assert result.exit_code == 0, result.output
    assert "Deleted 2 products: scene.tif, b.tif" in result.stderr
    assert alice.sdk(alice.token()).products.list_names(ws) == ["c.tif"]


def test_import_from_a_server_with_only_the_get_form(alice: Cli, ws: str, tif: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from wasdi_sdk import APIError
    from wasdi_sdk.resources.file_buffer import FileBufferResource

    def no_post(self: FileBufferResource, **kwargs: object) -> None:
        raise APIError("Method Not Allowed", status=405)

    monkeypatch.setattr(FileBufferResource, "import_product", no_post)
    imports = alice.app.services.settings.data_dir / "imports"
    imports.mkdir()
    (imports / "scene.tif").write_bytes(tif.read_bytes())
    result = alice("import", (imports / "scene.tif").as_uri(), "--ws", "floods", "--wait")
    assert result.exit_code == 0, result.output
    assert result.stdout == "scene.tif\n"
    assert alice.sdk(alice.token()).products.list_names(ws) == ["scene.tif"]

    def refused(self: FileBufferResource, **kwargs: object) -> None:
        raise APIError("Bad Request", status=400)

    monkeypatch.setattr(FileBufferResource, "import_product", refused)
    assert alice("import", (imports / "scene.tif").as_uri(), "--ws", "floods").exit_code == 1
