"""Imports into a workspace (``/filebuffer/download``, a DOWNLOAD process): the checks before queueing, the
stored file name, and the local folders ``file://`` URLs may read.

- Checks: write access (403), then the storage quota of gaps §17 (401; off when
  ``activate_subscription_checks`` is false), then mission access (401).  The platform is the given one,
  else inferred from the file name.  A platform no mission lists is denied; a file whose platform is
  neither given nor recognisable is a plain file and needs no mission.  Every other failure is ``intValue``
  500, as the contract lists.
- The imported file is named after ``name`` (with the URL's extension when ``name`` has none), else
  after the last segment of the URL path, else ``download-<uuid>``.  A product of that name already in
  the workspace answers ``DONE`` at once, with a DOWNLOAD broker message.
- ``file://`` imports read only below ``<data_dir>/imports``, the folder of the built-in ``LOCAL`` search
  catalogue (``search_catalogue_dir``, default ``<data_dir>/catalogue``: its results link there) and the
  folders of ``import_roots``; a symbolic link is followed and must still land inside one of them.
"""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path
from typing import Any

from wasdi_sdk.units import human_size

from ...errors import BadRequest, Forbidden, NotFound, Unauthorized
from ...messages import OK
from .. import readers
from ..identity import User
from .records import ProductRecords, check_product_name

DONE = "DONE"
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

    @staticmethod
    def import_file_name(file_url: str, name: str | None) -> str:
        """The file name an import is stored under (see the module rules)."""
        from urllib.parse import unquote, urlsplit

        last = unquote(urlsplit(file_url).path.rstrip("/").rsplit("/", 1)[-1])
        url_name = last if last and re.fullmatch(r"[^\x00-\x1f/\\]{1,255}", last) and ".." not in last else ""
        wanted = (name or "").strip()
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
        file_name = self.import_file_name(file_url, data.get("name"))
        self.check_storage(user)
        platform = (data.get("platform") or "").strip() or readers.infer_platform(data.get("name") or file_name)
        self.check_mission(user, platform)
        existing = self.get(workspace["workspaceId"], file_name)
        if existing is not None:
            self.messages.send("DOWNLOAD", {"name": existing.get("name"), "fileName": existing.get("fileName")},
                               workspace["workspaceId"], result=OK)
            return DONE
        provider = (data.get("provider") or "").strip()
        record = self.processes.create(
            user, workspace["workspaceId"], "DOWNLOAD", file_name, subtype=provider.upper() if provider else "",
            parent=data.get("parent") or None,
            parameter={"fileUrl": file_url, "fileName": file_name, "provider": provider or None,
                       "bbox": data.get("bbox") or None, "platform": platform or None,
                       "volumeName": data.get("volumeName"), "volumePath": data.get("volumePath")})
        return str(record["processObjId"])

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
