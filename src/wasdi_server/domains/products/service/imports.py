"""Imports into a workspace (``/filebuffer/download``, a DOWNLOAD process): the checks before queueing, the
stored file name, and the local folders ``file://`` URLs may read.

- Checks: write access (403), then the storage quota of gaps §17 (401; off when
  ``activate_subscription_checks`` is false), then mission access (401).  The platform is the given one,
  else inferred from the file name.  A platform no mission lists is denied; a file whose platform is
  neither given nor recognisable is a plain file and needs no mission.  Every other failure is ``intValue``
  500, as the contract lists.
- The imported file is named after ``name`` (with the URL's extension when ``name`` has none), else
  after the item a search of this server found at that link when the link's file name does not name it
  (``TCI.tif`` of every Earth Search scene becomes ``<item id>.tif``), else after the last segment of
  the URL path, else ``download-<uuid>``.
- A product of that name already imported from the same URL answers ``DONE`` at once, with a DOWNLOAD
  broker message.  Any other product of that name is never replaced nor silently kept: the DOWNLOAD
  fetches the file, and ends DONE when the bytes are the same, ERROR with a sentence when they differ.
  Only a digest of the URL is stored (a signed URL's query is a secret).
- ``file://`` imports read only below ``<data_dir>/imports``, the folder of the built-in ``LOCAL`` search
  catalogue (``search_catalogue_dir``, default ``<data_dir>/catalogue``: its results link there) and the
  folders of ``import_roots``; a symbolic link is followed and must still land inside one of them.
"""

from __future__ import annotations

import os
import re
import threading
import uuid
from pathlib import Path
from typing import Any, Protocol

from wasdi_sdk.units import human_size

from ....errors import BadRequest, Conflict, Forbidden, NotFound, Unauthorized
from ....providers.search.base import LinkFacts
from ...accounts.identity import User
from ...processes.ports import OK
from .. import product_files
from .records import ProductRecords, check_product_name, product_key

DONE = "DONE"
IMPORT_SOURCES = "importSources"
"""The product record's digests of the URLs its bytes were imported from (the last ``MAX_IMPORT_SOURCES``)."""
MAX_IMPORT_SOURCES = 16
ITEM_PROPERTIES = "itemProperties"
"""The product record's copy of the catalogue item's properties (a map of strings)."""


class SearchedLinks(Protocol):
    """What search knows of the links it handed out (``LinkFacts``: the item's product name, checksum and
    properties)."""

    def facts_for_link(self, link: str) -> LinkFacts | None: ...


def import_source(file_url: str) -> str:
    """The digest of an import's URL kept with its product (never the URL: a signed one is a secret)."""
    import hashlib

    return hashlib.sha256(file_url.strip().encode()).hexdigest()


MULTIHASH_ALGORITHMS = {0x11: ("sha1", 20), 0x12: ("sha256", 32), 0x13: ("sha512", 64), 0xD5: ("md5", 16)}
"""The multihash codes of ``file:checksum`` (STAC's file extension) this server checks."""


def expected_digest(multihash: str | None) -> tuple[str, str] | None:
    """``(hashlib name, hex digest)`` of a ``file:checksum`` multihash (hex), or ``None`` when absent or of an
    algorithm this server does not know (then nothing is checked)."""
    try:
        raw = bytes.fromhex((multihash or "").strip())
    except ValueError:
        return None
    code, rest = (raw[0], raw[1:]) if raw[:1] and raw[0] < 0x80 else (None, b"")
    if raw[:2] == b"\xd5\x01":  # md5's code needs two bytes (varint)
        code, rest = 0xD5, raw[2:]
    if code not in MULTIHASH_ALGORITHMS or not rest:
        return None
    name, size = MULTIHASH_ALGORITHMS[code]
    if rest[0] != size or len(rest) != size + 1:
        return None
    return name, rest[1:].hex()


class DownloadSlots:
    """One semaphore per provider (or host): at most ``per_provider`` of its downloads at once."""

    def __init__(self, per_provider: int) -> None:
        self.per_provider = max(1, per_provider)
        self._lock = threading.Lock()
        self._slots: dict[str, threading.BoundedSemaphore] = {}

    def slot(self, provider: str) -> threading.BoundedSemaphore:
        with self._lock:
            found = self._slots.get(provider)
            if found is None:
                found = self._slots[provider] = threading.BoundedSemaphore(self.per_provider)
            return found


def same_content(first: Path, second: Path) -> bool:
    """Whether two files hold the same bytes (sizes first, then their contents)."""
    if first.stat().st_size != second.stat().st_size:
        return False
    with open(first, "rb") as a, open(second, "rb") as b:
        while True:
            left, right = a.read(1024 * 1024), b.read(1024 * 1024)
            if left != right:
                return False
            if not left:
                return True
GIB = 1024**3
STORAGE_CAPS: dict[str, int | None] = {
    # user type: bytes of workspace storage under which imports and runs are allowed (gaps §17)
    "PROFESSIONAL": None,
    "STANDARD": 100 * GIB,
    "FREE": 20_000_000_000,
    "NONE": 20_000_000_000,
}


class ProductImports(ProductRecords):
    """Queueing imports of remote and local files, under the quota and mission rules."""

    searched_links: SearchedLinks | None = None
    """Set by the composition root: what a search found at a link (none: names from the URL only)."""

    download_slots: DownloadSlots | None = None
    """Set by the composition root: the per-provider limit of downloads at once (none: no limit)."""

    def storage_left(self, user_id: str) -> int | None:
        """Bytes the user's subscription storage still holds (gaps §17); ``None``: no cap applies."""
        if not self.settings.activate_subscription_checks:
            return None
        cap = STORAGE_CAPS.get(self.subscriptions.user_type(user_id), STORAGE_CAPS["NONE"])
        if cap is None:
            return None
        used = sum(int(d.get("storageSize") or 0) for d in self.workspaces.workspaces.find(userId=user_id))
        return max(0, cap - used)

    def check_storage(self, user: User) -> None:
        """The storage quota of gaps §17 (the contract's "active subscription"); 401 when exceeded."""
        left = self.storage_left(user.user_id)
        if left is not None and left <= 0:
            used = sum(int(d.get("storageSize") or 0) for d in self.workspaces.workspaces.find(userId=user.user_id))
            user_type = self.subscriptions.user_type(user.user_id)
            shown = "STANDARD" if user_type == "STANDARD" else "FREE"
            raise Unauthorized(f"Exceeding max storage size for {shown} subscription: {human_size(used)}")

    def check_mission(self, user: User, platform: str | None) -> None:
        """Mission access for a platform (``None``: a plain file, nothing to check); 401 when denied."""
        if not platform:
            return
        missions = [m for m in self.missions.all() if str(m.get("indexvalue")) == platform]
        if not missions:
            raise Unauthorized(f"no mission {platform!r} on this server")
        if not any(self.missions.can_access(user, m) for m in missions):
            raise Unauthorized(f"no access to the mission {platform!r}")

    def import_file_name(self, file_url: str, name: str | None, facts: LinkFacts | None = None) -> str:
        """The file name an import is stored under (see the module rules)."""
        from urllib.parse import unquote, urlsplit

        last = unquote(urlsplit(file_url).path.rstrip("/").rsplit("/", 1)[-1])
        url_name = last if last and re.fullmatch(r"[^\x00-\x1f/\\]{1,255}", last) and ".." not in last else ""
        wanted = (name or "").strip()
        if not wanted and facts is not None:
            wanted = facts.name or ""
        if wanted:
            wanted = check_product_name(wanted)
            url_suffix = Path(url_name).suffix if url_name else ""
            if not Path(wanted).suffix and url_suffix and re.fullmatch(r"\.[A-Za-z0-9]{1,10}", url_suffix):
                return wanted + url_suffix
            return wanted
        if url_name and not url_name.startswith(".") and url_name.strip() == url_name:
            return url_name
        return f"download-{uuid.uuid4().hex[:12]}"

    def queue_import(self, user: User, data: dict[str, Any]) -> str:
        """``/filebuffer/download``: ``DONE`` when the product is already there, else the DOWNLOAD process id."""
        file_url = (data.get("fileUrl") or "").strip()
        workspace = self.writable(user, data.get("workspace"))
        if not file_url:
            raise BadRequest("fileUrl is required")
        scheme = file_url.split(":", 1)[0].lower()
        if scheme not in ("http", "https", "file"):
            raise BadRequest(f"cannot import {scheme}: URLs (http, https and file are supported)")
        if scheme == "file":
            self.local_source(file_url)  # fail now (403/404) rather than in the operation
        facts = self.searched_links.facts_for_link(file_url) if self.searched_links is not None else None
        file_name = self.import_file_name(file_url, data.get("name"), facts)
        self.check_storage(user)
        platform = (data.get("platform") or "").strip() or product_files.infer_platform(data.get("name") or file_name)
        self.check_mission(user, platform)
        existing = self.get(workspace["workspaceId"], file_name)
        if existing is not None and import_source(file_url) in (existing.get(IMPORT_SOURCES) or ()):
            self.messages.send("DOWNLOAD", {"name": existing.get("name"), "fileName": existing.get("fileName")},
                               workspace["workspaceId"], result=OK)
            return DONE
        provider = (data.get("provider") or "").strip()
        record = self.processes.create(
            user, workspace["workspaceId"], "DOWNLOAD", file_name, subtype=provider.upper() if provider else "",
            parent=data.get("parent") or None,
            parameter={"fileUrl": file_url, "fileName": file_name, "provider": provider or None,
                       "bbox": data.get("bbox") or None, "platform": platform or None,
                       "checksum": facts.checksum if facts else None,
                       "searchProvider": facts.provider if facts else None,
                       "itemProperties": facts.properties if facts else None,
                       "volumeName": data.get("volumeName"), "volumePath": data.get("volumePath")})
        return str(record["processObjId"])

    def place_import(self, partial: Path, target: Path) -> None:
        """Put a complete download at ``target`` durably, never over another file: a file already there with
        the same bytes is kept (the download is dropped), one with other bytes is a Conflict."""
        from wasdi_sdk.atomic_files import fsync_dir, fsync_file

        fsync_file(partial)
        try:
            os.link(partial, target)  # unlike a rename, fails when the name is taken (even by a racing import)
        except FileExistsError:
            self.check_same_as_existing(partial, target)
            return
        fsync_dir(target.parent)

    @staticmethod
    def check_same_as_existing(source: Path, target: Path) -> None:
        """A Conflict, in a sentence, unless ``target`` holds the bytes of ``source``."""
        if not same_content(source, target):
            raise Conflict(f"the workspace already has a product named {target.name} with other content: import "
                           "this file under another name (give the import a name), or delete that product first")

    def download_slot(self, provider: str) -> threading.BoundedSemaphore:
        """The semaphore that keeps one provider's (or host's) downloads to ``import_downloads_per_provider``."""
        if self.download_slots is None:
            self.download_slots = DownloadSlots(int(self.settings.import_downloads_per_provider))
        return self.download_slots.slot(provider)

    def record_item_properties(self, workspace_id: str, file_name: str, properties: dict[str, str] | None) -> None:
        """Keep the catalogue item's properties with the product (its metadata shows them)."""
        if properties:
            self.products.update(product_key(workspace_id, file_name), {ITEM_PROPERTIES: dict(properties)})

    def record_import_source(self, workspace_id: str, file_name: str, file_url: str) -> None:
        """Remember (as a digest) a URL a product's bytes came from, so the same import again is ``DONE`` at once."""
        digest = import_source(file_url)

        def add(doc: dict[str, Any]) -> dict[str, Any]:
            known = [d for d in doc.get(IMPORT_SOURCES) or [] if d != digest]
            return {**doc, IMPORT_SOURCES: [*known, digest][-MAX_IMPORT_SOURCES:]}

        self.products.modify(product_key(workspace_id, file_name), add)

    def import_roots(self) -> list[Path]:
        """``<data_dir>/imports``, the built-in search catalogue's folder, and ``import_roots``."""
        catalogue = str(getattr(self.settings, "search_catalogue_dir", "") or "")
        roots = [self.imports_root, Path(catalogue) if catalogue else self.settings.data_dir / "catalogue"]
        configured: Any = self.settings.import_roots
        if isinstance(configured, str):
            configured = [p for p in configured.split(os.pathsep) if p.strip()]
        roots += [Path(p).expanduser() for p in configured or []]
        return roots

    def local_source(self, file_url: str) -> Path:
        """The file a ``file://`` URL names, if it is below an import root (else 403)."""
        from urllib.parse import unquote, urlsplit

        parts = urlsplit(file_url)
        if parts.netloc not in ("", "localhost"):
            raise Forbidden("file:// URLs must name a local file")
        path = Path(unquote(parts.path))
        if not path.is_absolute():
            raise BadRequest("file:// URLs must be absolute")
        resolved = path.resolve()
        for root in self.import_roots():
            root_resolved = root.resolve()
            if resolved == root_resolved or root_resolved in resolved.parents:
                if not resolved.is_file():
                    raise NotFound("the file to import does not exist")
                return resolved
        raise Forbidden("this server does not import files from that folder")
