"""The launcher: a worker pool that runs queued operations and moves their records through the states.

Slots: at most ``workers`` records of this node are RUNNING at once.  Each cycle READY records (an
application resuming after its children finished) take free slots before CREATED ones, oldest first.
A WAITING record does not hold a slot, so its children can run.

After a restart nothing is left RUNNING forever: records of this node found RUNNING, WAITING or READY
at start belonged to workers that no longer exist, so they become ERROR (with an end time and a
message), and a run such a worker started whose supervisor is somehow still there is ended;
CREATED records stay queued and run.  Rerunning half-done work automatically could repeat
side effects (imports, payments of apps), so failing visibly is the safer rule.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from ..background import Periodic
from ..domains.processes.processes import CREATED, DONE, ERROR, READY, RUNNING, STOPPED, TERMINAL, WAITING
from ..paths import hide_server_paths
from .box import kernel_support
from .box.cgroups import remove_leftovers, runs_folder
from .operations import (
    OPERATIONS,
    OperationContext,
    OperationFailed,
    OperationParts,
    OperationStopped,
    end_leftover_run,
)

log = logging.getLogger("wasdi_server.launcher")
RESTART_MESSAGE = "interrupted by a server restart"


def _kill_leftover(record: dict[str, Any]) -> None:
    """End the run a killed server left behind for ``record``.  Its supervisor ends it by itself when the
    server dies (parent-death signal); this is for one that did not."""
    pid = int(record.get("pid") or 0)
    if pid > 0:
        end_leftover_run(pid, str(record["processObjId"]), grace=5.0)


class Launcher:
    """Takes CREATED operations out of the store and runs their handlers in worker threads."""

    def __init__(self, services: OperationParts, workers: int, poll_seconds: float = 0.5) -> None:
        self.services = services
        self.workers = max(1, workers)
        self.poll_seconds = poll_seconds
        self._cycles = Periodic("wasdi-launcher", self.cycle, poll_seconds, "launcher cycle failed")
        self._running: dict[str, tuple[threading.Thread, OperationContext]] = {}
        self._lock = threading.Lock()
        self._settled_version = -1
        """The process collection's version when a cycle last found nothing to start: until it changes,
        no slot was freed and no work arrived, so the next cycle can skip the scan."""

    # -- lifecycle -------------------------------------------------------------------------------------
    def start(self) -> None:
        if self._cycles.started:
            return
        self.recover()
        remove_leftovers(kernel_support().cgroups, runs_folder(self.services.settings.data_dir.resolve()))
        self.services.processes.on_created(self.wake)
        self._cycles.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop taking work, ask running operations to stop, and wait for them."""
        # The loop first: an operation it starts while we look would otherwise outlive the store.
        self._cycles.stop(timeout)
        with self._lock:
            running = list(self._running.values())
        for _, ctx in running:
            ctx.stop_event.set()
        for thread, _ in running:
            thread.join(timeout)

    def wake(self) -> None:
        self._cycles.wake()

    def recover(self) -> int:
        """The restart rule: this node's RUNNING, WAITING and READY records become ERROR."""
        processes = self.services.processes
        orphans = [r for r in processes.active_on_node() if r["status"] in (RUNNING, WAITING, READY)]
        for record in orphans:
            _kill_leftover(record)
            processes.update(record["processObjId"], {"payload": record.get("payload") or RESTART_MESSAGE})
            done = processes.set_status(record["processObjId"], ERROR, notify=True, only_if_active=True)
            if done is not None:
                self.services.messages.send(record["operationType"], RESTART_MESSAGE, record.get("workspaceId"),
                                            result="KO")
        return len(orphans)

    def is_alive(self, process_id: str) -> bool:
        """Whether a worker of this server is running the operation now."""
        with self._lock:
            entry = self._running.get(process_id)
        return entry is not None and entry[0].is_alive()

    # -- scheduling ------------------------------------------------------------------------------------
    def cycle(self) -> None:
        """Fill the free slots: READY records first, then CREATED ones, oldest first."""
        processes = self.services.processes
        version = processes.processes.version
        if version == self._settled_version:
            return
        active = processes.active_on_node()
        free = self.workers - sum(1 for r in active if r["status"] == RUNNING)
        oldest = sorted(active, key=lambda r: float(r.get("operationTimestamp") or 0))
        for record in [r for r in oldest if r["status"] == READY][:max(free, 0)]:
            if processes.set_status(record["processObjId"], RUNNING, notify=True, only_if_active=True):
                free -= 1
        for record in [r for r in oldest if r["status"] == CREATED]:
            if free <= 0 or self._cycles.stopping:
                break
            started = processes.set_status(record["processObjId"], RUNNING, perc=0, notify=True,
                                           only_if_active=True)
            if started is None or started["status"] != RUNNING:
                continue
            self._start(started)
            free -= 1
        if processes.processes.version == version:
            self._settled_version = version

    def _start(self, record: dict[str, Any]) -> None:
        ctx = OperationContext(record, self.services)
        thread = threading.Thread(target=self._run, args=(ctx,), name=f"op-{record['processObjId'][:8]}",
                                  daemon=True)
        with self._lock:
            self._running[ctx.process_id] = (thread, ctx)
        thread.start()

    def _run(self, ctx: OperationContext) -> None:
        processes = self.services.processes
        operation_type = str(ctx.record.get("operationType"))
        status, message = DONE, None
        try:
            handler = OPERATIONS.get(operation_type)
            if handler is None:
                raise OperationFailed(f"no handler for operation {operation_type}")
            if handler(ctx) is False:
                status = ERROR
        except OperationStopped:
            status = STOPPED
        except OperationFailed as e:
            status, message = ERROR, str(e)
        except Exception as e:
            log.exception("operation %s %s failed", operation_type, ctx.process_id)
            status, message = ERROR, f"{type(e).__name__}: {e}"
        finally:
            with self._lock:
                self._running.pop(ctx.process_id, None)
            # The run log is where people look first for why a run failed; a record deleted meanwhile (its
            # workspace went) keeps no log.  Users read it: the server's folders are not named in it.
            message = hide_server_paths(message, self.services.settings.data_dir) if message else message
            if message and processes.update(ctx.process_id, {"payload": message}) is not None:
                self.services.process_logs.write(ctx.process_id, message)
            # The operation itself (or an application, or a stop) may already have set a final state.
            current = processes.get(ctx.process_id)
            if current is not None and current["status"] not in TERMINAL:
                if status != DONE:
                    self.services.messages.send(operation_type, message or status, ctx.record.get("workspaceId"),
                                                result="KO")
                processes.set_status(ctx.process_id, status, perc=100 if status == DONE else None, notify=True,
                                     only_if_active=True)
            elif current is not None:
                # An app that ended itself did so without a message (the official library's updateStatus sends
                # none): the end of every operation is announced, as the original launcher does at close.
                processes.notify(current)
            self.wake()

    # -- stopping --------------------------------------------------------------------------------------
    def kill(self, process_id: str, tree: bool = True) -> list[str]:
        """Stop a process (and with ``tree`` its children, breadth first); the ids that were stopped."""
        processes = self.services.processes
        queue = [process_id]
        seen: set[str] = set()
        stopped: list[str] = []
        while queue:
            current = queue.pop(0)
            if current in seen:
                continue
            seen.add(current)
            record = processes.get(current)
            if record is None:
                continue
            if tree:
                queue.extend(child["processObjId"] for child in processes.children(current))
            if record["status"] in TERMINAL:
                continue
            with self._lock:
                entry = self._running.get(current)
            if entry is not None:
                entry[1].stop_event.set()
            elif int(record.get("pid") or 0) > 0:
                end_leftover_run(int(record["pid"]), current)
            if processes.set_status(current, STOPPED, notify=True, only_if_active=True) is not None:
                stopped.append(current)
        self.wake()
        return stopped
