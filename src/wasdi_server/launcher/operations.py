"""The operation registry and what a running operation may do (``OperationContext``)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..services import Services


class OperationStopped(Exception):
    """Raised inside an operation when it has been asked to stop."""


class OperationFailed(Exception):
    """An operation's own failure, with a message for the process payload and the broker message."""


@dataclass
class OperationContext:
    """One running operation: its record, its parameter, the services, and its stop signal."""

    record: dict[str, Any]
    services: Services
    stop_event: threading.Event = field(default_factory=threading.Event)
    children: list[subprocess.Popen[bytes]] = field(default_factory=list)

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

    def run(self, command: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None,
            timeout: float | None = None) -> int:
        """Run a subprocess in its own process group (so a stop kills its whole tree); its exit code."""
        child = subprocess.Popen(list(command), env=dict(env) if env is not None else None, cwd=cwd,
                                 start_new_session=True)
        self.children.append(child)
        self.services.processes.update(self.process_id, {"pid": child.pid})
        try:
            while True:
                try:
                    return child.wait(timeout=0.2 if timeout is None else min(0.2, timeout))
                except subprocess.TimeoutExpired:
                    if self.stop_event.is_set():
                        kill_group(child.pid)
                        child.wait()
                        raise OperationStopped(self.process_id) from None
        finally:
            self.children.remove(child)


def kill_group(pid: int, grace: float = 3.0) -> None:
    """SIGTERM the process group of ``pid``, then SIGKILL what is left after ``grace`` seconds."""
    try:
        os.killpg(pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    deadline = threading.Event()
    for _ in range(int(grace * 10)):
        try:
            os.killpg(pid, 0)
        except ProcessLookupError:
            return
        deadline.wait(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


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
