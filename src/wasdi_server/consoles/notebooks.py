"""The notebooks of this node: at most one JupyterLab per user and workspace (``lab.Lab``), started by
``/console/create``, found by ``/console/ready``, stopped when idle, when their workspace is deleted and
when the server stops.

A lab's session is one of its user, scoped to the workspace like an app run's (``services.run_scope``),
opened for the lab and closed with it.  When the lab answers, LAUNCHJUPYTERNOTEBOOK is published on the
workspace (its payload names no address: everyone who hears the workspace hears it, and the address
carries the lab's token); a lab that could not start publishes it with result KO and the reason.
"""

from __future__ import annotations

import hmac
import importlib.util
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import NotAvailable
from ..launcher.box import Box, BoxUnavailable
from ..messages import KO, OK
from .lab import Lab, LabPlan, remove_leftovers

if TYPE_CHECKING:
    from ..domains.accounts.identity import User
    from ..domains.accounts.sessions import SessionService
    from ..domains.workspaces.workspaces import WorkspaceService
    from ..messages import Messages
    from ..settings import Settings

log = logging.getLogger("wasdi_server.notebooks")
LAUNCH_NOTEBOOK = "LAUNCHJUPYTERNOTEBOOK"
NEEDED = ("jupyterlab", "ipykernel", "wasdi")
"""What a lab imports: JupyterLab, its kernel, and the official library (the ``[notebook]`` extra)."""
INSTALL = ("Notebooks need the notebook extra on this server: install it with pip install "
           "'wasdi-toolkit[notebook]' (JupyterLab and the official wasdi library) and restart the server.")
STARTING_MESSAGE = ("Your notebook is starting: it opens when it is ready (a LAUNCHJUPYTERNOTEBOOK message "
                    "tells), or ask again in a few seconds.")


def missing_packages() -> list[str]:
    """The packages of the ``[notebook]`` extra this server's environment lacks."""
    missing = []
    for name in NEEDED:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(name)
    return missing


class Notebooks:
    """The labs of this node, by (user, workspace)."""

    def __init__(self, settings: Settings, sessions: SessionService, workspaces: WorkspaceService,
                 messages: Messages, server_url: Callable[[], str], api_ports: Callable[[str], list[int]],
                 box: Box | None = None) -> None:
        self.settings = settings
        self.sessions = sessions
        self.workspaces = workspaces
        self.messages = messages
        self.server_url = server_url
        self.api_ports = api_ports
        self._box = box
        self._labs: dict[tuple[str, str], Lab] = {}
        self._lock = threading.Lock()
        self._closed = False

    @property
    def box(self) -> Box:
        if self._box is None:
            self._box = Box.from_settings(self.settings)
        return self._box

    # -- what the endpoints ask ------------------------------------------------------------------------
    def open(self, user: User, workspace: dict[str, Any]) -> Lab:
        """The lab of ``user`` on ``workspace``: the running one, else a new one, starting.  ``NotAvailable``
        (with what to do) when this server cannot run notebooks."""
        key = (user.user_id, str(workspace["workspaceId"]))
        with self._lock:
            lab = self._labs.get(key)
            if lab is not None and lab.running:
                return lab
            if self._closed:
                raise NotAvailable("the server is stopping: ask again once it is back")
            if missing_packages():
                raise NotAvailable(INSTALL)
            try:
                self.box.check()
            except BoxUnavailable as e:
                raise NotAvailable(f"notebooks run in the same box as apps, and {e}") from e
            lab = self._new_lab(user.user_id, workspace)
            self._labs[key] = lab
        try:
            lab.start()
        except Exception:
            with self._lock:
                self._labs.pop(key, None)
            self.sessions.close(lab.plan.session)
            raise
        return lab

    def find(self, user_id: str, workspace_id: str) -> Lab | None:
        """The lab of ``user_id`` on ``workspace_id``, running or the last one that ended."""
        with self._lock:
            return self._labs.get((user_id, workspace_id))

    def by_token(self, workspace_id: str, token: str) -> Lab | None:
        """The lab up on ``workspace_id`` whose token is ``token`` (compared in constant time), or ``None``."""
        with self._lock:
            labs = [lab for (_, ws), lab in self._labs.items() if ws == workspace_id]
        found = None
        for lab in labs:
            if hmac.compare_digest(lab.token.encode(), token.encode()) and lab.up:
                found = lab
        return found

    def _new_lab(self, user_id: str, workspace: dict[str, Any]) -> Lab:
        folder = self.workspaces.folder(workspace)
        folder.mkdir(parents=True, exist_ok=True)
        workspace_id = str(workspace["workspaceId"])
        url = self.box.api_url(self.server_url())
        session = self.sessions.open(user_id, scope={"workspaceId": workspace_id, "processId": ""})
        s = self.settings
        plan = LabPlan(user_id, workspace_id, folder.resolve(), url,
                       tuple(self.api_ports(url)), session, s.files_root.resolve(), s.notebook_idle_minutes * 60.0,
                       s.notebook_start_seconds)
        try:
            return Lab(plan, self.box, on_ready=self._ready, on_end=self._ended)
        except BaseException:
            self.sessions.close(session)
            raise

    # -- what labs tell ----------------------------------------------------------------------------------
    def _ready(self, lab: Lab) -> None:
        self.messages.send(LAUNCH_NOTEBOOK, f"the notebook of {lab.plan.user_id} is ready", lab.plan.workspace_id,
                           result=OK)

    def _ended(self, lab: Lab) -> None:
        self.sessions.close(lab.plan.session)
        if lab.failure and lab.ready_after is None:
            self.messages.send(LAUNCH_NOTEBOOK, lab.failure, lab.plan.workspace_id, result=KO)

    def start(self) -> None:
        """At the server's start: remove what labs of a killed server left in the temporary folder."""
        removed = remove_leftovers()
        if removed:
            log.info("removed the scratch folders of %d notebook(s) a stopped server left", removed)

    # -- stopping ----------------------------------------------------------------------------------------
    def stop(self, user_id: str, workspace_id: str, wait_seconds: float = 30.0) -> bool:
        """Stop the lab of ``user_id`` on ``workspace_id`` and wait for it; whether one was running."""
        with self._lock:
            lab = self._labs.get((user_id, workspace_id))
        if lab is None or not lab.running:
            return False
        lab.stop("its user stopped it")
        lab.wait(wait_seconds)
        return True

    def stop_workspace(self, doc: dict[str, Any], _delete_files: bool = False, _delete_layers: bool = False) -> None:
        """Stop every lab of a workspace (it is being deleted) and wait for them."""
        workspace_id = str(doc.get("workspaceId"))
        with self._lock:
            labs = [lab for (_, ws), lab in self._labs.items() if ws == workspace_id]
            for lab in labs:
                self._labs.pop((lab.plan.user_id, workspace_id), None)
        for lab in labs:
            lab.stop("its workspace is being deleted")
        for lab in labs:
            lab.wait(30.0)

    def close(self) -> None:
        """Stop every lab (the server stops) and wait for them."""
        with self._lock:
            self._closed = True
            labs = list(self._labs.values())
        for lab in labs:
            lab.stop("the server stops")
        for lab in labs:
            lab.wait(30.0)

    def running_count(self) -> int:
        """How many labs run (or start) on this node now."""
        with self._lock:
            return sum(1 for lab in self._labs.values() if lab.running)
