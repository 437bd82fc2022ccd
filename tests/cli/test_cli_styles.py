"""``wasdi styles ...`` and ``wasdi images ...`` against the in-process server."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from tests.cli.conftest import ALICE, ALICE_PASSWORD, BOB, BOB_PASSWORD, Cli, lines
from wasdi_cli import connection, output
from wasdi_server import create_app, load_settings

SLD = (b'<?xml version="1.0"?><StyledLayerDescriptor xmlns="http://www.opengis.net/sld" version="1.0.0">'
       b'<NamedLayer><UserStyle><FeatureTypeStyle><Rule><RasterSymbolizer><ColorMap>'
       b'<ColorMapEntry color="#000000" quantity="0"/><ColorMapEntry color="#ffffff" quantity="1"/>'
       b"</ColorMap></RasterSymbolizer></Rule></FeatureTypeStyle></UserStyle></NamedLayer></StyledLayerDescriptor>")
SLD2 = SLD.replace(b"#ffffff", b"#00ff00")
PNG = b"\x89PNG\r\n\x1a\n" + b"\x01" * 32


@pytest.fixture
def alice(cli: Cli) -> Cli:
    cli.login()
    return cli


@pytest.fixture
def sld_file(tmp_path: Path) -> Path:
    path = tmp_path / "floods.sld"
    path.write_bytes(SLD)
    return path


def upload(cli: Cli, path: Path, *extra: str) -> str:
    result = cli("styles", "upload", str(path), *extra)
    assert result.exit_code == 0, result.output
    return result.stdout.strip()


def test_upload_prints_only_the_new_id(alice: Cli, sld_file: Path) -> None:
    result = alice("styles", "upload", str(sld_file), "--description", "water", "--public")
    assert result.exit_code == 0, result.output
    style_id = result.stdout.strip()
    assert result.stdout == style_id + "\n" and len(style_id) == 36
    assert "Created style 'floods'" in result.stderr
    (style,) = alice.sdk(alice.token()).styles.list()
    assert (style.style_id, style.name, style.description, style.is_public) == (style_id, "floods", "water", True)


def test_upload_errors_exit_non_zero(alice: Cli, sld_file: Path, tmp_path: Path) -> None:
    upload(alice, sld_file)
    again = alice("styles", "upload", str(sld_file))
    assert again.exit_code == 1 and "already used" in again.stderr
    bad = tmp_path / "bad.sld"
    bad.write_text("<graph/>")
    assert alice("styles", "upload", str(bad)).exit_code == 1
    assert alice("styles", "upload", str(tmp_path / "missing.sld")).exit_code == 2


def test_list_json_is_exactly_the_wire_models(alice: Cli, sld_file: Path) -> None:
    style_id = upload(alice, sld_file, "--name", "a")
    result = alice("styles", "list", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data == [s.to_wire() for s in alice.sdk(alice.token()).styles.list()]
    assert data[0]["styleId"] == style_id and data[0]["isPublic"] is False
    assert result.stderr == ""


def test_list_quiet_and_table(alice: Cli, sld_file: Path) -> None:
    ids = {upload(alice, sld_file, "--name", "one"), upload(alice, sld_file, "--name", "two")}
    assert set(alice("styles", "list", "-q").stdout.splitlines()) == ids
    table = alice("styles", "list").stdout
    assert "one" in table and "two" in table and "read-only" in table


def test_list_empty(alice: Cli) -> None:
    result = alice("styles", "list")
    assert result.exit_code == 0 and result.stdout == "" and "No styles." in result.stderr


def test_show_by_name_and_xml(alice: Cli, sld_file: Path) -> None:
    style_id = upload(alice, sld_file)
    result = alice("styles", "show", "FLOODS", "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)["styleId"] == style_id
    xml = alice("styles", "show", style_id, "--xml")
    assert xml.exit_code == 0 and xml.stdout.strip() == SLD.decode()
    assert alice("styles", "show", "nope").exit_code == 1


def test_update_file_zip_and_params(alice: Cli, sld_file: Path, tmp_path: Path) -> None:
    style_id = upload(alice, sld_file)
    unchanged = alice("styles", "update", "floods", "--file", str(sld_file))
    assert unchanged.exit_code == 0 and "unchanged" in unchanged.stderr
    new = tmp_path / "new.sld"
    new.write_bytes(SLD2)
    assert alice("styles", "update", "floods", "--file", str(new)).exit_code == 0
    client = alice.sdk(alice.token())
    assert client.styles.get_xml(style_id) == SLD2.decode()
    archive = tmp_path / "s.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("inner/any.sld", SLD)
    assert alice("styles", "update", style_id, "--file", str(archive)).exit_code == 0
    assert client.styles.get_xml(style_id) == SLD.decode()
    result = alice("styles", "update", "floods", "--description", "new text", "--public")
    assert result.exit_code == 0 and "public=yes" in result.stderr
    assert client.styles.list()[0].description == "new text"
    assert alice("styles", "update", "floods").exit_code == 2


def test_download_to_a_folder_a_file_and_stdout(alice: Cli, sld_file: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    upload(alice, sld_file)
    out = tmp_path / "out"
    out.mkdir()
    result = alice("styles", "download", "floods", "-o", str(out))
    assert result.exit_code == 0, result.output
    assert (out / "floods.sld").read_bytes() == SLD
    assert alice("styles", "download", "floods", "-o", str(tmp_path / "x.sld")).exit_code == 0
    assert (tmp_path / "x.sld").read_bytes() == SLD
    piped = alice("styles", "download", "floods", "-o", "-")
    assert piped.exit_code == 0 and piped.stdout_bytes == SLD
    monkeypatch.chdir(tmp_path)
    assert alice("styles", "download", "floods").exit_code == 0 and (tmp_path / "floods.sld").exists()
    missing = alice("styles", "download", "nothing")
    assert missing.exit_code == 1 and "no style" in missing.stderr


def test_delete_needs_confirmation(alice: Cli, sld_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    upload(alice, sld_file)
    refused = alice("styles", "delete", "floods")
    assert refused.exit_code == 2 and "--yes" in refused.stderr
    monkeypatch.setattr(output, "stdin_is_tty", lambda: True)
    cancelled = alice("styles", "delete", "floods", input="n\n")
    assert cancelled.exit_code == 1 and len(alice.sdk(alice.token()).styles.list()) == 1
    done = alice("styles", "delete", "floods", input="y\n")
    assert done.exit_code == 0 and "Deleted style 'floods'" in done.stderr
    assert alice.sdk(alice.token()).styles.list() == []


def test_share_add_list_remove_and_leave(alice: Cli, sld_file: Path) -> None:
    style_id = upload(alice, sld_file)
    added = alice("styles", "share", "add", "floods", BOB, "--rights", "write")
    assert added.exit_code == 0 and f"with {BOB} (write)" in added.stderr
    again = alice("styles", "share", "add", "floods", BOB)
    assert again.exit_code == 1 and "Already shared" in again.stderr
    listed = alice("styles", "share", "list", "floods", "--json")
    assert json.loads(listed.stdout) == [{"userId": BOB, "permissions": "write"}]
    assert lines(alice("styles", "share", "list", "floods", "-q").stdout) == [BOB]
    assert alice("styles", "share", "remove", "floods", BOB).exit_code == 0
    assert "is not shared" in alice("styles", "share", "list", "floods").stderr
    # the user it is shared with may leave it: the style stays
    alice("styles", "share", "add", "floods", BOB)
    alice.login(BOB, BOB_PASSWORD, "--profile", "bob")
    left = alice("styles", "delete", "floods", "--yes", "--profile", "bob")
    assert left.exit_code == 0 and "Left style" in left.stderr
    assert [s.style_id for s in alice.sdk(alice.token()).styles.list()] == [style_id]


def test_a_stranger_is_refused_with_exit_code_4(alice: Cli, sld_file: Path) -> None:
    upload(alice, sld_file)
    style_id = alice.sdk(alice.token()).styles.list()[0].style_id or ""
    alice.login(BOB, BOB_PASSWORD, "--profile", "bob")
    result = alice("styles", "update", style_id, "--description", "mine now", "--profile", "bob")
    assert result.exit_code == 4


# -- images -----------------------------------------------------------------------------------------------
def test_images_upload_get_exists_delete(alice: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "me.png"
    source.write_bytes(PNG)
    up = alice("images", "upload", str(source), "users", "--folder", ALICE, "--name", "avatar")
    assert up.exit_code == 0, up.output
    assert f"users/{ALICE}/avatar" in up.stderr
    found = alice("images", "exists", "users", "avatar.png", "--folder", ALICE)
    assert found.exit_code == 0 and found.stdout == "yes\n"
    target = tmp_path / "copy.png"
    got = alice("images", "get", "users", "avatar.png", "--folder", ALICE, "-o", str(target))
    assert got.exit_code == 0 and target.read_bytes() == PNG
    piped = alice("images", "get", "users", "avatar.png", "--folder", ALICE, "-o", "-")
    assert piped.stdout_bytes == PNG
    monkeypatch.chdir(tmp_path)
    assert alice("images", "get", "users", "avatar.png", "--folder", ALICE).exit_code == 0
    assert (tmp_path / "avatar.png").read_bytes() == PNG
    assert alice("images", "delete", "users", "avatar.png", "--folder", ALICE).exit_code == 2  # no --yes, no tty
    assert alice("images", "delete", "users", "avatar.png", "--folder", ALICE, "--yes").exit_code == 0
    missing = alice("images", "exists", "users", "avatar.png", "--folder", ALICE)
    assert missing.exit_code == 1 and missing.stdout == "no\n"
    gone = alice("images", "get", "users", "avatar.png", "--folder", ALICE, "-o", str(tmp_path / "gone.png"))
    assert gone.exit_code == 1 and "no image" in gone.stderr


def test_images_refusals(alice: Cli, tmp_path: Path) -> None:
    source = tmp_path / "me.gif"
    source.write_bytes(b"GIF89a")
    assert alice("images", "upload", str(source), "users", "--folder", ALICE).exit_code == 1
    png = tmp_path / "me.png"
    png.write_bytes(PNG)
    assert alice("images", "upload", str(png), "users", "--folder", BOB).exit_code == 4
    assert alice("images", "upload", str(png), "nowhere").exit_code == 1


def test_update_with_an_sld_replaces_the_xml(alice: Cli, sld_file: Path, tmp_path: Path) -> None:
    style_id = upload(alice, sld_file)
    new = tmp_path / "new.sld"
    new.write_bytes(SLD2)
    result = alice("styles", "update", "floods", "--file", str(new))
    assert result.exit_code == 0 and "Replaced the SLD" in result.stderr
    assert alice.sdk(alice.token()).styles.get_xml(style_id) == SLD2.decode()
    binary = tmp_path / "bad.sld"
    binary.write_bytes(b"\xff\xfe\x00")
    assert alice("styles", "update", "floods", "--file", str(binary)).exit_code == 2


def test_node_delete_on_a_compute_node(cli: Cli, sld_file: Path, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    cli.login()
    upload(cli, sld_file)
    on_main = cli("styles", "node-delete", "floods", "--yes")
    assert on_main.exit_code == 1 and "compute nodes" in on_main.stderr
    assert cli("styles", "node-delete", "floods").exit_code == 2  # no terminal, no --yes
    node_app = create_app(load_settings(data_dir=tmp_path / "node", environ={}, node_code="node1"))
    try:
        main_style = cli.app.services.store.collection("styles").find()[0]
        node_app.services.users.add(ALICE, ALICE_PASSWORD)
        node_app.services.store.collection("styles").insert(main_style)
        node = Cli(node_app, cli.config_dir)
        monkeypatch.setattr(connection, "make_client", node.make_client)
        node.login()
        result = node("styles", "node-delete", "floods", "--yes")
        assert result.exit_code == 0, result.output
        assert "Deleted the node's copy of style 'floods'" in result.stderr
        assert node_app.services.store.collection("styles").find() == []
        node.close()
    finally:
        node_app.services.close()


APP_ID = "6f1c2a52-5b1e-4c8e-9d1a-0c6b1f3e9a01"


def test_images_logo_and_gallery_of_an_app(alice: Cli, tmp_path: Path) -> None:
    processors = alice.app.services.store.collection("processors")
    processors.insert({"processorId": APP_ID, "name": "hellowasdi", "userId": ALICE, "isPublic": 0, "logo": ""})
    png = tmp_path / "shot.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)
    result = alice("images", "logo", APP_ID, str(png))
    assert result.exit_code == 0, result.output
    assert processors.get(APP_ID)["logo"].endswith("name=logo.png")
    added = alice("images", "gallery", APP_ID, str(png))
    assert added.exit_code == 0, added.output
    assert added.stdout.strip().endswith("folder=hellowasdi&name=1.png")
    assert alice.sdk(alice.token()).images.get(collection="processors", folder="hellowasdi", name="1.png") == \
        png.read_bytes()
    gif = tmp_path / "x.gif"
    gif.write_bytes(b"GIF89a")
    assert alice("images", "logo", APP_ID, str(gif)).exit_code == 1
    assert alice("images", "logo", "no-such-app", str(png)).exit_code == 1
