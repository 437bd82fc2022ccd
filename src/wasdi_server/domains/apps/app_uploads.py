"""New files for an app: an upload (a new app, or with ``force`` new files for one's own), a zip or one file
over an app's files, and the recovery at start of a replacement a crash interrupted.

- names: no ``/``, ``\\`` or ``#`` and no leading dot (400 "<name> is not a valid filename"), lower case without
  spaces (500 "Processor Name MUST be lower case and without any space"), a plain folder name (path guard);
  unique: a taken name is 409 "The name <name> is already used. Please use a different name." unless
  ``force`` is set by the app's owner (or an admin), which replaces its files and rebuilds it;
- ``paramsSample`` must be valid JSON when given (500 "Parameter Sample is not a valid JSON", update: 400);
- the zip: safe entry names, no links, a size cap (``app_files``); a Python app must have ``myProcessor.py``;
- new files, the record and the queued build are one durable change (the ``change_app_files`` intent).
"""

from __future__ import annotations

import logging
import re
import shutil
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...dates import now_ms
from ...errors import BadRequest, Conflict, ServerFailure
from ...paths import inside, safe_name
from ..accounts.identity import User
from .app_access import DEPLOY, LIBRARY_UPDATE, REDEPLOY, AppAccess, EngineT, check_json
from .app_files import (
    MAX_FOLDER_NAME_BYTES,
    PIP_TXT,
    digest,
    finish_replacements,
    is_zip,
    replace_folder,
    staging_folder,
    unpack,
)
from .app_records import (
    PYTHON_TYPES,
    normalise_type,
)

log = logging.getLogger("wasdi_server.apps")

MAX_DESCRIPTION = 10_000
_BAD_NAME_CHARS = re.compile(r"[/\\#]")

CHANGE_APP_FILES = "change_app_files"
"""The intent kind of an app's new files put in place, its record written and its build queued, as one
durable change (subject: the processor id and the queued process's id)."""


class AppUploads(AppAccess[EngineT]):
    """Uploads and file changes of apps, each a durable change of files, record and build."""

    @staticmethod
    def check_new_name(name: str | None) -> str:
        raw = name or ""
        if not raw.strip():
            raise BadRequest("missing name")
        if _BAD_NAME_CHARS.search(raw) or raw.startswith("."):
            raise BadRequest(f"{raw[:100]} is not a valid filename")
        if raw != raw.strip().lower() or " " in raw:
            raise ServerFailure("Processor Name MUST be lower case and without any space")
        return safe_name(raw, "app name", MAX_FOLDER_NAME_BYTES)

    def upload(self, user: User, archive: Path, *, name: str | None, workspace_id: str | None, version: str | None,
               description: str | None, app_type: str | None, params_sample: str | None, public: int | None,
               timeout: int | None, force: bool | None) -> str:
        """Store a new app (or, with ``force``, new files for one's own app) and queue its deploy."""
        wanted = self.check_new_name(name)
        sample = check_json(self.json_reader, params_sample, "Parameter Sample is not a valid JSON", ServerFailure)
        operation_ws = self._operation_workspace(user, workspace_id)
        kind = normalise_type(app_type)
        staged = self._unpack_new(archive, kind)
        try:
            with self._lock:
                existing = self.records.by_name(wanted)
                if existing is not None and not (force and (existing.get("userId") == user.user_id or user.is_admin)):
                    raise Conflict(f"The name {wanted} is already used. Please use a different name.")
                stamp = now_ms()
                fields = {"name": wanted, "version": (version or "1").strip()[:50] or "1",
                          "description": (description or "")[:MAX_DESCRIPTION], "type": kind,
                          "isPublic": 1 if public else 0, "paramsSample": sample,
                          "minuteTimeout": self._minutes(timeout), "deploymentOngoing": True, "deployed": False,
                          "lastUpdate": stamp}
                if existing is None:
                    new_app: dict[str, Any] = {
                        "processorId": str(uuid.uuid4()), "userId": user.user_id, "uploadDate": stamp,
                        "logo": "", "placeholderIndex": 1 + uuid.uuid4().int % 7, "showInStore": False,
                        "friendlyName": "", "link": "", "email": "", "longDescription": "", "categories": [],
                        "ondemandPrice": 0.0, "squareKilometerPrice": 0.0, "subscriptionPrice": 0.0,
                        "areaParameterName": "", "uiJson": "", "environmentActions": [], "packageInfo": {},
                        **fields}
                    return self._change_files(user, new_app, staged, DEPLOY, operation_ws, new=True)
                return self._change_files(user, {**existing, **fields}, staged, DEPLOY, operation_ws,
                                          changes=fields)
        finally:
            self._discard_unless_pending(staged)

    def _change_files(self, user: User, doc: dict[str, Any], staged: Path, operation: str, workspace_id: str, *,
                      new: bool = False, changes: dict[str, Any] | None = None) -> str:
        """Put ``staged`` in place of the app's files, write its record (``doc`` when ``new``, else
        ``changes``) and queue ``operation``, as one durable change: whatever instant a crash comes, the
        next start finishes it, so files, record and build never disagree.  The queued process's id."""
        details = {"staged": staged.name, "name": doc["name"], "type": doc.get("type") or "",
                   "app": doc if new else None, "changes": changes or {}, "operation": operation,
                   "workspaceId": workspace_id, "userId": user.user_id, "processId": str(uuid.uuid4())}
        subject = f"{doc['processorId']}|{details['processId']}"
        if self.intents is None:
            self._carry_out_files_change(subject, details)
        else:
            # The caller holds self._lock, which an app deletion's intent takes: not the intents' own lock.
            self.intents.run(CHANGE_APP_FILES, subject, details, one_at_a_time=False)
        return str(details["processId"])

    def _discard_unless_pending(self, staged: Path) -> None:
        # Files a recorded change has not yet put in place are its own: the next start finishes it with them.
        pending = self.intents.pending() if self.intents is not None else []
        if not any(i.get("kind") == CHANGE_APP_FILES and (i.get("details") or {}).get("staged") == staged.name
                   for i in pending):
            shutil.rmtree(staged, ignore_errors=True)

    def _carry_out_files_change(self, subject: str, details: Mapping[str, Any]) -> None:
        # Each step sees whether it already happened, so a change a crash interrupted finishes from any point.
        processor_id = subject.split("|", 1)[0]
        staged = self.settings.apps_root / str(details["staged"])
        folder = self.layout({"name": details["name"], "type": details["type"]}).folder
        if staged.is_dir():
            replace_folder(staged, folder)
        doc = self.records.processors.get(processor_id)
        if doc is None and (details.get("app") is None or not folder.is_dir()):
            return  # the app was deleted meanwhile, or its new files were lost: nothing to record
        if doc is None:
            doc = self.records.processors.insert(dict(details["app"]))
        elif details.get("changes"):
            doc = self.records.processors.update(processor_id, dict(details["changes"])) or doc
        if self.processes.get(str(details["processId"])) is None:
            self.queue(User(user_id=str(details["userId"])), doc, str(details["operation"]),
                       str(details["workspaceId"]), process_id=str(details["processId"]))

    def _unpack_new(self, archive: Path, kind: str) -> Path:
        staged = staging_folder(self.settings.apps_root)
        try:
            unpack(archive, staged, self.settings.apps_max_zip_bytes)
            if kind in PYTHON_TYPES and not (staged / "myProcessor.py").is_file():
                raise BadRequest("the zip has no myProcessor.py (the file with the app's run() function)")
        except BaseException:
            shutil.rmtree(staged, ignore_errors=True)
            raise
        return staged

    def update_files(self, user: User, processor_id: str | None, workspace_id: str | None, received: Path,
                     file_name: str) -> str:
        """Apply a zip (unpacked over the app's files) or one file; rebuild only when pip.txt changed, else
        refresh the library.  The process id of the queued operation."""
        doc = self.writable(user, processor_id)
        if self.keeps_copies:
            return self._refresh_copy(user, doc, workspace_id)
        operation_ws = self._operation_workspace(user, workspace_id)
        folder = self.layout(doc).folder
        with self._lock:
            # The change is made on a copy, which then takes the folder's place: never half-applied files.
            staged = staging_folder(self.settings.apps_root)
            try:
                if folder.is_dir():
                    shutil.copytree(folder, staged, symlinks=True, dirs_exist_ok=True)
                if file_name.lower().endswith(".zip") and is_zip(received):
                    unpack(received, staged, self.settings.apps_max_zip_bytes)
                else:
                    target = inside(staged, safe_name(file_name, "file name"))
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(received, target)
                changed = digest(staged / PIP_TXT) != digest(folder / PIP_TXT)
                return self._change_files(user, doc, staged, REDEPLOY if changed else LIBRARY_UPDATE, operation_ws,
                                          changes={"lastUpdate": now_ms()})
            finally:
                self._discard_unless_pending(staged)

    def recover_folders(self) -> None:
        """At start, after the intents are finished and before serving: an app folder a crash left half
        replaced gets its old files back, staging folders go, and a folder with no app record (the crash came
        between a new upload's folder and its record) goes."""
        root = self.settings.apps_root
        for name in finish_replacements(root):
            log.info("restored the files of app %s, whose replacement a crash interrupted", name)
        folders = [p for p in root.iterdir() if p.is_dir() and not p.is_symlink()] if root.is_dir() else []
        for folder in folders:
            if not folder.name.startswith(".") and self.records.processors.find_one(name=folder.name) is None:
                shutil.rmtree(folder, ignore_errors=True)
                log.info("removed the folder of an app whose upload a crash interrupted: %s", folder)
