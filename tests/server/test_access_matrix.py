"""The access matrix, generated from one table of expected outcomes.

Every row names a catalogue endpoint on a shareable resource, how to call it, and which callers it
lets through: the owner (O), a user the resource is shared with for writing (W) or reading (R), a
stranger (S), an admin (A), and a caller with no session (N).  Everyone else must be refused, in
the endpoint's own failure style (the SDK maps every style to an exception, so "refused" means the
call raised one of the SDK's API errors, or a style-C listing answered its empty list).  Each cell
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
from tests.server.snap import graph

from wasdi_sdk import WasdiClient
from wasdi_sdk._exceptions import APIError, EmptyResultError
from wasdi_server.api.framework import HANDLERS

ROLES = "OWRSAN"
USERS = {"O": "owner@example.org", "W": "writer@example.org", "R": "reader@example.org",
         "S": "stranger@example.org", "A": "root@example.org"}
EXTRA = "extra@example.org"
"""A user with no part in the matrix, the target of share calls."""


@dataclass(frozen=True)
class Row:
    endpoint: str
    resource: str
    """A key of KINDS: what is created by the owner, and shared W/R, before the call."""
    allowed: str
    """The roles (letters of ROLES) the call succeeds for."""
    query: Callable[[str], dict[str, Any]] = lambda rid: {}
    body: Callable[[str], Any] = lambda rid: None


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
]

SLD = (b'<?xml version="1.0" encoding="UTF-8"?>\n<StyledLayerDescriptor version="1.0.0" '
       b'xmlns="http://www.opengis.net/sld"><NamedLayer><Name>x</Name><UserStyle><FeatureTypeStyle><Rule>'
       b'<RasterSymbolizer><ColorMap type="ramp"><ColorMapEntry color="#ff0000" quantity="0"/>'
       b'<ColorMapEntry color="#0000ff" quantity="1"/></ColorMap></RasterSymbolizer></Rule></FeatureTypeStyle>'
       b"</UserStyle></NamedLayer></StyledLayerDescriptor>")


def create(server: Server, owner: WasdiClient, kind: str, tag: str) -> str:
    if kind == "workspace":
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
        return str(doc["workflowId"])
    if kind == "app":
        return str(make_app(server, OWNER, f"matrixapp{tag}")["processorId"])
    if kind == "template":
        # a template of a public app, so that only the template's own sharing decides
        app = make_app(server, OWNER, f"matrixtemplapp{tag}", isPublic=1)
        owner.call("param_templates.create", body={"processorId": app["processorId"], "name": f"t{tag}"})
        return str(owner.call("param_templates.list", query={"processorId": app["processorId"]})[0].template_id)
    if kind == "subscription":
        return str(owner.call("subscriptions.create", body={"typeId": "OneMonthStandard",
                                                            "name": f"matrixsub{tag}"}).message)
    raise AssertionError(kind)


OWNER = Person(USERS["O"], "")
"""The owner as app records name it (make_app reads only its user id)."""
SHARE = {"workspace": ("workspaces.share_add", "workspace"),
         "organization": ("organizations.share_add", "organization"), "style": ("styles.share_add", "styleId"),
         "workflow": ("workflows.share_add", "workflowId"), "app": ("processors.share_add", "processorId"),
         "template": ("param_templates.share_add", "processorParametersTemplate"),
         "subscription": ("subscriptions.share_add", "subscription")}


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
    owner = server.sdk(people["O"])
    rid = create(server, owner, row.resource, uuid.uuid4().hex[:8])
    share, key = SHARE[row.resource]
    owner.call(share, query={key: rid, "userId": USERS["W"], "rights": "write"})
    owner.call(share, query={key: rid, "userId": USERS["R"], "rights": "read"})
    caller = server.sdk(people.get(role))
    try:
        result = caller.call(row.endpoint, query=row.query(rid), body=row.body(rid))
        # A style-C listing refuses with an empty list (the SDK returns it: it is also a legitimate answer);
        # here the resource always has sharings, so an empty list can only be a refusal.
        outcome = "refused (an empty list)" if result == [] else "allowed"
    except (APIError, EmptyResultError) as refusal:
        outcome = f"refused ({type(refusal).__name__}: {refusal})"
    expected = "allowed" if role in row.allowed else "refused"
    assert outcome.split(" ")[0] == expected, f"{row.endpoint} as {role}: {outcome}"
