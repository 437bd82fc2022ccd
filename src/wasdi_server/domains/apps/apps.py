"""Apps (processors): changes, deploy requests, delete, help, UI, download and runs; where an app lives and
who may reach it is ``app_access``', its uploads and file changes ``app_uploads``'.

Rules (contract /processors, gaps §4 and the "uploadprocessor failures" and "processors/run failures"
rows; where both are silent the choice is here):

- delete: a caller with a sharing loses only the sharing; the owner or an admin runs the ``delete_hooks``
  (payments, templates, media plug in there), removes the sharings, the record, the files, the
  environment and the gallery, then says so (DELETEPROCESSOR) to the workspace given, when the caller may
  read it; anyone else gets 401 (the contract lists no 403 for delete);
- help, UI, package lists and runs need read rights;
- run: the workspace must be writable by the caller, the app readable and built; the storage quota is
  checked, then every ``run_guards`` callable (a priced app's payment check plugs in there); the JSON
  parameters are stored on the RUNPROCESSOR process record (what ``/process/paramsbyid`` returns); with
  ``notify`` the user gets a mail when the run ends.
"""

from __future__ import annotations

import contextlib
import logging
import re
import shutil
import urllib.parse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...dates import now_ms
from ...errors import BadRequest, Forbidden, NoContent, NotFound, Unauthorized
from ...json_reader import JsonReader, JsonRefused
from ...paths import inside, safe_name
from ...store.intents import IntentLog
from ..accounts.identity import User
from .app_access import LIBRARY_UPDATE, REDEPLOY, RUN, EngineT, check_json
from .app_files import (
    ZipStream,
)
from .app_records import (
    is_public,
    processor_resource,
)
from .app_uploads import CHANGE_APP_FILES, MAX_DESCRIPTION, AppUploads

log = logging.getLogger("wasdi_server.apps")

DEFAULT_UI = '{"tabs":[]}'
MAX_UI_BYTES = 1024 * 1024
_HELP_FILE = re.compile(r"^(readme|help)\.(md|txt)$", re.IGNORECASE)
NOTIFY_FIELD = "notifyByMail"
"""On a run's process record: mail its user when it ends (``notify`` of /processors/run)."""


def decode_parameters(reader: JsonReader, raw: str | None) -> tuple[dict[str, Any], str]:
    """The run parameters, sent raw (the official library) or URL-encoded (the web client), and their text."""
    text = (raw or "").strip()
    if not text:
        return {}, "{}"
    refused: JsonRefused | None = None
    for candidate in (text, urllib.parse.unquote(text), urllib.parse.unquote_plus(text)):
        try:
            value = reader.read(candidate, "the parameter text")
        except JsonRefused as e:
            refused = refused if refused is not None and refused.over_a_limit else e
            continue
        if not isinstance(value, dict):
            raise BadRequest("the parameters must be a JSON object")
        return value, candidate
    assert refused is not None
    raise refused


DELETE_APP = "delete_app"
"""The intent kind of an app deletion (subject: the processor id)."""


class AppService(AppUploads[EngineT]):
    """The apps' lifecycle and runs (the store, payments and templates are other services)."""

    def use_intents(self, intents: IntentLog) -> None:
        """Delete apps as durable intents, so that a crash mid-way is finished at the next start."""
        self.intents = intents
        intents.register(DELETE_APP, self._carry_out_delete)
        intents.register(CHANGE_APP_FILES, self._carry_out_files_change)

    def update(self, user: User, processor_id: str | None, view: dict[str, Any]) -> None:
        doc = self.writable(user, processor_id)
        changes: dict[str, Any] = {"lastUpdate": now_ms()}
        if view.get("processorDescription") is not None:
            changes["description"] = str(view["processorDescription"])[:MAX_DESCRIPTION]
        if view.get("processorVersion") not in (None, ""):
            changes["version"] = str(view["processorVersion"])[:50]
        if view.get("isPublic") is not None:
            changes["isPublic"] = 1 if is_public({"isPublic": view["isPublic"]}) else 0
        if view.get("minuteTimeout") is not None:
            try:
                changes["minuteTimeout"] = self._minutes(int(view["minuteTimeout"]))
            except (TypeError, ValueError) as e:
                raise BadRequest("minuteTimeout must be a number of minutes") from e
        if view.get("paramsSample") is not None:
            changes["paramsSample"] = check_json(self.json_reader, str(view["paramsSample"]),
                                                 "paramsSample is not valid JSON", BadRequest)
        self.records.processors.update(doc["processorId"], changes)

    def redeploy(self, user: User, processor_id: str | None, workspace_id: str | None) -> str:
        doc = self.writable(user, processor_id)
        if self.keeps_copies:
            return self._refresh_copy(user, doc, workspace_id)
        return self.queue(user, doc, REDEPLOY, self._operation_workspace(user, workspace_id))

    def update_library(self, user: User, processor_id: str | None, workspace_id: str | None) -> str:
        doc = self.writable(user, processor_id)
        if self.keeps_copies and (self.installer is None or not self.installer.is_installed(doc)):
            return ""
        return self.queue(user, doc, LIBRARY_UPDATE, self._operation_workspace(user, workspace_id))

    def clear_build_flag(self, user: User, processor_id: str | None) -> None:
        doc = self.writable(user, processor_id)
        self.records.processors.update(doc["processorId"], {"deploymentOngoing": False})

    def delete(self, user: User, processor_id: str | None, workspace_id: str | None = None) -> None:
        if not self.is_main:
            raise BadRequest("delete apps on the main node; compute nodes use nodedelete")
        doc = self.records.get(processor_id)
        if doc is None:
            raise BadRequest("invalid processor")
        resource = processor_resource(doc)
        if doc.get("userId") != user.user_id and not user.is_admin:
            if self.sharing.sharing(resource, user.user_id) is None:
                raise Unauthorized("only the owner deletes an app")
            self.sharing.unshare(user, resource, user.user_id)
            return
        for check in self.delete_checks:
            check(doc)
        if self.intents is None:
            self._carry_out_delete(doc["processorId"], {"app": doc})
        else:
            # The intent keeps the record: once it is gone, the only way to the app's folders.
            self.intents.run(DELETE_APP, doc["processorId"], {"app": doc})
        if workspace_id and self.workspaces.may_read(user, workspace_id):
            self.processes.messages.send("DELETEPROCESSOR", f"Delete App<br>{doc['name']} has been deleted",
                                         workspace_id)

    def _carry_out_delete(self, processor_id: str, details: Mapping[str, Any]) -> None:
        # Every step finds what is left, so a deletion a crash interrupted is finished from any point.
        doc = self.records.processors.get(processor_id) or dict(details["app"])
        for hook in self.delete_hooks:
            hook(doc)
        self._remove(doc)

    def _remove(self, doc: dict[str, Any]) -> None:
        layout = self.layout(doc)
        with self._lock:
            self.sharing.remove_all(processor_resource(doc))
            self.records.processors.delete(doc["processorId"])
        with contextlib.suppress(Exception):
            self.engine(doc).delete(layout)
        shutil.rmtree(layout.home, ignore_errors=True)
        shutil.rmtree(layout.folder, ignore_errors=True)
        shutil.rmtree(inside(self.settings.images_root, "processors", layout.name), ignore_errors=True)

    def node_delete(self, user: User, processor_id: str | None, processor_name: str | None,
                    processor_type: str | None = None) -> None:
        """A compute node's copy of an app goes (the main node's record decides; here the local copy)."""
        if self.is_main:
            raise BadRequest("nodedelete is for compute nodes; use delete on the main node")
        doc = self.records.get(processor_id)
        if doc is None and self.keeps_copies and processor_name:
            # The main node deleted the app (and its record) before telling this node: its copy here goes,
            # unless a live app has taken the name since (then the copy is that app's).
            if self.records.by_name(processor_name) is None and self.installer is not None:
                self.installer.forget({"processorId": processor_id, "name": safe_name(processor_name, "app name"),
                                       "type": processor_type or ""})
            return
        if doc is None:
            raise BadRequest("invalid processor")
        if processor_name and doc.get("name") != processor_name:
            raise BadRequest("processorName is not the name of the app")
        if not self.records.can_write(user, doc):
            raise Unauthorized("only the owner deletes an app")
        if self.keeps_copies and self.installer is not None:
            self.installer.forget(doc)  # the app itself, its record and sharings are the main node's
            return
        self._remove(doc)

    def delete_all_of_user(self, user_id: str) -> None:
        """Every app the user owns goes (records, files, environments, sharings); their sharings of others'
        apps go with the user's sharings (the sharing module).  A second call finds nothing."""
        for doc in self.records.processors.find(userId=user_id):
            for hook in self.delete_hooks:
                hook(doc)
            self._remove(doc)

    def help_text(self, user: User, name: str | None) -> str:
        doc = self.readable_by_name(user, name)
        folder = self.layout(doc).folder
        texts = [p.read_text(encoding="utf-8", errors="replace") for p in sorted(folder.glob("*"))
                 if p.is_file() and not p.is_symlink() and _HELP_FILE.match(p.name)]
        return "\n".join(texts)

    def build_log(self, user: User, processor_id: str | None) -> list[str]:
        doc = self.of_team(user, processor_id)
        path = self.layout(doc).build_log
        if not path.is_file():
            return []
        return [line for line in path.read_text(encoding="utf-8", errors="replace").splitlines() if line]

    def download(self, user: User, processor_id: str | None) -> tuple[ZipStream, str]:
        doc = self.of_team(user, processor_id)
        folder = self.layout(doc).folder
        if not folder.is_dir():
            raise NoContent("the app has no files on this node")
        return ZipStream(folder), f"{doc['name']}.zip"

    def cwl(self, user: User, name: str | None) -> tuple[Path, str]:
        doc = self.records.by_name(name)
        if doc is None or not self.records.can_read(user, doc):
            raise NotFound("no such app")
        folder = self.layout(doc).folder
        candidates = [folder / f"{doc['name']}.cwl", *sorted(folder.glob("*.cwl"))]
        for path in candidates:
            if path.is_file() and not path.is_symlink():
                return path, path.name
        raise NoContent("the app has no CWL descriptor")

    def ui(self, user: User, name: str | None) -> str:
        doc = self.readable_by_name(user, name)
        return str(doc.get("uiJson") or "") or DEFAULT_UI

    def save_ui(self, user: User, name: str | None, text: str | None) -> None:
        doc = self.writable_by_name(user, name)
        body = (text or "").strip()
        if not body:
            raise BadRequest("the UI descriptor is empty")
        if len(body.encode("utf-8")) > MAX_UI_BYTES:
            raise BadRequest("the UI descriptor is too large")
        check_json(self.json_reader, body, "the UI descriptor is not valid JSON", BadRequest)
        self.records.processors.update(doc["processorId"], {"uiJson": body, "lastUpdate": now_ms()})

    def run(self, user: User, name: str | None, workspace_id: str | None, encoded: str | None,
            parent: str | None, notify: bool | None = None) -> dict[str, Any]:
        """Queue a run; the RunningProcessorViewModel fields."""
        try:
            workspace = self.workspaces.writable(user, workspace_id)
        except (BadRequest, Forbidden, NotFound) as e:
            raise BadRequest("Workspace cannot be accessed or does not exists.") from e
        doc = self.records.by_name(name)
        if doc is None:
            raise BadRequest(f"Processors not found {str(name)[:100]}")
        if not self.records.can_read(user, doc):
            raise Forbidden("Processor cannot be accessed.")
        if not doc.get("deployed"):
            why = "is still being built" if doc.get("deploymentOngoing") else "has no working build: see its build log"
            raise BadRequest(f"The app {doc['name']} {why}.")
        parameters, text = decode_parameters(self.json_reader, encoded)
        self.products.check_storage(user)
        for guard in self.run_guards:
            guard(user, doc, text)
        parent_id = None
        if parent:
            parent_record = self.processes.readable(user, parent)
            parent_id = str(parent_record["processObjId"])
        record = self.processes.create(user, str(workspace["workspaceId"]), RUN, str(doc["name"]),
                                       subtype=str(doc.get("type") or ""), parameter=parameters, parent=parent_id)
        if notify:
            self.processes.update(record["processObjId"], {NOTIFY_FIELD: True})
        return {"processorId": doc["processorId"], "name": doc["name"],
                "processingIdentifier": record["processObjId"], "status": record["status"],
                "jsonEncodedResult": "", "message": ""}
