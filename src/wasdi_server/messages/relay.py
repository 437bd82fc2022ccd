"""Messages born on a compute node, handed to the main node's built-in broker (several nodes, gaps §7/§8).

With RabbitMQ every node publishes to it (``broker_url`` on every node) and nothing here is used.  With the
built-in broker the main node's broker is the deployment's: a compute node routes each message to its own
listener (clients connected to it) and hands it to the main node with ``MainNodeRelay``, a ``QueuedSender``,
so a main node that is down or slow never fails or slows the request that caused the message: the message
waits in a bounded queue, the outage is logged once, and it is tried again with backoff.

The hand-over is ``POST /nodes/messages`` on the main node, a call only nodes may make: it goes through the
node client (the one outbound guard, to the registered main node's address only) with the node secret,
which the main node compares in constant time before publishing the messages to its own exchange.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .publisher import Message, Publisher
from .queued import QueuedSender

if TYPE_CHECKING:
    from ..nodes.client import NodeClient, Peer

NODE_MESSAGES = "/nodes/messages"
MAX_BODY_BYTES = 4 << 20
"""The largest hand-over the main node reads."""


class Fanout:
    """A backend made of several: each message goes to each, in order (none can fail the others)."""

    def __init__(self, *backends: Publisher) -> None:
        self.backends = backends

    def publish(self, message: Message) -> None:
        for backend in self.backends:
            backend.publish(message)

    def start(self) -> None:
        for backend in self.backends:
            backend.start()

    def close(self) -> None:
        for backend in self.backends:
            backend.close()


class MainNodeRelay(QueuedSender):
    """Hands a compute node's messages to the main node's broker (``POST /nodes/messages``)."""

    description = "the main node's message broker"

    def __init__(self, client: NodeClient, limit: int = 10_000, **options: Any) -> None:
        super().__init__(limit, **options)
        self.client = client
        self._peer: Peer | None = None

    def connect(self) -> None:
        from ..domains.platform.main_node import MAIN_NODE

        peer = self.client.peer(MAIN_NODE)  # NodeUnreachable when its address is not known yet
        # An empty hand-over proves the main node is up and takes this node's secret, so an outage is
        # waited out with backoff here rather than found again at every message.
        self._post(peer, b"[]")
        self._peer = peer

    def send(self, message: Message) -> None:
        from ..nodes.client import NodeUnreachable

        if self._peer is None:
            raise NodeUnreachable("the main node is not known")
        self._post(self._peer, b"[" + message.body + b"]")

    def _post(self, peer: Peer, body: bytes) -> None:
        from ..nodes.client import NodeUnreachable

        with self.client.open(peer, "POST", NODE_MESSAGES, content=body,
                              headers={"Content-Type": "application/json"}) as response:
            text = response.read()
            if response.status_code >= 300:
                raise NodeUnreachable(f"the main node answered {response.status_code}: {text[:200]!r}")

    def disconnect(self) -> None:
        self._peer = None


def messages_of(body: bytes) -> list[Message]:
    """The messages of a hand-over (a JSON list of RabbitMessageViewModel objects); ``ValueError`` when it is
    not one."""
    data = json.loads(body)
    if not isinstance(data, list):
        raise ValueError("a JSON list of messages is expected")
    out = []
    for item in data:
        if not isinstance(item, dict) or not isinstance(item.get("messageCode"), str) \
                or not isinstance(item.get("workspaceId"), str) or not item["workspaceId"]:
            raise ValueError("each message needs a messageCode and a workspaceId")
        result = item.get("messageResult")
        out.append(Message(item["messageCode"], item.get("payload"), item["workspaceId"],
                           result if isinstance(result, str) else None))
    return out
