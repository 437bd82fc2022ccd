"""The access matrix, generated from one table of expected outcomes.

Every row names a catalogue endpoint on a shareable resource, how to call it, and which callers it
lets through: the owner (O), a user the resource is shared with for writing (W) or reading (R), a
stranger (S), an admin (A), and a caller with no session (N).  Everyone else must be refused, in
the endpoint's own failure style (the SDK maps every style to an exception, so "refused" means the
call raised one of the SDK's API errors, or a style-C endpoint gave its refusal answer).  Each cell
creates its own resource (uniquely named) on one server shared by the module, so mutating calls do
not disturb each other and the table stays cheap to run.  A row whose endpoint this server does not
route is skipped, saying so.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from tests.conftest import Person, Server
from tests.server.app_fixtures import make_app
from tests.server.geodata import make_geotiff
from tests.server.snap import graph

from wasdi_sdk import WasdiClient
from wasdi_sdk._exceptions import APIError, EmptyResultError
from wasdi_sdk.catalog import FailureKind, endpoint
from wasdi_server.api.framework import HANDLERS
from wasdi_server.services.identity import now_ms

ROLES = "OWRSAN"
USERS = {"O": "owner@example.org", "W": "writer@example.org", "R": "reader@example.org",
         "S": "stranger@example.org", "A": "root@example.org"}
EXTRA = "extra@example.org"
"""A user with no part in the matrix, the target of share calls."""


class Made(str):
    """A created resource's id; ``parent`` is the id of what it hangs off (a template's app, a
    project's subscription, a review's app), for the calls that need both."""

    parent: str = ""
    shared: str = ""
    """What the sharings go on, when not the resource itself (its parent, or a comment's app)."""

    @classmethod
    def of(cls, rid: str, parent: str = "", shared: str = "") -> Made:
        made = cls(rid)
        made.parent, made.shared = parent, shared
        return made


@dataclass(frozen=True)
class Row:
    endpoint: str
    resource: str
    """A key of SHARE: what is created (by the owner, an admin for ADMIN_MADE), and shared W/R, before the call."""
    allowed: str
    """The roles (letters of ROLES) the call succeeds for."""
    query: Callable[[Made], dict[str, Any]] = lambda rid: {}
    body: Callable[[Made], Any] = lambda rid: None
    files: Callable[[Made], Any] = lambda rid: None


TABLE: list[Row] = [
    # workspaces: read calls are open to every sharing, changes to write sharings; deleting as a
    # non-owner removes only the caller's own sharing (so it succeeds for W and R too).
    Row("workspaces.get", "workspace", "OWRA", lambda ws: {"workspace": ws}),
    Row("workspaces.name_by_id", "workspace", "OWRA", lambda ws: {"workspace": ws}),
    Row("workspaces.share_list", "workspace", "OWRA", lambda ws: {"workspace": ws}),
    Row("workspaces.update", "workspace", "OWA", body=lambda ws: {"workspaceId": ws, "name": f"renamed-{ws}"}),
    Row("workspaces.share_add", "workspace", "OWA", lambda ws: {"workspace": ws, "userId": EXTRA, "rights": "read"}),
    # removing the reader's sharing: anyone with write rights, and the reader itself
    Row("workspaces.share_delete", "workspace", "OWRA", lambda ws: {"workspace": ws, "userId": USERS["R"]}),
    Row("workspaces.delete", "workspace", "OWRA", lambda ws: {"workspace": ws}),
    # organizations
    Row("organizations.get", "organization", "OWRA", lambda org: {"organization": org}),
    Row("organizations.share_list", "organization", "OWRA", lambda org: {"organization": org}),
    Row("organizations.update", "organization", "OWA",
        body=lambda org: {"organizationId": org, "name": f"renamed-{org}"}),
    Row("organizations.share_add", "organization", "OWA",
        lambda org: {"organization": org, "userId": EXTRA, "rights": "read"}),
    Row("organizations.share_delete", "organization", "OWRA",
        lambda org: {"organization": org, "userId": USERS["R"]}),
    Row("organizations.delete", "organization", "OWRA", lambda org: {"organization": org}),
    # styles (private ones: a public style is readable by anyone)
    Row("styles.get_xml", "style", "OWRA", lambda sid: {"styleId": sid}),
    Row("styles.share_list", "style", "OWRA", lambda sid: {"styleId": sid}),
    Row("styles.update_params", "style", "OWA", lambda sid: {"styleId": sid, "description": "changed"}),
    Row("styles.share_add", "style", "OWA", lambda sid: {"styleId": sid, "userId": EXTRA, "rights": "read"}),
    # contract: "allowed for the shared user, owner or admin" (not for other writers, unlike workspaces)
    Row("styles.share_delete", "style", "ORA", lambda sid: {"styleId": sid, "userId": USERS["R"]}),
    Row("styles.delete", "style", "OWRA", lambda sid: {"styleId": sid}),
    # workflows: contract "share/delete allowed for owner, the shared user, admin"
    Row("workflows.get_xml", "workflow", "OWRA", lambda wf: {"workflowId": wf}),
    Row("workflows.download", "workflow", "OWRA", lambda wf: {"workflowId": wf}),
    Row("workflows.share_list", "workflow", "OWRA", lambda wf: {"workflowId": wf}),
    Row("workflows.update_params", "workflow", "OWA", lambda wf: {"workflowid": wf, "description": "changed"}),
    Row("workflows.update_xml", "workflow", "OWA", lambda wf: {"workflowId": wf},
        body=lambda wf: graph(writes=("Write", "Write(2)")).decode()),  # a changed graph: the same one is a 304
    Row("workflows.share_add", "workflow", "OWA", lambda wf: {"workflowId": wf, "userId": EXTRA, "rights": "read"}),
    Row("workflows.share_delete", "workflow", "ORA", lambda wf: {"workflowId": wf, "userId": USERS["R"]}),
    Row("workflows.delete", "workflow", "OWRA", lambda wf: {"workflowId": wf}),
    # apps (processors); the record's id is also its name, so the calls by name name the same app
    Row("processors.get", "app", "OWRA", lambda app: {"processorId": app}),
    Row("processors.share_list", "app", "OWRA", lambda app: {"processorId": app}),
    Row("processors.get_ui", "app", "OWRA", lambda app: {"name": app}),
    Row("processors.build_logs", "app", "OWRA", lambda app: {"processorId": app}),
    Row("processors.update", "app", "OWA", lambda app: {"processorId": app},
        body=lambda app: {"processorId": app, "processorName": app, "processorDescription": "changed"}),
    Row("processors.save_ui", "app", "OWA", lambda app: {"name": app}, body=lambda app: '{"tabs": []}'),
    Row("processors.clear_build_flag", "app", "OWA", lambda app: {"processorId": app}),
    Row("processors.share_add", "app", "OWA", lambda app: {"processorId": app, "userId": EXTRA, "rights": "read"}),
    Row("processors.delete", "app", "OWRA", lambda app: {"processorId": app}),
    Row("package_manager.environment_actions", "app", "OWRA", lambda app: {"name": app}),
    # parameter templates (of a public app: only the template's sharing decides)
    Row("param_templates.get", "template", "OWRA", lambda t: {"templateId": t}),
    Row("param_templates.share_list", "template", "OWRA", lambda t: {"processorParametersTemplate": t}),
    Row("param_templates.update", "template", "OWA",
        body=lambda t: {"templateId": t, "processorId": t.parent, "name": "changed"}),
    Row("param_templates.share_add", "template", "OWA",
        lambda t: {"processorParametersTemplate": t, "userId": EXTRA, "rights": "read"}),
    Row("param_templates.delete", "template", "OWRA", lambda t: {"templateId": t}),
    # subscriptions: contract "share/delete allowed for owner, writer, admin"
    Row("subscriptions.get", "subscription", "OWRA", lambda sub: {"subscription": sub}),
    Row("subscriptions.share_list", "subscription", "OWRA", lambda sub: {"subscription": sub}),
    Row("subscriptions.update", "subscription", "OWA",
        body=lambda sub: {"subscriptionId": sub, "name": f"renamed-{sub}", "typeId": "OneMonthStandard"}),
    Row("subscriptions.share_add", "subscription", "OWA",
        lambda sub: {"subscription": sub, "userId": EXTRA, "rights": "read"}),
    # removing the reader's sharing: the contract names owner, writer and admin, and the reader itself may
    # drop its own sharing (as everywhere, services/sharing.py; DELETE /subscriptions/delete does the same)
    Row("subscriptions.share_delete", "subscription", "OWRA", lambda sub: {"subscription": sub, "userId": USERS["R"]}),
    Row("subscriptions.delete", "subscription", "OWRA", lambda sub: {"subscription": sub}),
    # projects, through their subscription (the one POST /subscriptions/add creates with it)
    Row("projects.get", "project", "OWRA", lambda pr: {"project": pr}),
    Row("projects.list_by_subscription", "project", "OWRA", lambda pr: {"subscription": pr.parent}),
    Row("projects.create", "project", "OWA", body=lambda pr: {"subscriptionId": pr.parent, "name": f"new-{pr}"}),
    Row("projects.update", "project", "OWA",
        body=lambda pr: {"projectId": pr, "subscriptionId": pr.parent, "name": f"renamed-{pr}"}),
    Row("projects.delete", "project", "OWA", lambda pr: {"project": pr}),
    # nodes: admin only, even for the users a node is shared with
    Row("nodes.get", "node", "A", lambda n: {"node": n}),
    Row("nodes.update", "node", "A", body=lambda n: {"nodeCode": n, "nodeDescription": "changed"}),
    Row("nodes.share_add", "node", "A", lambda n: {"node": n, "userId": EXTRA, "rights": "read"}),
    Row("nodes.delete", "node", "A", lambda n: {"node": n}),
    # reviews and comments, reached through their app; only their author deletes them
    Row("processor_media.add_review", "app", "OWRA", body=lambda app: {"processorId": app, "vote": 4.0}),
    Row("processor_media.list_reviews", "review", "OWRA", lambda rv: {"processorName": rv.parent}),
    Row("processor_media.delete_review", "review", "O", lambda rv: {"processorId": rv.parent, "reviewId": rv}),
    Row("processor_media.add_comment", "review", "OWRA", body=lambda rv: {"reviewId": rv, "text": "agreed"}),
    Row("processor_media.list_comments", "review", "OWRA", lambda rv: {"reviewId": rv}),
    # products, through their workspace (parent: a product's file name in it)
    Row("products.get", "product", "OWRA", lambda ws: {"workspace": ws, "name": ws.parent}),
    Row("products.list", "product", "OWRA", lambda ws: {"workspace": ws}),
    Row("products.get_metadata", "product", "OWRA", lambda ws: {"workspace": ws, "name": ws.parent}),
    Row("products.list_light", "product", "OWRA", lambda ws: {"workspace": ws}),
    Row("products.list_names", "product", "OWRA", lambda ws: {"workspace": ws}),
    Row("products.update", "product", "OWA", lambda ws: {"workspace": ws},
        body=lambda ws: {"fileName": ws.parent, "description": "changed"}),
    Row("products.add_to_workspace", "product", "OWA", lambda ws: {"workspace": ws, "name": ws.parent}),
    Row("products.delete", "product", "OWA", lambda ws: {"workspace": ws, "name": ws.parent}),
    Row("products.delete_many", "product", "OWA", lambda ws: {"workspace": ws}, body=lambda ws: [ws.parent]),
    # processes, through their workspace (parent); stopping: "the caller owns the process, is admin, or can
    # write its workspace" (gaps.md), and so for the calls that change a process record
    Row("processes.get", "process", "OWRA", lambda pid: {"procws": pid}),
    Row("processes.get_status", "process", "OWRA", lambda pid: {"procws": pid}),
    Row("processes.get_payload", "process", "OWRA", lambda pid: {"procws": pid}),
    Row("processes.list_by_workspace", "process", "OWRA", lambda pid: {"workspace": pid.parent}),
    Row("processes.last_by_workspace", "process", "OWRA", lambda pid: {"workspace": pid.parent}),
    Row("processes.update_status", "process", "OWA", lambda pid: {"procws": pid, "status": "DONE", "perc": 100}),
    Row("processes.set_payload_by_query", "process", "OWA", lambda pid: {"procws": pid, "payload": '{"b": 2}'}),
    Row("processes.stop", "process", "OWA", lambda pid: {"procws": pid}),
    Row("processes.set_payload", "process", "OWA", lambda pid: {"procws": pid}, body=lambda pid: '{"c": 3}'),
    Row("processes.set_sub_pid", "process", "OWA", lambda pid: {"procws": pid, "subpid": 42}),
    Row("products.upload_without_ingest", "product", "OWA", lambda ws: {"workspace": ws, "name": "more.txt"},
        files=lambda ws: {"file": ("more.txt", b"more")}),
    Row("workflows.update_file", "workflow", "OWA", lambda wf: {"workflowid": wf},
        files=lambda wf: {"file": ("graph.xml", graph(writes=("Write", "Write(2)")))}),
    # reviews and comments: only their author changes them (the contract names no other)
    Row("processor_media.update_review", "review", "O",
        body=lambda rv: {"id": rv, "processorId": rv.parent, "vote": 3.0}),
    Row("processor_media.update_comment", "comment", "O",
        body=lambda c: {"commentId": c, "reviewId": c.parent, "text": "changed"}),
    Row("processor_media.delete_comment", "comment", "O", lambda c: {"reviewId": c.parent, "commentId": c}),
    # a node's sharings: listed for the users it is shared with (the contract makes only the node's own
    # calls and share/add admin-only); a sharing is removed by an admin or by the user it names
    Row("nodes.share_list", "node", "WRA", lambda n: {"node": n}),
    Row("nodes.share_delete", "node", "RA", lambda n: {"node": n, "userId": USERS["R"]}),
    # more app calls by name
    Row("processors.help", "app", "OWRA", lambda app: {"name": app}),
    Row("processors.market_detail", "app", "OWRA", lambda app: {"processorname": app}),
    Row("package_manager.manager_version", "app", "OWRA", lambda app: {"name": app}),
    # not an access check: "free, owner, shared or paid" says whether the caller can run it (no 403 listed)
    Row("processors.is_app_purchased", "app", "OWRSA", lambda app: {"processor": app}),
    Row("workflows.get_by_name", "workflow", "OWRA", lambda wf: {"name": wf.parent}),
]

SLD = (b'<?xml version="1.0" encoding="UTF-8"?>\n<StyledLayerDescriptor version="1.0.0" '
       b'xmlns="http://www.opengis.net/sld"><NamedLayer><Name>x</Name><UserStyle><FeatureTypeStyle><Rule>'
       b'<RasterSymbolizer><ColorMap type="ramp"><ColorMapEntry color="#ff0000" quantity="0"/>'
       b'<ColorMapEntry color="#0000ff" quantity="1"/></ColorMap></RasterSymbolizer></Rule></FeatureTypeStyle>'
       b"</UserStyle></NamedLayer></StyledLayerDescriptor>")


def create(server: Server, owner: WasdiClient, admin: WasdiClient, kind: str, tag: str) -> Made:
    if kind == "comment":
        review = create(server, owner, admin, "review", tag)
        owner.call("processor_media.add_comment", body={"reviewId": review, "text": "first"})
        comment = server.services.store.collection("review_comments").find_one(lambda d: d["reviewId"] == review)
        return Made.of(comment["commentId"], parent=review, shared=review.shared)
    rid = create_parent(server, owner, admin, kind, tag)
    if kind == "template":
        owner.call("param_templates.create", body={"processorId": rid, "name": f"t{tag}"})
        made = owner.call("param_templates.list", query={"processorId": rid})[0].template_id
        return Made.of(made, parent=rid)
    if kind == "project":
        return Made.of(owner.call("projects.list_by_subscription", query={"subscription": rid})[0].project_id,
                       parent=rid, shared=rid)
    if kind == "product":
        # a file placed in the folder and linked (synchronously, no INGEST operation to wait for)
        workspaces = server.services.workspaces
        make_geotiff(workspaces.folder(workspaces.load(rid)) / "placed.tif")
        owner.call("products.add_to_workspace", query={"workspace": rid, "name": "placed.tif"})
        return Made.of(rid, parent="placed.tif")
    if kind == "process":
        # an ended record: the launcher leaves it alone, so every cell sees it as made
        pid = f"matrixproc{tag}"
        stamp = float(now_ms())
        server.services.store.collection("process_workspaces").insert({
            "processObjId": pid, "workspaceId": rid, "userId": USERS["O"], "productName": "file.tif",
            "operationType": "INGEST", "operationSubType": "", "status": "DONE", "progressPerc": 100,
            "payload": '{"a": 1}', "pid": 0, "parentId": None, "nodeCode": "wasdi", "operationTimestamp": stamp,
            "runningTime": 0, "lastStateChangeTimestamp": stamp})
        return Made.of(pid, parent=rid, shared=rid)
    if kind == "review":
        owner.call("processor_media.add_review", body={"processorId": rid, "vote": 5.0})
        review = server.services.store.collection("reviews").find_one(lambda d: d["processorId"] == rid)
        return Made.of(review["reviewId"], parent=rid, shared=rid)
    return rid if isinstance(rid, Made) else Made(rid)


def create_parent(server: Server, owner: WasdiClient, admin: WasdiClient, kind: str, tag: str) -> str:
    if kind in ("workspace", "product", "process"):
        return str(owner.call("workspaces.create", query={"name": f"matrix{tag}"}).string_value)
    if kind == "organization":
        return str(owner.call("organizations.create", body={"name": f"matrix-org{tag}"}).message)
    if kind == "style":
        return str(owner.call("styles.upload", query={"name": f"matrixstyle{tag}", "public": False},
                              files={"file": ("style.sld", SLD)}).string_value)
    if kind == "workflow":
        name = f"matrixgraph{tag}"
        owner.call("workflows.upload", query={"name": name}, files={"file": ("graph.xml", graph())})
        doc = server.services.workflows.workflows.find_one(lambda d: d["name"] == name)
        return Made.of(doc["workflowId"], parent=name)
    if kind in ("app", "review"):
        return str(make_app(server, OWNER, f"matrixapp{tag}", processorId=f"matrixapp{tag}")["processorId"])
    if kind == "template":
        # a template of a public app, so that only the template's own sharing decides
        return str(make_app(server, OWNER, f"matrixtemplapp{tag}", isPublic=1)["processorId"])
    if kind == "node":
        admin.call("nodes.create", body={"nodeCode": f"matrixnode{tag}", "apiUrl": "http://127.0.0.1:1/"})
        return f"matrixnode{tag}"
    if kind in ("subscription", "project"):
        return str(owner.call("subscriptions.create", body={"typeId": "OneMonthStandard",
                                                            "name": f"matrixsub{tag}"}).message)
    raise AssertionError(kind)


OWNER = Person(USERS["O"], "")
"""The owner as app records name it (make_app reads only its user id)."""
SHARE = {"workspace": ("workspaces.share_add", "workspace"),
         "organization": ("organizations.share_add", "organization"), "style": ("styles.share_add", "styleId"),
         "workflow": ("workflows.share_add", "workflowId"), "app": ("processors.share_add", "processorId"),
         "template": ("param_templates.share_add", "processorParametersTemplate"),
         "subscription": ("subscriptions.share_add", "subscription"),
         "project": ("subscriptions.share_add", "subscription"), "node": ("nodes.share_add", "node"),
         "review": ("processors.share_add", "processorId"), "product": ("workspaces.share_add", "workspace"),
         "process": ("workspaces.share_add", "workspace"),
         "comment": ("processors.share_add", "processorId")}
ADMIN_MADE = {"node"}
"""Kinds only an admin creates and shares (the owner role then owns nothing of them)."""


REFUSAL_ANSWERS: dict[FailureKind, Any] = {FailureKind.EMPTY_LIST: [], FailureKind.TEXT_ERROR: "ERROR"}


def cells() -> list[Any]:
    out = []
    for row in TABLE:
        for role in ROLES:
            marks = [] if row.endpoint in HANDLERS else [pytest.mark.skip(reason=f"{row.endpoint} is not routed")]
            out.append(pytest.param(row, role, id=f"{row.endpoint}-{role}", marks=marks))
    return out


@pytest.fixture(scope="module")
def matrix_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, dict[str, Person]]]:
    server = Server(tmp_path_factory.mktemp("matrix") / "data")
    people = {letter: server.add_user(uid, admin=letter == "A") for letter, uid in USERS.items()}
    server.add_user(EXTRA)
    yield server, people
    server.close()


@pytest.mark.parametrize(("row", "role"), cells())
def test_access_matrix(matrix_server: tuple[Server, dict[str, Person]], row: Row, role: str) -> None:
    server, people = matrix_server
    owner, admin = server.sdk(people["O"]), server.sdk(people["A"])
    rid = create(server, owner, admin, row.resource, uuid.uuid4().hex[:8])
    share, key = SHARE[row.resource]
    sharer = admin if row.resource in ADMIN_MADE else owner
    shared = rid.shared or rid
    for letter, rights in (("W", "write"), ("R", "read")):
        sharer.call(share, query={key: shared, "userId": USERS[letter], "rights": rights})
    caller = server.sdk(people.get(role))
    try:
        result = caller.call(row.endpoint, query=row.query(rid), body=row.body(rid), files=row.files(rid))
        # Some style-C endpoints refuse with an answer the SDK returns as is, since it is also a legitimate
        # one (an empty list, the text ERROR); the rows always have something to list and a process that
        # ended DONE, so there that answer can only be a refusal.  Elsewhere it is an answer (no build logs
        # yet is an empty list), the refusal being an error.
        refusal_answer = REFUSAL_ANSWERS.get(endpoint(row.endpoint).failure.kind, object())
        outcome = f"refused (answered {result!r})" if result == refusal_answer else "allowed"
    except (APIError, EmptyResultError) as refusal:
        outcome = f"refused ({type(refusal).__name__}: {refusal})"
    expected = "allowed" if role in row.allowed else "refused"
    assert outcome.split(" ")[0] == expected, f"{row.endpoint} as {role}: {outcome}"
