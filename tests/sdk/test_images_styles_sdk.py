"""client.images and client.styles: against the real app (contract behaviour), and with respx (the wire
form of uploads, streamed downloads, no retry of uploads, failures to exceptions)."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import httpx
import pytest
import respx
from tests.conftest import Person, Server

from wasdi_sdk import (
    AuthenticationError,
    BadRequestError,
    EmptyResultError,
    NoContentError,
    NotFoundError,
    NotModifiedError,
    PermissionDeniedError,
    WasdiClient,
)
from wasdi_sdk.models import StyleSharingViewModel, StyleViewModel

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
SLD = (b'<?xml version="1.0"?><StyledLayerDescriptor xmlns="http://www.opengis.net/sld" version="1.0.0">'
       b'<NamedLayer><UserStyle><FeatureTypeStyle><Rule><RasterSymbolizer><ColorMap>'
       b'<ColorMapEntry color="#000000" quantity="0"/><ColorMapEntry color="#ffffff" quantity="1"/>'
       b"</ColorMap></RasterSymbolizer></Rule></FeatureTypeStyle></UserStyle></NamedLayer></StyledLayerDescriptor>")
SLD2 = SLD.replace(b"#ffffff", b"#ff0000")
BASE = "http://wasdi.test/rest"


# -- images against the app ---------------------------------------------------------------------------------
def test_image_round_trip_with_a_path_and_a_file_object(server: Server, alice: Person, tmp_path: Path) -> None:
    client = server.sdk(alice)
    source = tmp_path / "avatar.png"
    source.write_bytes(PNG)
    sent: list[int] = []
    client.images.upload(source, collection="users", folder=alice.user_id, name="me", on_progress=sent.append)
    assert sum(sent) == len(PNG)
    assert client.images.get(collection="users", folder=alice.user_id, name="me.png") == PNG
    assert client.images.exists(collection="users", folder=alice.user_id, name="me.png") is True
    # an open binary file, with the type given by filename
    client.images.upload(io.BytesIO(PNG[:100]), collection="users", folder=alice.user_id, name="me",
                         filename="x.jpg")
    assert client.images.exists(collection="users", folder=alice.user_id, name="me.png") is False
    # streamed to a file, or into a folder under the image's name
    received: list[int] = []
    target = client.images.get(collection="users", folder=alice.user_id, name="me.jpg", to=tmp_path / "copy.jpg",
                               on_progress=received.append)
    assert target == tmp_path / "copy.jpg" and target.read_bytes() == PNG[:100] and sum(received) == 100
    folder = tmp_path / "out"
    folder.mkdir()
    assert client.images.get(collection="users", folder=alice.user_id, name="me.jpg", to=folder).name == "me.jpg"
    client.images.upload(io.BytesIO(PNG), collection="users", folder=alice.user_id, name="été", filename="x.png")
    assert client.images.get(collection="users", folder=alice.user_id, name="été.png", to=folder).name == "été.png"
    client.images.delete(collection="users", folder=alice.user_id, name="me.jpg")
    with pytest.raises(NoContentError):
        client.images.get(collection="users", folder=alice.user_id, name="me.jpg")
    with pytest.raises(NoContentError):
        client.images.get(collection="users", folder=alice.user_id, name="me.jpg", to=tmp_path / "gone.jpg")
    assert not (tmp_path / "gone.jpg").exists() and not list(tmp_path.glob(".*.part"))
    with pytest.raises(NotFoundError):
        client.images.delete(collection="users", folder=alice.user_id, name="me.jpg")


def test_image_failures_raise_by_meaning(server: Server, alice: Person, bob: Person) -> None:
    client = server.sdk(alice)
    with pytest.raises(BadRequestError):
        client.images.upload(io.BytesIO(PNG), collection="nope", name="x", filename="a.png")
    with pytest.raises(BadRequestError):
        client.images.upload(io.BytesIO(PNG), collection="users", folder=alice.user_id, name="x", filename="a.gif")
    with pytest.raises(BadRequestError):
        client.images.get(collection="users", folder="../x", name="x.png")
    with pytest.raises(PermissionDeniedError):
        client.images.upload(io.BytesIO(PNG), collection="users", folder=bob.user_id, name="x", filename="a.png")
    with pytest.raises(AuthenticationError):
        server.sdk().images.get(collection="users", folder=alice.user_id, name="x.png")


def test_processor_logo_and_gallery(server: Server, alice: Person, tmp_path: Path) -> None:
    server.services.store.collection("processors").insert(
        {"processorId": "p1", "name": "demo", "userId": alice.user_id, "isPublic": 1})
    client = server.sdk(alice)
    client.images.upload_processor_logo(io.BytesIO(PNG), processor_id="p1", filename="logo.png")
    logo = server.services.store.collection("processors").get("p1")["logo"]
    assert logo.endswith("/images/get?collection=processors&folder=demo&name=logo.png")
    links = [client.images.upload_gallery_image(io.BytesIO(PNG), processor_id="p1", filename="g.png").string_value
             for _ in range(6)]
    assert [str(link).rsplit("=", 1)[1] for link in links] == [f"{n}.png" for n in range(1, 7)]
    with pytest.raises(BadRequestError):
        client.images.upload_gallery_image(io.BytesIO(PNG), processor_id="p1", filename="g.png")
    with pytest.raises(NotFoundError):
        client.images.upload_processor_logo(io.BytesIO(PNG), processor_id="nope", filename="logo.png")


# -- styles against the app ---------------------------------------------------------------------------------
def test_style_lifecycle(server: Server, alice: Person, bob: Person, tmp_path: Path) -> None:
    client = server.sdk(alice)
    path = tmp_path / "ramp.sld"
    path.write_bytes(SLD)
    created = client.styles.upload(path, name="ramp", description="grey", public=False)
    style_id = str(created.string_value)
    (view,) = client.styles.list()
    assert isinstance(view, StyleViewModel)
    assert (view.style_id, view.name, view.description, view.is_public, view.read_only) == (
        style_id, "ramp", "grey", False, False)
    assert view.img_link and view.img_link.endswith(f"name=ramp.png&token={alice.token}")
    assert client.styles.get_xml(style_id) == SLD.decode()
    with pytest.raises(NotModifiedError):
        client.styles.update_xml(style_id=style_id, style_xml=SLD.decode())
    client.styles.update_xml(style_id=style_id, style_xml=SLD2.decode())
    assert client.styles.download(style_id) == SLD2
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("ramp.sld", SLD)
    archive.seek(0)
    client.styles.update_file(archive, style_id=style_id, zipped=True)
    assert client.styles.download_by_name("ramp") == SLD
    with pytest.raises(NotModifiedError):
        client.styles.update_file(io.BytesIO(SLD), style_id=style_id)
    client.styles.update_params(style_id, description="new", public=True)
    assert client.styles.list()[0].description == "new"
    assert [v.name for v in server.sdk(bob).styles.list()] == ["ramp"]  # public now
    # streamed downloads: into a folder the server's file name is used
    folder = tmp_path / "dl"
    folder.mkdir()
    assert client.styles.download(style_id, to=folder) == folder / "ramp.sld"
    assert client.styles.download_by_name("ramp", to=tmp_path / "x.sld").read_bytes() == SLD
    # sharing, with a repeated share as an error
    assert client.styles.share_add(style_id=style_id, user_id=bob.user_id, rights="write").string_value == "Done"
    with pytest.raises(BadRequestError, match="Already shared"):
        client.styles.share_add(style_id=style_id, user_id=bob.user_id)
    sharings = client.styles.share_list(style_id)
    assert [(s.user_id, s.permissions) for s in sharings] == [(bob.user_id, "write")]
    assert isinstance(sharings[0], StyleSharingViewModel)
    assert client.styles.share_delete(style_id=style_id, user_id=bob.user_id).bool_value is True
    assert client.styles.share_list(style_id) == []
    with pytest.raises(BadRequestError):
        client.styles.node_delete(style_id=style_id, style_name="ramp")  # the main node has no copies
    client.styles.delete(style_id)
    assert client.styles.list() == []
    with pytest.raises(NoContentError):
        client.styles.download(style_id)


def test_style_failures_raise_by_meaning(server: Server, alice: Person, bob: Person, carol: Person) -> None:
    client = server.sdk(alice)
    style_id = str(client.styles.upload(io.BytesIO(SLD), name="mine").string_value)
    with pytest.raises(BadRequestError, match="already used"):
        client.styles.upload(io.BytesIO(SLD), name="MINE")
    with pytest.raises(BadRequestError):
        client.styles.upload(io.BytesIO(b"<graph/>"), name="other")
    with pytest.raises(NotFoundError):
        client.styles.get_xml("nope")
    other = server.sdk(bob)
    with pytest.raises(PermissionDeniedError):
        other.styles.get_xml(style_id)
    with pytest.raises(PermissionDeniedError):
        other.styles.update_params(style_id, description="x")
    with pytest.raises(PermissionDeniedError):
        other.styles.share_add(style_id=style_id, user_id=carol.user_id)
    assert other.styles.share_list(style_id) == []
    with pytest.raises(EmptyResultError):
        server.sdk(token="not-a-session").styles.list()  # an invalid session answers null


# -- the wire, with respx -----------------------------------------------------------------------------------
@pytest.fixture
def client() -> WasdiClient:
    c = WasdiClient(base_url=BASE, session_token="tok", max_retries=2)
    c._backoff = staticmethod(lambda attempt: 0.0)  # type: ignore[method-assign]
    return c


@respx.mock
def test_upload_is_one_multipart_part_and_is_never_retried(client: WasdiClient, tmp_path: Path) -> None:
    route = respx.post(f"{BASE}/images/upload").mock(return_value=httpx.Response(503))
    path = tmp_path / "a.svg"
    path.write_bytes(b"<svg/>")
    with pytest.raises(Exception):  # noqa: B017 - any failure: the point is the single attempt
        client.images.upload(path, collection="users", folder="me", name="pic", resize=True)
    assert route.call_count == 1
    request = route.calls[0].request
    assert request.url.params["collection"] == "users" and request.url.params["resize"] == "true"
    assert request.headers["x-session-token"] == "tok"
    assert request.headers["content-type"].startswith("multipart/form-data")
    body = request.read()
    assert b'name="image"; filename="a.svg"' in body and b"<svg/>" in body


@respx.mock
def test_style_uploads_send_the_file_field_and_xml_as_a_form(client: WasdiClient) -> None:
    upload = respx.post(f"{BASE}/styles/uploadfile").mock(
        return_value=httpx.Response(200, json={"boolValue": True, "stringValue": "id1"}))
    xml = respx.post(f"{BASE}/styles/updatexml").mock(return_value=httpx.Response(304))
    assert client.styles.upload(io.BytesIO(SLD), name="n", public=True).string_value == "id1"
    assert b'name="file"' in upload.calls[0].request.read()
    assert upload.calls[0].request.url.params["public"] == "true"
    with pytest.raises(NotModifiedError):
        client.styles.update_xml(style_id="id1", style_xml="<a b='1 2'/>")
    request = xml.calls[0].request
    assert request.headers["content-type"] == "application/x-www-form-urlencoded"
    assert request.read() == b"styleXml=%3Ca+b%3D%271+2%27%2F%3E"


@respx.mock
def test_downloads_stream_to_disk_and_leave_nothing_on_failure(client: WasdiClient, tmp_path: Path) -> None:
    respx.get(f"{BASE}/styles/download").mock(side_effect=[
        httpx.Response(200, content=b"abc" * 50000, headers={"content-disposition": 'attachment; filename="s.sld"'}),
        httpx.Response(403, json={"message": "no"}),
    ])
    got: list[int] = []
    assert client.styles.download("id", to=tmp_path, on_progress=got.append) == tmp_path / "s.sld"
    assert (tmp_path / "s.sld").read_bytes() == b"abc" * 50000 and sum(got) == 150000
    with pytest.raises(PermissionDeniedError):
        client.styles.download("id", to=tmp_path / "t.sld")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.sld"]


@respx.mock
def test_a_hostile_download_name_stays_in_the_folder(client: WasdiClient, tmp_path: Path) -> None:
    respx.get(f"{BASE}/styles/downloadbyname").mock(return_value=httpx.Response(
        200, content=b"x", headers={"content-disposition": 'attachment; filename="../../evil.sld"'}))
    assert client.styles.download_by_name("s", to=tmp_path) == tmp_path / "evil.sld"


@respx.mock
def test_exists_maps_404_to_false_and_other_failures_raise(client: WasdiClient) -> None:
    respx.get(f"{BASE}/images/exists").mock(side_effect=[httpx.Response(200), httpx.Response(404),
                                                         httpx.Response(403, json={"message": "no"})])
    assert client.images.exists(collection="users", name="a.png") is True
    assert client.images.exists(collection="users", name="a.png") is False
    with pytest.raises(PermissionDeniedError):
        client.images.exists(collection="users", name="a.png")
