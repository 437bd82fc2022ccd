"""Nodes: this node, the compute nodes registered with it, and the choice of a node for new work.

The /node endpoints (contract, "Nodes", and Authentication item 4):
- reading, creating and updating a node is for admins; others get 401 (the contract's quirk);
- ``allnodes`` lists a registered node when it is active (or ``all=true``) and the caller is an
  admin, or the node is public (``shared``), or shared with the caller, or the caller's default
  node.  This node itself (``settings.node_code``, the system default where every workspace without
  another node runs) is always listed first, for everyone: it is where their work goes.  It is
  configured by the server settings, not through /node: creating or sharing it is refused (400);
  ``GET /node`` shows it (from its stored record if an operator inserted one, else from settings);
- node sharings live in the one sharing module (resource type ``node``); only admins share; a
  user may drop their own sharing and an admin anyone's; anybody else gets 401 (the contract
  lists no 403 for ``/node/share/delete``).  ``share/bynode`` shows admins every sharing of the
  node and other users only their own.
"""

from __future__ import annotations

import re
import time
from typing import Any

from ...errors import BadRequest, Forbidden, ServerFailure, Unauthorized
from ...store import Collection
from ..accounts.identity import User, normalise_user_id
from ..accounts.sharing import Resource, ShareOutcome, SharingService
from .main_node import is_main_node

UNFINISHED = ("CREATED", "RUNNING", "WAITING", "READY")
NODE = "node"
MSG_INVALID_NODE = "MSG_ERROR_INVALID_NODE"
MSG_NOT_ADMIN = "MSG_ERROR_NO_ACCESS_RIGHTS_OBJECT_NODE"
NODE_CODE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
TEXT_FIELDS = ("cloudProvider", "apiUrl", "nodeDescription", "nodeGeoserverAddress")
FLAG_FIELDS = ("active", "shared")
MAX_TEXT = 2000
MAX_DISK_PERCENT_USED = 90.0
MIN_FREE_MEMORY_BYTES = 30 * 1024**3


class NodeService:
    """The ``nodes`` collection (``NodeFullViewModel`` fields) and the latest ``metrics`` per node."""

    def __init__(self, nodes: Collection, metrics: Collection, processes: Collection, local_code: str,
                 metrics_max_age_seconds: int, *, sharing: SharingService | None = None,
                 cloud_provider: str = "local") -> None:
        self.nodes = nodes
        self.metrics = metrics
        self.processes = processes
        self.local_code = local_code
        self.metrics_max_age = metrics_max_age_seconds
        self.sharing = sharing
        self.cloud_provider = cloud_provider

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

    def scored_nodes(self, user: User, shared_with_user: set[str], *, include_local: bool = False) -> list[str]:
        """Codes of the nodes new work of ``user`` may go to, best first.

        Candidates are active nodes that are public (``shared``) or shared with the user (and this
        node itself with ``include_local``), with metrics younger than the configured age.  Fewer
        unfinished processes first, then more free disk; a node whose disk is more than 90% full is
        left out unless no other remains, and one known to have less than 30 GB of free memory comes
        after the others (gaps §3).  Nodes without fresh metrics are not scored.
        """
        oldest = time.time() - self.metrics_max_age
        scored: list[tuple[bool, int, float, str]] = []
        full: list[tuple[bool, int, float, str]] = []
        candidates = self.nodes.find(active=True)
        if include_local and not any(n["nodeCode"] == self.local_code for n in candidates):
            candidates.append({"nodeCode": self.local_code, "shared": True})
        for node in candidates:
            code = node["nodeCode"]
            if is_main_node(code) and not include_local:
                continue  # the main node is where work goes when no compute node is chosen, not a candidate
            if not (node.get("shared") or code in shared_with_user or (include_local and code == self.local_code)):
                continue
            latest = self.metrics.get(code)
            if not latest or float(latest.get("receivedAt", 0)) < oldest:
                continue
            disk = (latest.get("disks") or [{}])[0]
            available = float(disk.get("absoluteAvailable") or 0)
            memory = (latest.get("memory") or {}).get("absoluteAvailable")
            low_memory = memory is not None and float(memory) < MIN_FREE_MEMORY_BYTES
            busy = self.busy(code, latest)
            entry = (low_memory, busy, -available, code)
            (full if float(disk.get("percentageUsed") or 0) > MAX_DISK_PERCENT_USED else scored).append(entry)
        return [entry[-1] for entry in sorted(scored or full)]

    def busy(self, code: str, latest: dict[str, Any] | None = None) -> int:
        """A node's unfinished processes: this node's counted now; another's as its latest metrics say (each
        node keeps its processes in its own store and records the count with its metrics every interval)."""
        if code == self.local_code:
            return self.processes.count(lambda d: d.get("status") in UNFINISHED, nodeCode=code)
        latest = latest if latest is not None else self.metrics.get(code) or {}
        reported = latest.get("unfinishedProcesses")
        if isinstance(reported, int | float):
            return int(reported)
        return self.processes.count(lambda d: d.get("status") in UNFINISHED, nodeCode=code)

    def may_use(self, user: User, code: str, shared_with_user: set[str]) -> bool:
        """This node, or an active node the user may see (as ``/node/allnodes`` lists them)."""
        if code == self.local_code:
            return True
        node = self.nodes.get(code)
        if not node or not node.get("active"):
            return False
        return user.is_admin or bool(node.get("shared")) or code in shared_with_user or code == user.default_node

    def choose(self, user: User, requested: str | None, shared_with_user: set[str]) -> str | None:
        """The node of a new workspace: the requested one; else the best scored node, the user's
        default node, this node.  ``None`` when a requested node is unknown, inactive or not the user's to use."""
        if requested:
            return requested if self.may_use(user, requested, shared_with_user) else None
        for code in self.scored_nodes(user, shared_with_user):
            return code
        if self.is_usable(user.default_node):
            return user.default_node
        return self.local_code

    # -- the /node endpoints ---------------------------------------------------------------------
    @staticmethod
    def resource(code: str) -> Resource:
        return Resource(NODE, code, "", code)

    def _sharing(self) -> SharingService:
        if self.sharing is None:
            raise ServerFailure("node sharing is not configured")
        return self.sharing

    @staticmethod
    def require_admin(user: User, error: type[Unauthorized] | type[Forbidden] = Unauthorized) -> None:
        if not user.is_admin:
            raise error(MSG_NOT_ADMIN)

    def registered(self, code: str | None) -> dict[str, Any]:
        """The stored record of a registered node other than this one; ``BadRequest`` otherwise."""
        doc = self.nodes.get(code) if code and code != self.local_code else None
        if doc is None:
            raise BadRequest(MSG_INVALID_NODE)
        return doc

    def local_full(self, own_url: str) -> dict[str, Any]:
        """NodeFullViewModel fields of this node: always active, public."""
        doc = self.nodes.get(self.local_code) or {}
        return {"nodeCode": self.local_code, "cloudProvider": doc.get("cloudProvider") or self.cloud_provider,
                "apiUrl": doc.get("apiUrl") or own_url, "nodeDescription": doc.get("nodeDescription") or "",
                "nodeGeoserverAddress": doc.get("nodeGeoserverAddress") or "", "active": True, "shared": True}

    @staticmethod
    def full_view(doc: dict[str, Any]) -> dict[str, Any]:
        return {"nodeCode": doc["nodeCode"], "cloudProvider": doc.get("cloudProvider"), "apiUrl": doc.get("apiUrl"),
                "nodeDescription": doc.get("nodeDescription"), "nodeGeoserverAddress": doc.get("nodeGeoserverAddress"),
                "active": bool(doc.get("active")), "shared": bool(doc.get("shared"))}

    def visible(self, user: User, include_inactive: bool, own_url: str) -> list[dict[str, Any]]:
        """NodeViewModel fields of the nodes ``user`` may use: this node first, then by code."""
        local = self.local_full(own_url)
        out = [{"nodeCode": local["nodeCode"], "cloudProvider": local["cloudProvider"], "apiUrl": local["apiUrl"]}]
        shared = set(self.sharing.shared_with(user.user_id, NODE)) if self.sharing else set()
        for doc in sorted(self.nodes.all(), key=lambda d: str(d.get("nodeCode"))):
            code = doc["nodeCode"]
            if code == self.local_code or not (doc.get("active") or include_inactive):
                continue
            if user.is_admin or doc.get("shared") or code in shared or code == user.default_node:
                out.append({"nodeCode": code, "cloudProvider": doc.get("cloudProvider") or code,
                            "apiUrl": doc.get("apiUrl")})
        return out

    def read(self, caller: User, code: str | None, own_url: str) -> dict[str, Any]:
        """NodeFullViewModel fields of one node (admins; 401 for others, 400 when unknown)."""
        self.require_admin(caller)
        if code == self.local_code:
            return self.local_full(own_url)
        return self.full_view(self.registered(code))

    @staticmethod
    def _clean(fields: dict[str, Any]) -> dict[str, Any]:
        """The given (non-null) editable fields, checked."""
        out: dict[str, Any] = {}
        for name in TEXT_FIELDS:
            value = fields.get(name)
            if value is None:
                continue
            text = str(value).strip()
            if len(text) > MAX_TEXT or any(ord(ch) < 32 for ch in text):
                raise BadRequest(f"invalid {name}")
            if name == "apiUrl" and text and not re.match(r"^https?://[^\s/]+", text, re.IGNORECASE):
                raise BadRequest("apiUrl must be an http(s) URL")
            out[name] = text
        for name in FLAG_FIELDS:
            if fields.get(name) is not None:
                out[name] = bool(fields[name])
        return out

    def create(self, caller: User, fields: dict[str, Any]) -> dict[str, Any]:
        """Register a node (admins); ``nodeCode`` is required and unique."""
        self.require_admin(caller)
        code = str(fields.get("nodeCode") or "").strip()
        if not NODE_CODE.match(code):
            raise BadRequest("a valid nodeCode is required")
        if code == self.local_code:
            raise BadRequest("this node is configured by the server settings")
        record = {"nodeCode": code, "cloudProvider": "", "apiUrl": "", "nodeDescription": "",
                  "nodeGeoserverAddress": "", "active": True, "shared": False, **self._clean(fields)}
        with self.nodes.transaction():
            if self.nodes.get(code) is not None:
                raise BadRequest(f"the node {code} already exists")
            return self.nodes.insert(record)

    def update(self, caller: User, fields: dict[str, Any]) -> dict[str, Any]:
        """Change a registered node (admins); members left null keep their value."""
        self.require_admin(caller)
        code = str(fields.get("nodeCode") or "").strip()
        if not code:
            raise BadRequest("nodeCode is required")
        changes = self._clean(fields)
        with self.nodes.transaction():
            self.registered(code)
            updated = self.nodes.update(code, changes)
        if updated is None:
            raise BadRequest(MSG_INVALID_NODE)
        return updated

    def delete(self, caller: User, code: str | None) -> None:
        """Remove a registered node and its sharings (admins); this node itself is not a record to remove."""
        self.require_admin(caller)
        with self.nodes.transaction():
            doc = self.registered(code)
            if self.sharing is not None:
                self.sharing.remove_all(self.resource(doc["nodeCode"]))
            self.nodes.delete(doc["nodeCode"])

    def share(self, caller: User, code: str | None, user_id: str | None, rights: str | None) -> ShareOutcome:
        """Share a registered node with a user (admins only: 403 for others)."""
        self.require_admin(caller, Forbidden)
        doc = self.registered(code)
        return self._sharing().share(caller, self.resource(doc["nodeCode"]), user_id, rights)

    def sharings(self, caller: User, code: str | None) -> list[dict[str, Any]]:
        """NodeSharingViewModel fields: every sharing for admins, the caller's own for others."""
        doc = self.registered(code)
        records = self._sharing().sharings_of(self.resource(doc["nodeCode"]))
        return [{"nodeCode": doc["nodeCode"], "userId": r["userId"]} for r in records
                if caller.is_admin or r["userId"] == caller.user_id]

    def unshare(self, caller: User, code: str | None, user_id: str | None) -> None:
        """Remove a user's sharing of a node: the user themself or an admin (401 for anybody else)."""
        if not caller.is_admin and normalise_user_id(user_id) != caller.user_id:
            raise Unauthorized(MSG_NOT_ADMIN)  # before the lookup: a refusal says nothing of which nodes exist
        doc = self.registered(code)
        self._sharing().unshare(caller, self.resource(doc["nodeCode"]), user_id)
