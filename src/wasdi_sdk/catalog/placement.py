"""Where a call runs in a deployment of several nodes (the contract's "main node and compute nodes").

A workspace lives on one node (its ``nodeCode``; ``/ws/getws`` gives that node's address as ``apiUrl``):
its files are on that node's disk and its processes in that node's own store.  The calls below act on
them, so they run there: clients send them to the workspace's ``apiUrl`` (as the official library and
the web client do, and as the SDK does), and a node that receives one for a workspace held elsewhere
forwards it to the workspace's node and answers with that node's answer.

Every other call is answered by any node from the store they share.
"""

from __future__ import annotations

WORKSPACE_NODE: dict[str, tuple[str, ...]] = {
    # endpoint: where the call names its workspace, first match wins (a query parameter, or
    # ``body:<field>`` for a field of its JSON body)
    "processors.run": ("workspace",),
    "processors.run_by_query": ("workspace",),
    "file_buffer.import_product": ("body:workspace",),
    "file_buffer.import_product_by_query": ("workspace",),
    "file_buffer.share": ("destinationWorkspaceId",),
    "file_buffer.publish_band": ("workspace",),
    "files.check_available": ("workspace",),
    "files.download": ("workspace", "worskpaceId"),
    "files.on_node": ("workspace",),
    "files.properties": ("workspace",),
    "files.ingest": ("workspace",),
    "files.ingest_upload": ("workspace",),
    "products.add_to_workspace": ("workspace",),
    "products.get_metadata": ("workspace",),
    "products.upload": ("workspace",),
    "products.upload_without_ingest": ("workspace",),
    "products.delete": ("workspace",),
    "products.delete_many": ("workspace",),
    "processes.list_by_workspace": ("workspace",),
    "processes.last_by_workspace": ("workspace",),
    "workflows.run": ("workspace",),
    "workspaces.delete": ("workspace",),
    "console.create": ("workspaceId",),
    "console.ready": ("workspaceId",),
    "console.terminate": ("workspaceId",),
}
"""The calls that run on the node of the workspace they name."""

PROCESS_NODE: dict[str, str] = {
    # endpoint: the query parameter naming the process
    "processes.get": "procws",
    "processes.get_status": "procws",
    "processes.update_status": "procws",
    "processes.set_payload": "procws",
    "processes.set_payload_by_query": "procws",
    "processes.set_sub_pid": "procws",
    "processes.get_payload": "procws",
    "processes.get_params": "procws",
    "processes.stop": "procws",
    "processors.add_log": "processworkspace",
    "processors.count_logs": "processworkspace",
    "processors.list_logs": "processworkspace",
}
"""The calls about one process, which lives on the node that runs it (where its workspace is)."""
