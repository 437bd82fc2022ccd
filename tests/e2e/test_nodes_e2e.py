"""A deployment on real parts: a main node and two compute nodes, each its own ``wasdi-server serve`` process
with its own data directory, on one real PostgreSQL database, calling each other over HTTP on 127.0.0.1.

Apps are written against the official ``wasdi`` library only and built offline from the local wheelhouse.
The tests of a module share the deployment (starting it is the slow part); each makes what it needs, so
they pass in any order and on any worker.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.app_support import app_zip, wheelhouse
from tests.e2e.deployment import ADMIN, ALICE, BOB, SECRET, Deployment, start_deployment
from tests.postgres import empty_schema

from wasdi_sdk import WasdiClient

FINAL = {"DONE", "ERROR", "STOPPED"}

HELLO = '''
import wasdi


def run():
    name = wasdi.getParameter("name", "world")
    file_name = f"greeting-{name}.txt"
    with open(wasdi.getPath(file_name), "w") as handle:
        handle.write("VERSION hello " + name + "\\n")
    wasdi.addFileToWASDI(file_name)
    wasdi.setPayload({"greeting": "VERSION hello " + name})
'''

SLEEPER = '''
import time

import wasdi


def run():
    wasdi.wasdiLog("sleeping")
    time.sleep(float(wasdi.getParameter("seconds", 600)))
'''


def eventually(check: Callable[[], Any], timeout: float = 60.0, what: str = "the condition") -> Any:
    end = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"{what} did not happen within {timeout:.0f} s")
        time.sleep(0.2)


@pytest.fixture(scope="module")
def deployment(pg_database: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    empty_schema(pg_database)
    root = tmp_path_factory.mktemp("deployment")
    found = wheelhouse()
    d = start_deployment(root, pg_database, settings={"apps_find_links": [str(found)], "apps_offline": "true",
                                                       "launcher_workers": "2"})
    try:
        yield d
    finally:
        d.close()


def upload(client: httpx.Client, name: str, source: str) -> None:
    r = client.post("/processors/uploadprocessor", params={"name": name},
                    files={"file": (f"{name}.zip", app_zip({"myProcessor.py": source}))})
    assert r.status_code == 200 and r.json()["boolValue"] is True, r.text
    wait_for(client, r.json()["stringValue"])


def wait_for(client: httpx.Client, process_id: str, timeout: float = 120.0) -> str:
    status = eventually(lambda: (s := client.get("/process/getstatusbyid", params={"procws": process_id}).text
                                 .strip('"')) in FINAL and s, timeout, f"the end of {process_id}")
    return str(status)


def workspace_on(d: Deployment, user: str, node: str, name: str) -> str:
    with d.http(user) as main:
        created = main.get("/ws/create", params={"name": name, "node": node}).json()
        return str(created["stringValue"])


def files_of(d: Deployment, user: str, workspace: str) -> dict[str, list[str]]:
    """The files of a workspace folder on each node's disk."""
    out = {}
    for code, node in d.nodes.items():
        folder = node.data_dir / "files" / user / workspace
        out[code] = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
    return out


@pytest.fixture(scope="module")
def app(deployment: Deployment) -> str:
    """The app ``hello``, deployed on the main node by alice."""
    with deployment.http(ALICE) as main:
        upload(main, "hello", HELLO.replace("VERSION", "v1"))
        upload(main, "sleeper", SLEEPER)
    return "hello"


def test_workspaces_are_placed_and_their_node_is_their_api_url(deployment: Deployment) -> None:
    d = deployment
    with d.http(ALICE) as main:
        on2 = main.get("/ws/create", params={"name": "placed", "node": "node2"}).json()["stringValue"]
        editor = main.get("/ws/getws", params={"workspace": on2}).json()
        assert editor["nodeCode"] == "node2" and editor["apiUrl"] == d.nodes["node2"].url
        assert main.get("/ws/create", params={"name": "nowhere", "node": "nosuchnode"}).json() is None
        # Without a node: the best node by score from the metrics every node records (fresh ones only).
        eventually(lambda: len(main.get("/process/nodesByScore").json() or []) == 0, 5, "no scores for users")
    with d.http(ADMIN) as admin:
        scores = eventually(lambda: (rows := admin.get("/process/nodesByScore").json()) and len(rows) == 3 and rows,
                            30, "scores of the three nodes")
        assert {row["nodeCode"] for row in scores} == {"wasdi", "node1", "node2"}
    with d.http(ALICE) as main:
        scored = main.get("/ws/create", params={"name": "scored"}).json()["stringValue"]
        node = main.get("/ws/getws", params={"workspace": scored}).json()["nodeCode"]
        assert node in ("node1", "node2")  # shared compute nodes with fresh metrics come before the default
    with d.http(ALICE, "node2") as node2:  # the folder is made on the workspace's node, and on no other
        assert node2.get("/ws/getws", params={"workspace": on2}).json()["storageSize"] == "0B"
    assert [code for code in d.nodes if (d.nodes[code].data_dir / "files" / ALICE / on2).is_dir()] == ["node2"]


def test_an_app_runs_on_its_workspaces_node_through_the_official_library_and_the_sdk(
        deployment: Deployment, app: str, waspy: Any, tmp_path: Path) -> None:
    d = deployment
    workspace = workspace_on(d, ALICE, "node2", "floods")
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"USER": ALICE, "PASSWORD": "nodes-password-1", "BASEURL": d.nodes["wasdi"].url,
                                  "WORKSPACEID": workspace, "BASEPATH": str(tmp_path / "waspy") + "/"}))
    assert waspy.init(str(config)) is True
    assert waspy.getWorkspaceBaseUrl() == d.nodes["node2"].url  # the workspace's apiUrl
    process_id = waspy.executeProcessor(app, {"name": "waspy"})  # sent to the main node, which forwards it
    assert process_id and waspy.waitProcess(process_id) == "DONE"  # polled on node 2, as waspy does

    with WasdiClient(base_url=d.nodes["wasdi"].url, session_token=d.token(ALICE), max_retries=0) as sdk:
        done = sdk.processors.run_and_wait(name=app, workspace=workspace, params={"name": "sdk"}, timeout=120)
        assert done.status == "DONE"
        assert {p.file_name for p in sdk.products.list(workspace)} == {"greeting-waspy.txt", "greeting-sdk.txt"}
    # The output is on node 2's disk only, and the runs in node 2's store only.
    assert files_of(d, ALICE, workspace) == {"wasdi": [], "node1": [],
                                             "node2": ["greeting-sdk.txt", "greeting-waspy.txt"]}
    with d.http(ALICE) as main:
        assert main.get("/process/byws", params={"workspace": workspace}).status_code == 200
        listed = main.get("/process/byws", params={"workspace": workspace}).json()  # forwarded to node 2
        assert {r["processObjId"] for r in listed} >= {process_id, done.process_id}
    with d.http(ALICE, "node2") as node2:
        rows = [row["logRow"] for row in node2.get("/processors/logs/list",
                                                    params={"processworkspace": process_id}).json()]
        assert any(row.startswith("APP NOT ON NODE") for row in rows), rows


def run_on(d: Deployment, app: str, node: str, name: str) -> str:
    """A run of ``app`` through the main node on a new workspace of ``node``, waited for; the workspace."""
    workspace = workspace_on(d, ALICE, node, f"{name} on {node}")
    with d.http(ALICE) as main:
        run = main.post("/processors/run", params={"name": app, "workspace": workspace},
                        content=json.dumps({"name": name}).encode()).json()
    with d.http(ALICE, node) as there:
        assert wait_for(there, run["processingIdentifier"]) == "DONE"
    return workspace


def test_the_main_node_merges_the_runs_of_every_node(deployment: Deployment, app: str) -> None:
    d = deployment
    on1 = run_on(d, app, "node1", "one")
    on2 = run_on(d, app, "node2", "two")
    with d.http(ALICE) as main:
        history = main.get("/process/byapp", params={"processorName": app}).json()
        spaces = {row["workspaceId"] for row in history}
        stats = main.get("/process/appstats", params={"processorName": app}).json()
        running_ms = main.get("/process/runningTime/UI", params={"userId": ALICE}).json()
    with d.http(ALICE, "node1") as node1:
        only_node1 = node1.get("/process/byapp", params={"processorName": app}).json()  # a node answers its own
    assert {on1, on2} <= spaces  # node 1's run and node 2's, merged on the main node
    assert on1 in [row["workspaceId"] for row in only_node1] and on2 not in [r["workspaceId"] for r in only_node1]
    assert stats["runs"] == len(history) >= 2 and stats["done"] >= 2 and stats["users"] == [ALICE]
    assert isinstance(running_ms, int) and running_ms > 0


def test_a_change_of_the_app_on_the_main_node_is_propagated(deployment: Deployment, app: str) -> None:
    d = deployment
    run_on(d, app, "node2", "before")  # node 2 has the app now
    workspace = workspace_on(d, ALICE, "node2", "after the update")
    with d.http(ALICE) as main:
        processor_id = app_id(main, app)
        r = main.post("/processors/updatefiles", params={"processorId": processor_id},
                      files={"file": ("myProcessor.py", HELLO.replace("VERSION", "v2").encode())})
        assert r.status_code == 200, r.text
        r = main.get("/processors/redeploy", params={"processorId": processor_id})
        assert r.status_code == 200, r.text
    # The outbox delivers the redeploy to the nodes that have the app, which install its current version.
    eventually(lambda: "installing the current version of hello on node node2" in d.nodes["node2"].output()
               or _node_ran(d, "node2", "REDEPLOYPROCESSOR"), 90, "the redeploy on node 2")
    with d.http(ALICE) as main:  # once the main node's own build is done, the app runs again
        run = eventually(lambda: (r := main.post("/processors/run", params={"name": app, "workspace": workspace},
                                                 content=b'{"name": "two"}').json())["status"] != "ERROR" and r,
                         120, "the end of the main node's build")
        assert wait_for(d.http(ALICE, "node2"), run["processingIdentifier"]) == "DONE"
    path = d.nodes["node2"].data_dir / "files" / ALICE / workspace / "greeting-two.txt"
    assert path.read_text() == "v2 hello two\n"


def app_id(client: httpx.Client, name: str) -> str:
    return str(next(a["processorId"] for a in client.get("/processors/getdeployed").json()
                    if a["processorName"] == name))


def _node_ran(d: Deployment, code: str, operation: str) -> bool:
    with d.http(ALICE, code) as node:
        rows = node.get("/process/byusr").json()
    return any(r["operationType"] == operation and r["status"] == "DONE" for r in rows)


def test_only_nodes_reach_the_node_calls_and_each_endpoint_stays_on_its_kind_of_node(deployment: Deployment,
                                                                                      app: str) -> None:
    d = deployment
    with d.http(ALICE) as main:
        processor_id = app_id(main, app)
        assert main.get("/nodes/appfiles", params={"processorId": processor_id}).status_code == 403  # a session
        forged = {"x-wasdi-node-secret": "not-the-secret", "x-wasdi-node": "node1"}
        assert main.get("/nodes/appfiles", params={"processorId": processor_id}, headers=forged).status_code == 403
        real = {"x-wasdi-node-secret": SECRET}
        assert main.get("/nodes/appfiles", params={"processorId": processor_id}, headers=real).status_code == 200
        # main-only and compute-only endpoints answer in their style elsewhere
        assert main.get("/processors/nodedelete", params={"processorId": processor_id,
                                                          "processorName": app}).status_code == 400
        assert main.get("/styles/nodedelete", params={"styleId": "x", "styleName": "x"}).status_code in (400, 405)
    with d.http(BOB) as main:  # the caller's own rights are checked again: bob may not read alice's private app
        r = main.get("/nodes/appfiles", params={"processorId": processor_id}, headers={"x-wasdi-node-secret": SECRET})
        assert r.status_code == 403
    with d.http(ALICE, "node1") as node1:
        assert node1.get("/processors/delete", params={"processorId": processor_id}).status_code == 400
        assert node1.get("/packageManager/environmentActions", params={"name": app}).status_code == 400


def test_the_answer_cache_of_a_node_drops_what_another_node_changed(deployment: Deployment) -> None:
    d = deployment
    with d.http(BOB, "node1") as node1, d.http(BOB) as main:
        before = {w["workspaceId"] for w in node1.get("/ws/byuser").json()}
        assert before == {w["workspaceId"] for w in node1.get("/ws/byuser").json()}  # cached now
        created = main.get("/ws/create", params={"name": "from main", "node": "node2"}).json()["stringValue"]
        assert {w["workspaceId"] for w in node1.get("/ws/byuser").json()} == before | {created}
        # an upload through the main node goes to the workspace's node (streamed through), and a delete too
        r = main.post("/product/uploadfilebylib", params={"workspace": created, "name": "notes.txt"},
                      files={"file": ("notes.txt", b"x" * 300_000)})
        assert r.status_code == 200, r.text
        folder = d.nodes["node2"].data_dir / "files" / BOB / created
        assert (folder / "notes.txt").stat().st_size == 300_000
        r = main.get("/catalog/checkdownloadavaialibitybyname", params={"workspace": created, "filename": "notes.txt"})
        assert r.json()["boolValue"] is True  # the download availability check answered by node 2
        assert main.get("/catalog/downloadbyname", params={"workspace": created, "filename": "notes.txt"}).content \
            == b"x" * 300_000
        assert main.delete("/ws/delete", params={"workspace": created, "deletefile": "true"}).status_code == 200
        assert not folder.exists()
        assert {w["workspaceId"] for w in node1.get("/ws/byuser").json()} == before


def test_a_killed_compute_node_leaves_the_rest_working_and_loses_nothing(deployment: Deployment, app: str) -> None:
    d = deployment
    on2 = run_on(d, app, "node2", "alive")
    workspace = workspace_on(d, ALICE, "node1", "on a node that dies")
    with d.http(ALICE) as main:
        sleeper = main.post("/processors/run", params={"name": "sleeper", "workspace": workspace},
                            content=b'{"seconds": 600}').json()["processingIdentifier"]
    with d.http(ALICE, "node1") as node1:
        eventually(lambda: node1.get("/process/getstatusbyid", params={"procws": sleeper}).text.strip('"')
                   == "RUNNING", 120, "the sleeper running")
    d.kill("node1")
    with d.http(ALICE) as main:
        # merges answer with the live nodes, and say in the log which node was left out
        started = time.monotonic()
        history = main.get("/process/byapp", params={"processorName": app}).json()
        assert time.monotonic() - started < 15 and on2 in {row["workspaceId"] for row in history}
        assert "node node1 is left out of the merge" in d.nodes["wasdi"].output()
        # a run on the dead node's workspace fails with a clear message, in the endpoint's style
        failed = main.post("/processors/run", params={"name": app, "workspace": workspace}, content=b"{}")
        assert failed.status_code == 200 and failed.json()["status"] == "ERROR"
        assert "node1" in failed.json()["message"]
        # a change made meanwhile waits in the outbox for the node
        processor_id = app_id(main, app)
        assert main.get("/processors/libupdate", params={"processorId": processor_id}).status_code == 200
    outbox = d.nodes["wasdi"].data_dir
    d.start("node1")
    with d.http(ALICE, "node1") as node1:
        # the restart rule on its own run; the records it had are all still there
        record = node1.get("/process/byid", params={"procws": sleeper}).json()
        assert record["status"] == "ERROR"
        assert node1.get("/process/byws", params={"workspace": workspace}).json()
    eventually(lambda: "propagated GET /processors/libupdate to node node1" in d.nodes["wasdi"].output(), 90,
               f"the delivery of the outbox of {outbox}")


def test_a_workflow_uploaded_on_the_main_node_runs_on_the_node_of_its_workspace(deployment: Deployment,
                                                                                tmp_path: Path) -> None:
    from tests.e2e.test_data_e2e import make_geotiff
    from tests.server.snap import graph

    d = deployment
    workspace = workspace_on(d, ALICE, "node2", "graphs")
    source = tmp_path / "scale.xml"
    source.write_bytes(graph(reads=("Read",), writes=("Write",)))
    with WasdiClient(base_url=d.nodes["wasdi"].url, session_token=d.token(ALICE), max_retries=0) as sdk:
        sdk.workflows.upload(source, name="scale on nodes")
        flow = sdk.workflows.get_by_name("scale on nodes")
        sdk.upload_and_ingest(workspace, make_geotiff(tmp_path / "scene.tif"), timeout=60)  # to node 2
        started = sdk.workflows.run(workspace=workspace, workflow_id=str(flow.workflow_id),
                                    input_file_names=["scene.tif"], template_params={"$SCALE": "2"})
        assert started.bool_value and started.string_value
        record = sdk.processes.get(started.string_value)  # node 2 answers: the SDK learnt where it runs
        assert record.operation_type == "GRAPH" and record.workspace_id == workspace
    # node 2 read the graph from the main node, where it was uploaded
    copy = d.nodes["node2"].data_dir / "workflows" / f"{flow.workflow_id}.xml"
    assert copy.read_bytes() == source.read_bytes()
    assert (d.nodes["node2"].data_dir / "files" / ALICE / workspace / "scene.tif").is_file()
    assert not (d.nodes["wasdi"].data_dir / "files" / ALICE / workspace).exists()


def test_calls_about_one_process_made_on_the_main_node_reach_the_node_that_holds_it(deployment: Deployment,
                                                                                    app: str) -> None:
    d = deployment
    workspace = workspace_on(d, ALICE, "node2", "process calls")
    with d.http(ALICE) as main:
        done = main.post("/processors/run", params={"name": app, "workspace": workspace},
                         content=b'{"name": "located"}').json()["processingIdentifier"]
        # Polled on the main node, as a client that ignores apiUrl does: answered by node 2.
        assert wait_for(main, done) == "DONE"
        record = main.get("/process/byid", params={"procws": done}).json()
        assert (record["processObjId"], record["status"], record["workspaceId"]) == (done, "DONE", workspace)
        assert "hello located" in main.get("/process/payload", params={"procws": done}).text  # the app's payload
        assert main.get("/process/setpayload", params={"procws": done, "payload": "set on main"}).json()[
            "payload"] == "set on main"
        added = main.post("/processors/logs/add", params={"processworkspace": done}, content=b"a line from main")
        assert added.status_code == 200, added.text
        count = main.get("/processors/logs/count", params={"processworkspace": done}).json()
        rows = main.get("/processors/logs/list", params={"processworkspace": done}).json()
        assert count == len(rows) > 0 and rows[-1]["logRow"] == "a line from main"
        # A kill sent to the main node stops the run on node 2.
        sleeper = main.post("/processors/run", params={"name": "sleeper", "workspace": workspace},
                            content=b'{"seconds": 600}').json()["processingIdentifier"]
        eventually(lambda: main.get("/process/getstatusbyid", params={"procws": sleeper}).text.strip('"')
                   == "RUNNING", 120, "the sleeper running")
        assert main.get("/process/delete", params={"procws": sleeper}).status_code == 200
        assert wait_for(main, sleeper, 60) == "STOPPED"
        # Several at once: each from its node, in the order asked.
        assert main.post("/process/statusbyid", json=[sleeper, "no-such-process", done]).json() == \
            ["STOPPED", "ERROR", "DONE"]
        # Unknown ids are still answered in the endpoint's own style, by the node called.
        assert main.get("/process/getstatusbyid", params={"procws": "no-such-process"}).text.strip('"') == "ERROR"
    with d.http(ALICE, "node2") as node2:  # what the main node changed is node 2's record
        assert node2.get("/process/byid", params={"procws": done}).json()["payload"] == "set on main"
        assert node2.get("/process/byid", params={"procws": sleeper}).json()["status"] == "STOPPED"
    with d.http(BOB) as main:  # the caller's rights are checked on the node that holds the process
        assert main.get("/process/byid", params={"procws": done}).json()["status"] == "ERROR"


def test_a_style_uploaded_on_the_main_node_reaches_the_compute_nodes(deployment: Deployment) -> None:
    from tests.server.test_styles import RED_BLUE

    d = deployment
    with d.http(ALICE) as main:
        r = main.post("/styles/uploadfile", params={"name": "nodestyle", "description": "d"},
                      files={"file": ("nodestyle.sld", RED_BLUE)})
        assert r.status_code == 200 and r.json()["boolValue"] is True, r.text
    for code in ("node1", "node2"):  # without any update of the file
        path = d.nodes[code].data_dir / "styles" / "nodestyle.sld"
        eventually(path.is_file, 60, f"the style's file on {code}")
        assert path.read_bytes() == (d.nodes["wasdi"].data_dir / "styles" / "nodestyle.sld").read_bytes()


def test_a_deleted_users_files_and_runs_go_from_the_compute_nodes(deployment: Deployment, tmp_path: Path) -> None:
    d = deployment
    carol = "carol@example.org"
    d.add_users({carol: False}, data_dir=tmp_path / "adding")
    workspace = workspace_on(d, carol, "node1", "carols")
    with d.http(carol) as main:
        r = main.post("/product/uploadfile", params={"workspace": workspace, "name": "notes.txt"},
                      files={"file": ("notes.txt", b"carol's notes\n")})
        assert r.status_code == 200, r.text
        runs = eventually(lambda: main.get("/process/byws", params={"workspace": workspace}).json(), 60,
                          "carol's ingest")
        ingest = runs[0]["processObjId"]
        wait_for(main, ingest, 60)
    folder = d.nodes["node1"].data_dir / "files" / carol
    assert (folder / workspace / "notes.txt").is_file()
    assert located(d, ingest) == "node1"  # the shared index says where the run is
    d.stop("node1")  # the deletion waits in the outbox for a node that is down
    try:
        with d.http(ADMIN) as admin:
            assert admin.delete("/admin/users", params={"userId": carol}).status_code == 200
            assert admin.get("/process/byid", params={"procws": ingest}).json()["status"] == "ERROR"
    finally:
        d.start("node1")
    eventually(lambda: not folder.exists(), 90, "the removal of carol's files on node 1")
    with d.http(ADMIN, "node1") as node1:
        assert node1.get("/process/byid", params={"procws": ingest}).json()["status"] == "ERROR"
    assert "propagated POST /nodes/userdeleted to node node1" in d.nodes["wasdi"].output()
    assert located(d, ingest) is None  # the index row went with the workspace
    # only nodes may ask for it
    with d.http(ADMIN, "node1") as node1:
        assert node1.post("/nodes/userdeleted", params={"userId": ALICE}).status_code == 403


def located(d: Deployment, process_id: str) -> str | None:
    """The node the shared ``process_nodes`` index names for a process (read in the database itself)."""
    import psycopg

    with psycopg.connect(d.store_url) as conn:
        row = conn.execute("""SELECT doc ->> 'nodeCode' FROM "c_process_nodes" WHERE key = %s""",
                           (process_id,)).fetchone()
    return None if row is None else str(row[0])


def test_a_run_on_a_compute_node_is_heard_on_the_main_nodes_broker(deployment: Deployment, app: str) -> None:
    from wasdi_sdk.models.events import ProcessUpdateMessage

    d = deployment
    workspace = workspace_on(d, ALICE, "node1", "heard on the main node")
    with WasdiClient(base_url=d.nodes["wasdi"].url, session_token=d.token(ALICE), max_retries=0) as sdk:
        address = sdk.events.address()
        main_broker = re.search(r"the built-in broker on ws://127\.0\.0\.1:(\d+)", d.nodes["wasdi"].output())
        assert main_broker and f":{main_broker.group(1)}/" in address.url  # the main node's own broker
        with sdk.events.listen(workspace, codes={"UPDATEPROCESSES"}, timeout=30) as events:
            with d.http(ALICE) as main:
                run = main.post("/processors/run", params={"name": app, "workspace": workspace},
                                content=b'{"name": "heard"}').json()["processingIdentifier"]
            seen: list[str] = []
            while "DONE" not in seen:
                message = events.get(120)
                assert isinstance(message, ProcessUpdateMessage)
                if message.process_id == run:
                    seen.append(message.status)
    assert seen[-1] == "DONE" and "RUNNING" in seen
    with d.http(ALICE, "node1") as node1:  # the run was node 1's
        assert node1.get("/process/byid", params={"procws": run}).json()["workspaceId"] == workspace
    forged = [{"messageCode": "UPDATEPROCESSES", "messageResult": "OK", "payload": "x;DONE;100",
               "workspaceId": workspace}]
    with d.http(ALICE) as main:  # a user's session, or a wrong secret, never publishes
        assert main.post("/nodes/messages", json=forged).status_code == 403
        assert main.post("/nodes/messages", json=forged,
                         headers={"x-wasdi-node-secret": "not-the-secret", "x-wasdi-node": "node1"}).status_code == 403
        assert main.post("/nodes/messages", json=forged,
                         headers={"x-wasdi-node-secret": SECRET, "x-wasdi-node": "node1"}).status_code == 200
