"""Where an app lives and who may reach it: the part of the app service the others stand on.

- the app's files live in ``<apps_root>/<name>/``; its environment and build log in
  ``<app_environments_root>/<name>/`` (the engine's, asked through ``engines.AppEngine``);
- read rights (``AppRecords``): public apps for everyone; owner, sharers, admins otherwise.  The build log and
  the download of the app's files are for its owner, sharers and admins only, public or not (its source is
  not published with it); changes need write rights (owner, ``write`` sharers, admins);
- deploys, redeploys and library updates are launcher operations (DEPLOYPROCESSOR, REDEPLOYPROCESSOR,
  LIBRARYUPDATE) queued in the workspace given (or none).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from ...errors import BadRequest, Forbidden, ServerFailure
from ...json_reader import JsonReader, JsonRefused
from ...paths import inside, safe_name
from ...store.intents import IntentLog
from ..accounts.identity import User
from ..platform.main_node import is_main_node
from .app_records import (
    DEFAULT_MINUTE_TIMEOUT,
    AppRecords,
    processor_resource,
)
from .engines import AppCopies, AppEngine, AppLayout

if TYPE_CHECKING:
    from ...settings import Settings
    from ..processes.processes import ProcessService
    from ..products.service import ProductService
    from ..workspaces.workspaces import WorkspaceService


RunGuard = Callable[[User, dict[str, Any], str], None]
DeleteHook = Callable[[dict[str, Any]], None]

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


EngineT = TypeVar("EngineT", bound=AppEngine, covariant=True)
"""The engines an ``AppService`` is given (the launcher's, which can also run an app)."""


class AppAccess(Generic[EngineT]):
    """An app's place on this server, the access checks, and the queueing of its operations."""

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

    @staticmethod
    def _minutes(timeout: int | None) -> int:
        if timeout is None:
            return DEFAULT_MINUTE_TIMEOUT
        return -1 if timeout <= 0 else min(int(timeout), 60 * 24 * 30)
