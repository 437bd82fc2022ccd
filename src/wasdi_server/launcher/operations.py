"""The operation registry and what a running operation may do (``OperationContext``)."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from .box import Box, Job, Outcome
from .box.box import TRAMPOLINE
from .box.doors import DoorService, RunIdentity

if TYPE_CHECKING:
    from ..domains.accounts.sessions import SessionService
    from ..domains.accounts.uploads import UploadAccountService
    from ..domains.apps.app_environments import AppEnvironmentService
    from ..domains.apps.apps import AppService
    from ..domains.processes.process_logs import ProcessLogService
    from ..domains.processes.processes import ProcessService
    from ..domains.products.search import SearchService
    from ..domains.products.service import ProductService
    from ..domains.workflows.workflows import WorkflowService
    from ..domains.workspaces.workspaces import WorkspaceService
    from ..messages import Messages
    from ..nodes.app_install import AppInstaller
    from ..providers.mail import Mailer
    from ..settings import Settings
    from ..transfer.requests import TransferRequests
    from .engines import Engine


class OperationParts(Protocol):
    """What the launcher and its operations use of the server (the composition root's ``Services`` has them)."""

    @property
    def settings(self) -> Settings:
        """Folders, limits and timeouts."""

    @property
    def processes(self) -> ProcessService:
        """The process records the operations move through their states."""

    @property
    def process_logs(self) -> ProcessLogService:
        """The runs' logs."""

    @property
    def messages(self) -> Messages:
        """What the workspaces' clients hear of the operations."""

    @property
    def sessions(self) -> SessionService:
        """The sessions an app run is given."""

    @property
    def workspaces(self) -> WorkspaceService:
        """The workspaces the operations work in, and their folders."""

    @property
    def products(self) -> ProductService:
        """The products the operations import, copy, publish and delete."""

    @property
    def search(self) -> SearchService:
        """The search providers (an import's download may need a provider's credentials)."""

    @property
    def apps(self) -> AppService[Engine]:
        """The apps deployed and run."""

    @property
    def app_installer(self) -> AppInstaller | None:
        """On a compute node, what installs its copies of the apps from the main node; else ``None``."""

    @property
    def app_environments(self) -> AppEnvironmentService:
        """The apps' environments changed."""

    @property
    def workflows(self) -> WorkflowService:
        """The workflows whose graphs run."""

    @property
    def uploads(self) -> UploadAccountService:
        """The SFTP upload accounts products are copied to."""

    @property
    def transfers(self) -> TransferRequests:
        """The FTP exports asked for."""

    @property
    def mailer(self) -> Mailer:
        """Where a user is told an app run ended."""

    @property
    def door_proxy(self) -> DoorService | None:
        """The outbound proxy behind a boxed run's proxy door; ``None``: no proxy door."""


class OperationStopped(Exception):
    """Raised inside an operation when it has been asked to stop."""


class OperationTimedOut(OperationStopped):
    """Raised inside an operation whose subprocess ran longer than its timeout (the run ends STOPPED)."""

    def __init__(self, process_id: str, seconds: float) -> None:
        super().__init__(process_id)
        self.seconds = seconds


class OperationFailed(Exception):
    """An operation's own failure, with a message for the process payload and the broker message."""


@dataclass
class OperationContext:
    """One running operation: its record, its parameter, the parts of the server it uses, and its stop signal."""

    record: dict[str, Any]
    services: OperationParts
    stop_event: threading.Event = field(default_factory=threading.Event)

    @property
    def process_id(self) -> str:
        return str(self.record["processObjId"])

    @property
    def parameter(self) -> dict[str, Any]:
        return dict(self.record.get("parameter") or {})

    @property
    def workspace_id(self) -> str:
        return str(self.record["workspaceId"])

    @property
    def stopped(self) -> bool:
        return self.stop_event.is_set()

    def check_stopped(self) -> None:
        """Raise ``OperationStopped`` when a stop was asked (call it between units of work)."""
        if self.stop_event.is_set():
            raise OperationStopped(self.process_id)

    def progress(self, perc: int) -> None:
        """Record progress (0-100) and tell the workspace's clients."""
        self.check_stopped()
        record = self.services.processes.set_progress(self.process_id, max(0, min(100, int(perc))))
        if record is not None:
            self.services.processes.notify(record)

    def set_payload(self, payload: str) -> None:
        self.services.processes.update(self.process_id, {"payload": payload})

    def run(self, job: Job, *, timeout: float | None = None,
            on_output: Callable[[str], None] | None = None, box: Box | None = None) -> Outcome:
        """Run ``job`` in the box to its end (the only way an operation starts other people's code).

        A stop request or ``timeout`` seconds of running end the whole run; the first raises
        ``OperationStopped``, the second ``OperationTimedOut``.  With ``on_output`` the program's stdout
        and stderr (merged) are handed over line by line as they arrive.  ``BoxUnavailable`` when the
        kernel cannot box it and the settings require a box."""
        box = box or Box.from_settings(self.services.settings, proxy=self.services.door_proxy)
        named = job if job.name else replace(job, name=self.process_id)
        if named.identity is None:
            named = replace(named, identity=RunIdentity(str(self.record.get("userId") or ""), self.workspace_id,
                                                        self.process_id, on_output or _ignore))
        outcome = box.run(named, on_output=on_output, stop=self.stop_event, timeout=timeout,
                          on_start=lambda pid: self.services.processes.update(self.process_id, {"pid": pid}))
        if outcome.timed_out:
            raise OperationTimedOut(self.process_id, timeout or 0)
        if outcome.stopped:
            raise OperationStopped(self.process_id)
        return outcome


def _ignore(line: str) -> None:
    """Where the door lines of a run whose output nobody reads go."""


def end_leftover_run(pid: int, process_id: str, grace: float = 10.0) -> bool:
    """End the run a dead server left behind: ``pid`` is its supervisor (recorded in the process record),
    which ends the whole run on SIGTERM.  Only a box supervisor started for ``process_id`` is touched, so a
    pid reused since by something else is left alone.  Whether there was one."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            words = handle.read().split(b"\0")
    except OSError:
        return False
    if str(TRAMPOLINE).encode() not in words or process_id.encode() not in words:
        return False
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGTERM)
    end = time.monotonic() + grace
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, os.WNOHANG)
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGKILL)
    return True


OperationHandler = Callable[[OperationContext], bool | None]
"""Returns False (or raises) for ERROR; anything else is DONE."""

OPERATIONS: dict[str, OperationHandler] = {}


def operation(operation_type: str) -> Callable[[OperationHandler], OperationHandler]:
    """Register the decorated function as the handler of ``operation_type`` (INGEST, DOWNLOAD, ...)."""

    def register(handler: OperationHandler) -> OperationHandler:
        if operation_type in OPERATIONS:
            raise ValueError(f"two handlers for {operation_type}")
        OPERATIONS[operation_type] = handler
        return handler

    return register
