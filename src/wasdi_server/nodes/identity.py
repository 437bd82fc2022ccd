"""Who this node is in its deployment: its code, whether it is the main node, the main node's address, and
the secret the nodes share.  The one place that knows; everything that must tell nodes apart asks here.

A deployment is one main node (code ``wasdi``, as in the contract) and any number of compute nodes, each
a ``wasdi-server serve`` with its own data directory, all sharing one PostgreSQL database (``store_url``).
A single server with no ``store_url`` is a deployment of one: the main node, with no secret and no peers.

Node-to-node calls carry the shared secret in ``SECRET_HEADER``; ``is_node_caller`` checks it in constant
time, so a user's session alone never passes for a node.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from dataclasses import dataclass, field

from ..domains.platform.main_node import MAIN_NODE, is_main_node

SECRET_HEADER = "x-wasdi-node-secret"
"""Carries the nodes' shared secret on every node-to-node call."""
FROM_HEADER = "x-wasdi-node"
"""The calling node's code, on every node-to-node call (its forwarded requests are never forwarded again)."""
MIN_SECRET_LENGTH = 16


class NodeConfigurationError(ValueError):
    """Settings that cannot make a node of a deployment (the message says which and why)."""


@dataclass
class NodeIdentity:
    """This node of the deployment."""

    code: str = MAIN_NODE
    own_url: str = ""
    """Where other nodes and clients reach this node (``public_url``); empty on a lone server."""
    secret: str = field(default="", repr=False)
    shared_store: bool = False
    """Whether this node shares its store with other nodes (``store_url`` is set)."""
    configured_main_url: str = ""
    main_url_lookup: Callable[[], str] | None = field(default=None, repr=False)
    """Reads the main node's registered address from the shared store (set by the composition root)."""

    @classmethod
    def from_settings(cls, code: str, public_url: str, store_url: str, secret: str, main_url: str) -> NodeIdentity:
        code = (code or "").strip()
        if not code:
            raise NodeConfigurationError("node_code must not be empty")
        return cls(code=code, own_url=public_url.rstrip("/"), secret=secret, shared_store=bool(store_url),
                   configured_main_url=main_url.rstrip("/"))

    def check_serving(self) -> None:
        """What a node of a deployment needs before it serves (management commands need none of it)."""
        if not self.in_deployment:
            return
        if len(self.secret) < MIN_SECRET_LENGTH:
            raise NodeConfigurationError(
                f"node_secret must be set, with {MIN_SECRET_LENGTH} characters or more and the same on every "
                "node, when store_url makes this server a node of a deployment (WASDI_SERVER_NODE_SECRET)")
        if not self.own_url:
            raise NodeConfigurationError(
                "public_url must be set on every node of a deployment: it is the address the other nodes and "
                "the clients reach this node at (--public-url, WASDI_SERVER_PUBLIC_URL)")

    @property
    def is_main(self) -> bool:
        """Whether this is the main node (``wasdi``)."""
        return is_main_node(self.code)

    @property
    def in_deployment(self) -> bool:
        """Whether other nodes share this node's store (and may call it, and be called)."""
        return self.shared_store

    @property
    def main_url(self) -> str:
        """The main node's address: ``main_url`` from the settings, else the one registered for ``wasdi``."""
        if self.is_main:
            return self.own_url
        if self.configured_main_url:
            return self.configured_main_url
        return (self.main_url_lookup() if self.main_url_lookup else "").rstrip("/")

    def is_node_caller(self, given_secret: str | None) -> bool:
        """Whether a request's ``SECRET_HEADER`` is the deployment's node secret (compared in constant time)."""
        if not self.in_deployment or not self.secret:
            return False
        return hmac.compare_digest((given_secret or "").encode(), self.secret.encode())

    def is_node_call(self, get_header: Callable[[str], str | None]) -> bool:
        """Whether a request (read through its ``get_header``) is another node's call: its node code and the secret."""
        return bool(get_header(FROM_HEADER)) and self.is_node_caller(get_header(SECRET_HEADER))

    def node_headers(self) -> dict[str, str]:
        """The headers that make a call to another node a node-to-node call."""
        return {SECRET_HEADER: self.secret, FROM_HEADER: self.code}
