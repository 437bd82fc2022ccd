"""Graph workflows: SNAP graph XML files, their records, sharing, and queuing their runs.

The ``workflows`` collection holds ``{workflowId, name, description, userId, isPublic, nodeCode,
nodeUrl, inputNodeNames, inputFileNames, outputNodeNames, outputFileNames, templateParams,
lastUpdate, uploadDate}``; the graph is ``<workflows_root>/<workflowId>.xml`` (gaps §4).  Rules
(contract /workflows, gaps §0.8, §4; where both are silent the choice is here):

- a graph is parsed safely (``snap_graphs``); one that is not a SNAP graph is a 400 and nothing is
  stored; the input/output node names are the ids of its Read/Write nodes, found again on every
  file update;
- names: 1-100 characters (letters, digits, ``_ - . ( )`` and spaces), unique among one owner's
  workflows ignoring case (400), since ``byname`` and the CLI find a workflow by its name;
- read: public workflows, the owner, users it is shared with, admins; write: the owner, ``write``
  sharings, admins (``SharingService``, resource type ``workflow``);
- unknown ``workflowId``: 400 (getxml, updatefile/updatexml, updateparams, delete, byname: no
  workflow of that name), 204 for the download, an empty list for byworkflow; an update whose
  graph is byte-identical to the stored one is a 304; ``getxml`` sends an ``ETag`` and answers 304
  to a matching ``If-None-Match``;
- delete: a caller with a sharing loses only the sharing; the owner or an admin removes sharings,
  record and file; anyone else 403;
- sharing through ``SharingService`` with ``repeat_fails`` (a repeated share fails "Already shared");
  removing a sharing is for the shared user, the owner or an admin;
- run: read access to the workflow, write access to the workspace, the storage quota of gaps §17,
  input files present in the workspace folder, node names that are Read/Write nodes of the graph;
  queues a GRAPH operation (``launcher/ops_graph.py``) that reads the graph when it starts.
"""

from __future__ import annotations

import logging
import re
import threading
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wasdi_sdk.atomic_files import replace_durably, write_atomic

from ...dates import now_ms
from ...errors import BadRequest, Forbidden, NoContent, NotModified, ServerFailure
from ...paths import OpenedFile, inside, open_for_download, read_with_etag, safe_id, stage_bytes
from ...store import Collection
from ...store.intents import IntentLog
from ..accounts.identity import User
from ..accounts.sharing import WRITE, Resource, ShareOutcome, SharingService
from ..products.images import flag
from .snap_graphs import MAX_GRAPH_BYTES, check_template_params, graph_nodes, output_extension, parse_graph_bytes

log = logging.getLogger("wasdi_server.workflows")

if TYPE_CHECKING:
    from ..products.service import ProductService

WORKFLOW = "workflow"
DELETE_WORKFLOW = "delete_workflow"
"""The intent kind of a workflow deletion (subject: the workflow id)."""
MAX_NAME_LENGTH = 100
MAX_DESCRIPTION_LENGTH = 2000
MAX_RUN_FILES = 100
INVALID_WORKFLOW = "Invalid workflow"
NO_RIGHTS = "MSG_ERROR_NO_ACCESS_RIGHTS_OBJECT"
NAME_TAKEN = "You already have a workflow with this name."

_NAME = re.compile(r"^\w[\w .()-]*$")


def check_workflow_name(name: str | None) -> str:
    if name is None or not name.strip():
        raise BadRequest("the workflow name is required")
    name = name.strip()
    if len(name) > MAX_NAME_LENGTH or not _NAME.match(name):
        raise BadRequest(f"invalid workflow name {name[:60]!r}: up to {MAX_NAME_LENGTH} letters, digits, "
                         "spaces, '_', '-', '.', '(' or ')'")
    return name


def check_description(text: str | None) -> str | None:
    if text is not None and len(text) > MAX_DESCRIPTION_LENGTH:
        raise BadRequest(f"the description is too long (at most {MAX_DESCRIPTION_LENGTH} characters)")
    return text


def _names(value: Any, what: str) -> list[str]:
    if value in (None, ""):
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise BadRequest(f"{what} must be a list of names")
    if len(value) > MAX_RUN_FILES:
        raise BadRequest(f"at most {MAX_RUN_FILES} {what}")
    return list(value)


class WorkflowService:
    """Workflows on this node."""

    def __init__(self, workflows: Collection, sharing: SharingService, products: ProductService, root: Path,
                 node_code: str, node_url: str = "") -> None:
        self.workflows = workflows
        self.sharing = sharing
        self.products = products
        self.root = root
        self.node_code = node_code
        self.fetch_graph: Callable[[dict[str, Any], User], bytes] | None = None
        """In a deployment: reads a workflow's graph from the node it was uploaded to (``nodes.graphs``)."""
        self.node_url = node_url
        self.staging = root / ".incoming"
        self._lock = threading.RLock()
        self.intents: IntentLog | None = None

    def use_intents(self, intents: IntentLog) -> None:
        """Delete workflows as durable intents, so that a crash mid-way is finished at the next start."""
        self.intents = intents
        intents.register(DELETE_WORKFLOW, self._carry_out_delete)

    # -- lookups -------------------------------------------------------------------------------
    @staticmethod
    def resource(doc: Mapping[str, Any]) -> Resource:
        return Resource(WORKFLOW, str(doc["workflowId"]), str(doc.get("userId") or ""), str(doc.get("name") or ""))

    def get(self, workflow_id: str | None) -> dict[str, Any] | None:
        if not workflow_id or len(workflow_id) > 200:
            return None
        return self.workflows.get(workflow_id)

    def load(self, workflow_id: str | None) -> dict[str, Any]:
        doc = self.get(workflow_id)
        if doc is None:
            raise BadRequest(INVALID_WORKFLOW)
        return doc

    def can_read(self, user: User, doc: Mapping[str, Any]) -> bool:
        return flag(doc.get("isPublic")) or self.sharing.can_read(user, self.resource(doc))

    def can_write(self, user: User, doc: Mapping[str, Any]) -> bool:
        return self.sharing.can_write(user, self.resource(doc))

    def readable(self, user: User, workflow_id: str | None) -> dict[str, Any]:
        doc = self.load(workflow_id)
        if not self.can_read(user, doc):
            raise Forbidden(NO_RIGHTS)
        return doc

    def writable(self, user: User, workflow_id: str | None) -> dict[str, Any]:
        doc = self.load(workflow_id)
        if not self.can_write(user, doc):
            raise Forbidden(NO_RIGHTS)
        return doc

    def graph_path(self, workflow_id: str) -> Path:
        return inside(self.root, f"{safe_id(workflow_id, 'workflow id')}.xml")

    def _owned_name_taken(self, owner_id: str, name: str, exclude_id: str | None = None) -> bool:
        wanted = name.casefold()
        return self.workflows.find_one(
            lambda d: d.get("userId") == owner_id and str(d.get("name") or "").casefold() == wanted
            and d.get("workflowId") != exclude_id) is not None

    def by_name(self, user: User, name: str | None) -> dict[str, Any]:
        """The workflow called ``name`` the caller may read: their own first, then shared, then public."""
        if not name or not name.strip():
            raise BadRequest("the workflow name is required")
        wanted = name.strip().casefold()
        found = self.workflows.find(lambda d: str(d.get("name") or "").casefold() == wanted)
        if not found:
            raise BadRequest(f"no workflow named {name.strip()[:100]!r}")
        readable = [d for d in found if self.can_read(user, d)]
        if not readable:
            raise Forbidden(NO_RIGHTS)
        shared = self.sharing.shared_with(user.user_id, WORKFLOW)
        readable.sort(key=lambda d: (d.get("userId") != user.user_id, d["workflowId"] not in shared,
                                     d.get("uploadDate") or 0))
        return readable[0]

    # -- files ---------------------------------------------------------------------------------
    def stage(self, data: bytes) -> Path:
        """``data`` in a temporary file next to the workflows (the XML-text update)."""
        return stage_bytes(self.staging, data, MAX_GRAPH_BYTES, "graph", ".xml")

    @staticmethod
    def _read_graph(upload: Path) -> tuple[bytes, Any]:
        if upload.stat().st_size > MAX_GRAPH_BYTES:
            raise BadRequest(f"the graph is larger than {MAX_GRAPH_BYTES} bytes")
        data = upload.read_bytes()
        return data, graph_nodes(parse_graph_bytes(data))

    def create(self, user: User, name: str | None, description: str | None, public: bool | None,
               upload: Path) -> dict[str, Any]:
        """A new workflow from the uploaded graph ``upload`` (a temporary file this call consumes)."""
        checked = check_workflow_name(name)
        check_description(description)
        _, nodes = self._read_graph(upload)
        stamp = now_ms()
        workflow_id = str(uuid.uuid4())
        with self._lock, self.workflows.transaction():
            if self._owned_name_taken(user.user_id, checked):
                raise BadRequest(NAME_TAKEN)
            target = self.graph_path(workflow_id)
            target.parent.mkdir(parents=True, exist_ok=True)
            replace_durably(upload, target)
            return self.workflows.insert({
                "workflowId": workflow_id, "name": checked, "description": description or "",
                "userId": user.user_id, "isPublic": bool(public), "nodeCode": self.node_code,
                "nodeUrl": self.node_url, "inputNodeNames": nodes.inputs, "inputFileNames": [],
                "outputNodeNames": nodes.outputs, "outputFileNames": [], "templateParams": {},
                "lastUpdate": stamp, "uploadDate": stamp,
            })

    def replace_file(self, user: User, workflow_id: str | None, upload: Path) -> None:
        """Replace the graph with ``upload`` (consumed); ``NotModified`` when it is byte-identical."""
        doc = self.writable(user, workflow_id)
        data, nodes = self._read_graph(upload)
        target = self.graph_path(doc["workflowId"])
        with self._lock:
            if target.is_file() and target.read_bytes() == data:
                raise NotModified("the workflow is unchanged")
            target.parent.mkdir(parents=True, exist_ok=True)
            replace_durably(upload, target)
            self.workflows.update(doc["workflowId"], {"inputNodeNames": nodes.inputs,
                                                      "outputNodeNames": nodes.outputs, "lastUpdate": now_ms(),
                                                      "nodeCode": self.node_code, "nodeUrl": self.node_url})

    def xml(self, user: User, workflow_id: str | None) -> tuple[bytes, str]:
        """The graph bytes and their entity tag: 400 unknown, 403 no read rights, 500 file missing."""
        doc = self.readable(user, workflow_id)
        return read_with_etag(self.graph_path(doc["workflowId"]),
                              ServerFailure("the workflow's graph file is not on this node"))

    def open_file(self, user: User, workflow_id: str | None) -> OpenedFile:
        """The graph for download: 204 unknown workflow or file missing, 403 no read rights."""
        doc = self.get(workflow_id)
        if doc is None:
            raise NoContent(INVALID_WORKFLOW)
        if not self.can_read(user, doc):
            raise Forbidden(NO_RIGHTS)
        return open_for_download(self.graph_path(doc["workflowId"]), f"{doc['name']}.xml",
                                 NoContent("the workflow's graph file is not on this node"))

    # -- listing -------------------------------------------------------------------------------
    def view(self, user: User, doc: Mapping[str, Any], sharing: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """SnapWorkflowViewModel fields of ``doc`` as ``user`` sees it."""
        own = doc.get("userId") == user.user_id
        if sharing is None and not own:
            sharing = self.sharing.sharing(self.resource(doc), user.user_id)
        writable = own or user.is_admin or (sharing is not None and sharing.get("permissions") == WRITE)
        return {
            "workflowId": doc["workflowId"], "name": doc.get("name"), "description": doc.get("description") or "",
            "isPublic": flag(doc.get("isPublic")), "userId": doc.get("userId"), "nodeUrl": doc.get("nodeUrl") or "",
            "sharedWithMe": not own and sharing is not None, "readOnly": not writable,
            "inputNodeNames": list(doc.get("inputNodeNames") or []),
            "inputFileNames": list(doc.get("inputFileNames") or []),
            "outputNodeNames": list(doc.get("outputNodeNames") or []),
            "outputFileNames": list(doc.get("outputFileNames") or []),
            "templateParams": dict(doc.get("templateParams") or {}),
            "lastUpdate": float(doc.get("lastUpdate") or 0),
        }

    def list_for(self, user: User) -> list[dict[str, Any]]:
        """The workflows the user owns, that are public, or that are shared with them."""
        shared = self.sharing.shared_with(user.user_id, WORKFLOW)
        docs = self.workflows.find(lambda d: d.get("userId") == user.user_id or flag(d.get("isPublic"))
                                   or d.get("workflowId") in shared)
        views = [self.view(user, d, shared.get(d["workflowId"])) for d in docs]
        views.sort(key=lambda v: (str(v["name"]).casefold(), v["workflowId"]))
        return views

    # -- changes -------------------------------------------------------------------------------
    def update_params(self, user: User, workflow_id: str | None, name: str | None, description: str | None,
                      public: bool | None) -> None:
        """Change name, description and/or visibility (``None`` leaves a field as it is)."""
        doc = self.writable(user, workflow_id)
        changes: dict[str, Any] = {}
        with self._lock, self.workflows.transaction():
            if name is not None and name.strip():
                checked = check_workflow_name(name)
                if self._owned_name_taken(str(doc.get("userId")), checked, doc["workflowId"]):
                    raise BadRequest(NAME_TAKEN)
                changes["name"] = checked
            if description is not None:
                changes["description"] = check_description(description)
            if public is not None:
                changes["isPublic"] = bool(public)
            if changes:
                changes["lastUpdate"] = now_ms()
                self.workflows.update(doc["workflowId"], changes)

    def delete(self, user: User, workflow_id: str | None) -> None:
        doc = self.load(workflow_id)
        resource = self.resource(doc)
        if user.user_id != resource.owner_id and self.sharing.sharing(resource, user.user_id) is not None:
            self.sharing.sharings.delete(self.sharing.key(WORKFLOW, resource.id, user.user_id))
            return
        if user.user_id != resource.owner_id and not user.is_admin:
            raise Forbidden(NO_RIGHTS)
        if self.intents is None:
            self._remove(doc)
        else:
            self.intents.run(DELETE_WORKFLOW, str(doc["workflowId"]), {"userId": doc.get("userId")})

    def _carry_out_delete(self, workflow_id: str, details: Mapping[str, Any]) -> None:
        # Every step finds what is left, so a deletion a crash interrupted is finished from any point.
        self._remove(self.workflows.get(workflow_id) or {"workflowId": workflow_id, "userId": details.get("userId")})

    def _remove(self, doc: Mapping[str, Any]) -> None:
        with self._lock:
            self.sharing.remove_all(self.resource(doc))
            self.workflows.delete(doc["workflowId"])
            # The graph after the record: a crash between leaves the intent, which removes it.
            self.graph_path(doc["workflowId"]).unlink(missing_ok=True)

    def remove_unrecorded_files(self) -> int:
        """At start, before serving: a graph file with no workflow record (a crash came between a creation's
        file and its record) goes.  The number removed."""
        if not self.root.is_dir():
            return 0
        recorded = {str(d["workflowId"]) for d in self.workflows.all()}
        orphans = [p for p in self.root.glob("*.xml") if p.stem not in recorded and not p.is_symlink()]
        for path in orphans:
            path.unlink(missing_ok=True)
            log.info("removed the graph of a workflow whose creation a crash interrupted: %s", path.name)
        return len(orphans)

    def delete_all_of_user(self, user_id: str) -> None:
        """Remove every workflow ``user_id`` owns (records, graph files, their sharings) and the
        sharings of others' workflows given to them; a second call finds nothing to do."""
        for doc in self.workflows.find(userId=user_id):
            self._remove(doc)
        self.sharing.sharings.delete_where(resourceType=WORKFLOW, userId=user_id)

    # -- sharing -------------------------------------------------------------------------------
    def share(self, caller: User, workflow_id: str | None, user_id: str | None, rights: str | None) -> ShareOutcome:
        doc = self.load(workflow_id)
        return self.sharing.share(caller, self.resource(doc), user_id, rights, repeat_fails=True)

    def unshare(self, caller: User, workflow_id: str | None, user_id: str | None) -> None:
        self.sharing.unshare(caller, self.resource(self.load(workflow_id)), user_id, others_by_owner_only=True)

    def sharings(self, caller: User, workflow_id: str | None) -> list[dict[str, Any]]:
        return self.sharing.listed(caller, self.resource(self.load(workflow_id)))

    # -- runs ----------------------------------------------------------------------------------
    def queue_run(self, user: User, workspace_id: str | None, parent: str | None, body: Mapping[str, Any]) -> str:
        """Check a run and queue its GRAPH operation; the process id."""
        products = self.products
        doc = self.readable(user, body.get("workflowId"))
        workspace = products.writable(user, workspace_id)
        products.check_storage(user)
        input_files = _names(body.get("inputFileNames"), "inputFileNames")
        input_nodes = _names(body.get("inputNodeNames"), "inputNodeNames") or list(doc.get("inputNodeNames") or [])
        output_files = _names(body.get("outputFileNames"), "outputFileNames")
        output_nodes = (_names(body.get("outputNodeNames"), "outputNodeNames")
                        or list(doc.get("outputNodeNames") or []))
        template = check_template_params(body.get("templateParams"))
        graph = self.graph_path(doc["workflowId"])
        if self.fetch_graph is not None and doc.get("nodeCode") not in (None, self.node_code):
            # A workflow uploaded on another node: its graph, as it is there now, comes to this node's disk.
            graph.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(graph, self.fetch_graph(doc, user))
        try:
            data = graph.read_bytes()
        except (FileNotFoundError, IsADirectoryError) as e:
            raise ServerFailure("the workflow's graph file is not on this node") from e
        root = parse_graph_bytes(data)
        known = graph_nodes(root)
        for node in input_nodes:
            if node not in known.inputs:
                raise BadRequest(f"{node!r} is not a Read node of the workflow (its Read nodes: "
                                 f"{', '.join(known.inputs) or 'none'})")
        for node in output_nodes:
            if node not in known.outputs:
                raise BadRequest(f"{node!r} is not a Write node of the workflow (its Write nodes: "
                                 f"{', '.join(known.outputs) or 'none'})")
        if len(input_files) != len(input_nodes):
            raise BadRequest(f"the workflow reads {len(input_nodes)} file(s) ({', '.join(input_nodes) or 'none'}): "
                             f"give as many inputFileNames, not {len(input_files)}")
        for name in input_files:
            if not products.file_path(workspace, name).exists():
                raise BadRequest(f"{name} is not in the workspace")
        flow_name = str(doc.get("name") or "workflow").replace(" ", "_")
        if not output_files:
            stem = Path(input_files[0]).stem if input_files else "output"
            output_files = [f"{stem}_{flow_name}" + ("" if len(output_nodes) == 1 else f"_{node}")
                            + output_extension(root, node) for node in output_nodes]
        if len(output_files) != len(output_nodes):
            raise BadRequest(f"the workflow writes {len(output_nodes)} file(s) ({', '.join(output_nodes) or 'none'}): "
                             f"give as many outputFileNames, not {len(output_files)}")
        for name in output_files:
            products.file_path(workspace, name)  # the path guard, before anything is queued
        product_name = input_files[0] if input_files else (output_files[0] if output_files else flow_name)
        record = products.processes.create(
            user, workspace["workspaceId"], "GRAPH", product_name, subtype=flow_name, parent=parent or None,
            parameter={"workflowId": doc["workflowId"], "workflowName": flow_name,
                       "inputNodeNames": input_nodes, "inputFileNames": input_files,
                       "outputNodeNames": output_nodes, "outputFileNames": output_files,
                       "templateParams": template})
        return str(record["processObjId"])
