"""Calls from this node to another node of the deployment.

Every call goes through the one outbound guard (``providers.outbound``), allowed to the registered node
addresses only: the target is named by its node code, its address is the ``apiUrl`` an admin registered for
it (or the main node's address), and the guard is given exactly that host, so a node call can reach nothing
else, whatever a user puts in a request.  Each call carries the node secret and is bounded by
``node_call_timeout_seconds``.

The secret (and, in forwarded calls, the caller's session) goes only to an address the operator allowed:
the ``node_urls`` setting, and ``main_url``.  An ``apiUrl`` is typed by an application admin through the API,
so an address registered there and not in the settings is refused before anything is sent: an admin account
cannot make the server hand the deployment's secret to a host of its choosing.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit

import httpx

from ..domains.platform.main_node import MAIN_NODE, is_main_node
from ..providers.outbound import OutboundPolicy, OutboundRefused, open_request
from .identity import NodeIdentity

if TYPE_CHECKING:
    from ..store import Collection

log = logging.getLogger("wasdi_server.nodes")


class NodeUnreachable(Exception):
    """Another node could not be called (not registered, inactive, not allowed, down, or too slow); the message
    says which."""


def origin_of(url: str) -> tuple[str, str, int] | None:
    """``(scheme, host, port)`` of an http(s) address (the default port filled in), ``None`` for anything else."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        return None
    return scheme, parts.hostname.lower(), port or (443 if scheme == "https" else 80)


@dataclass(frozen=True)
class Peer:
    """A node this one may call."""

    code: str
    url: str


class NodeClient:
    """Node-to-node HTTP, to the addresses registered in the shared ``nodes`` collection."""

    def __init__(self, identity: NodeIdentity, nodes: Collection, timeout_seconds: float,
                 allowed_urls: Iterable[str]) -> None:
        """``allowed_urls``: the addresses the operator allowed (``node_urls``); ``main_url`` is allowed too."""
        self.identity = identity
        self.nodes = nodes
        self.allowed = {origin for url in [*allowed_urls, identity.configured_main_url]
                        if url and (origin := origin_of(url)) is not None}
        self.timeout = httpx.Timeout(timeout_seconds, connect=min(timeout_seconds, 5.0))
        self._http = httpx.Client(timeout=self.timeout, follow_redirects=False, trust_env=False,
                                  limits=httpx.Limits(max_connections=64, max_keepalive_connections=16))

    def close(self) -> None:
        self._http.close()

    # -- who may be called ------------------------------------------------------------------------------
    def peer(self, code: str) -> Peer:
        """The registered, active node ``code`` (or the main node); ``NodeUnreachable`` otherwise."""
        if is_main_node(code) and not self.identity.is_main:
            url = self.identity.main_url
            if not url:
                raise NodeUnreachable("the main node's address is not known: set main_url, or public_url on the "
                                      "main node")
            return Peer(code, url)
        doc = self.nodes.get(code)
        if doc is None:
            raise NodeUnreachable(f"the node {code} is not registered")
        if not doc.get("active"):
            raise NodeUnreachable(f"the node {code} is not active")
        url = str(doc.get("apiUrl") or "").rstrip("/")
        if not url:
            raise NodeUnreachable(f"the node {code} has no apiUrl registered")
        return Peer(code, url)

    def compute_nodes(self) -> list[Peer]:
        """Every active registered node other than this one and the main node (the ones the main node merges)."""
        peers = []
        for doc in sorted(self.nodes.find(active=True), key=lambda d: str(d.get("nodeCode"))):
            code = str(doc.get("nodeCode"))
            if code in (self.identity.code, MAIN_NODE) or not doc.get("apiUrl"):
                continue
            peers.append(Peer(code, str(doc["apiUrl"]).rstrip("/")))
        return peers

    def allows(self, url: str) -> bool:
        """Whether the operator allowed ``url``'s origin (scheme, host and port) for node calls."""
        origin = origin_of(url)
        return origin is not None and origin in self.allowed

    @staticmethod
    def _policy(url: str) -> OutboundPolicy:
        # Exactly the registered node's host: loopback or private as it may be, and nothing else.
        return OutboundPolicy.from_hosts([urlsplit(url).hostname or ""])

    # -- calls -------------------------------------------------------------------------------------------
    @contextmanager
    def open(self, peer: Peer, method: str, path: str, *, query: str | Mapping[str, Any] | None = None,
             headers: Mapping[str, str] | None = None, content: Any = None) -> Iterator[httpx.Response]:
        """One call to ``peer`` (its response streamed); ``NodeUnreachable`` when it cannot be made."""
        if not self.allows(peer.url):
            log.warning("a call to node %s at %s was refused: the address is not in node_urls", peer.code, peer.url)
            raise NodeUnreachable(f"the node {peer.code}'s address {peer.url} is not among the node addresses the "
                                  "operator allowed (the node_urls setting)")
        if isinstance(query, Mapping):
            query = urlencode({k: v for k, v in query.items() if v is not None}, doseq=True)
        url = peer.url + path + (f"?{query}" if query else "")
        sent = {**(headers or {}), **self.identity.node_headers()}
        try:
            with open_request(self._http, method, url, self._policy(peer.url), headers=sent,
                              content=content) as response:
                yield response
        except (httpx.HTTPError, OutboundRefused, OSError) as e:
            raise NodeUnreachable(f"the node {peer.code} did not answer ({type(e).__name__}: {str(e)[:200]})") from e

    def call_json(self, peer: Peer, method: str, path: str, *, query: Mapping[str, Any] | None = None,
                  session: str | None = None, body: Any = None) -> Any:
        """A call whose answer is JSON (a 2xx status is required); the parsed answer."""
        headers = {"x-session-token": session} if session else {}
        content = None
        if body is not None:
            headers["Content-Type"] = "application/json"
            content = json.dumps(body).encode()
        with self.open(peer, method, path, query=query, headers=headers, content=content) as response:
            try:
                data = response.read()
            except httpx.HTTPError as e:
                raise NodeUnreachable(f"the node {peer.code} did not finish its answer ({e})") from e
        if response.status_code >= 300:
            raise NodeUnreachable(f"the node {peer.code} answered {response.status_code} to {method} {path}")
        if not data.strip():
            return None
        try:
            return json.loads(data)
        except ValueError as e:
            raise NodeUnreachable(f"the node {peer.code} answered {path} with something that is not JSON") from e
