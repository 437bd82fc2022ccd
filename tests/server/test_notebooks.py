"""Notebooks on a workspace (/console/create, /console/ready): a real JupyterLab started through the API, in
the box, a cell run on its kernel through the Jupyter protocol that lists the workspace's products with the
official library, its token, its idle stop, its end with the server, and the sentence of a server
without the [notebook] extra."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import httpx
import pytest
from tests.conftest import Person, Server
from tests.server.geodata import ingested, make_geotiff, messages, new_workspace, share
from tests.server.notebook_support import lab_parts, require_notebooks, run_cell, served, wait_ready

from wasdi_server.consoles import LAUNCH_NOTEBOOK

CELL = """
import json, os, wasdi
print("PRODUCTS", json.dumps(wasdi.getProductsByActiveWorkspace()))
try:
    open({secret!r}).read()
    print("READ", "the server's store")
except OSError as e:
    print("REFUSED", type(e).__name__)
open("from-the-notebook.txt", "w").write("kept")
print("LEAKED", os.environ.get("WASDI_TEST_SERVER_SECRET", "no"))
"""


def test_a_lab_lists_the_workspace_products_with_the_official_library(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    require_notebooks()
    # Something of the server's own environment the lab must not inherit.
    monkeypatch.setenv("WASDI_TEST_SERVER_SECRET", "leaked")
    with served(tmp_path / "data") as server:
        alice = server.add_user("alice@example.org")
        ws = new_workspace(server, alice, "notes")
        ingested(server, alice, ws, make_geotiff(tmp_path / "scene.tif"))

        first = server.post("/console/create", alice, params={"workspaceId": ws}).json
        assert first["boolValue"] is True and first["stringValue"], first
        address = wait_ready(server, alice, ws)
        base, token = lab_parts(address)
        # Under the server's own address: the lab has no port of its own.
        port = server.services.settings.port
        assert address == f"http://127.0.0.1:{port}/notebook/{ws}/lab?token={token}" and len(token) >= 32
        heard = messages(server, ws, LAUNCH_NOTEBOOK)
        assert [m["messageResult"] for m in heard] == ["OK"] and token not in str(heard)
        # Asked again: the same lab, at once.
        again = server.post("/console/create", alice, params={"workspaceId": ws}).json
        assert again == {**again, "boolValue": True, "stringValue": address}

        # The token (or the owner's session) is required: none is 401, a wrong one 403.
        def kernels(**headers: str) -> int:
            return httpx.get(f"{base}/api/kernels", headers=headers, timeout=10).status_code

        assert kernels() == 401 and kernels(Authorization="token nope") == 403
        assert kernels(Authorization=f"token {token}") == 200

        store_file = next(p for p in (tmp_path / "data").iterdir() if p.is_file())
        printed = run_cell(address, CELL.format(secret=str(store_file)))
        lines = dict(line.split(" ", 1) for line in printed.splitlines() if " " in line)
        assert lines["PRODUCTS"] == '["scene.tif"]', printed
        # The store does not exist in the lab's world at all.
        assert lines["REFUSED"] == "FileNotFoundError" and "READ" not in lines, printed
        assert lines["LEAKED"] == "no", printed
        folder = server.services.workspaces.folder(server.services.workspaces.load(ws))
        assert (folder / "from-the-notebook.txt").read_text() == "kept"

        lab = server.services.notebooks.find(alice.user_id, ws)
        session = lab.plan.session
        assert server.services.sessions.resolve_scoped(session)[1] == {"workspaceId": ws, "processId": ""}
        server.services.notebooks.close()  # what the server's stop does
        assert lab.wait(30) and not server.get("/console/ready", alice, workspaceId=ws).json["boolValue"]
        # Its token opens nothing any more, and its socket is gone with its scratch folder.
        assert httpx.get(f"{base}/api/status", headers={"Authorization": f"token {token}"},
                         timeout=5).status_code == 403
        assert not lab.socket_path.exists()
        assert server.services.sessions.resolve_scoped(session) is None


def test_an_idle_lab_stops(tmp_path: Path) -> None:
    require_notebooks()
    with served(tmp_path / "data", notebook_idle_minutes=0.03) as server:
        alice = server.add_user("alice@example.org")
        ws = new_workspace(server, alice)
        server.post("/console/create", alice, params={"workspaceId": ws})
        address = wait_ready(server, alice, ws)
        lab = server.services.notebooks.find(alice.user_id, ws)
        assert lab.wait(30), "an idle lab must stop after notebook_idle_minutes"
        assert lab.failure == ""
        answer = server.get("/console/ready", alice, workspaceId=ws).json
        assert answer["boolValue"] is False and "create one" in answer["stringValue"]
        base, token = lab_parts(address)
        assert httpx.get(f"{base}/api/status", headers={"Authorization": f"token {token}"},
                         timeout=5).status_code == 403
        # A new create starts a new lab, with a new token.
        server.post("/console/create", alice, params={"workspaceId": ws})
        assert wait_ready(server, alice, ws) != address


def test_deleting_the_workspace_stops_its_lab(tmp_path: Path) -> None:
    require_notebooks()
    with served(tmp_path / "data") as server:
        alice = server.add_user("alice@example.org")
        ws = new_workspace(server, alice)
        server.post("/console/create", alice, params={"workspaceId": ws})
        wait_ready(server, alice, ws)
        lab = server.services.notebooks.find(alice.user_id, ws)
        assert server.delete("/ws/delete", alice, workspace=ws, deletefile="true").status_code == 200
        assert lab.wait(0) and server.services.notebooks.find(alice.user_id, ws) is None


def test_without_the_extra_the_answer_says_what_to_install(server: Server, alice: Person,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from wasdi_sdk import ServerError

    ws = new_workspace(server, alice)
    monkeypatch.setitem(sys.modules, "jupyterlab", None)  # what `import jupyterlab` finds without the extra
    r = server.post("/console/create", alice, params={"workspaceId": ws})
    assert r.status_code == 200 and r.json["boolValue"] is False and r.json["intValue"] == 501
    assert "pip install 'wasdi-toolkit[notebook]'" in r.json["stringValue"]
    with pytest.raises(ServerError, match=r"wasdi-toolkit\[notebook\]"):
        server.sdk(alice).console.create(ws)
    assert server.services.notebooks.find(alice.user_id, ws) is None


def test_who_may_have_a_lab(server: Server, alice: Person, reader: Person, stranger: Person,
                            monkeypatch: pytest.MonkeyPatch) -> None:
    ws = new_workspace(server, alice)
    share(server, alice, ws, reader, "read")
    monkeypatch.setitem(sys.modules, "jupyterlab", None)  # no lab is started by these calls
    for who in (alice, reader):
        r = server.get("/console/ready", who, workspaceId=ws)
        assert r.status_code == 200 and r.json["boolValue"] is False and "create one" in r.json["stringValue"]
    # A lab writes the workspace's folder: a reader gets none.
    r = server.post("/console/create", reader, params={"workspaceId": ws})
    assert r.json["boolValue"] is False and r.json["intValue"] == 403
    r = server.post("/console/create", stranger, params={"workspaceId": ws})
    assert r.json["boolValue"] is False and r.json["intValue"] == 403
    assert server.get("/console/ready", stranger, workspaceId=ws).status_code == 403
    assert server.get("/console/ready", None, workspaceId=ws).status_code == 401
    assert server.get("/console/ready", alice, workspaceId="nope").status_code == 400
    # An app run's (or a lab's) session cannot start labs.
    scoped = Person(alice.user_id, server.services.sessions.open(alice.user_id, scope={"workspaceId": ws,
                                                                                         "processId": ""}))
    assert server.post("/console/create", scoped, params={"workspaceId": ws}).json["intValue"] == 403


def test_the_time_to_ready_is_recorded(tmp_path: Path) -> None:
    require_notebooks()
    with served(tmp_path / "data") as server:
        alice = server.add_user("alice@example.org")
        ws = new_workspace(server, alice)
        started = time.monotonic()
        server.post("/console/create", alice, params={"workspaceId": ws})
        wait_ready(server, alice, ws)
        lab = server.services.notebooks.find(alice.user_id, ws)
        assert lab.ready_after is not None and 0 < lab.ready_after <= time.monotonic() - started


def test_a_lab_that_does_not_answer_in_time_is_stopped_and_said_so(tmp_path: Path) -> None:
    require_notebooks()
    with served(tmp_path / "data", notebook_start_seconds=0.05) as server:
        alice = server.add_user("alice@example.org")
        ws = new_workspace(server, alice)
        assert server.post("/console/create", alice, params={"workspaceId": ws}).json["boolValue"] is True
        lab = server.services.notebooks.find(alice.user_id, ws)
        assert lab.wait(30)
        answer = server.get("/console/ready", alice, workspaceId=ws).json
        assert answer["boolValue"] is False and "did not answer within 0.05 s" in answer["stringValue"]
        heard = messages(server, ws, LAUNCH_NOTEBOOK)
        assert [(m["messageResult"], m["payload"]) for m in heard] == [("KO", answer["stringValue"])]
