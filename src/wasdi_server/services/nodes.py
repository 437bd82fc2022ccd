"""Nodes: this node, the compute nodes registered with it, and the choice of a node for new work."""

from __future__ import annotations

import time
from typing import Any

from ..store import Collection
from .identity import User

UNFINISHED = ("CREATED", "RUNNING", "WAITING", "READY")


class NodeService:
    """The ``nodes`` collection (``NodeFullViewModel`` fields) and the latest ``metrics`` per node."""

    def __init__(self, nodes: Collection, metrics: Collection, processes: Collection, local_code: str,
                 metrics_max_age_seconds: int) -> None:
        self.nodes = nodes
        self.metrics = metrics
        self.processes = processes
        self.local_code = local_code
        self.metrics_max_age = metrics_max_age_seconds

    def get(self, code: str) -> dict[str, Any] | None:
        return self.nodes.get(code)

    def is_usable(self, code: str | None) -> bool:
        """This node, or a registered active one."""
        if not code:
            return False
        if code == self.local_code:
            return True
        node = self.nodes.get(code)
        return bool(node and node.get("active"))

    def api_url(self, code: str | None, own_url: str) -> str:
        """Where clients send a workspace's product and process calls."""
        if not code or code == self.local_code:
            return own_url
        node = self.nodes.get(code)
        if node and node.get("active") and node.get("apiUrl"):
            return str(node["apiUrl"]).rstrip("/")
        return own_url

    def scored_nodes(self, user: User, shared_with_user: set[str]) -> list[str]:
        """Codes of the nodes new work of ``user`` may go to, best first.

        Candidates are active nodes that are public (``shared``) or shared with the user, with
        metrics younger than the configured age.  Fewer unfinished processes first, then more free
        disk.  Nodes without fresh metrics are not scored.
        """
        oldest = time.time() - self.metrics_max_age
        scored: list[tuple[int, float, str]] = []
        for node in self.nodes.find(active=True):
            code = node["nodeCode"]
            if not (node.get("shared") or code in shared_with_user):
                continue
            latest = self.metrics.get(code)
            if not latest or float(latest.get("receivedAt", 0)) < oldest:
                continue
            disks = latest.get("disks") or [{}]
            available = float(disks[0].get("absoluteAvailable") or 0) if disks else 0.0
            busy = self.processes.count(lambda d: d.get("status") in UNFINISHED, nodeCode=code)
            scored.append((busy, -available, code))
        return [code for _, _, code in sorted(scored)]

    def choose(self, user: User, requested: str | None, shared_with_user: set[str]) -> str | None:
        """The node of a new workspace: the requested one; else the best scored node, the user's
        default node, this node.  ``None`` when a requested node is unknown or inactive."""
        if requested:
            return requested if self.is_usable(requested) else None
        for code in self.scored_nodes(user, shared_with_user):
            return code
        if self.is_usable(user.default_node):
            return user.default_node
        return self.local_code
