"""Propagation from the main node to the compute nodes, through a durable outbox (gaps §8).

A change the compute nodes must repeat (an app redeployed, its libraries or files updated, its environment
changed, an app or a style deleted, a style's file replaced) is written here as one item per compute node,
in the main node's own store, before the call that made it is answered; a file the call carries is kept
beside the items (``<data_dir>/outbox/<item>``) until every node has it.  A background worker delivers the
items in order, node by node: the same call on the node, in a session of the user who made the change
(opened for the delivery and closed after it), so the node checks that user's rights again; an item with
no user is a call only nodes may make (a user's deletion), authorised by the node secret alone.  An item
stays until its node answers: a node that is down gets its items when it is back, after a restart of
either node too.  A node's refusal (a 4xx answer: the app is not on that node, say) is final and logged.
"""

from __future__ import annotations

import logging
import shutil
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from wasdi_sdk.atomic_files import atomic_writer

from ..background import Periodic
from ..store import Collection
from .client import NodeClient, NodeUnreachable, Peer

log = logging.getLogger("wasdi_server.nodes.outbox")

OUTBOX = "outbox"
"""The store collection of undelivered items (node-local, key ``itemId``)."""
MAX_BACKOFF_SECONDS = 60.0


class Outbox:
    """Items of ``{itemId, node, method, path, query, userId, file, fileField, fileName, createdAt, attempts,
    nextAttemptAt, lastError}``."""

    def __init__(self, items: Collection, client: NodeClient, folder: Path,
                 open_session: Callable[[str], str], close_session: Callable[[str], object],
                 atomic: Callable[[], AbstractContextManager[None]], poll_seconds: float = 1.0) -> None:
        self.items = items
        self.atomic = atomic
        self.client = client
        self.folder = folder
        self.open_session = open_session
        self.close_session = close_session
        self.poll_seconds = poll_seconds
        self._worker = Periodic("wasdi-outbox", self.deliver_due, poll_seconds, "the outbox could not deliver")
        self._delivering = threading.Lock()

    # -- writing ------------------------------------------------------------------------------------------
    def propagate(self, user_id: str, method: str, path: str, query: Mapping[str, Any], *,
                  file: Path | None = None, file_field: str = "file", file_name: str = "") -> int:
        """Queue the call for every active compute node (durably, before returning); how many items."""
        peers = self.client.compute_nodes()
        if not peers:
            return 0
        kept = ""
        if file is not None:
            kept = uuid.uuid4().hex
            self.folder.mkdir(parents=True, exist_ok=True)
            target = self.folder / kept
            with open(file, "rb") as source, atomic_writer(target) as copy:  # durable before any item names it
                shutil.copyfileobj(source, copy, 1024 * 1024)
        now = time.time()
        with self.atomic():  # every node's item, or none
            for number, peer in enumerate(peers):
                self._insert(now, number, peer, method, path, query, user_id, kept, file_field, file_name)
        self._worker.wake()
        return len(peers)

    def _insert(self, now: float, number: int, peer: Peer, method: str, path: str, query: Mapping[str, Any],
                user_id: str, kept: str, file_field: str, file_name: str) -> None:
        self.items.insert({"itemId": f"{now:.6f}-{number}-{uuid.uuid4().hex[:8]}", "node": peer.code,
                           "method": method, "path": path, "query": {k: v for k, v in query.items() if v is not None},
                           "userId": user_id, "file": kept, "fileField": file_field, "fileName": file_name,
                           "createdAt": now, "attempts": 0, "nextAttemptAt": 0.0, "lastError": ""})

    def pending(self, node: str | None = None) -> list[dict[str, Any]]:
        """Undelivered items (of one node), oldest first."""
        found = self.items.find(node=node) if node else self.items.all()
        return sorted(found, key=lambda d: (float(d.get("createdAt") or 0), str(d["itemId"])))

    # -- delivering ---------------------------------------------------------------------------------------
    def start(self) -> None:
        self._worker.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._worker.stop(timeout)

    def deliver_due(self) -> int:
        """Deliver every item that is due, in order per node (a node's first failure holds its later items);
        how many were delivered."""
        delivered = 0
        with self._delivering:
            blocked: set[str] = set()
            for item in self.pending():
                node = str(item["node"])
                if node in blocked or self._worker.stopping:
                    continue
                if float(item.get("nextAttemptAt") or 0) > time.time():
                    blocked.add(node)
                    continue
                if self._deliver(item):
                    delivered += 1
                else:
                    blocked.add(node)
        return delivered

    def _deliver(self, item: dict[str, Any]) -> bool:
        node = str(item["node"])
        try:
            peer = self.client.peer(node)
        except NodeUnreachable as e:
            if self.client.nodes.get(node) is None:  # unregistered meanwhile: nobody to deliver to
                log.warning("dropped %s %s for node %s: %s", item["method"], item["path"], node, e)
                self._done(item)
                return True
            return self._retry(item, str(e))
        try:
            status, text = self._send(peer, item)
        except NodeUnreachable as e:
            return self._retry(item, str(e))
        if status >= 500:
            return self._retry(item, f"answered {status}: {text[:200]}")
        if status >= 300:
            log.warning("node %s refused %s %s (%s): %s", node, item["method"], item["path"], status, text[:200])
        else:
            log.info("propagated %s %s to node %s", item["method"], item["path"], node)
        self._done(item)
        return True

    def _send(self, peer: Peer, item: dict[str, Any]) -> tuple[int, str]:
        # An item with no user is a node-only call, which the node secret alone authorises.
        session = self.open_session(str(item["userId"])) if item.get("userId") else ""
        try:
            headers = {"x-session-token": session} if session else {}
            content: Any = None
            if item.get("file"):
                boundary = uuid.uuid4().hex
                data = (self.folder / str(item["file"])).read_bytes()
                name = str(item.get("fileName") or "file").replace('"', "")
                content = (f'--{boundary}\r\nContent-Disposition: form-data; name="{item.get("fileField") or "file"}"; '
                           f'filename="{name}"\r\nContent-Type: application/octet-stream\r\n\r\n').encode() + data + \
                    f"\r\n--{boundary}--\r\n".encode()
                headers["Content-Type"] = f"multipart/form-data; boundary={boundary}"
            with self.client.open(peer, str(item["method"]), str(item["path"]), query=dict(item.get("query") or {}),
                                  headers=headers, content=content) as response:
                text = response.read().decode("utf-8", "replace")
            return response.status_code, text
        finally:
            if session:
                self.close_session(session)

    def _retry(self, item: dict[str, Any], problem: str) -> bool:
        attempts = int(item.get("attempts") or 0) + 1
        wait = min(MAX_BACKOFF_SECONDS, 2.0 ** min(attempts, 6))
        log.warning("node %s has not got %s %s yet (attempt %d, next in %.0f s): %s", item["node"], item["method"],
                    item["path"], attempts, wait, problem)
        self.items.update(str(item["itemId"]), {"attempts": attempts, "nextAttemptAt": time.time() + wait,
                                               "lastError": problem[:500]})
        return False

    def _done(self, item: dict[str, Any]) -> None:
        self.items.delete(str(item["itemId"]))
        kept = str(item.get("file") or "")
        if kept and not self.items.find_one(file=kept):
            (self.folder / kept).unlink(missing_ok=True)

    def remove_unreferenced_files(self) -> None:
        """At start: files no item names any more (a crash came between the last delivery and the removal)."""
        if not self.folder.is_dir():
            return
        named = {str(d.get("file")) for d in self.items.all() if d.get("file")}
        for path in self.folder.iterdir():
            if path.is_file() and path.name not in named:
                path.unlink(missing_ok=True)
