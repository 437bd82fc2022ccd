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
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..services import Services


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

        A stop request or ``timeout`` seconds of running kill the group; the first raises
        ``OperationStopped``, the second ``OperationTimedOut``.  With ``on_output`` the child's stdout and
        stderr (merged) are handed over line by line as they arrive.
        """
        capture = on_output is not None
        child = subprocess.Popen(list(command), env=dict(env) if env is not None else None, cwd=cwd,
                                 start_new_session=True, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE if capture else None,
                                 stderr=subprocess.STDOUT if capture else None)
        reader = None
        if on_output is not None and child.stdout is not None:
            reader = threading.Thread(target=_pump, args=(child.stdout, on_output), daemon=True,
                                      name=f"out-{child.pid}")
            reader.start()
        self.children.append(child)
        self.services.processes.update(self.process_id, {"pid": child.pid})
        deadline = None if timeout is None or timeout <= 0 else time.monotonic() + timeout
        try:
            while True:
                try:
                    return child.wait(timeout=0.1)
                except subprocess.TimeoutExpired:
                    if self.stop_event.is_set():
                        kill_group(child.pid, child=child)
                        raise OperationStopped(self.process_id) from None
                    if deadline is not None and time.monotonic() >= deadline:
                        kill_group(child.pid, child=child)
                        raise OperationTimedOut(self.process_id, timeout or 0) from None
        finally:
            self.children.remove(child)
            if reader is not None:
                # A grandchild that escaped the group could hold the pipe open: do not wait for it forever.
                reader.join(5.0)


def _pump(stream: IO[bytes], on_output: Callable[[str], None]) -> None:
    with stream:
        for raw in stream:
            text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            if text.strip():
                on_output(text)


def kill_group(pid: int, grace: float = 3.0, child: subprocess.Popen[bytes] | None = None) -> None:
    """SIGTERM the process group of ``pid``, then SIGKILL what is left after ``grace`` seconds.

    The group counts as gone once its leader is reaped and no member is left: the leader is reaped here
    (``child`` when this process started it, else a non-blocking ``waitpid``), because an unreaped leader
    is a zombie that keeps its group alive for ``killpg`` and would make every call wait the full grace.
    """
    try:
        os.killpg(pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        _reap(pid, child)
        return
    end = time.monotonic() + grace
    while time.monotonic() < end:
        _reap(pid, child)
        try:
            os.killpg(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.02)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
    if child is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(timeout=grace)
    else:
        _reap(pid, None)


def _reap(pid: int, child: subprocess.Popen[bytes] | None) -> None:
    if child is not None:
        child.poll()
        return
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


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
