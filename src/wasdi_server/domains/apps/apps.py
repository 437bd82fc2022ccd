"""Apps (processors): upload, update, files, deploy requests, delete, help, UI, download and runs.

Rules (contract /processors, gaps §4 and the "uploadprocessor failures" and "processors/run failures"
rows; where both are silent the choice is here):

- names: no ``/``, ``\\`` or ``#`` and no leading dot (400 "<name> is not a valid filename"), lower case without spaces
  (500 "Processor Name MUST be lower case and without any space"), a plain folder name (path guard);
  unique: a taken name is 409 "The name <name> is already used. Please use a different name." unless
  ``force`` is set by the app's owner (or an admin), which replaces its files and rebuilds it;
- ``paramsSample`` must be valid JSON when given (500 "Parameter Sample is not a valid JSON", update: 400);
- the zip: safe entry names, no links, a size cap (``app_files``); a Python app must have ``myProcessor.py``;
- the app's files live in ``<apps_root>/<name>/``; its environment and build log in
  ``<app_environments_root>/<name>/`` (the engine's); deploys, redeploys and library updates are launcher
  operations (DEPLOYPROCESSOR, REDEPLOYPROCESSOR, LIBRARYUPDATE) in the workspace given (or none);
- read rights (``AppRecords``): public apps for everyone; owner, sharers, admins otherwise; help, UI,
  package lists and runs need them.  The build log and the download of the app's files are for its owner,
  sharers and admins only, public or not (its source is not published with it); changes need write rights
  (owner, ``write`` sharers, admins);
- delete: a caller with a sharing loses only the sharing; the owner or an admin runs the ``delete_hooks``
  (payments, templates, media plug in there), removes the sharings, the record, the files, the
  environment and the gallery, then says so (DELETEPROCESSOR) to the workspace given, when the caller may
  read it; anyone else gets 401 (the contract lists no 403 for delete);
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
import threading
import urllib.parse
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from ...dates import now_ms
from ...errors import BadRequest, Conflict, Forbidden, NoContent, NotFound, ServerFailure, Unauthorized
from ...json_reader import JsonReader, JsonRefused
from ...paths import inside, safe_name
from ...store.intents import IntentLog
from ..accounts.identity import User
from ..platform.main_node import is_main_node
from .app_files import (
    MAX_FOLDER_NAME_BYTES,
    PIP_TXT,
    ZipStream,
    digest,
    finish_replacements,
    is_zip,
    replace_folder,
    staging_folder,
    unpack,
)
from .app_records import (
    DEFAULT_MINUTE_TIMEOUT,
    PYTHON_TYPES,
    AppRecords,
    is_public,
    normalise_type,
    processor_resource,
)
from .engines import AppCopies, AppEngine, AppLayout

if TYPE_CHECKING:
    from ...settings import Settings
    from ..processes.processes import ProcessService
    from ..products.service import ProductService
    from ..workspaces.workspaces import WorkspaceService

log = logging.getLogger("wasdi_server.apps")

RunGuard = Callable[[User, dict[str, Any], str], None]
DeleteHook = Callable[[dict[str, Any]], None]

DEFAULT_UI = '{"tabs":[]}'
MAX_UI_BYTES = 1024 * 1024
MAX_DESCRIPTION = 10_000
_HELP_FILE = re.compile(r"^(readme|help)\.(md|txt)$", re.IGNORECASE)
_BAD_NAME_CHARS = re.compile(r"[/\\#]")
NOTIFY_FIELD = "notifyByMail"
"""On a run's process record: mail its user when it ends (``notify`` of /processors/run)."""
DEPLOY, REDEPLOY, LIBRARY_UPDATE, RUN = "DEPLOYPROCESSOR", "REDEPLOYPROCESSOR", "LIBRARYUPDATE", "RUNPROCESSOR"


def check_json(reader: JsonReader, text: str | None, message: str,
               failure: type[BadRequest] | type[ServerFailure]) -> str:
    """``text`` when it is empty or JSON within the reader's limits; else ``failure(message)`` (with the
    limit it broke, when it broke one)."""
    if text is None or not text.strip():
        return ""
    try:
        reader.read(text)
    except JsonRefused as e:
        raise failure(f"{message} (it {e.problem})" if e.over_a_limit else message) from e
    return text


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
CHANGE_APP_FILES = "change_app_files"
"""The intent kind of an app's new files put in place, its record written and its build queued, as one
durable change (subject: the processor id and the queued process's id)."""


EngineT = TypeVar("EngineT", bound=AppEngine, covariant=True)
"""The engines an ``AppService`` is given (the launcher's, which can also run an app)."""


class AppService(Generic[EngineT]):
    """The apps' lifecycle and runs (the store, payments and templates are other services)."""

    def __init__(self, records: AppRecords, settings: Settings, workspaces: WorkspaceService,
                 processes: ProcessService, products: ProductService,
                 engine_for: Callable[[str], EngineT]) -> None:
        self.records = records
        self.settings = settings
        self.json_reader = JsonReader.of(settings)
        self.workspaces = workspaces
        self.processes = processes
        self.products = products
        self.engine_for = engine_for
        """The engine of an app type (the launcher's engines)."""
        self.sharing = records.sharing
        self.run_guards: list[RunGuard] = []
        """Called after the access checks of a run and before its process exists (payments plug in)."""
        self.delete_checks: list[DeleteHook] = []
        """Called before an owner's or admin's delete; may refuse it (a priced app's unused paid runs)."""
        self.delete_hooks: list[DeleteHook] = []
        """Called with the record before an owner's delete removes it (payments, templates, media)."""
        self._lock = threading.RLock()
        self.intents: IntentLog | None = None
        self.installer: AppCopies | None = None
        """On a compute node of a deployment: this node's copies of apps (``nodes.app_install``)."""

    def use_intents(self, intents: IntentLog) -> None:
        """Delete apps as durable intents, so that a crash mid-way is finished at the next start."""
        self.intents = intents
        intents.register(DELETE_APP, self._carry_out_delete)
        intents.register(CHANGE_APP_FILES, self._carry_out_files_change)

    # -- where an app lives ----------------------------------------------------------------------------
    def layout(self, doc: dict[str, Any]) -> AppLayout:
        name = safe_name(str(doc["name"]), "app name")
        return AppLayout(name, str(doc.get("type") or ""), inside(self.settings.apps_root, name),
                         inside(self.settings.app_environments_root, name))

    def engine(self, doc: dict[str, Any]) -> EngineT:
        return self.engine_for(str(doc.get("type") or ""))

    @property
    def is_main(self) -> bool:
        return is_main_node(self.settings.node_code)

    @property
    def keeps_copies(self) -> bool:
        """Whether this is a compute node of a deployment: it keeps copies of the main node's apps, installed at
        their first run here, and a change of an app on the main node makes it install its copy again."""
        return self.installer is not None and self.installer.needed

    def _refresh_copy(self, user: User, doc: dict[str, Any], workspace_id: str | None) -> str:
        """A compute node told that an app changed on the main node: its copy, if it has one, is installed again
        (the main node's files are the app's files); the queued process id, or "" when there is no copy."""
        if self.installer is None or not self.installer.is_installed(doc):
            return ""
        return self.queue(user, doc, REDEPLOY, self._operation_workspace(user, workspace_id))

    @property
    def server_url(self) -> str:
        """The URL apps call this server at."""
        if self.settings.public_url:
            return self.settings.public_url.rstrip("/")
        host = self.settings.host if self.settings.host not in ("0.0.0.0", "::", "") else "127.0.0.1"
        return f"http://{host}:{self.settings.port}"

    # -- access ----------------------------------------------------------------------------------------
    def readable(self, user: User, processor_id: str | None) -> dict[str, Any]:
        doc = self.records.get(processor_id)
        if doc is None:
            raise BadRequest("invalid processor")
        if not self.records.can_read(user, doc):
            raise Forbidden("MSG_ERROR_NO_ACCESS_RIGHTS_OBJECT_PROCESSOR")
        return doc

    def of_team(self, user: User, processor_id: str | None) -> dict[str, Any]:
        """The app, for its owner, its sharers and admins (a public app's files and builds stay theirs)."""
        doc = self.records.get(processor_id)
        if doc is None:
            raise BadRequest("invalid processor")
        if not self.sharing.can_read(user, processor_resource(doc)):
            raise Forbidden("MSG_ERROR_NO_ACCESS_RIGHTS_OBJECT_PROCESSOR")
        return doc

    def readable_by_name(self, user: User, name: str | None) -> dict[str, Any]:
        doc = self.records.by_name(name)
        if doc is None:
            raise BadRequest("invalid processor name")
        if not self.records.can_read(user, doc):
            raise Forbidden("MSG_ERROR_NO_ACCESS_RIGHTS_OBJECT_PROCESSOR")
        return doc

    def writable(self, user: User, processor_id: str | None) -> dict[str, Any]:
        doc = self.records.get(processor_id)
        if doc is None:
            raise BadRequest("invalid processor")
        if not self.records.can_write(user, doc):
            raise Forbidden("MSG_ERROR_NO_ACCESS_RIGHTS_OBJECT_PROCESSOR")
        return doc

    def writable_by_name(self, user: User, name: str | None) -> dict[str, Any]:
        doc = self.records.by_name(name)
        if doc is None:
            raise BadRequest("invalid processor name")
        if not self.records.can_write(user, doc):
            raise Forbidden("MSG_ERROR_NO_ACCESS_RIGHTS_OBJECT_PROCESSOR")
        return doc

    def _operation_workspace(self, user: User, workspace_id: str | None) -> str:
        """The workspace an app operation is listed in: the one given (readable by the caller) or none."""
        if not workspace_id:
            return ""
        return str(self.workspaces.readable(user, workspace_id)["workspaceId"])

    # -- upload ----------------------------------------------------------------------------------------
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

    @staticmethod
    def _minutes(timeout: int | None) -> int:
        if timeout is None:
            return DEFAULT_MINUTE_TIMEOUT
        return -1 if timeout <= 0 else min(int(timeout), 60 * 24 * 30)

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

    def queue(self, user: User, doc: dict[str, Any], operation_type: str, workspace_id: str = "",
              parameter: dict[str, Any] | None = None, process_id: str | None = None) -> str:
        """Queue an operation on the app; its process id."""
        if operation_type in (DEPLOY, REDEPLOY):
            self.records.processors.update(doc["processorId"], {"deploymentOngoing": True})
        record = self.processes.create(user, workspace_id, operation_type, str(doc["name"]),
                                       subtype=str(doc.get("type") or ""),
                                       parameter={"processorId": doc["processorId"], **(parameter or {})},
                                       process_id=process_id)
        return str(record["processObjId"])

    # -- changes ---------------------------------------------------------------------------------------
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

    # -- delete ----------------------------------------------------------------------------------------
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

    # -- reading ---------------------------------------------------------------------------------------
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

    # -- runs ------------------------------------------------------------------------------------------
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
