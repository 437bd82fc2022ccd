"""/images through the real app: collections, read/write rules, token, traversal, size cap, extensions,
replacement, processor logo and gallery."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.conftest import Person, Server

from wasdi_server.domains.accounts.identity import User
from wasdi_server.domains.accounts.sharing import Resource
from wasdi_server.domains.products.images import MAX_IMAGE_BYTES

BASE = "http://testserver"
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64
JPG = b"\xff\xd8\xff\xe0" + b"\x01" * 64
SVG = b'<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>'


@pytest.fixture
def http(server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(transport=httpx.WSGITransport(app=server.app), base_url=BASE) as client:
        yield client


def hdr(who: Person | None) -> dict[str, str]:
    return who.headers if who else {}


def upload(http: httpx.Client, who: Person | None, data: bytes = PNG, filename: str = "pic.png",
           field: str = "image", **params: Any) -> httpx.Response:
    params = {k: v for k, v in params.items() if v is not None}
    return http.post("/images/upload", params=params, headers=hdr(who), files={field: (filename, data)})


def get(http: httpx.Client, who: Person | None, path: str = "/images/get", **params: Any) -> httpx.Response:
    return http.get(path, params={k: v for k, v in params.items() if v is not None}, headers=hdr(who))


def delete(http: httpx.Client, who: Person | None, **params: Any) -> httpx.Response:
    return http.delete("/images/delete", params={k: v for k, v in params.items() if v is not None}, headers=hdr(who))


def user_of(server: Server, who: Person) -> User:
    user = server.services.users.active_user(who.user_id)
    assert user is not None
    return user


def share(server: Server, owner: Person, resource: Resource, target: Person, rights: str) -> None:
    server.services.sharing.share(user_of(server, owner), resource, target.user_id, rights, notify=False)


def image_file(server: Server, *parts: str) -> Path:
    return server.settings.images_root.joinpath(*parts)


def staging_is_empty(server: Server) -> bool:
    staging = server.services.images.staging
    return not staging.exists() or not any(staging.iterdir())


# -- people and objects ---------------------------------------------------------------------------------
@pytest.fixture
def processor(server: Server, alice: Person, writer: Person, reader: Person) -> dict[str, Any]:
    doc = server.services.store.collection("processors").insert(
        {"processorId": "proc-1", "name": "hellowasdi", "userId": alice.user_id, "isPublic": 0, "logo": ""})
    resource = server.services.images.processor_resource(doc)
    share(server, alice, resource, writer, "write")
    share(server, alice, resource, reader, "read")
    return doc


@pytest.fixture
def organization(server: Server, alice: Person, writer: Person, reader: Person) -> dict[str, Any]:
    doc = server.services.store.collection("organizations").insert(
        {"organizationId": "org-1", "userId": alice.user_id, "name": "ACME"})
    resource = Resource("organization", "org-1", alice.user_id, "ACME")
    share(server, alice, resource, writer, "write")
    share(server, alice, resource, reader, "read")
    return doc


ROLES = ("owner", "writer", "reader", "stranger", "admin")


@pytest.fixture
def people(alice: Person, writer: Person, reader: Person, stranger: Person, admin: Person) -> dict[str, Person]:
    return {"owner": alice, "writer": writer, "reader": reader, "stranger": stranger, "admin": admin}


# -- basics: the users collection ------------------------------------------------------------------------
def test_upload_get_exists_delete_in_the_users_collection(server: Server, http: httpx.Client, alice: Person) -> None:
    me = {"collection": "users", "folder": alice.user_id}
    r = upload(http, alice, name="avatar", **me)
    assert r.status_code == 200, r.text
    stored = image_file(server, "users", alice.user_id, "avatar.png")
    assert stored.read_bytes() == PNG
    r = get(http, alice, name="avatar.png", **me)
    assert r.status_code == 200 and r.content == PNG
    assert r.headers["content-type"] == "image/png"
    assert r.headers["x-content-type-options"] == "nosniff"
    assert get(http, alice, "/images/exists", name="avatar.png", **me).status_code == 200
    assert delete(http, alice, name="avatar.png", **me).status_code == 200
    assert not stored.exists()
    r = get(http, alice, name="avatar.png", **me)
    assert r.status_code == 204 and r.content == b""
    assert get(http, alice, "/images/exists", name="avatar.png", **me).status_code == 404
    assert delete(http, alice, name="avatar.png", **me).status_code == 404
    assert staging_is_empty(server)


def test_users_folder_is_the_callers_own(server: Server, http: httpx.Client, alice: Person, bob: Person,
                                         admin: Person) -> None:
    mine = {"collection": "users", "folder": alice.user_id, "name": "avatar"}
    assert upload(http, alice, **mine).status_code == 200
    assert upload(http, bob, **mine).status_code == 403
    assert get(http, bob, **{**mine, "name": "avatar.png"}).status_code == 403
    assert get(http, bob, "/images/exists", **{**mine, "name": "avatar.png"}).status_code == 403
    assert delete(http, bob, **{**mine, "name": "avatar.png"}).status_code == 403
    assert upload(http, alice, collection="users", name="nofolder").status_code == 403
    # admins may read and write every user's folder
    assert get(http, admin, **{**mine, "name": "avatar.png"}).status_code == 200
    assert upload(http, admin, data=JPG, filename="x.jpg", **mine).status_code == 200
    assert image_file(server, "users", alice.user_id, "avatar.jpg").exists()


def test_a_non_ascii_name_is_served_with_an_encoded_file_name(http: httpx.Client, alice: Person) -> None:
    me = {"collection": "users", "folder": alice.user_id}
    assert upload(http, alice, name='cafè "名"', **me).status_code == 200
    r = get(http, alice, name='cafè "名".png', **me)
    assert r.status_code == 200 and r.content == PNG
    assert r.headers["content-disposition"] == (
        "inline; filename=\"caf_ ___.png\"; filename*=UTF-8''caf%C3%A8%20%22%E5%90%8D%22.png")


def test_svg_is_served_as_an_image_in_a_sandbox(http: httpx.Client, alice: Person) -> None:
    me = {"collection": "users", "folder": alice.user_id}
    assert upload(http, alice, data=SVG, filename="logo.svg", name="vector", **me).status_code == 200
    r = get(http, alice, name="vector.svg", **me)
    assert r.status_code == 200 and r.headers["content-type"] == "image/svg+xml"
    assert "sandbox" in r.headers["content-security-policy"]


def test_unknown_collection_is_400(http: httpx.Client, alice: Person) -> None:
    params = {"collection": "secrets", "folder": alice.user_id, "name": "a.png"}
    assert upload(http, alice, **params).status_code == 400
    assert get(http, alice, **params).status_code == 400
    assert get(http, alice, "/images/exists", **params).status_code == 400
    assert delete(http, alice, **params).status_code == 400


def test_missing_name_or_collection_is_400(http: httpx.Client, alice: Person) -> None:
    assert upload(http, alice, collection="users", folder=alice.user_id).status_code == 400
    assert get(http, alice, collection="users", folder=alice.user_id).status_code == 400
    assert get(http, alice, name="a.png", folder=alice.user_id).status_code == 400


def test_no_session_is_401_everywhere(http: httpx.Client, alice: Person, processor: dict[str, Any]) -> None:
    params = {"collection": "users", "folder": alice.user_id, "name": "a.png"}
    assert upload(http, None, **params).status_code == 401
    assert get(http, None, **params).status_code == 401
    assert get(http, None, "/images/exists", **params).status_code == 401
    assert delete(http, None, **params).status_code == 401
    files = {"image": ("a.png", PNG)}
    assert http.post("/images/processors/logo/upload", params={"processorId": "proc-1"}, files=files).status_code == 401
    assert http.post("/images/processors/gallery/upload", params={"processorId": "proc-1"},
                     files=files).status_code == 401


# -- token ------------------------------------------------------------------------------------------------
def test_token_query_parameter_on_get_and_exists_only(server: Server, http: httpx.Client, alice: Person) -> None:
    me = {"collection": "users", "folder": alice.user_id}
    assert upload(http, alice, name="avatar", **me).status_code == 200
    r = http.get("/images/get", params={**me, "name": "avatar.png", "token": alice.token})
    assert r.status_code == 200 and r.content == PNG
    r = http.get("/images/exists", params={**me, "name": "avatar.png", "token": alice.token})
    assert r.status_code == 200
    assert http.get("/images/get", params={**me, "name": "avatar.png", "token": "nope"}).status_code == 401
    # the token replaces the header only on the GET endpoints
    assert http.delete("/images/delete", params={**me, "name": "avatar.png", "token": alice.token}).status_code == 401
    r = http.post("/images/upload", params={**me, "name": "x", "token": alice.token}, files={"image": ("a.png", PNG)})
    assert r.status_code == 401
    assert image_file(server, "users", alice.user_id, "avatar.png").exists()


# -- path traversal ---------------------------------------------------------------------------------------
TRAVERSAL = ["../x", "..", "a/b", "a\\b", "..\\..\\etc", "/etc/passwd", "x\x00y"]


@pytest.mark.parametrize("bad", TRAVERSAL)
@pytest.mark.parametrize("where", ["collection", "folder", "name"])
def test_path_traversal_is_400_on_every_endpoint(server: Server, http: httpx.Client, alice: Person, bad: str,
                                                 where: str) -> None:
    params = {"collection": "users", "folder": alice.user_id, "name": "pic.png", where: bad}
    assert upload(http, alice, **params).status_code == 400
    assert get(http, alice, **params).status_code == 400
    assert get(http, alice, "/images/exists", **params).status_code == 400
    assert delete(http, alice, **params).status_code == 400
    assert not any(p.is_file() for p in server.settings.data_dir.rglob("*.png"))


def test_traversal_in_the_uploaded_file_name_does_not_matter(server: Server, http: httpx.Client,
                                                            alice: Person) -> None:
    r = upload(http, alice, filename="../../../evil.png", collection="users", folder=alice.user_id, name="ok")
    assert r.status_code == 200
    assert [p.name for p in server.settings.data_dir.rglob("*.png")] == ["ok.png"]


# -- size cap ---------------------------------------------------------------------------------------------
def test_an_image_of_exactly_two_mib_is_accepted(server: Server, http: httpx.Client, alice: Person) -> None:
    data = b"\x89PNG" + b"\x00" * (MAX_IMAGE_BYTES - 4)
    r = upload(http, alice, data=data, collection="users", folder=alice.user_id, name="big")
    assert r.status_code == 200
    assert image_file(server, "users", alice.user_id, "big.png").stat().st_size == MAX_IMAGE_BYTES


def test_a_larger_image_is_refused_and_nothing_is_kept(server: Server, http: httpx.Client, alice: Person) -> None:
    me = {"collection": "users", "folder": alice.user_id}
    assert upload(http, alice, name="big", **me).status_code == 200
    r = upload(http, alice, data=b"\x00" * (MAX_IMAGE_BYTES + 1), name="big", **me)
    assert r.status_code == 400 and "larger" in r.json()["message"]
    assert image_file(server, "users", alice.user_id, "big.png").read_bytes() == PNG  # the old one stays
    assert staging_is_empty(server)


def test_an_oversize_body_is_refused_before_it_is_read(server: Server, alice: Person) -> None:
    def body() -> Iterator[bytes]:
        yield b"--B\r\nContent-Disposition: form-data; name=\"image\"; filename=\"a.png\"\r\n\r\n"
        for _ in range(MAX_IMAGE_BYTES // 65536 + 4):
            yield b"\x00" * 65536
        yield b"\r\n--B--\r\n"

    size = 80 + 65536 * (MAX_IMAGE_BYTES // 65536 + 4) + 10
    with httpx.Client(transport=httpx.WSGITransport(app=server.app), base_url=BASE) as http:
        params = {"collection": "users", "folder": alice.user_id, "name": "x"}
        headers = {**alice.headers, "Content-Type": "multipart/form-data; boundary=B"}
        r = http.post("/images/upload", params=params, headers={**headers, "Content-Length": str(size)},
                      content=body())
        assert r.status_code == 400 and "larger" in r.json()["message"]
        # without a length the multipart reader cannot bound the body: refused too
        r = http.post("/images/upload", params=params, headers=headers, content=iter([b"--B--\r\n"]))
        assert r.status_code == 400
    assert not image_file(server, "users", alice.user_id, "x.png").exists()
    assert staging_is_empty(server)


# -- extensions and replacement ---------------------------------------------------------------------------
@pytest.mark.parametrize(("filename", "stored"), [("a.png", "pic.png"), ("A.PNG", "pic.png"), ("a.jpg", "pic.jpg"),
                                                  ("a.svg", "pic.svg"), ("dir/a.b.jpg", "pic.jpg")])
def test_allowed_extensions(server: Server, http: httpx.Client, alice: Person, filename: str, stored: str) -> None:
    r = upload(http, alice, filename=filename, collection="users", folder=alice.user_id, name="pic")
    assert r.status_code == 200
    assert image_file(server, "users", alice.user_id, stored).exists()


@pytest.mark.parametrize("filename", ["a.jpeg", "a.gif", "a.html", "noext", "a.png.exe", ""])
def test_other_extensions_are_refused(server: Server, http: httpx.Client, alice: Person, filename: str) -> None:
    r = upload(http, alice, filename=filename, collection="users", folder=alice.user_id, name="pic")
    assert r.status_code == 400
    assert not image_file(server, "users", alice.user_id).exists() or not any(
        image_file(server, "users", alice.user_id).iterdir())


def test_a_body_that_is_not_a_multipart_image_is_400(http: httpx.Client, alice: Person) -> None:
    params = {"collection": "users", "folder": alice.user_id, "name": "pic"}
    assert upload(http, alice, field="file", **params).status_code == 400
    r = http.post("/images/upload", params=params, headers=alice.headers, content=PNG)
    assert r.status_code == 400
    r = http.post("/images/upload", params=params, content=b"--x\r\nbroken",
                  headers={**alice.headers, "Content-Type": "multipart/form-data; boundary=x"})
    assert r.status_code == 400


def test_an_image_of_another_extension_is_replaced(server: Server, http: httpx.Client, alice: Person) -> None:
    me = {"collection": "users", "folder": alice.user_id}
    assert upload(http, alice, name="avatar", **me).status_code == 200
    assert upload(http, alice, data=JPG, filename="new.jpg", name="avatar.png", **me).status_code == 200
    folder = image_file(server, "users", alice.user_id)
    assert sorted(p.name for p in folder.iterdir()) == ["avatar.jpg"]
    assert get(http, alice, name="avatar.png", **me).status_code == 204
    r = get(http, alice, name="avatar.jpg", **me)
    assert r.content == JPG and r.headers["content-type"] == "image/jpeg"


def test_a_folder_is_not_an_image(server: Server, http: httpx.Client, alice: Person) -> None:
    image_file(server, "users", alice.user_id, "dir.png").mkdir(parents=True)
    assert get(http, alice, collection="users", folder=alice.user_id, name="dir.png").status_code == 204
    assert get(http, alice, "/images/exists", collection="users", folder=alice.user_id,
               name="dir.png").status_code == 404


# -- globathy: read-only, open to everyone ----------------------------------------------------------------
def test_globathy_is_readable_by_everyone_and_writable_by_nobody(server: Server, http: httpx.Client, alice: Person,
                                                                 admin: Person) -> None:
    tile = image_file(server, "globathy", "63001_64000", "63010.png")
    tile.parent.mkdir(parents=True)
    tile.write_bytes(PNG)
    params = {"collection": "globathy", "folder": "63001_64000", "name": "63010.png"}
    assert get(http, alice, **params).content == PNG
    assert get(http, alice, "/images/exists", **params).status_code == 200
    for who in (alice, admin):
        assert upload(http, who, **{**params, "name": "x"}).status_code == 403
        assert delete(http, who, **params).status_code == 403
    assert tile.exists()


# -- processors and organizations: the permission matrix --------------------------------------------------
READ_RIGHTS = {"owner": True, "writer": True, "reader": True, "stranger": False, "admin": True}
WRITE_RIGHTS = {"owner": True, "writer": True, "reader": False, "stranger": False, "admin": True}


@pytest.mark.parametrize("role", ROLES)
def test_processor_images_matrix(server: Server, http: httpx.Client, people: dict[str, Person],
                                 processor: dict[str, Any], role: str) -> None:
    who = people[role]
    where = {"collection": "processors", "folder": "hellowasdi"}
    seed = image_file(server, "processors", "hellowasdi", "seed.png")
    seed.parent.mkdir(parents=True)
    seed.write_bytes(PNG)
    can_write = WRITE_RIGHTS[role]
    assert upload(http, who, name=f"by-{role}", **where).status_code == (200 if can_write else 403)
    assert image_file(server, "processors", "hellowasdi", f"by-{role}.png").exists() == can_write
    assert get(http, who, name="seed.png", **where).status_code == (200 if READ_RIGHTS[role] else 403)
    assert delete(http, who, name="seed.png", **where).status_code == (200 if can_write else 403)
    assert seed.exists() != can_write


def test_public_processor_images_are_readable_by_everyone(server: Server, http: httpx.Client, alice: Person,
                                                          stranger: Person, processor: dict[str, Any]) -> None:
    assert upload(http, alice, collection="processors", folder="hellowasdi", name="pic").status_code == 200
    params = {"collection": "processors", "folder": "hellowasdi", "name": "pic.png"}
    assert get(http, stranger, **params).status_code == 403
    server.services.store.collection("processors").update("proc-1", {"isPublic": 1})
    assert get(http, stranger, **params).status_code == 200
    assert upload(http, stranger, collection="processors", folder="hellowasdi", name="x").status_code == 403


def test_an_unknown_processor_or_organization_folder_gives_no_right(http: httpx.Client, admin: Person) -> None:
    for collection in ("processors", "organizations"):
        assert upload(http, admin, collection=collection, folder="nothing", name="x").status_code == 403
        assert get(http, admin, collection=collection, folder="nothing", name="x.png").status_code == 403


@pytest.mark.parametrize("role", ROLES)
def test_organization_images_matrix(server: Server, http: httpx.Client, people: dict[str, Person],
                                    organization: dict[str, Any], role: str) -> None:
    who = people[role]
    where = {"collection": "organizations", "folder": "org-1"}
    assert upload(http, people["owner"], name="seed", **where).status_code == 200
    can_write = WRITE_RIGHTS[role]
    assert upload(http, who, data=JPG, filename="a.jpg", name=f"by-{role}", **where).status_code == (
        200 if can_write else 403)
    assert get(http, who, name="seed.png", **where).status_code == (200 if READ_RIGHTS[role] else 403)
    assert get(http, who, "/images/exists", name="seed.png", **where).status_code == (
        200 if READ_RIGHTS[role] else 403)
    assert delete(http, who, name="seed.png", **where).status_code == (200 if can_write else 403)


# -- processor logo ---------------------------------------------------------------------------------------
def logo(http: httpx.Client, who: Person, processor_id: str = "proc-1", data: bytes = PNG,
         filename: str = "logo-file.png") -> httpx.Response:
    return http.post("/images/processors/logo/upload", params={"processorId": processor_id}, headers=who.headers,
                     files={"image": (filename, data)})


def test_logo_upload_stores_logo_and_updates_the_processor(server: Server, http: httpx.Client, alice: Person,
                                                           processor: dict[str, Any]) -> None:
    r = logo(http, alice)
    assert r.status_code == 200, r.text
    assert image_file(server, "processors", "hellowasdi", "logo.png").read_bytes() == PNG
    stored = server.services.store.collection("processors").get("proc-1")
    assert stored["logo"] == f"{BASE}/images/get?collection=processors&folder=hellowasdi&name=logo.png"
    # another extension replaces the previous logo
    assert logo(http, alice, data=SVG, filename="l.svg").status_code == 200
    assert sorted(p.name for p in image_file(server, "processors", "hellowasdi").iterdir()) == ["logo.svg"]
    stored = server.services.store.collection("processors").get("proc-1")
    assert stored["logo"].endswith("name=logo.svg")
    assert http.get(stored["logo"], headers=alice.headers).content == SVG


@pytest.mark.parametrize("role", ROLES)
def test_logo_permission_matrix(server: Server, http: httpx.Client, people: dict[str, Person],
                                processor: dict[str, Any], role: str) -> None:
    r = logo(http, people[role])
    assert r.status_code == (200 if WRITE_RIGHTS[role] else 403)
    assert image_file(server, "processors", "hellowasdi", "logo.png").exists() == WRITE_RIGHTS[role]


def test_logo_failures(server: Server, http: httpx.Client, alice: Person, processor: dict[str, Any]) -> None:
    assert logo(http, alice, processor_id="nope").status_code == 404
    assert logo(http, alice, filename="logo.gif").status_code == 400
    assert logo(http, alice, data=b"\x00" * (MAX_IMAGE_BYTES + 1)).status_code == 400
    assert http.post("/images/processors/logo/upload", headers=alice.headers, files={"image": ("a.png", PNG)}
                     ).status_code == 400
    assert server.services.store.collection("processors").get("proc-1")["logo"] == ""
    assert staging_is_empty(server)


# -- gallery ----------------------------------------------------------------------------------------------
def gallery(http: httpx.Client, who: Person, processor_id: str = "proc-1", filename: str = "shot.png",
            data: bytes = PNG) -> httpx.Response:
    return http.post("/images/processors/gallery/upload", params={"processorId": processor_id}, headers=who.headers,
                     files={"image": (filename, data)})


def test_gallery_fills_slots_one_to_six_then_refuses(server: Server, http: httpx.Client, alice: Person,
                                                     processor: dict[str, Any]) -> None:
    links = []
    for i in range(6):
        r = gallery(http, alice, filename="s.jpg" if i == 2 else "s.png")
        assert r.status_code == 200, r.text
        assert r.json()["boolValue"] is True
        links.append(r.json()["stringValue"])
    assert links == [f"{BASE}/images/get?collection=processors&folder=hellowasdi&name={n}"
                     for n in ("1.png", "2.png", "3.jpg", "4.png", "5.png", "6.png")]
    full = gallery(http, alice)
    assert full.status_code == 400
    assert sorted(p.name for p in image_file(server, "processors", "hellowasdi").iterdir()) == [
        "1.png", "2.png", "3.jpg", "4.png", "5.png", "6.png"]
    # freeing a slot makes it the next one
    assert delete(http, alice, collection="processors", folder="hellowasdi", name="3.jpg").status_code == 200
    r = gallery(http, alice)
    assert r.status_code == 200 and r.json()["stringValue"].endswith("name=3.png")
    assert http.get(r.json()["stringValue"], headers=alice.headers).content == PNG


def test_the_logo_does_not_take_a_gallery_slot(http: httpx.Client, alice: Person, processor: dict[str, Any]) -> None:
    assert logo(http, alice).status_code == 200
    assert gallery(http, alice).json()["stringValue"].endswith("name=1.png")


@pytest.mark.parametrize("role", ROLES)
def test_gallery_permission_matrix(server: Server, http: httpx.Client, people: dict[str, Person],
                                   processor: dict[str, Any], role: str) -> None:
    assert gallery(http, people[role]).status_code == (200 if WRITE_RIGHTS[role] else 403)


def test_gallery_failures(server: Server, http: httpx.Client, alice: Person, processor: dict[str, Any]) -> None:
    assert gallery(http, alice, processor_id="nope").status_code == 404
    assert gallery(http, alice, filename="x.jpeg").status_code == 400
    assert gallery(http, alice, data=b"\x00" * (MAX_IMAGE_BYTES + 1)).status_code == 400
    folder = image_file(server, "processors", "hellowasdi")
    assert not folder.exists() or not any(folder.iterdir())
    assert staging_is_empty(server)
