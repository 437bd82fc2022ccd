"""Workflows on compute nodes: a workflow's graph file lives on the node it was uploaded to; a run on another
node reads the graph from there first, as the contract says of ``/workflows/run`` ("downloads the XML from the
workflow's node when missing locally").  It is read at every run, so a graph changed since is never stale."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from wasdi_sdk.catalog import endpoint

from ..domains.accounts.identity import User
from ..domains.platform.main_node import MAIN_NODE
from ..domains.workflows.snap_graphs import MAX_GRAPH_BYTES
from ..errors import ServerFailure
from .client import NodeClient, NodeUnreachable


def graph_reader(client: NodeClient, open_session: Callable[[str], str],
                 close_session: Callable[[str], object]) -> Callable[[dict[str, Any], User], bytes]:
    """Reads a workflow's graph from its node, in a session of the user who runs it (whose rights it checks)."""
    path = endpoint("workflows.download").path

    def read(doc: dict[str, Any], user: User) -> bytes:
        code = str(doc.get("nodeCode") or MAIN_NODE)
        session = open_session(user.user_id)
        try:
            peer = client.peer(code)
            with client.open(peer, "GET", path, query={"workflowId": doc["workflowId"]},
                             headers={"x-session-token": session}) as response:
                data = response.read()
            if response.status_code != 200 or len(data) > MAX_GRAPH_BYTES:
                raise ServerFailure(f"the graph of the workflow could not be read from node {code} "
                                    f"({response.status_code})")
            return bytes(data)
        except NodeUnreachable as e:
            raise ServerFailure(f"the workflow's graph is on node {code}, which cannot be reached now: {e}") from e
        finally:
            close_session(session)

    return read
