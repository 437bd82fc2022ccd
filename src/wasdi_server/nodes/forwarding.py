"""Work goes where the workspace is: a call of ``catalog.placement.WORKSPACE_NODE`` about a workspace held
by another node, or of ``PROCESS_NODE`` about a process held by another node (``locator``), is sent to that
node, and its answer (status, headers, body, streamed) is this node's.

The request goes as the client sent it (method, path, query, body, the caller's session), so the other
node authenticates the caller and checks their rights again with the same handler.  It carries the node
headers, and a request that came from another node is never forwarded again: a misplaced workspace cannot
make nodes call each other in a loop.  A node that cannot be reached is a failure in the endpoint's own
style, saying which node and why.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any

import httpx

from wasdi_sdk.catalog.placement import PROCESS_NODE, WORKSPACE_NODE

from ..errors import ServerFailure
from .calls import NodeCall, Relayed
from .client import NodeClient, NodeUnreachable, Peer
from .identity import NodeIdentity
from .locator import ProcessLocator

if TYPE_CHECKING:
    from ..store import Collection

log = logging.getLogger("wasdi_server.nodes")

REQUEST_HEADERS = ("x-session-token", "content-type", "accept", "if-none-match", "accept-encoding")
ANSWER_HEADERS = ("content-disposition", "etag", "cache-control", "last-modified")
CHUNK = 256 * 1024


def workspace_named(call: NodeCall, where: tuple[str, ...]) -> str | None:
    """The workspace id a call names (its query parameter, or a field of its JSON body)."""
    for place in where:
        if place.startswith("body:"):
            data = call.body_json()
            found = data.get(place.removeprefix("body:")) if isinstance(data, dict) else None
        else:
            values = call.extra.get(place)
            found = call.params.get(place) if place in call.params else (values[0] if values else None)
        if found:
            return str(found)
    return None


class Forwarder:
    """Decides which node runs a call, and relays it there."""

    def __init__(self, identity: NodeIdentity, client: NodeClient, workspaces: Collection, processes: Collection,
                 locator: ProcessLocator) -> None:
        self.identity = identity
        self.client = client
        self.workspaces = workspaces
        self.processes = processes
        self.locator = locator

    def node_of(self, call: NodeCall) -> str | None:
        """The code of the other node that must answer ``call``, or ``None`` when this node does."""
        name = call.endpoint.name
        where = WORKSPACE_NODE.get(name)
        by_process = PROCESS_NODE.get(name)
        if (where is None and by_process is None) or not self.identity.in_deployment \
                or self.identity.is_node_call(call.request.get_header):
            return None  # a node's forwarded call is answered here, never forwarded again
        if by_process is not None:
            return self._node_of_process(call, by_process)
        assert where is not None
        workspace_id = workspace_named(call, where)
        doc = self.workspaces.get(workspace_id) if workspace_id and len(workspace_id) <= 200 else None
        code = str((doc or {}).get("nodeCode") or "")
        if not code or code == self.identity.code:
            return None
        return code

    def _node_of_process(self, call: NodeCall, param: str) -> str | None:
        process_id = workspace_named(call, (param,))
        if not process_id or len(process_id) > 200 or self.processes.get(process_id) is not None:
            return None  # held here (or not a process id at all: answered here, in the endpoint's style)
        code = self.locator.node_of(process_id)
        return code if code and code != self.identity.code else None

    def relay(self, call: NodeCall, code: str) -> Relayed:
        """Send ``call`` to node ``code``; its answer, to give the client as it is."""
        what = "process" if call.endpoint.name in PROCESS_NODE else "workspace"
        try:
            peer = self.client.peer(code)
        except NodeUnreachable as e:
            raise ServerFailure(f"the {what} is on node {code}, which cannot be reached: {e}") from e
        req = call.request
        headers = {name: value for name in REQUEST_HEADERS if (value := req.get_header(name))}
        content = self._body(call)
        if content is not None and req.content_length is not None and not isinstance(content, bytes):
            headers["content-length"] = str(req.content_length)
        stack = ExitStack()  # open until the answer has been streamed to the client
        try:
            response = stack.enter_context(self.client.open(peer, req.method, req.path, query=req.query_string,
                                                            headers=headers, content=content))
        except NodeUnreachable as e:
            stack.close()
            log.warning("forwarding %s %s to node %s failed: %s", req.method, call.endpoint.path, code, e)
            raise ServerFailure(f"the {what} is on node {code}, which cannot be reached now; try again later "
                                f"({e})") from e
        answer_headers = {name: response.headers[name] for name in ANSWER_HEADERS if name in response.headers}
        length = response.headers.get("content-length")
        media_type = response.headers.get("content-type", "application/json")
        status = response.status_code
        if status in (204, 304) or req.method == "HEAD":
            stack.close()
            return Relayed(status=status, media_type=media_type, body=b"", headers=answer_headers)
        return Relayed(status=status, media_type=media_type, stream=self._chunks(stack, response, peer),
                      length=int(length) if length and length.isdigit() else None, headers=answer_headers)

    @staticmethod
    def _chunks(stack: ExitStack, response: httpx.Response, peer: Peer) -> Iterator[bytes]:
        try:
            yield from response.iter_raw(CHUNK)
        except httpx.HTTPError as e:
            log.warning("the answer of node %s broke off: %s", peer.code, e)
        finally:
            stack.close()

    @staticmethod
    def _body(call: NodeCall) -> Any:
        """The request body to send on: bytes when the handler-side parsing already read it, else the stream."""
        if call.endpoint.body.kind.value == "none":
            return None
        if call.raw_body is not None:
            return call.raw_body
        stream = call.request.bounded_stream
        return iter(lambda: stream.read(CHUNK), b"")
