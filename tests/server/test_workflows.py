"""/workflows through the real app: safe graph parsing and node detection, files, 304, listing, byname,
deletion, the permission matrix, sharing (a repeated share is a failure), downloads with the token, and
runs through a stand-in gpt (and without one)."""

from __future__ import annotations

import json
import os
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.conftest import Person, Server
from tests.packages import reaches_path
from tests.server.geodata import make_geotiff, new_workspace, share, upload, wait_all, wait_process
from tests.server.snap import graph, hide_gpt, install_gpt

from wasdi_sdk.catalog import ENDPOINTS, Endpoint
from wasdi_server.domains.workflows.snap_graphs import MAX_GRAPH_BYTES
from wasdi_server.management import channel

BASE = "http://testserver"
GRAPH = graph()
TWO_INPUTS = graph(reads=("Read", "Read(2)"), writes=("Write", "Write(2)"), fmt="BEAM-DIMAP")
BILLION_LAUGHS = (b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
                  b'<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>'
                  b'<graph id="g"><node id="Read"><operator>Read</operator>&lol2;</node></graph>')
EXTERNAL_ENTITY = (b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
                   b'<graph id="g"><node id="Read"><operator>&e;</operator></node></graph>')
BAD_GRAPHS = {
    "malformed": b"<graph><node id='Read'><operator>Read</operator></graph>",
    "not-xml": b"\x89PNG\r\n\x1a\n binary",
    "empty": b"",
    "other-root": b'<StyledLayerDescriptor version="1.0.0"/>',
    "no-nodes": b'<graph id="g"><version>1.0</version></graph>',
    "node-without-operator": b'<graph id="g"><node id="Read"/></graph>',
    "billion-laughs": BILLION_LAUGHS,
    "external-entity": EXTERNAL_ENTITY,
    "too-large": b'<graph id="g"><node id="a"><operator>Read</operator></node>' + b" " * MAX_GRAPH_BYTES + b"</graph>",
}
ROLES = ("owner", "writer", "reader", "stranger", "admin")
WRITE_RIGHTS = {"owner": True, "writer": True, "reader": False, "stranger": False, "admin": True}


@pytest.fixture
def http(server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(transport=httpx.WSGITransport(app=server.app), base_url=BASE) as client:
        yield client


def hdr(who: Person | None) -> dict[str, str]:
    return who.headers if who else {}


def upload_graph(http: httpx.Client, who: Person | None, name: str, data: bytes = GRAPH,
                 **params: Any) -> httpx.Response:
    return http.post("/workflows/uploadfile", params={"name": name, **params}, headers=hdr(who),
                     files={"file": ("graph.xml", data)})


def create(server: Server, http: httpx.Client, who: Person, name: str, data: bytes = GRAPH, **params: Any) -> str:
    r = upload_graph(http, who, name, data, **params)
    assert r.status_code == 200, r.text
    doc = server.services.workflows.workflows.find_one(lambda d: d["name"] == name and d["userId"] == who.user_id)
    assert doc is not None
    return str(doc["workflowId"])


def listed(http: httpx.Client, who: Person) -> dict[str, dict[str, Any]]:
    r = http.get("/workflows/getbyuser", headers=hdr(who))
    assert r.status_code == 200
    return {w["workflowId"]: w for w in r.json()}


@pytest.fixture
def people(server: Server, alice: Person, writer: Person, reader: Person, stranger: Person,
           admin: Person) -> dict[str, Person]:
    return {"owner": alice, "writer": writer, "reader": reader, "stranger": stranger, "admin": admin}


@pytest.fixture
def shared_flow(server: Server, http: httpx.Client, people: dict[str, Person]) -> str:
    wid = create(server, http, people["owner"], "matrix flow")
    for role, rights in (("writer", "write"), ("reader", "read")):
        r = http.put("/workflows/share/add", params={"workflowId": wid, "userId": people[role].user_id,
                                                    "rights": rights}, headers=hdr(people["owner"]))
        assert r.json()["boolValue"] is True, r.text
    return wid


# -- upload and node detection ------------------------------------------------------------------------
def test_upload_detects_read_and_write_nodes_and_stores_the_record(server: Server, http: httpx.Client,
                                                                    alice: Person) -> None:
    wid = create(server, http, alice, "ndvi", TWO_INPUTS, description="two in", public="true")
    doc = server.services.workflows.get(wid)
    assert doc is not None
    assert doc["inputNodeNames"] == ["Read", "Read(2)"] and doc["outputNodeNames"] == ["Write", "Write(2)"]
    assert doc["isPublic"] is True and doc["userId"] == alice.user_id and doc["description"] == "two in"
    assert isinstance(doc["lastUpdate"], (int, float)) and doc["uploadDate"] == doc["lastUpdate"]
    assert (server.settings.workflows_root / f"{wid}.xml").read_bytes() == TWO_INPUTS
    view = listed(http, alice)[wid]
    assert view["isPublic"] is True and view["readOnly"] is False and view["sharedWithMe"] is False
    assert view["inputNodeNames"] == ["Read", "Read(2)"]


def test_operator_must_be_exactly_read_or_write(server: Server, http: httpx.Client, alice: Person) -> None:
    data = (b'<graph id="g"><node id="a"><operator>read</operator></node><node id="b"><operator>Reader'
            b'</operator></node><node id="c"><operator>Read</operator></node><node id="d"><operator>Write'
            b"</operator></node></graph>")
    doc = server.services.workflows.get(create(server, http, alice, "exact", data))
    assert doc is not None and doc["inputNodeNames"] == ["c"] and doc["outputNodeNames"] == ["d"]


@pytest.mark.parametrize("kind", sorted(BAD_GRAPHS))
def test_a_file_that_is_not_a_snap_graph_is_a_400_and_nothing_is_stored(server: Server, http: httpx.Client,
                                                                        alice: Person, kind: str) -> None:
    r = upload_graph(http, alice, f"bad {kind}", BAD_GRAPHS[kind])
    assert r.status_code == 400
    assert "graph" in r.json()["message"] or "larger" in r.json()["message"]
    assert server.services.workflows.workflows.find() == []
    root = server.settings.workflows_root
    assert not root.exists() or not [p for p in root.rglob("*") if p.is_file()]


@pytest.mark.parametrize("params", [{}, {"name": ""}, {"name": "../x"}, {"name": "a" * 101},
                                    {"name": "ok", "description": "d" * 2001}])
def test_upload_bad_parameters_are_400(http: httpx.Client, alice: Person, params: dict[str, str]) -> None:
    r = http.post("/workflows/uploadfile", params=params, headers=hdr(alice), files={"file": ("g.xml", GRAPH)})
    assert r.status_code == 400 and r.json()["message"]


def test_upload_without_file_field_or_session(http: httpx.Client, alice: Person) -> None:
    r = http.post("/workflows/uploadfile", params={"name": "x"}, headers=hdr(alice), files={"other": ("g", GRAPH)})
    assert r.status_code == 400
    assert upload_graph(http, None, "x").status_code == 401
    assert http.post("/workflows/uploadfile", params={"name": "x"}, headers=hdr(alice),
                     content=GRAPH).status_code == 400


def test_names_are_unique_per_owner(server: Server, http: httpx.Client, alice: Person, bob: Person) -> None:
    create(server, http, alice, "Same")
    r = upload_graph(http, alice, "same")
    assert r.status_code == 400 and "already" in r.json()["message"]
    create(server, http, bob, "same")


# -- xml, update, 304 ---------------------------------------------------------------------------------
def test_getxml_update_file_and_xml_and_not_modified(server: Server, http: httpx.Client, alice: Person) -> None:
    wid = create(server, http, alice, "flow")
    r = http.get("/workflows/getxml", params={"workflowId": wid}, headers=hdr(alice))
    assert r.status_code == 200 and r.content == GRAPH and r.headers["content-type"].startswith("application/xml")
    etag = r.headers["etag"]
    assert http.get("/workflows/getxml", params={"workflowId": wid},
                    headers={**hdr(alice), "If-None-Match": etag}).status_code == 304
    # the same bytes again change nothing
    r = http.post("/workflows/updatefile", params={"workflowid": wid}, headers=hdr(alice),
                  files={"file": ("g.xml", GRAPH)})
    assert r.status_code == 304
    r = http.post("/workflows/updatefile", params={"workflowid": wid}, headers=hdr(alice),
                  files={"file": ("g.xml", TWO_INPUTS)})
    assert r.status_code == 200, r.text
    doc = server.services.workflows.get(wid)
    assert doc is not None and doc["inputNodeNames"] == ["Read", "Read(2)"]
    # updatexml: the raw XML as the body
    r = http.post("/workflows/updatexml", params={"workflowId": wid}, content=GRAPH,
                  headers={**hdr(alice), "Content-Type": "application/xml"})
    assert r.status_code == 200, r.text
    doc = server.services.workflows.get(wid)
    assert doc is not None and doc["inputNodeNames"] == ["Read"]
    assert http.get("/workflows/getxml", params={"workflowId": wid}, headers=hdr(alice)).content == GRAPH


@pytest.mark.parametrize("kind", ["malformed", "other-root", "billion-laughs", "external-entity"])
def test_an_update_that_is_not_a_graph_is_400_and_keeps_the_old_file(server: Server, http: httpx.Client,
                                                                     alice: Person, kind: str) -> None:
    wid = create(server, http, alice, "keep")
    r = http.post("/workflows/updatefile", params={"workflowid": wid}, headers=hdr(alice),
                  files={"file": ("g.xml", BAD_GRAPHS[kind])})
    assert r.status_code == 400
    r = http.post("/workflows/updatexml", params={"workflowId": wid}, content=BAD_GRAPHS[kind],
                  headers={**hdr(alice), "Content-Type": "application/xml"})
    assert r.status_code == 400
    assert (server.settings.workflows_root / f"{wid}.xml").read_bytes() == GRAPH


def test_unknown_workflow_answers(http: httpx.Client, alice: Person) -> None:
    q = {"workflowId": "nope"}
    assert http.get("/workflows/getxml", params=q, headers=hdr(alice)).status_code == 400
    assert http.get("/workflows/delete", params=q, headers=hdr(alice)).status_code == 400
    assert http.get("/workflows/download", params=q, headers=hdr(alice)).status_code == 204
    assert http.get("/workflows/share/byworkflow", params=q, headers=hdr(alice)).json() == []
    assert http.post("/workflows/updatefile", params={"workflowid": "nope"}, headers=hdr(alice),
                     files={"file": ("g.xml", GRAPH)}).status_code == 400
    assert http.post("/workflows/updateparams", params={"workflowid": "nope", "name": "x"},
                     headers=hdr(alice)).status_code == 400
    assert http.get("/workflows/byname", params={"name": "nope"}, headers=hdr(alice)).status_code == 400
    r = http.put("/workflows/share/add", params={"workflowId": "nope", "userId": "x"}, headers=hdr(alice))
    assert r.status_code == 200 and r.json()["boolValue"] is False and r.json()["intValue"] == 400


def test_every_endpoint_wants_a_session(http: httpx.Client) -> None:
    q = {"workflowId": "x", "workflowid": "x", "name": "x", "userId": "u", "workspace": "w"}
    for method, path in (("GET", "/workflows/getxml"), ("GET", "/workflows/delete"), ("GET", "/workflows/byname"),
                         ("GET", "/workflows/download"), ("POST", "/workflows/updateparams")):
        assert http.request(method, path, params=q).status_code == 401, path
    assert http.get("/workflows/getbyuser").json() is None
    assert http.get("/workflows/share/byworkflow", params=q).json() == []
    r = http.post("/workflows/run", params=q, json={"workflowId": "x"})
    assert r.json()["boolValue"] is False and r.json()["intValue"] == 401


# -- params, listing, byname --------------------------------------------------------------------------
def test_update_params_and_listing(server: Server, http: httpx.Client, alice: Person, bob: Person) -> None:
    wid = create(server, http, alice, "first", description="d1")
    assert wid not in listed(http, bob)
    r = http.post("/workflows/updateparams", params={"workflowid": wid, "name": "renamed", "public": "true"},
                  headers=hdr(alice))
    assert r.status_code == 200, r.text
    view = listed(http, bob)[wid]
    assert view["name"] == "renamed" and view["description"] == "d1" and view["readOnly"] is True
    assert view["sharedWithMe"] is False and view["isPublic"] is True
    r = http.post("/workflows/updateparams", params={"workflowid": wid, "description": ""}, headers=hdr(alice))
    assert r.status_code == 200
    assert listed(http, alice)[wid]["description"] == ""
    assert http.post("/workflows/updateparams", params={"workflowid": wid, "name": "bad/name"},
                     headers=hdr(alice)).status_code == 400


def test_byname_prefers_own_and_respects_rights(server: Server, http: httpx.Client, alice: Person,
                                                bob: Person) -> None:
    create(server, http, alice, "private one")
    r = http.get("/workflows/byname", params={"name": "private one"}, headers=hdr(bob))
    assert r.status_code == 403
    mine = create(server, http, bob, "private one")
    r = http.get("/workflows/byname", params={"name": "Private One"}, headers=hdr(bob))
    assert r.status_code == 200 and r.json()["workflowId"] == mine and r.json()["lastUpdate"] > 0


# -- the permission matrix ----------------------------------------------------------------------------
@pytest.mark.parametrize("role", ROLES)
def test_matrix_update_params(server: Server, http: httpx.Client, people: dict[str, Person], shared_flow: str,
                              role: str) -> None:
    r = http.post("/workflows/updateparams", params={"workflowid": shared_flow, "description": role},
                  headers=hdr(people[role]))
    assert r.status_code == (200 if WRITE_RIGHTS[role] else 403)
    doc = server.services.workflows.get(shared_flow)
    assert doc is not None and (doc["description"] == role) is WRITE_RIGHTS[role]


@pytest.mark.parametrize("role", ROLES)
def test_matrix_update_file(server: Server, http: httpx.Client, people: dict[str, Person], shared_flow: str,
                            role: str) -> None:
    r = http.post("/workflows/updatefile", params={"workflowid": shared_flow}, headers=hdr(people[role]),
                  files={"file": ("g.xml", TWO_INPUTS)})
    assert r.status_code == (200 if WRITE_RIGHTS[role] else 403)


@pytest.mark.parametrize("role", ROLES)
def test_matrix_read(http: httpx.Client, people: dict[str, Person], shared_flow: str, role: str) -> None:
    readable = role != "stranger"
    who = people[role]
    assert http.get("/workflows/getxml", params={"workflowId": shared_flow},
                    headers=hdr(who)).status_code == (200 if readable else 403)
    r = http.get("/workflows/download", params={"workflowId": shared_flow, "token": who.token})
    assert r.status_code == (200 if readable else 403)
    if readable:
        assert r.content == GRAPH and 'filename="matrix flow.xml"' in r.headers["content-disposition"]
    if role != "admin" and readable:  # the list is own, public and shared: an admin's is no exception
        view = listed(http, who)[shared_flow]
        assert view["readOnly"] is not WRITE_RIGHTS[role]
        assert view["sharedWithMe"] is (role in ("writer", "reader"))
    else:
        assert shared_flow not in listed(http, who)
    sharings = http.get("/workflows/share/byworkflow", params={"workflowId": shared_flow}, headers=hdr(who)).json()
    assert len(sharings) == (2 if readable else 0)


@pytest.mark.parametrize("role", ROLES)
def test_matrix_delete(server: Server, http: httpx.Client, people: dict[str, Person], shared_flow: str,
                       role: str) -> None:
    r = http.get("/workflows/delete", params={"workflowId": shared_flow}, headers=hdr(people[role]))
    exists = server.services.workflows.get(shared_flow) is not None
    file_exists = (server.settings.workflows_root / f"{shared_flow}.xml").exists()
    if role in ("owner", "admin"):
        assert r.status_code == 200 and not exists and not file_exists
        assert server.services.sharing.sharings.find(resourceType="workflow") == []
    elif role in ("writer", "reader"):  # a sharer removes only their own sharing
        assert r.status_code == 200 and exists and file_exists
        assert shared_flow not in listed(http, people[role])
        assert len(server.services.sharing.sharings.find(resourceType="workflow")) == 1
    else:
        assert r.status_code == 403 and exists


@pytest.mark.parametrize("role", ROLES)
def test_matrix_share(server: Server, http: httpx.Client, people: dict[str, Person], shared_flow: str, role: str,
                      carol: Person) -> None:
    r = http.put("/workflows/share/add", params={"workflowId": shared_flow, "userId": carol.user_id},
                 headers=hdr(people[role]))
    body = r.json()
    assert r.status_code == 200
    assert body["boolValue"] is WRITE_RIGHTS[role]
    if not WRITE_RIGHTS[role]:
        assert body["intValue"] == 403


# -- sharing rules ------------------------------------------------------------------------------------
def test_sharing_rules(server: Server, http: httpx.Client, alice: Person, bob: Person, carol: Person,
                       admin: Person) -> None:
    wid = create(server, http, alice, "shared")

    def add(who: Person, user: str, rights: str | None = None) -> dict[str, Any]:
        params = {"workflowId": wid, "userId": user, **({"rights": rights} if rights else {})}
        return dict(http.put("/workflows/share/add", params=params, headers=hdr(who)).json())

    first = add(alice, bob.user_id)
    assert first["boolValue"] is True and first["stringValue"] == "Done"
    repeat = add(alice, bob.user_id)
    assert repeat["boolValue"] is False and repeat["stringValue"] == "Already shared"
    assert add(alice, alice.user_id)["boolValue"] is False  # self share
    assert add(bob, alice.user_id)["boolValue"] is False  # with the owner
    assert add(alice, "ghost@example.org")["boolValue"] is False
    sharings = http.get("/workflows/share/byworkflow", params={"workflowId": wid}, headers=hdr(alice)).json()
    assert {s["userId"]: s["permissions"] for s in sharings}[bob.user_id] == "read"
    assert any(m for m in server.mails() if "workflow" in str(m["Subject"]))
    # a reader may not remove another's sharing; the shared user and the owner may
    assert add(admin, carol.user_id)["boolValue"] is True
    r = http.delete("/workflows/share/delete", params={"workflowId": wid, "userId": carol.user_id},
                    headers=hdr(bob)).json()
    assert r["boolValue"] is False and r["intValue"] == 403
    r = http.delete("/workflows/share/delete", params={"workflowId": wid, "userId": bob.user_id},
                    headers=hdr(bob)).json()
    assert r["boolValue"] is True and r["stringValue"] == "Done"
    r = http.delete("/workflows/share/delete", params={"workflowId": wid, "userId": carol.user_id},
                    headers=hdr(alice)).json()
    assert r["boolValue"] is True
    assert http.get("/workflows/share/byworkflow", params={"workflowId": wid}, headers=hdr(alice)).json() == []


def test_delete_all_of_user(server: Server, http: httpx.Client, alice: Person, bob: Person) -> None:
    own = create(server, http, alice, "own")
    theirs = create(server, http, bob, "theirs")
    http.put("/workflows/share/add", params={"workflowId": own, "userId": bob.user_id}, headers=hdr(alice))
    http.put("/workflows/share/add", params={"workflowId": theirs, "userId": alice.user_id}, headers=hdr(bob))
    service = server.services.workflows
    service.delete_all_of_user(alice.user_id)
    assert service.workflows.find(userId=alice.user_id) == []
    assert not (server.settings.workflows_root / f"{own}.xml").exists()
    assert server.services.sharing.sharings.find(resourceType="workflow") == []
    assert service.get(theirs) is not None
    service.delete_all_of_user(alice.user_id)  # a second call is a no-op
    assert service.get(theirs) is not None


# -- runs ---------------------------------------------------------------------------------------------
@pytest.fixture
def input_ws(server: Server, alice: Person, tmp_path: Path) -> str:
    ws = new_workspace(server, alice, "graphs")
    tif = make_geotiff(tmp_path / "scene.tif")
    r = upload(server, alice, ws, tif)
    assert r.status_code == 200, r.text
    wait_all(server, ws, "INGEST")
    return ws


def run(http: httpx.Client, who: Person | None, ws: str, body: dict[str, Any], **params: str) -> dict[str, Any]:
    r = http.post("/workflows/run", params={"workspace": ws, **params}, json=body, headers=hdr(who))
    assert r.status_code == 200, r.text
    return dict(r.json())


def test_run_through_gpt_makes_an_output_product(server: Server, http: httpx.Client, alice: Person, input_ws: str,
                                                 tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_gpt(tmp_path / "bin", monkeypatch)
    wid = create(server, http, alice, "scale it")
    answer = run(http, alice, input_ws, {"workflowId": wid, "inputFileNames": ["scene.tif"],
                                         "templateParams": {"$SCALE": "2"}})
    assert answer["boolValue"] is True
    record = wait_process(server, answer["stringValue"])
    assert record["status"] == "DONE", record
    assert record["operationType"] == "GRAPH" and record["productName"] == "scene.tif"
    product = server.services.products.get(input_ws, "scene_scale_it.tif")
    assert product is not None and product["fileSize"] > 0
    lines = [row["logRow"] for row in server.services.process_logs.logs.read(answer["stringValue"])]
    assert "gpt: expression 2 * band_1" in lines and "gpt: wrote scene_scale_it.tif" in lines
    assert any(m["messageCode"] == "GRAPH" and m["messageResult"] == "OK"
               for m in server.messages_of(input_ws))
    # no leftover work folder in the workspace
    folder = server.services.workspaces.folder(server.services.workspaces.load(input_ws))
    assert not [p for p in folder.iterdir() if p.name.startswith(".graph-")]


def test_run_with_named_outputs_and_parent(server: Server, http: httpx.Client, alice: Person, input_ws: str,
                                           tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_gpt(tmp_path / "bin", monkeypatch)
    wid = create(server, http, alice, "named")
    answer = run(http, alice, input_ws, {"workflowId": wid, "inputFileNames": ["scene.tif"],
                                         "inputNodeNames": ["Read"], "outputNodeNames": ["Write"],
                                         "outputFileNames": ["result.tif"], "templateParams": {"$SCALE": 3}},
                 parent="parent-1")
    record = wait_process(server, answer["stringValue"])
    assert record["status"] == "DONE" and record["parentId"] == "parent-1"
    assert server.services.products.get(input_ws, "result.tif") is not None


def test_run_without_gpt_ends_error_and_says_so(server: Server, http: httpx.Client, alice: Person, input_ws: str,
                                                tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hide_gpt(monkeypatch, tmp_path / "empty")
    wid = create(server, http, alice, "no gpt")
    answer = run(http, alice, input_ws, {"workflowId": wid, "inputFileNames": ["scene.tif"]})
    record = wait_process(server, answer["stringValue"])
    assert record["status"] == "ERROR" and "gpt was not found" in record["payload"]
    lines = [row["logRow"] for row in server.services.process_logs.logs.read(answer["stringValue"])]
    assert sum("gpt was not found" in line for line in lines) == 1, lines  # once, not once per writer


def test_run_fails_when_gpt_fails(server: Server, http: httpx.Client, alice: Person, input_ws: str, tmp_path: Path,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    install_gpt(tmp_path / "bin", monkeypatch)
    wid = create(server, http, alice, "unreplaced")
    answer = run(http, alice, input_ws, {"workflowId": wid, "inputFileNames": ["scene.tif"]})  # no $SCALE
    record = wait_process(server, answer["stringValue"])
    assert record["status"] == "ERROR" and "exit code 3" in record["payload"]
    lines = [row["logRow"] for row in server.services.process_logs.logs.read(answer["stringValue"])]
    assert any("unreplaced template parameter" in line for line in lines)
    assert sum("exit code 3" in line for line in lines) == 1, lines  # the failure line once
    assert len(lines) == len(set(lines)), lines  # and no line twice


def test_run_timeout_stops_gpt(server: Server, http: httpx.Client, alice: Person, input_ws: str, tmp_path: Path,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    install_gpt(tmp_path / "bin", monkeypatch, "#!{python}\nimport time\nprint('sleeping', flush=True)\n"
                                               "time.sleep(60)\n")
    server.services.settings.graph_timeout_seconds = 0.5
    wid = create(server, http, alice, "slow")
    answer = run(http, alice, input_ws, {"workflowId": wid, "inputFileNames": ["scene.tif"]})
    record = wait_process(server, answer["stringValue"])
    assert record["status"] == "STOPPED" and "did not finish" in record["payload"]
    lines = [row["logRow"] for row in server.services.process_logs.logs.read(answer["stringValue"])]
    assert any("did not finish" in line for line in lines)


@pytest.mark.parametrize(("body", "code"), [
    ({}, 400),
    ({"workflowId": "nope"}, 400),
    ({"inputFileNames": ["missing.tif"]}, 400),
    ({"inputFileNames": []}, 400),
    ({"inputFileNames": ["scene.tif", "scene.tif"]}, 400),
    ({"inputFileNames": ["../etc/passwd"]}, 400),
    ({"inputFileNames": ["scene.tif"], "inputNodeNames": ["BandMaths"]}, 400),
    ({"inputFileNames": ["scene.tif"], "outputFileNames": ["../x.tif"]}, 400),
    ({"inputFileNames": ["scene.tif"], "outputFileNames": ["a.tif", "b.tif"]}, 400),
    ({"inputFileNames": ["scene.tif"], "templateParams": {"$SCALE": {"nested": 1}}}, 400),
    ({"inputFileNames": "scene.tif"}, 400),
])
def test_run_bad_bodies_are_refused_in_the_body(server: Server, http: httpx.Client, alice: Person, input_ws: str,
                                                body: dict[str, Any], code: int) -> None:
    wid = create(server, http, alice, "bodies")
    if "workflowId" not in body and body:
        body = {"workflowId": wid, **body}
    r = http.post("/workflows/run", params={"workspace": input_ws}, json=body, headers=hdr(alice))
    assert r.status_code == 200
    assert r.json()["boolValue"] is False and r.json()["intValue"] == code, r.text
    assert [p for p in server.services.processes.by_workspace(input_ws) if p["operationType"] == "GRAPH"] == []


@pytest.mark.parametrize("role", ROLES)
def test_run_matrix_needs_workflow_read_and_workspace_write(server: Server, http: httpx.Client,
                                                            people: dict[str, Person], input_ws: str, role: str,
                                                            tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_gpt(tmp_path / "bin", monkeypatch)
    owner = people["owner"]
    wid = create(server, http, owner, "private flow")
    for sharer, rights in (("writer", "write"), ("reader", "read")):
        share(server, owner, input_ws, people[sharer], rights)
        http.put("/workflows/share/add", params={"workflowId": wid, "userId": people[sharer].user_id},
                 headers=hdr(owner))
    answer = run(http, people[role], input_ws, {"workflowId": wid, "inputFileNames": ["scene.tif"],
                                                "templateParams": {"$SCALE": "1"}})
    if role in ("owner", "writer", "admin"):
        assert answer["boolValue"] is True, answer
        assert wait_process(server, answer["stringValue"])["status"] == "DONE"
    else:  # the reader may read the workflow but not write in the workspace; the stranger neither
        assert answer["boolValue"] is False and answer["intValue"] == 403


def test_run_checks_the_storage_quota(server: Server, http: httpx.Client, alice: Person, input_ws: str,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from wasdi_server.domains.products import service as products

    monkeypatch.setitem(products.STORAGE_CAPS, "FREE", 1)
    monkeypatch.setitem(products.STORAGE_CAPS, "NONE", 1)
    wid = create(server, http, alice, "quota")
    answer = run(http, alice, input_ws, {"workflowId": wid, "inputFileNames": ["scene.tif"]})
    assert answer["boolValue"] is False and answer["intValue"] == 401 and "Exceeding" in answer["stringValue"]


def test_a_public_workflow_runs_for_anyone_with_a_workspace(server: Server, http: httpx.Client, alice: Person,
                                                            bob: Person, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    install_gpt(tmp_path / "bin", monkeypatch)
    wid = create(server, http, alice, "public flow", public="true")
    ws = new_workspace(server, bob, "bobs")
    assert upload(server, bob, ws, make_geotiff(tmp_path / "b.tif")).status_code == 200
    wait_all(server, ws, "INGEST")
    answer = run(http, bob, ws, {"workflowId": wid, "inputFileNames": ["b.tif"], "templateParams": {"$SCALE": "1"}})
    assert wait_process(server, answer["stringValue"])["status"] == "DONE"
    assert server.services.products.get(ws, "b_public_flow.tif") is not None


# -- bad input is never a 500 -------------------------------------------------------------------------
NEW_ENDPOINTS = [ep for ep in ENDPOINTS
                 if ep.group in ("workflows", "console") or ep.name in (
                     "nodes.delete", "file_buffer.styles", "files.ingest_upload", "files.ftp_upload",
                     "files.copy_to_sftp")]
JUNK = ["", " ", "../../etc/passwd", "x" * 5000, "\x00\x01", "%00", "nope", "{}", "[]", "null", "é\u202e"]


@pytest.mark.parametrize("ep", NEW_ENDPOINTS, ids=lambda ep: ep.name)
def test_bad_input_is_never_a_500(server: Server, http: httpx.Client, alice: Person, ep: Endpoint) -> None:
    bodies: list[Any] = [None]
    if ep.body.kind.value in ("json", "text"):
        bodies += [b"not json", b'{"workflowId": 5, "inputFileNames": "x"}', b"[1, 2]", b"\xff\xfe", b"<graph/>",
                   b'{"workflowId": "nope", "templateParams": [1]}']
    for junk in JUNK:
        for body in bodies:
            params = {p.name: junk for p in ep.query}
            r = http.request(ep.method, ep.path, params=params, headers=hdr(alice), content=body,
                             files={"file": ("g.xml", junk.encode("utf-8", "replace"))}
                             if ep.body.kind.value == "multipart" else None)
            assert r.status_code < 500 or r.status_code == 501, (ep.name, junk, body, r.text)
            if r.headers.get("content-type", "").startswith("application/json") and r.content:
                data = r.json()
                if isinstance(data, dict) and "intValue" in data:
                    assert data["intValue"] != 500, (ep.name, junk, body, data)


def test_stopping_a_run_kills_gpt(server: Server, http: httpx.Client, alice: Person, input_ws: str, tmp_path: Path,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import time

    # The box lets gpt write only the workspace's folder: it tells its pid on its output, which is the run log.
    install_gpt(tmp_path / "bin", monkeypatch, "#!{python}\nimport os, time\n"
                                               "print(f'working pid={{os.getpid()}}', flush=True)\ntime.sleep(60)\n")
    wid = create(server, http, alice, "stoppable")
    answer = run(http, alice, input_ws, {"workflowId": wid, "inputFileNames": ["scene.tif"]})
    deadline = time.monotonic() + 20
    pid = 0
    while not pid:
        assert time.monotonic() < deadline, "gpt never started"
        rows = server.services.process_logs.logs.read(answer["stringValue"])
        if any("pid=" in r["logRow"] for r in rows):
            # Its pid in its own PID namespace is not the host's: the host's is found by its command line.
            pid = next(iter(processes_running(str(tmp_path / "bin" / "gpt"))), 0)
        time.sleep(0.05)
    r = http.get("/process/delete", params={"procws": answer["stringValue"]}, headers=hdr(alice))
    assert r.status_code == 200, r.text
    assert wait_process(server, answer["stringValue"])["status"] == "STOPPED"
    deadline = time.monotonic() + 10
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        assert time.monotonic() < deadline, "gpt still runs after the stop"
        time.sleep(0.05)


def processes_running(program: str) -> list[int]:
    """The host's processes whose command line names ``program``."""
    import os

    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                if program.encode() in handle.read().split(b"\0"):
                    found.append(int(entry))
        except (OSError, ValueError):
            continue
    return found


HOSTILE_GPT = """#!{python}
import json, os, shutil, sys, xml.etree.ElementTree as ET
from pathlib import Path
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reaches
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "targets.json")) as handle:
    results = reaches.attempt_all(json.load(handle))
root = ET.parse(sys.argv[1]).getroot()
nodes = root.findall("node")
source = Path(next(n for n in nodes if n.findtext("operator") == "Read").findtext("parameters/file"))
target = Path(next(n for n in nodes if n.findtext("operator") == "Write").findtext("parameters/file"))
results["read its input"] = "allowed" if source.read_bytes() else "empty"
target.write_text(json.dumps(results))
"""


def test_a_gpt_that_tries_every_reach_is_refused_all_but_its_own_files(
        server: Server, http: httpx.Client, alice: Person, bob: Person, input_ws: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A graph names files, and gpt is a program of its own: it runs in the box like an app."""
    admin = channel.AdminChannel(server.services)
    assert admin.start()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    bobs = new_workspace(server, bob, "bobs")
    bob_folder = server.services.workspaces.folder(server.services.workspaces.load(bobs))
    bob_folder.mkdir(parents=True, exist_ok=True)
    (bob_folder / "secret.tif").write_text("bob's")
    data = server.settings.data_dir
    targets = {"server_pid": os.getpid(), "store_file": str(next((data / "db").glob("*.json"))),
               "other_file": str(bob_folder / "secret.tif"), "other_folder": str(bob_folder),
               "owner_folder": str(server.settings.files_root / alice.user_id), "above": str(data.parent),
               "admin_socket": str(channel.socket_path(data)), "admin_key": str(channel.key_path(data)),
               "other_port": listener.getsockname()[1]}
    gpt = install_gpt(tmp_path / "snap" / "bin", monkeypatch, HOSTILE_GPT)
    shutil.copy(reaches_path(), gpt.parent / "reaches.py")
    (gpt.parent / "targets.json").write_text(json.dumps(targets))
    try:
        wid = create(server, http, alice, "hostile")
        answer = run(http, alice, input_ws, {"workflowId": wid, "inputFileNames": ["scene.tif"]})
        record = wait_process(server, answer["stringValue"])
    finally:
        admin.stop()
        listener.close()
    lines = [row["logRow"] for row in server.services.process_logs.logs.read(answer["stringValue"])]
    assert record["status"] == "DONE", lines
    output = server.services.workspaces.folder(server.services.workspaces.load(input_ws)) / "scene_hostile.tif"
    results = json.loads(output.read_text())
    assert results.pop("read its input") == "allowed"
    for attempt, outcome in results.items():
        assert outcome.startswith("refused"), (attempt, outcome)
    assert not list(data.parent.rglob("planted-by-intruder.txt"))


class Crash(Exception):
    """Stands for the process dying at this instant."""


@pytest.mark.parametrize("point", ["after the sharings", "after the record, before the graph"])
def test_a_workflow_delete_a_crash_interrupted_is_finished_by_the_next_start(
        server: Server, people: dict[str, Person], shared_flow: str, monkeypatch: pytest.MonkeyPatch,
        point: str) -> None:
    flows = server.services.workflows
    graph_file = flows.graph_path(shared_flow)
    assert graph_file.is_file()

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise Crash

    with monkeypatch.context() as patch:
        patch.setattr(*((flows.workflows, "delete") if point == "after the sharings" else (flows, "graph_path")), boom)
        with pytest.raises(Crash):
            flows.delete(server.services.sessions.resolve(people["owner"].token), shared_flow)
    server.close()

    restarted = Server(server.settings.data_dir)  # finishes pending intents at start
    try:
        assert restarted.services.workflows.workflows.get(shared_flow) is None
        assert restarted.services.sharing.sharings.find(resourceId=shared_flow) == []
        assert not graph_file.exists()
        assert restarted.services.intents.pending() == []
    finally:
        restarted.close()
