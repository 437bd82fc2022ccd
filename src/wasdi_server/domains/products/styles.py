"""Map styles: SLD files, their records, previews, map-server publication and sharing.

The ``styles`` collection holds ``{styleId, name, description, userId, isPublic, creationDate,
lastUpdate}``; the SLD is ``<styles_root>/<name>.sld`` and its preview the ``styles`` image
``<name>.png``.  Rules (contract /styles, gaps §0.8, §4; where both are silent the choice is here):

- names: 1-100 characters, ASCII letters, digits, ``_``, ``-``, ``.`` and spaces, starting with a
  letter, digit or ``_``, no ``..``, not ending in a dot or space (they end up in file names,
  map-server names and download headers); unique among all styles ignoring case (a taken name is a
  400 "The style's name is already used.");
- an SLD must be a well-formed SLD document of at most 1 MiB (``sld_documents``); else 400;
- read: public styles, the owner, users it is shared with, admins; write: the owner, ``write``
  sharings, admins (``SharingService``, resource type ``style``);
- not modified (304): an SLD update whose content is byte-identical to the stored file changes
  nothing (no record touch, no republishing, no new preview); ``getxml`` sends an ``ETag`` and answers
  304 to an ``If-None-Match`` naming the current content;
- unknown ``styleId``: 400 for updatefile/updatexml/updateparams/delete (the original server's
  answer), 404 for getxml (its list has no 400), 204 for the downloads, an empty list for bystyle;
- delete (main node only, else 400): a caller with a sharing loses only the sharing; the owner or an
  admin removes sharings, record, map-server style, SLD file and preview; anyone else gets 403 (also
  on a public style);
- nodedelete (compute nodes only, else 400): ``styleName`` must be the style's name (400); the
  caller needs write rights (403; a style this node has no record of gives no rights); the local
  copy (record, sharings, SLD, preview, map-server style) is removed;
- sharing goes through ``SharingService`` with ``repeat_fails``: a repeated share is a failure
  "Already shared"; removing a sharing is for the shared user, the owner or an admin (a ``write``
  sharer may not remove others'); the list needs read rights through ownership, a sharing or admin;
- the map server: publishers registered in ``StyleService.publishers`` are told about new, changed and
  removed styles; their failures are logged, never fatal, since the SLD file stays the source a local
  map server reads.
"""

from __future__ import annotations

import logging
import re
import threading
import uuid
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

from wasdi_sdk.atomic_files import replace_durably

from ...dates import now_ms
from ...errors import BadRequest, Forbidden, NoContent, NotFound, NotModified
from ...paths import OpenedFile, inside, open_for_download, read_with_etag, safe_name, stage_bytes
from ...providers.wms.styles import parse_style
from ...store import Collection
from ..accounts.identity import User
from ..accounts.sharing import WRITE, Resource, ShareOutcome, SharingService
from ..platform.main_node import MAIN_NODE, is_main_node
from .images import STYLES as STYLES_COLLECTION
from .images import ImageService, Place, flag
from .sld_documents import MAX_STYLE_BYTES, file_digest, parse_sld, preview_colors, sld_from_zip
from .style_previews import ramp_png

log = logging.getLogger("wasdi_server.styles")

STYLE = "style"
MAX_NAME_LENGTH = 100
MAX_DESCRIPTION_LENGTH = 2000
NAME_TAKEN = "The style's name is already used."
INVALID_STYLE = "Invalid style"
NO_RIGHTS = "MSG_ERROR_NO_ACCESS_RIGHTS_OBJECT"

_NAME = re.compile(r"^\w[\w .-]*$", re.ASCII)


class StylePublisher(Protocol):
    """A map server that serves styles (the map-server provider registers one)."""

    def publish_style(self, name: str, sld_path: Path) -> None:
        """Add or replace the style ``name`` from its SLD file."""

    def remove_style(self, name: str) -> None:
        """Remove the style ``name`` (layers using it fall back to a default)."""


def check_style_name(name: str | None) -> str:
    """A valid style name (see the module rules); ``BadRequest`` otherwise."""
    if name is None or not name.strip():
        raise BadRequest("the style name is required")
    if (len(name) > MAX_NAME_LENGTH or not _NAME.match(name) or ".." in name or name[-1] in ". "
            or name != name.strip()):
        raise BadRequest(f"invalid style name {name[:60]!r}: up to {MAX_NAME_LENGTH} letters, digits, "
                         "'_', '-', '.' or spaces")
    return safe_name(name, "style name")


def check_description(text: str | None) -> str | None:
    if text is not None and len(text) > MAX_DESCRIPTION_LENGTH:
        raise BadRequest(f"the description is too long (at most {MAX_DESCRIPTION_LENGTH} characters)")
    return text


class StyleService:
    """Styles on this node.  Whether it is the main node is ``is_main_node``'s answer."""

    def __init__(self, styles: Collection, sharing: SharingService, images: ImageService, root: Path,
                 node_code: str = MAIN_NODE, *, atomic: Callable[[], AbstractContextManager[None]]) -> None:
        self.styles = styles
        self.atomic = atomic
        """``Store.atomic``: a deletion's sharings and record commit as one (a crash leaves both or neither)."""
        self.sharing = sharing
        self.images = images
        self.root = root
        self.is_main = is_main_node(node_code)
        self.shared_records = False
        """Set on the nodes of a deployment: the records are shared, the files are each node's own copies."""
        self.staging = root / ".incoming"
        self.publishers: list[StylePublisher] = []
        self._lock = threading.RLock()

    # -- lookups -------------------------------------------------------------------------------
    @staticmethod
    def resource(doc: Mapping[str, Any]) -> Resource:
        return Resource(STYLE, str(doc["styleId"]), str(doc.get("userId") or ""), str(doc.get("name") or ""))

    def get(self, style_id: str | None) -> dict[str, Any] | None:
        return self.styles.get(style_id) if style_id else None

    def load(self, style_id: str | None, missing: type[BadRequest] | type[NotFound] = BadRequest) -> dict[str, Any]:
        doc = self.get(style_id)
        if doc is None:
            raise missing(INVALID_STYLE)
        return doc

    def by_name(self, name: str | None) -> dict[str, Any] | None:
        if not name:
            return None
        wanted = name.casefold()
        return self.styles.find_one(lambda d: str(d.get("name") or "").casefold() == wanted)

    def can_read(self, user: User, doc: Mapping[str, Any]) -> bool:
        return flag(doc.get("isPublic")) or self.sharing.can_read(user, self.resource(doc))

    def can_write(self, user: User, doc: Mapping[str, Any]) -> bool:
        return self.sharing.can_write(user, self.resource(doc))

    def sld_path(self, name: str) -> Path:
        return inside(self.root, safe_name(f"{name}.sld", "style file"))

    def preview_place(self, name: str) -> Place:
        return Place(STYLES_COLLECTION, None, safe_name(f"{name}.png", "image name"))

    # -- creation ------------------------------------------------------------------------------
    def check_new_name(self, name: str | None) -> str:
        checked = check_style_name(name)
        if self.by_name(checked) is not None:
            raise BadRequest(NAME_TAKEN)
        return checked

    def create(self, user: User, name: str | None, description: str | None, public: bool | None,
               upload: Path) -> dict[str, Any]:
        """A new style from the uploaded SLD ``upload`` (a temporary file this call consumes)."""
        checked = check_style_name(name)
        check_description(description)
        parse_sld(upload)
        stamp = now_ms()
        with self._lock, self.styles.transaction():
            if self.by_name(checked) is not None:
                raise BadRequest(NAME_TAKEN)
            target = self.sld_path(checked)
            target.parent.mkdir(parents=True, exist_ok=True)
            replace_durably(upload, target)
            doc = self.styles.insert({
                "styleId": str(uuid.uuid4()), "name": checked, "description": description or "",
                "userId": user.user_id, "isPublic": bool(public), "creationDate": stamp, "lastUpdate": stamp,
            })
        self._publish(checked, target)
        self._write_preview(checked, target)
        return doc

    # -- file updates --------------------------------------------------------------------------
    def writable_file(self, user: User, style_id: str | None) -> dict[str, Any]:
        """Before reading a new SLD: 400 unknown style, 403 no write rights, 404 SLD not on disk."""
        doc = self.load(style_id)
        if not self.can_write(user, doc):
            raise Forbidden(NO_RIGHTS)
        if not self.sld_path(doc["name"]).is_file() and not (self.shared_records and not self.is_main):
            raise NotFound("the style file is not on this node")  # a compute node takes a first copy
        return doc

    def sld_from_zip(self, archive: Path) -> Path:
        """The one ``.sld`` of a zip, copied to a temporary file next to the styles."""
        return sld_from_zip(archive, self.staging)

    def replace_file(self, user: User, style_id: str | None, upload: Path) -> None:
        """Replace the SLD with ``upload`` (consumed); ``NotModified`` when the content is the same."""
        doc = self.writable_file(user, style_id)
        parse_sld(upload)
        target = self.sld_path(doc["name"])
        with self._lock:
            if target.is_file() and file_digest(target) == file_digest(upload):
                raise NotModified("the style is unchanged")
            replace_durably(upload, target)
            self.styles.update(doc["styleId"], {"lastUpdate": now_ms()})
        self._publish(doc["name"], target)
        self._write_preview(doc["name"], target)

    def write_staged(self, data: bytes) -> Path:
        """``data`` in a temporary file next to the styles (for the XML-text update)."""
        return stage_bytes(self.staging, data, MAX_STYLE_BYTES, "SLD", ".sld")

    # -- reading -------------------------------------------------------------------------------
    def xml(self, user: User, style_id: str | None) -> tuple[bytes, str]:
        """The SLD bytes and their entity tag: 404 unknown style or no file, 403 no read rights."""
        doc = self.load(style_id, NotFound)
        if not self.can_read(user, doc):
            raise Forbidden(NO_RIGHTS)
        return read_with_etag(self.sld_path(doc["name"]), NotFound("the style file is not on this node"))

    def open_file(self, user: User, doc: Mapping[str, Any] | None) -> OpenedFile:
        """The SLD for download: 204 unknown style or file missing, 403 no read rights."""
        if doc is None:
            raise NoContent(INVALID_STYLE)
        if not self.can_read(user, doc):
            raise Forbidden(NO_RIGHTS)
        return open_for_download(self.sld_path(doc["name"]), f"{doc['name']}.sld",
                                 NoContent("the style file is not on this node"))

    def list_for(self, user: User, session_id: str | None, base_url: str) -> list[dict[str, Any]]:
        """StyleViewModel fields of the styles the user owns, that are public, or shared with them."""
        shared = self.sharing.shared_with(user.user_id, STYLE)
        docs: dict[str, dict[str, Any]] = {}
        for doc in self.styles.find(lambda d: d.get("userId") == user.user_id or flag(d.get("isPublic"))
                                    or d.get("styleId") in shared):
            docs[doc["styleId"]] = doc
        out = []
        for doc in docs.values():
            own = doc.get("userId") == user.user_id
            sharing = shared.get(doc["styleId"])
            writable = own or user.is_admin or (sharing is not None and sharing.get("permissions") == WRITE)
            preview = self.preview_place(doc["name"])
            out.append({
                "styleId": doc["styleId"], "name": doc["name"], "description": doc.get("description") or "",
                "isPublic": flag(doc.get("isPublic")), "userId": doc.get("userId"),
                "readOnly": not writable, "sharedWithMe": not own and sharing is not None,
                "imgLink": (self.images.link(base_url, preview.collection, None, preview.name, session_id)
                            if self.images.has(preview) else None),
            })
        out.sort(key=lambda v: (str(v["name"]).casefold(), v["styleId"]))
        return out

    # -- changes -------------------------------------------------------------------------------
    def update_params(self, user: User, style_id: str | None, description: str | None, public: bool | None) -> None:
        """Change the description and/or visibility (``None`` leaves a field as it is)."""
        doc = self.load(style_id)
        if not self.can_write(user, doc):
            raise Forbidden(NO_RIGHTS)
        changes: dict[str, Any] = {}
        if description is not None:
            changes["description"] = check_description(description)
        if public is not None:
            changes["isPublic"] = bool(public)
        if changes:
            changes["lastUpdate"] = now_ms()
            self.styles.update(doc["styleId"], changes)

    def delete(self, user: User, style_id: str | None) -> None:
        if not self.is_main:
            raise BadRequest("styles are deleted on the main node")
        doc = self.load(style_id)
        resource = self.resource(doc)
        if user.user_id != resource.owner_id and self.sharing.sharing(resource, user.user_id) is not None:
            self.sharing.sharings.delete(self.sharing.key(STYLE, resource.id, user.user_id))
            return
        if user.user_id != resource.owner_id and not user.is_admin:
            raise Forbidden(NO_RIGHTS)
        self._remove(doc)

    def node_delete(self, user: User, style_id: str | None, style_name: str | None) -> None:
        if self.is_main:
            raise BadRequest("nodedelete is for compute nodes; use delete on the main node")
        name = check_style_name(style_name)
        doc = self.get(style_id)
        if doc is None and self.shared_records and not self.styles.find_one(name=name):
            # Deleted on the main node, which then told this node: the copies of its file here go.
            self._remove_local(name)
            return
        if doc is None or not self.can_write(user, doc):
            raise Forbidden(NO_RIGHTS)
        if doc["name"] != name:
            raise BadRequest("styleName is not the name of the style")
        if self.shared_records:  # the style itself is the main node's; this node keeps copies of its file
            self._remove_local(name)
            return
        self._remove(doc)

    def _remove_local(self, name: str) -> None:
        with self._lock:
            self.sld_path(name).unlink(missing_ok=True)
        self._remove_copies(name)

    def delete_all_of_user(self, user_id: str) -> None:
        """Every style the user owns, with its file, preview, map-server copy and sharings."""
        for doc in self.styles.find(userId=user_id):
            self._remove(doc)

    def _remove(self, doc: Mapping[str, Any]) -> None:
        name = str(doc["name"])
        # The sharings and the record as one commit (never a style stripped of its sharings), the files after
        # the record (a crash leaves at most files with no style, which the next start removes).
        with self._lock:
            with self.atomic():
                self.sharing.remove_all(self.resource(doc))
                self.styles.delete(doc["styleId"])
            self.sld_path(name).unlink(missing_ok=True)
        self._remove_copies(name)

    def remove_unrecorded_files(self) -> int:
        """At start, before serving: a style file with no style record (a crash came between a deletion's record
        and its file, or between a creation's file and its record) goes, with its preview and map-server copy.
        The number removed."""
        if not self.root.is_dir():
            return 0
        recorded = {str(d.get("name")) for d in self.styles.all()}
        orphans = [p for p in self.root.glob("*.sld") if p.stem not in recorded and not p.is_symlink()]
        for path in orphans:
            path.unlink(missing_ok=True)
            self._remove_copies(path.stem)
            log.info("removed the file of a style whose creation or deletion a crash interrupted: %s", path.name)
        return len(orphans)

    def _remove_copies(self, name: str) -> None:
        """The preview and the map server's copy of the style ``name``."""
        self.images.remove(self.preview_place(name))
        for publisher in self.publishers:
            try:
                publisher.remove_style(name)
            except Exception:
                log.exception("the map server could not remove the style %s", name)

    # -- sharing -------------------------------------------------------------------------------
    def share(self, caller: User, style_id: str | None, user_id: str | None, rights: str | None) -> ShareOutcome:
        doc = self.load(style_id)
        return self.sharing.share(caller, self.resource(doc), user_id, rights, repeat_fails=True)

    def unshare(self, caller: User, style_id: str | None, user_id: str | None) -> None:
        self.sharing.unshare(caller, self.resource(self.load(style_id)), user_id, others_by_owner_only=True)

    def sharings(self, caller: User, style_id: str | None) -> list[dict[str, Any]]:
        return self.sharing.listed(caller, self.resource(self.load(style_id)))

    # -- map server and preview ----------------------------------------------------------------
    def _publish(self, name: str, path: Path) -> None:
        for publisher in self.publishers:
            try:
                publisher.publish_style(name, path)
            except Exception:
                log.exception("the map server could not publish the style %s", name)

    def _write_preview(self, name: str, sld_path: Path) -> None:
        try:
            colors, smooth = preview_colors(parse_style(sld_path.read_bytes()))
            self.images.store_bytes(self.preview_place(name), ramp_png(colors, smooth=smooth))
        except OSError:
            log.exception("the preview of the style %s could not be written", name)
