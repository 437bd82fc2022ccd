"""Images: the declared collections, who may read and write them, and their files on disk.

Files live under ``<images_root>/<collection>/[<folder>/]<name>``.  Rules (contract /images,
gaps §4; where both are silent the choice is written here):

- collections: ``processors``, ``users``, ``organizations``, ``styles``, ``globathy``; any other is a 400;
- collection, folder and name are plain names (the path guard): ``/``, ``\\``, ``..`` or control
  characters are a 400, checked before any permission;
- an upload's type is the extension of the uploaded file's name, lower-cased: ``jpg``, ``png`` or
  ``svg`` (``jpeg`` is refused); anything else is a 400;
- the stored name is ``name`` with that extension: ``name=logo`` or ``name=logo.png`` with a file
  ``x.jpg`` is stored as ``logo.jpg``, and ``logo.png``/``logo.svg`` are removed first (one image per name);
- an image is at most 2 MiB: the upload is streamed to a temporary file and refused (400, the
  temporary file removed) as soon as it grows past the cap;
- read rights: processors, folder = processor name, readable when public, owned, shared or by an
  admin; users, folder = the caller's own id (or an admin); organizations, folder = an organization
  the caller owns or is shared (or an admin); styles, the image name without its extension = a style
  the caller may read (public, owned, shared, admin); globathy, everyone;
- write rights: processors, processor writers (owner, ``write`` sharing, admin); users, the caller's
  own folder (or an admin); organizations, organization writers; styles, style writers; globathy,
  nobody (it is a read-only data set);
- a folder or name that names no processor, organization or style gives no right: 403;
- ``get`` answers 204 when the file is not on disk; ``exists`` and ``delete`` answer 404;
- processor logo: ``logo.<ext>`` in ``processors/<processor name>/``, the processor's ``logo`` field
  becomes the absolute ``images/get`` link; gallery: the first free slot ``1``..``6`` (a slot is taken
  by a file of that stem, any extension), 400 when all six are taken.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any
from urllib.parse import quote

from wasdi_sdk.atomic_files import replace_durably

from ...errors import BadRequest, Forbidden, NoContent, NotFound
from ...files_beneath import NotRegularFile, open_regular_fd
from ...paths import inside, remove_tree, safe_name, temporary_name
from ...store import Collection
from ..accounts.identity import User
from ..accounts.sharing import Resource, SharingService

PROCESSORS = "processors"
USERS = "users"
ORGANIZATIONS = "organizations"
STYLES = "styles"
GLOBATHY = "globathy"
COLLECTIONS = (PROCESSORS, USERS, ORGANIZATIONS, STYLES, GLOBATHY)
READ_ONLY_COLLECTIONS = frozenset({GLOBATHY})

EXTENSIONS = ("jpg", "png", "svg")
MEDIA_TYPES = {"jpg": "image/jpeg", "png": "image/png", "svg": "image/svg+xml"}
MAX_IMAGE_BYTES = 2 * 1024 * 1024
"""Larger uploads are refused (gaps §4: more than 2 MiB)."""
GALLERY_SLOTS = ("1", "2", "3", "4", "5", "6")
LOGO_STEM = "logo"

NO_RIGHTS = "MSG_ERROR_NO_ACCESS_RIGHTS_OBJECT"


def flag(value: Any) -> bool:
    """A stored yes/no that may be a bool, a 0/1 int (processors' ``isPublic``) or a text."""
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes")
    return bool(value)


def split_extension(name: str) -> tuple[str, str]:
    """``("logo", "png")`` for ``logo.png``; ``("logo", "")`` without an extension."""
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem:
        return name, ""
    return stem, ext


def image_stem(name: str) -> str:
    """``name`` without its image extension (``my.style.png`` -> ``my.style``; ``my.style`` stays)."""
    stem, ext = split_extension(name)
    return stem if ext.lower() in EXTENSIONS else name


def image_extension(filename: str | None) -> str:
    """The allowed image extension of an uploaded file's name (lower case); ``BadRequest`` otherwise."""
    base = (filename or "").replace("\\", "/").rsplit("/", 1)[-1]
    _, ext = split_extension(base)
    ext = ext.lower()
    if not base:
        raise BadRequest("the uploaded image has no file name (its extension gives its type)")
    if ext not in EXTENSIONS:
        raise BadRequest(f"images must be {', '.join(EXTENSIONS)} files, not {ext or 'without extension'!r}")
    return ext


def media_type(name: str) -> str:
    return MEDIA_TYPES.get(split_extension(name)[1].lower(), "application/octet-stream")


@dataclass(frozen=True)
class Place:
    """Where an image goes: a checked collection, folder (or ``None``) and file name."""

    collection: str
    folder: str | None
    name: str

    @property
    def parts(self) -> tuple[str, ...]:
        return (self.collection, self.folder, self.name) if self.folder else (self.collection, self.name)


@dataclass
class OpenImage:
    """An image opened for reading."""

    stream: IO[bytes]
    size: int
    media_type: str
    name: str


class ImageService:
    """Image files and their access rules.  ``processors``, ``organizations`` and ``styles`` are the
    store collections whose records the rules look up (by name or id)."""

    def __init__(self, root: Path, processors: Collection, organizations: Collection, styles: Collection,
                 sharing: SharingService) -> None:
        self.root = root
        self.processors = processors
        self.organizations = organizations
        self.styles = styles
        self.sharing = sharing
        self.staging = root / ".incoming"
        """Temporary upload files (same file system as the images, so a finished upload is one rename)."""
        self._lock = threading.Lock()

    # -- names and places ----------------------------------------------------------------------
    @staticmethod
    def check_collection(collection: str | None) -> str:
        if collection not in COLLECTIONS:
            raise BadRequest(f"invalid image collection {str(collection)[:40]!r}: one of {', '.join(COLLECTIONS)}")
        return collection

    def place(self, collection: str | None, folder: str | None, name: str | None) -> Place:
        """A checked place: declared collection, and plain folder and name (else 400)."""
        checked = self.check_collection(collection)
        return Place(checked, safe_name(folder, "folder") if folder else None, safe_name(name, "image name"))

    def path(self, place: Place) -> Path:
        return inside(self.root, *place.parts)

    def folder_path(self, collection: str, folder: str | None) -> Path:
        return inside(self.root, collection, folder) if folder else inside(self.root, collection)

    @staticmethod
    def link(base_url: str, collection: str, folder: str | None, name: str, token: str | None = None) -> str:
        """The absolute ``images/get`` link of an image (with the session ``token`` for browsers)."""
        url = f"{base_url.rstrip('/')}/images/get?collection={quote(collection, safe='')}"
        if folder:
            url += f"&folder={quote(folder, safe='')}"
        url += f"&name={quote(name, safe='')}"
        if token:
            url += f"&token={quote(token, safe='')}"
        return url

    # -- rights ----------------------------------------------------------------------------------
    @staticmethod
    def processor_resource(doc: Mapping[str, Any]) -> Resource:
        return Resource("processor", str(doc["processorId"]), str(doc.get("userId") or ""), str(doc.get("name") or ""))

    @staticmethod
    def style_resource(doc: Mapping[str, Any]) -> Resource:
        return Resource("style", str(doc["styleId"]), str(doc.get("userId") or ""), str(doc.get("name") or ""))

    def _subject(self, place: Place) -> tuple[Resource | None, bool]:
        """The resource an image belongs to and whether it is public; ``None`` when there is none."""
        if place.collection == PROCESSORS:
            doc = self.processors.find_one(name=place.folder) if place.folder else None
            return (self.processor_resource(doc), flag(doc.get("isPublic"))) if doc else (None, False)
        if place.collection == ORGANIZATIONS:
            doc = self.organizations.get(place.folder) if place.folder else None
            if doc is None:
                return None, False
            return Resource("organization", str(doc["organizationId"]), str(doc.get("userId") or "")), False
        if place.collection == STYLES:
            doc = self.styles.find_one(name=image_stem(place.name))
            return (self.style_resource(doc), flag(doc.get("isPublic"))) if doc else (None, False)
        return None, False

    def can_read(self, user: User, place: Place) -> bool:
        if place.collection == GLOBATHY:
            return True
        if place.collection == USERS:
            return user.is_admin or place.folder == user.user_id
        resource, public = self._subject(place)
        return resource is not None and (public or self.sharing.can_read(user, resource))

    def can_write(self, user: User, place: Place) -> bool:
        if place.collection in READ_ONLY_COLLECTIONS:
            return False
        if place.collection == USERS:
            return user.is_admin or place.folder == user.user_id
        resource, _ = self._subject(place)
        return resource is not None and self.sharing.can_write(user, resource)

    def readable(self, user: User, collection: str | None, folder: str | None, name: str | None) -> Place:
        place = self.place(collection, folder, name)
        if not self.can_read(user, place):
            raise Forbidden(NO_RIGHTS)
        return place

    def writable(self, user: User, collection: str | None, folder: str | None, name: str | None) -> Place:
        place = self.place(collection, folder, name)
        if not self.can_write(user, place):
            raise Forbidden(NO_RIGHTS)
        return place

    # -- reading and deleting --------------------------------------------------------------------
    def open(self, user: User, collection: str | None, folder: str | None, name: str | None) -> OpenImage:
        """The image, opened; ``NoContent`` when it is not on disk."""
        place = self.readable(user, collection, folder, name)
        path = self.path(place)
        try:  # opened once, no link followed, a regular file only (files_beneath)
            fd, info = open_regular_fd(self.root, "/".join(place.parts))
        except (FileNotFoundError, NotADirectoryError, NotRegularFile) as e:
            raise NoContent("image not found") from e
        return OpenImage(os.fdopen(fd, "rb"), info.st_size, media_type(place.name), path.name)

    def exists(self, user: User, collection: str | None, folder: str | None, name: str | None) -> None:
        """Nothing when the image is on disk; ``NotFound`` otherwise."""
        place = self.readable(user, collection, folder, name)
        if not self.path(place).is_file():
            raise NotFound("image not found")

    def delete(self, user: User, collection: str | None, folder: str | None, name: str | None) -> None:
        place = self.writable(user, collection, folder, name)
        if not self.remove(place):
            raise NotFound("image not found")

    def delete_all_of_user(self, user_id: str) -> None:
        """The user's own image folder (``users/<userId>``: avatar and pictures)."""
        remove_tree(self.folder_path(USERS, user_id))

    def has(self, place: Place) -> bool:
        return self.path(place).is_file()

    def remove(self, place: Place) -> bool:
        """Delete one image file (no rights checked); whether it was there."""
        try:
            self.path(place).unlink()
        except (FileNotFoundError, IsADirectoryError):
            return False
        return True

    # -- storing ---------------------------------------------------------------------------------
    def stored_name(self, name: str, ext: str) -> str:
        """``name`` with the upload's extension (an image extension already on ``name`` is replaced)."""
        stem = image_stem(name)
        if stem.startswith("."):
            raise BadRequest("an image name cannot start with a dot")
        return safe_name(f"{stem}.{ext}", "image name")

    def store(self, place: Place, source: Path, filename: str | None) -> Place:
        """Move the uploaded file ``source`` to ``place`` (no rights checked); the place it took.

        The extension comes from ``filename`` (the uploaded file's name); an image of the same stem
        with another extension is removed first.  ``source`` must be on the images' file system.
        """
        ext = image_extension(filename)
        final = Place(place.collection, place.folder, self.stored_name(place.name, ext))
        with self._lock:
            self._move_into(final, source)
        return final

    def _move_into(self, place: Place, source: Path) -> None:
        target = self.path(place)
        target.parent.mkdir(parents=True, exist_ok=True)
        stem, ext = image_stem(place.name), split_extension(place.name)[1]
        for other in EXTENSIONS:
            if other != ext.lower():
                with contextlib.suppress(FileNotFoundError, IsADirectoryError):
                    target.with_name(f"{stem}.{other}").unlink()
        replace_durably(source, target)

    def store_bytes(self, place: Place, data: bytes) -> None:
        """Write a small image the server makes itself (style previews), replacing other extensions."""
        self.staging.mkdir(parents=True, exist_ok=True)
        temp = self.staging / temporary_name(place.name, ".tmp")
        try:
            temp.write_bytes(data)
            with self._lock:
                self._move_into(place, temp)
        finally:
            temp.unlink(missing_ok=True)

    # -- processors: logo and gallery -------------------------------------------------------------
    def processor(self, user: User, processor_id: str | None) -> dict[str, Any]:
        """A processor the caller may write: 404 when unknown, 403 without write rights."""
        doc = self.processors.get(processor_id) if processor_id else None
        if doc is None or not doc.get("name"):
            raise NotFound("MSG_ERROR_INVALID_PROCESSOR")
        if not self.sharing.can_write(user, self.processor_resource(doc)):
            raise Forbidden(NO_RIGHTS)
        safe_name(str(doc["name"]), "processor name")
        return doc

    def free_slot(self, processor_name: str) -> str | None:
        """The first gallery slot (``1``..``6``) with no image of any extension, or ``None``."""
        folder = self.folder_path(PROCESSORS, processor_name)
        try:
            taken = {split_extension(entry.name)[0].lower() for entry in folder.iterdir()}
        except (FileNotFoundError, NotADirectoryError):
            taken = set()
        return next((slot for slot in GALLERY_SLOTS if slot not in taken), None)

    def store_logo(self, doc: Mapping[str, Any], source: Path, filename: str | None, base_url: str) -> str:
        """Store the logo and point the processor's ``logo`` field at it; the link."""
        place = self.store(Place(PROCESSORS, str(doc["name"]), LOGO_STEM), source, filename)
        link = self.link(base_url, PROCESSORS, place.folder, place.name)
        self.processors.update(str(doc["processorId"]), {"logo": link})
        return link

    def store_gallery_image(self, doc: Mapping[str, Any], source: Path, filename: str | None, base_url: str) -> str:
        """Store the image in the first free gallery slot; its absolute link.  400 when the gallery is full."""
        name = str(doc["name"])
        ext = image_extension(filename)
        with self._lock:
            slot = self.free_slot(name)
            if slot is None:
                raise BadRequest(f"the gallery is full ({len(GALLERY_SLOTS)} images)")
            place = Place(PROCESSORS, name, f"{slot}.{ext}")
            self._move_into(place, source)
        return self.link(base_url, PROCESSORS, name, place.name)
