"""The operation registry and what a running operation may do (``OperationContext``)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..services import Services


class OperationStopped(Exception):
    """Raised inside an operation when it has been asked to stop."""


class OperationFailed(Exception):
    """An operation's own failure, with a message for the process payload and the broker message."""


class OperationTimedOut(OperationFailed):
    """A subprocess of an operation ran past its time limit (it has been killed)."""


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
            timeout: float | None = None, on_output: Callable[[str], None] | None = None) -> int:
        """Run a subprocess in its own process group (so a stop kills its whole tree); its exit code.

        ``timeout``: after that many seconds the tree is killed and ``OperationTimedOut`` raised.
        ``on_output``: receives each line the process writes (stdout and stderr merged), as it comes.
        """
        child = subprocess.Popen(list(command), env=dict(env) if env is not None else None, cwd=cwd,
                                 start_new_session=True, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE if on_output else None,
                                 stderr=subprocess.STDOUT if on_output else None)
        self.children.append(child)
        self.services.processes.update(self.process_id, {"pid": child.pid})
        reader = None
        if on_output is not None and child.stdout is not None:
            reader = threading.Thread(target=_pump_lines, args=(child.stdout, on_output), daemon=True,
                                      name=f"out-{self.process_id[:8]}")
            reader.start()
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while True:
                try:
                    code = child.wait(timeout=0.2)
                    if reader is not None:
                        reader.join(timeout=5.0)
                    return code
                except subprocess.TimeoutExpired:
                    if self.stop_event.is_set():
                        kill_group(child.pid)
                        child.wait()
                        raise OperationStopped(self.process_id) from None
                    if deadline is not None and time.monotonic() >= deadline:
                        kill_group(child.pid)
                        child.wait()
                        raise OperationTimedOut(f"{Path(command[0]).name} did not finish within {timeout:g} s "
                                                "and was stopped") from None
        finally:
            self.children.remove(child)


def _pump_lines(stream: IO[bytes], on_output: Callable[[str], None]) -> None:
    with stream:
        for raw in iter(stream.readline, b""):
            on_output(raw.decode("utf-8", errors="replace").rstrip("\r\n"))


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
