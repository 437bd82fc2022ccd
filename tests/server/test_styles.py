"""/styles through the real app: SLD validation, files, previews, 304, listing, deletion on main and compute
nodes, the permission matrix, sharing (a repeated share is a failure) and downloads with the token."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.conftest import Person, Server
from tests.png_decoding import decode_png

from wasdi_server.domains.products.sld_documents import MAX_STYLE_BYTES

BASE = "http://testserver"


def sld(*colors: str, kind: str = "ramp") -> bytes:
    entries = "".join(f'<ColorMapEntry color="{c}" quantity="{i}"/>' for i, c in enumerate(colors))
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<StyledLayerDescriptor version="1.0.0" xmlns="http://www.opengis.net/sld">'
        "<NamedLayer><Name>x</Name><UserStyle><FeatureTypeStyle><Rule><RasterSymbolizer>"
        f'<ColorMap type="{kind}">{entries}</ColorMap>'
        "</RasterSymbolizer></Rule></FeatureTypeStyle></UserStyle></NamedLayer></StyledLayerDescriptor>"
    ).encode()


RED_BLUE = sld("#ff0000", "#0000ff")
GREEN = sld("#00ff00")
SE_STYLE = (b'<?xml version="1.0"?><StyledLayerDescriptor version="1.1.0" xmlns="http://www.opengis.net/sld" '
            b'xmlns:se="http://www.opengis.net/se"><NamedLayer><se:Name>x</se:Name><UserStyle><se:FeatureTypeStyle>'
            b"<se:Rule><se:RasterSymbolizer><se:ColorMap><se:Categorize><se:LookupValue>Rasterdata</se:LookupValue>"
            b"<se:Value>#ffff00</se:Value><se:Threshold>1</se:Threshold><se:Value>#00ffff</se:Value>"
            b"</se:Categorize></se:ColorMap></se:RasterSymbolizer></se:Rule></se:FeatureTypeStyle></UserStyle>"
            b"</NamedLayer></StyledLayerDescriptor>")
BILLION_LAUGHS = (b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
                  b'<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>'
                  b"<StyledLayerDescriptor>&lol2;</StyledLayerDescriptor>")
EXTERNAL_ENTITY = (b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
                   b"<StyledLayerDescriptor>&e;</StyledLayerDescriptor>")
BAD_SLDS = {
    "malformed": b"<StyledLayerDescriptor><NamedLayer></StyledLayerDescriptor>",
    "not-xml": b"\x89PNG\r\n\x1a\n binary",
    "empty": b"",
    "other-root": b'<?xml version="1.0"?><graph id="g"><node id="Read"/></graph>',
    "billion-laughs": BILLION_LAUGHS,
    "external-entity": EXTERNAL_ENTITY,
}
ROLES = ("owner", "writer", "reader", "stranger", "admin")
WRITE_RIGHTS = {"owner": True, "writer": True, "reader": False, "stranger": False, "admin": True}


# -- helpers ----------------------------------------------------------------------------------------------
@pytest.fixture
def http(server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(transport=httpx.WSGITransport(app=server.app), base_url=BASE) as client:
        yield client


def hdr(who: Person | None) -> dict[str, str]:
    return who.headers if who else {}


def upload(http: httpx.Client, who: Person | None, name: str, data: bytes = RED_BLUE, **params: Any) -> httpx.Response:
    return http.post("/styles/uploadfile", params={"name": name, **params}, headers=hdr(who),
                     files={"file": ("style.sld", data)})


def create(http: httpx.Client, who: Person, name: str, data: bytes = RED_BLUE, **params: Any) -> str:
    r = upload(http, who, name, data, **params)
    assert r.status_code == 200, r.text
    assert r.json()["boolValue"] is True
    return str(r.json()["stringValue"])


def update_file(http: httpx.Client, who: Person | None, style_id: str, data: bytes, *, zipped: bool | None = None,
                filename: str = "new.sld") -> httpx.Response:
    params: dict[str, Any] = {"styleId": style_id}
    if zipped is not None:
        params["zipped"] = "true" if zipped else "false"
    return http.post("/styles/updatefile", params=params, headers=hdr(who), files={"file": (filename, data)})


def update_xml(http: httpx.Client, who: Person | None, style_id: str, text: str) -> httpx.Response:
    return http.post("/styles/updatexml", params={"styleId": style_id}, headers=hdr(who), data={"styleXml": text})


def share(http: httpx.Client, who: Person, style_id: str, user: str, rights: str | None = None) -> dict[str, Any]:
    params = {"styleId": style_id, "userId": user}
    if rights:
        params["rights"] = rights
    r = http.put("/styles/share/add", params=params, headers=who.headers)
    assert r.status_code == 200
    return dict(r.json())


def sld_file(server: Server, name: str) -> Path:
    return server.settings.styles_root / f"{name}.sld"


def preview_file(server: Server, name: str) -> Path:
    return server.settings.images_root / "styles" / f"{name}.png"


def png_pixels(data: bytes) -> tuple[int, int, list[tuple[int, ...]]]:
    """Width, height and the first row's RGBA pixels of a PNG written by the server (decoded by Pillow)."""
    pixels = decode_png(data)
    height, width, _ = pixels.shape
    assert (pixels == pixels[0]).all(), "a colour bar: every row the same"
    return width, height, [tuple(int(c) for c in p) for p in pixels[0]]


def records(server: Server) -> list[dict[str, Any]]:
    return server.services.store.collection("styles").all()


def sharings(server: Server) -> list[dict[str, Any]]:
    return server.services.store.collection("sharings").find(resourceType="style")


@pytest.fixture
def people(alice: Person, writer: Person, reader: Person, stranger: Person, admin: Person) -> dict[str, Person]:
    return {"owner": alice, "writer": writer, "reader": reader, "stranger": stranger, "admin": admin}


@pytest.fixture
def style(http: httpx.Client, alice: Person, writer: Person, reader: Person) -> str:
    """A private style of alice, shared with writer (write) and reader (read)."""
    style_id = create(http, alice, "floods", description="blue water")
    assert share(http, alice, style_id, writer.user_id, "write")["boolValue"] is True
    assert share(http, alice, style_id, reader.user_id, "read")["boolValue"] is True
    return style_id


class FakeMapServer:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, bytes]] = []

    def publish_style(self, name: str, sld_path: Path) -> None:
        self.calls.append(("publish", name, sld_path.read_bytes()))

    def remove_style(self, name: str) -> None:
        self.calls.append(("remove", name, b""))


# -- uploadfile -------------------------------------------------------------------------------------------
def test_upload_stores_record_file_and_preview(server: Server, http: httpx.Client, alice: Person) -> None:
    style_id = create(http, alice, "red blue", description="a ramp", public="true")
    assert sld_file(server, "red blue").read_bytes() == RED_BLUE
    (record,) = records(server)
    assert record["styleId"] == style_id and record["userId"] == alice.user_id
    assert (record["name"], record["description"], record["isPublic"]) == ("red blue", "a ramp", True)
    width, height, row = png_pixels(preview_file(server, "red blue").read_bytes())
    assert (width, height) == (128, 16)
    assert row[0] == (255, 0, 0, 255) and row[-1] == (0, 0, 255, 255)
    assert 100 < row[64][0] < 160 and 100 < row[64][2] < 160  # a blend in the middle


def test_preview_follows_the_colour_map_kind(server: Server, http: httpx.Client, alice: Person) -> None:
    create(http, alice, "classes", sld("#ff0000", "#00ff00", "#0000ff", kind="values"))
    _, _, row = png_pixels(preview_file(server, "classes").read_bytes())
    assert set(row) == {(255, 0, 0, 255), (0, 255, 0, 255), (0, 0, 255, 255)}
    create(http, alice, "se", SE_STYLE)
    _, _, row = png_pixels(preview_file(server, "se").read_bytes())
    assert row[0] == (255, 255, 0, 255) and row[-1] == (0, 255, 255, 255)
    create(http, alice, "no colours", b'<StyledLayerDescriptor xmlns="http://www.opengis.net/sld"/>')
    assert preview_file(server, "no colours").exists()


def test_upload_publishes_on_the_map_server(server: Server, http: httpx.Client, alice: Person) -> None:
    fake = FakeMapServer()
    server.services.styles.publishers.append(fake)
    create(http, alice, "published")
    assert fake.calls == [("publish", "published", RED_BLUE)]


def test_a_taken_name_is_400_ignoring_case(server: Server, http: httpx.Client, alice: Person, bob: Person) -> None:
    create(http, alice, "Floods")
    for who, name in ((alice, "Floods"), (bob, "floods"), (bob, "FLOODS")):
        r = upload(http, who, name, GREEN)
        assert r.status_code == 400
        assert r.json()["message"] == "The style's name is already used."
    assert sld_file(server, "Floods").read_bytes() == RED_BLUE and len(records(server)) == 1


@pytest.mark.parametrize("name", ["a/b", "a\\b", "..", "../evil", "x..y", "bad\x01", " lead", "trail.", "x" * 101,
                                  "-dash-first", "Überschwemmung", 'quo"te'])
def test_a_bad_name_is_400(server: Server, http: httpx.Client, alice: Person, name: str) -> None:
    assert upload(http, alice, name).status_code == 400
    assert records(server) == []
    assert not any(server.settings.data_dir.rglob("*.sld"))


@pytest.mark.parametrize("kind", sorted(BAD_SLDS))
def test_an_invalid_sld_is_400_and_leaves_nothing(server: Server, http: httpx.Client, alice: Person,
                                                  kind: str) -> None:
    r = upload(http, alice, "bad", BAD_SLDS[kind])
    assert r.status_code == 400, r.text
    assert records(server) == [] and not sld_file(server, "bad").exists()
    assert not any(server.services.styles.staging.glob("*")) if server.services.styles.staging.exists() else True


def test_upload_failures(server: Server, http: httpx.Client, alice: Person) -> None:
    assert upload(http, None, "x").status_code == 401
    r = http.post("/styles/uploadfile", params={"name": "x"}, headers=alice.headers, files={"other": ("a", RED_BLUE)})
    assert r.status_code == 400
    assert http.post("/styles/uploadfile", headers=alice.headers, files={"file": ("a", RED_BLUE)}).status_code == 400
    end = b"</StyledLayerDescriptor>"
    big = RED_BLUE[:-len(end)] + b"<!--" + b"x" * MAX_STYLE_BYTES + b"-->" + end
    assert upload(http, alice, "big", big).status_code == 400
    assert records(server) == []


# -- getbyuser --------------------------------------------------------------------------------------------
def test_list_own_public_and_shared_with_flags(server: Server, http: httpx.Client, alice: Person, bob: Person,
                                               writer: Person) -> None:
    own = create(http, alice, "b-own")
    public = create(http, bob, "a-public", public="true")
    shared_read = create(http, bob, "c-shared")
    shared_write = create(http, bob, "d-write")
    create(http, bob, "e-private")
    share(http, bob, shared_read, alice.user_id)
    share(http, bob, shared_write, alice.user_id, "write")
    share(http, bob, public, alice.user_id, "write")
    r = http.get("/styles/getbyuser", headers=alice.headers)
    assert r.status_code == 200
    views = {v["name"]: v for v in r.json()}
    assert list(views) == ["a-public", "b-own", "c-shared", "d-write"]  # sorted by name
    flags = {n: (v["readOnly"], v["sharedWithMe"], v["isPublic"]) for n, v in views.items()}
    assert flags == {"a-public": (False, True, True), "b-own": (False, False, False),
                     "c-shared": (True, True, False), "d-write": (False, True, False)}
    assert views["b-own"]["styleId"] == own and views["c-shared"]["userId"] == bob.user_id
    assert "public" not in views["a-public"]  # the contract's wire name is isPublic
    link = views["b-own"]["imgLink"]
    assert link == f"{BASE}/images/get?collection=styles&name=b-own.png&token={alice.token}"
    img = http.get(link)  # the link works in a browser: the token stands for the header
    assert img.status_code == 200 and img.headers["content-type"] == "image/png"
    # a user it is not shared with sees only the public one of bob's and nothing of alice's
    assert [v["name"] for v in http.get("/styles/getbyuser", headers=writer.headers).json()] == ["a-public"]


def test_list_without_preview_has_no_img_link(server: Server, http: httpx.Client, alice: Person) -> None:
    create(http, alice, "plain")
    preview_file(server, "plain").unlink()
    (view,) = http.get("/styles/getbyuser", headers=alice.headers).json()
    assert view.get("imgLink") is None


def test_list_with_an_invalid_session_is_null(http: httpx.Client) -> None:
    r = http.get("/styles/getbyuser", headers={"x-session-token": "nope"})
    assert r.status_code == 200 and r.text == "null"


# -- getxml -----------------------------------------------------------------------------------------------
def test_getxml_answers_the_sld_with_an_etag(http: httpx.Client, alice: Person, stranger: Person,
                                             style: str) -> None:
    r = http.get("/styles/getxml", params={"styleId": style}, headers=alice.headers)
    assert r.status_code == 200 and r.content == RED_BLUE
    assert r.headers["content-type"].startswith("application/xml")
    etag = r.headers["etag"]
    again = http.get("/styles/getxml", params={"styleId": style}, headers={**alice.headers, "If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""
    other = http.get("/styles/getxml", params={"styleId": style}, headers={**alice.headers, "If-None-Match": '"x"'})
    assert other.status_code == 200
    assert http.get("/styles/getxml", params={"styleId": style}, headers=stranger.headers).status_code == 403
    assert http.get("/styles/getxml", params={"styleId": "nope"}, headers=alice.headers).status_code == 404
    assert http.get("/styles/getxml", params={"styleId": style}).status_code == 401


def test_getxml_of_a_public_style_and_of_a_missing_file(server: Server, http: httpx.Client, alice: Person,
                                                        stranger: Person) -> None:
    style_id = create(http, alice, "open", public="true")
    assert http.get("/styles/getxml", params={"styleId": style_id}, headers=stranger.headers).content == RED_BLUE
    sld_file(server, "open").unlink()
    assert http.get("/styles/getxml", params={"styleId": style_id}, headers=alice.headers).status_code == 404


# -- updatefile / updatexml -------------------------------------------------------------------------------
@pytest.mark.parametrize("role", ROLES)
def test_updatefile_permission_matrix(server: Server, http: httpx.Client, people: dict[str, Person], style: str,
                                      role: str) -> None:
    r = update_file(http, people[role], style, GREEN)
    assert r.status_code == (200 if WRITE_RIGHTS[role] else 403)
    assert sld_file(server, "floods").read_bytes() == (GREEN if WRITE_RIGHTS[role] else RED_BLUE)


def test_updatefile_replaces_the_file_refreshes_preview_and_republishes(server: Server, http: httpx.Client,
                                                                        alice: Person, style: str) -> None:
    fake = FakeMapServer()
    server.services.styles.publishers.append(fake)
    before = records(server)[0]["lastUpdate"]
    assert update_file(http, alice, style, GREEN).status_code == 200
    assert http.get("/styles/getxml", params={"styleId": style}, headers=alice.headers).content == GREEN
    assert set(png_pixels(preview_file(server, "floods").read_bytes())[2]) == {(0, 255, 0, 255)}
    assert fake.calls == [("publish", "floods", GREEN)]
    assert records(server)[0]["lastUpdate"] >= before


def test_an_identical_update_is_304_and_changes_nothing(server: Server, http: httpx.Client, alice: Person,
                                                        style: str) -> None:
    fake = FakeMapServer()
    server.services.styles.publishers.append(fake)
    stamp = records(server)[0]["lastUpdate"]
    r = update_file(http, alice, style, RED_BLUE)
    assert r.status_code == 304 and r.content == b""
    assert update_xml(http, alice, style, RED_BLUE.decode()).status_code == 304
    assert fake.calls == [] and records(server)[0]["lastUpdate"] == stamp


@pytest.mark.parametrize("kind", sorted(BAD_SLDS))
def test_updatefile_with_an_invalid_sld_is_400(server: Server, http: httpx.Client, alice: Person, style: str,
                                               kind: str) -> None:
    assert update_file(http, alice, style, BAD_SLDS[kind]).status_code == 400
    assert sld_file(server, "floods").read_bytes() == RED_BLUE


def test_updatefile_failures(server: Server, http: httpx.Client, alice: Person, style: str) -> None:
    assert update_file(http, None, style, GREEN).status_code == 401
    assert update_file(http, alice, "nope", GREEN).status_code == 400
    assert http.post("/styles/updatefile", params={"styleId": style}, headers=alice.headers,
                     files={"other": ("a.sld", GREEN)}).status_code == 400
    sld_file(server, "floods").unlink()
    assert update_file(http, alice, style, GREEN).status_code == 404


def zipped(*entries: tuple[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries:
            zf.writestr(name, data)
    return buffer.getvalue()


def test_updatefile_zipped(server: Server, http: httpx.Client, alice: Person, style: str) -> None:
    r = update_file(http, alice, style, zipped(("folder/any-name.SLD", GREEN), ("readme.txt", b"hi")),
                    zipped=True, filename="s.zip")
    assert r.status_code == 200, r.text
    assert sld_file(server, "floods").read_bytes() == GREEN
    # the entry's name never becomes a path
    r = update_file(http, alice, style, zipped(("../../evil.sld", RED_BLUE)), zipped=True)
    assert r.status_code == 200
    assert sld_file(server, "floods").read_bytes() == RED_BLUE
    assert sorted(p.name for p in server.settings.data_dir.rglob("*.sld")) == ["floods.sld"]


def with_compression_method(archive: bytes, method: int) -> bytes:
    """The archive with its one entry claiming another compression method (local and central headers)."""
    data = bytearray(archive)
    local = data.index(b"PK\x03\x04")
    central = data.index(b"PK\x01\x02")
    data[local + 8:local + 10] = method.to_bytes(2, "little")
    data[central + 10:central + 12] = method.to_bytes(2, "little")
    return bytes(data)


@pytest.mark.parametrize("archive", [zipped(("a.sld", GREEN), ("b.sld", GREEN)), zipped(("a.txt", GREEN)),
                                     b"not a zip", zipped(("a.sld", b"<broken")),
                                     with_compression_method(zipped(("a.sld", GREEN)), 99)],
                         ids=["two-slds", "no-sld", "not-a-zip", "broken-xml", "unknown-compression"])
def test_updatefile_zipped_failures(server: Server, http: httpx.Client, alice: Person, style: str,
                                    archive: bytes) -> None:
    assert update_file(http, alice, style, archive, zipped=True).status_code == 400
    assert sld_file(server, "floods").read_bytes() == RED_BLUE
    staging = server.services.styles.staging
    assert not staging.exists() or not any(staging.iterdir())


@pytest.mark.parametrize("role", ROLES)
def test_updatexml_permission_matrix(server: Server, http: httpx.Client, people: dict[str, Person], style: str,
                                     role: str) -> None:
    r = update_xml(http, people[role], style, GREEN.decode())
    assert r.status_code == (200 if WRITE_RIGHTS[role] else 403)
    assert sld_file(server, "floods").read_bytes() == (GREEN if WRITE_RIGHTS[role] else RED_BLUE)


def test_updatexml_keeps_non_ascii_text_and_fixes_the_declared_encoding(server: Server, http: httpx.Client,
                                                                        alice: Person, style: str) -> None:
    text = GREEN.decode().replace('encoding="UTF-8"', 'encoding="ISO-8859-1"').replace("<Name>x</Name>",
                                                                                       "<Name>Überschwemmung</Name>")
    assert update_xml(http, alice, style, text).status_code == 200
    stored = sld_file(server, "floods").read_bytes().decode("utf-8")
    assert "Überschwemmung" in stored and 'encoding="UTF-8"' in stored


def test_updatexml_accepts_a_multipart_form_too(server: Server, http: httpx.Client, alice: Person,
                                               style: str) -> None:
    # browsers post FormData (multipart); scripts post url-encoded forms
    r = http.post("/styles/updatexml", params={"styleId": style}, headers=alice.headers,
                  files={"styleXml": (None, GREEN.decode())})
    assert r.status_code == 200, r.text
    assert sld_file(server, "floods").read_bytes() == GREEN


def test_updatexml_failures(server: Server, http: httpx.Client, alice: Person, style: str) -> None:
    assert update_xml(http, alice, style, "<not-closed").status_code == 400
    assert update_xml(http, alice, style, "<graph/>").status_code == 400
    assert http.post("/styles/updatexml", params={"styleId": style}, headers=alice.headers,
                     data={"other": "x"}).status_code == 400
    assert update_xml(http, alice, "nope", GREEN.decode()).status_code == 400
    assert update_xml(http, None, style, GREEN.decode()).status_code == 401
    assert sld_file(server, "floods").read_bytes() == RED_BLUE


# -- updateparams -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("role", ROLES)
def test_updateparams_permission_matrix(server: Server, http: httpx.Client, people: dict[str, Person], style: str,
                                        role: str) -> None:
    r = http.post("/styles/updateparams", params={"styleId": style, "description": "new", "public": "true"},
                  headers=people[role].headers)
    assert r.status_code == (200 if WRITE_RIGHTS[role] else 403)
    record = records(server)[0]
    assert (record["description"], record["isPublic"]) == (("new", True) if WRITE_RIGHTS[role] else
                                                           ("blue water", False))


def test_updateparams_changes_only_what_is_given(server: Server, http: httpx.Client, alice: Person,
                                                 style: str) -> None:
    assert http.post("/styles/updateparams", params={"styleId": style, "public": "true"},
                     headers=alice.headers).status_code == 200
    assert (records(server)[0]["description"], records(server)[0]["isPublic"]) == ("blue water", True)
    assert http.post("/styles/updateparams", params={"styleId": style, "description": ""},
                     headers=alice.headers).status_code == 200
    assert (records(server)[0]["description"], records(server)[0]["isPublic"]) == ("", True)
    assert http.post("/styles/updateparams", params={"styleId": "nope"}, headers=alice.headers).status_code == 400
    assert http.post("/styles/updateparams", params={"styleId": style, "public": "maybe"},
                     headers=alice.headers).status_code == 400
    assert http.post("/styles/updateparams", params={"styleId": style}).status_code == 401


# -- delete -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("role", ("reader", "writer"))
def test_delete_by_a_sharer_only_drops_the_sharing(server: Server, http: httpx.Client, people: dict[str, Person],
                                                   style: str, role: str) -> None:
    who = people[role]
    assert http.delete("/styles/delete", params={"styleId": style}, headers=who.headers).status_code == 200
    assert len(records(server)) == 1 and sld_file(server, "floods").exists()
    assert {s["userId"] for s in sharings(server)} == {people["writer"].user_id, people["reader"].user_id} - {
        who.user_id}


def test_delete_by_a_stranger_is_403_even_on_a_public_style(server: Server, http: httpx.Client, alice: Person,
                                                            stranger: Person) -> None:
    style_id = create(http, alice, "open", public="true")
    assert http.delete("/styles/delete", params={"styleId": style_id}, headers=stranger.headers).status_code == 403
    assert len(records(server)) == 1


@pytest.mark.parametrize("role", ("owner", "admin"))
def test_delete_removes_everything(server: Server, http: httpx.Client, people: dict[str, Person], style: str,
                                   role: str) -> None:
    fake = FakeMapServer()
    server.services.styles.publishers.append(fake)
    r = http.delete("/styles/delete", params={"styleId": style}, headers=people[role].headers)
    assert r.status_code == 200
    assert records(server) == [] and sharings(server) == []
    assert not sld_file(server, "floods").exists() and not preview_file(server, "floods").exists()
    assert fake.calls == [("remove", "floods", b"")]
    # the name is free again
    create(http, people["owner"], "floods")


def test_delete_failures(server: Server, http: httpx.Client, alice: Person, style: str, tmp_path: Path) -> None:
    assert http.delete("/styles/delete", params={"styleId": "nope"}, headers=alice.headers).status_code == 400
    assert http.delete("/styles/delete", params={"styleId": style}).status_code == 401
    assert len(records(server)) == 1


# -- compute nodes ----------------------------------------------------------------------------------------
@pytest.fixture
def node(tmp_path: Path) -> Iterator[Server]:
    s = Server(tmp_path / "node", node_code="node2")
    yield s
    s.close()


def test_delete_is_main_node_only_and_nodedelete_compute_only(server: Server, node: Server, http: httpx.Client,
                                                              alice: Person, style: str) -> None:
    r = http.delete("/styles/nodedelete", params={"styleId": style, "styleName": "floods"}, headers=alice.headers)
    assert r.status_code == 400
    owner = node.add_user("alice@example.org")
    with httpx.Client(transport=httpx.WSGITransport(app=node.app), base_url=BASE) as on_node:
        style_id = create(on_node, owner, "floods")
        assert on_node.delete("/styles/delete", params={"styleId": style_id}, headers=owner.headers).status_code == 400
        assert len(node.services.store.collection("styles").all()) == 1


@pytest.mark.parametrize("role", ROLES)
def test_nodedelete_permission_matrix(node: Server, role: str) -> None:
    people = {"owner": node.add_user("alice@example.org"), "writer": node.add_user("writer@example.org"),
              "reader": node.add_user("reader@example.org"), "stranger": node.add_user("stranger@example.org"),
              "admin": node.add_user("root@example.org", admin=True)}
    with httpx.Client(transport=httpx.WSGITransport(app=node.app), base_url=BASE) as on_node:
        style_id = create(on_node, people["owner"], "floods")
        share(on_node, people["owner"], style_id, people["writer"].user_id, "write")
        share(on_node, people["owner"], style_id, people["reader"].user_id, "read")
        params = {"styleId": style_id, "styleName": "floods"}
        r = on_node.delete("/styles/nodedelete", params=params, headers=people[role].headers)
        assert r.status_code == (200 if WRITE_RIGHTS[role] else 403)
        assert sld_file(node, "floods").exists() != WRITE_RIGHTS[role]
        assert (node.services.store.collection("styles").get(style_id) is None) == WRITE_RIGHTS[role]


def test_nodedelete_failures(node: Server) -> None:
    owner = node.add_user("alice@example.org")
    with httpx.Client(transport=httpx.WSGITransport(app=node.app), base_url=BASE) as on_node:
        style_id = create(on_node, owner, "floods")
        for name in ("other", "../floods", ""):
            r = on_node.delete("/styles/nodedelete", params={"styleId": style_id, "styleName": name},
                               headers=owner.headers)
            assert r.status_code == 400
        r = on_node.delete("/styles/nodedelete", params={"styleId": "unknown", "styleName": "floods"},
                           headers=owner.headers)
        assert r.status_code == 403
        assert on_node.delete("/styles/nodedelete", params={"styleId": style_id, "styleName": "floods"}
                              ).status_code == 401
    assert sld_file(node, "floods").exists()


# -- sharing ----------------------------------------------------------------------------------------------
def test_share_rules(server: Server, http: httpx.Client, alice: Person, bob: Person, carol: Person,
                     admin: Person) -> None:
    style_id = create(http, alice, "s")
    done = share(http, alice, style_id, bob.user_id)
    assert done == {"boolValue": True, "intValue": 200, "stringValue": "Done"}
    again = share(http, alice, style_id, bob.user_id, "write")
    assert again["boolValue"] is False and again["stringValue"] == "Already shared"
    assert [(s["userId"], s["permissions"]) for s in sharings(server)] == [(bob.user_id, "read")]
    assert share(http, alice, style_id, alice.user_id)["boolValue"] is False  # self
    assert share(http, admin, style_id, alice.user_id)["boolValue"] is False  # the owner
    assert share(http, alice, style_id, "ghost@example.org")["boolValue"] is False  # unknown user
    refused = share(http, bob, style_id, carol.user_id)  # a reader cannot share further
    assert refused["boolValue"] is False and refused["intValue"] == 403
    assert share(http, carol, style_id, bob.user_id)["intValue"] == 403  # a stranger
    bad = share(http, alice, "nope", bob.user_id)
    assert bad["boolValue"] is False and bad["intValue"] == 400
    assert share(http, admin, style_id, carol.user_id, "bogus")["boolValue"] is True
    assert {s["userId"]: s["permissions"] for s in sharings(server)} == {bob.user_id: "read", carol.user_id: "read"}
    r = http.put("/styles/share/add", params={"styleId": style_id, "userId": carol.user_id})
    assert r.status_code == 200 and r.json()["boolValue"] is False and r.json()["intValue"] == 401
    mails = server.mails()
    assert {m["To"] for m in mails} == {bob.user_id, carol.user_id}


@pytest.mark.parametrize("role", ROLES)
def test_share_add_permission_matrix(server: Server, http: httpx.Client, people: dict[str, Person], style: str,
                                     role: str) -> None:
    target = server.add_user("target@example.org")
    result = share(http, people[role], style, target.user_id, "read")
    assert result["boolValue"] is WRITE_RIGHTS[role]
    if not WRITE_RIGHTS[role]:
        assert result["intValue"] == 403


@pytest.mark.parametrize("role", ROLES)
def test_share_delete_permission_matrix(server: Server, http: httpx.Client, people: dict[str, Person],
                                        style: str, role: str) -> None:
    """Removing someone else's (the reader's) sharing: the owner or an admin only (not a write sharer)."""
    r = http.delete("/styles/share/delete", params={"styleId": style, "userId": people["reader"].user_id},
                    headers=people[role].headers)
    allowed = role in ("owner", "admin", "reader")
    assert r.status_code == 200
    assert r.json()["boolValue"] is allowed
    if not allowed:
        assert r.json()["intValue"] == 403
    assert (people["reader"].user_id in {s["userId"] for s in sharings(server)}) is not allowed


def test_share_delete_failures(server: Server, http: httpx.Client, alice: Person, bob: Person, style: str) -> None:
    r = http.delete("/styles/share/delete", params={"styleId": style, "userId": bob.user_id}, headers=alice.headers)
    assert r.json()["boolValue"] is False  # not shared with bob
    r = http.delete("/styles/share/delete", params={"styleId": "nope", "userId": bob.user_id}, headers=alice.headers)
    assert r.json()["boolValue"] is False and r.json()["intValue"] == 400


def test_share_list(http: httpx.Client, people: dict[str, Person], style: str) -> None:
    expected = [{"userId": people["writer"].user_id, "permissions": "write"},
                {"userId": people["reader"].user_id, "permissions": "read"}]
    for role in ("owner", "writer", "reader", "admin"):
        r = http.get("/styles/share/bystyle", params={"styleId": style}, headers=people[role].headers)
        assert r.status_code == 200 and r.json() == expected
    for who, style_id in ((people["stranger"], style), (people["owner"], "nope")):
        r = http.get("/styles/share/bystyle", params={"styleId": style_id}, headers=who.headers)
        assert r.status_code == 200 and r.json() == []


# -- downloads --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("path", "key"), [("/styles/download", "id"), ("/styles/downloadbyname", "name")])
def test_download_by_id_and_by_name(server: Server, http: httpx.Client, alice: Person, stranger: Person,
                                    reader: Person, style: str, path: str, key: str) -> None:
    params = {"styleId": style} if key == "id" else {"style": "floods"}
    r = http.get(path, params=params, headers=alice.headers)
    assert r.status_code == 200 and r.content == RED_BLUE
    assert r.headers["content-type"] == "application/octet-stream"
    assert r.headers["content-disposition"] == 'attachment; filename="floods.sld"'
    assert http.get(path, params={**params, "token": reader.token}).content == RED_BLUE  # token, no header
    assert http.get(path, params={**params, "token": "nope"}).status_code == 401
    assert http.get(path, params=params).status_code == 401
    assert http.get(path, params=params, headers=stranger.headers).status_code == 403
    unknown = {"styleId": "nope"} if key == "id" else {"style": "nope"}
    assert http.get(path, params=unknown, headers=alice.headers).status_code == 204
    sld_file(server, "floods").unlink()
    r = http.get(path, params=params, headers=alice.headers)
    assert r.status_code == 204 and r.content == b""


def test_download_of_a_public_style(http: httpx.Client, alice: Person, stranger: Person) -> None:
    create(http, alice, "open", public="true")
    assert http.get("/styles/downloadbyname", params={"style": "OPEN"}, headers=stranger.headers).content == RED_BLUE


# -- the styles image collection follows the styles' rights ----------------------------------------------
def test_style_preview_images_follow_the_style_rights(server: Server, http: httpx.Client, people: dict[str, Person],
                                                      style: str) -> None:
    params = {"collection": "styles", "name": "floods.png"}
    for role in ROLES:
        r = http.get("/images/get", params=params, headers=people[role].headers)
        assert r.status_code == (403 if role == "stranger" else 200)
    for role in ROLES:
        r = http.post("/images/upload", params={"collection": "styles", "name": "floods"},
                      headers=people[role].headers, files={"image": ("p.jpg", b"\xff\xd8\xff")})
        assert r.status_code == (200 if WRITE_RIGHTS[role] else 403)
    r = http.post("/images/upload", params={"collection": "styles", "name": "no-such-style"},
                  headers=people["admin"].headers, files={"image": ("p.png", b"x")})
    assert r.status_code == 403
