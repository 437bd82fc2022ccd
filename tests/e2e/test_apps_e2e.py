"""Apps that really run, on a real server process: apps written only against the official ``wasdi`` library
are uploaded, built (offline, from the local wheelhouse) and run; their states, payloads, log lines and
products are checked through the API."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.app_support import app_zip, wheelhouse
from tests.e2e.conftest import ALICE, RunningServer, ServerFactory

FINAL = {"DONE", "ERROR", "STOPPED"}

HELLO = '''
import wasdi


def run():
    name = wasdi.getParameter("name", "world")
    wasdi.wasdiLog(f"hello {name}")
    wasdi.updateProgressPerc(50)
    file_name = f"greeting-{name}.txt"
    with open(wasdi.getPath(file_name), "w") as handle:
        handle.write(f"hello {name}\\n")
    wasdi.addFileToWASDI(file_name)
    print(f"printed by {name}")
    wasdi.setPayload({"greeting": f"hello {name}"})
'''

NOTES = '''
import json

import wasdi


def run():
    with open(wasdi.getPath("notes.txt"), "w") as handle:
        handle.write("not a raster\\n")
    with open(wasdi.getPath("summary.json"), "w") as handle:
        json.dump({"rasters": 0}, handle)
    wasdi.addFileToWASDI("notes.txt")
    wasdi.addFileToWASDI("summary.json")
'''

PARENT = '''
import wasdi


def run():
    first = wasdi.asynchExecuteProcessor("hello", {"name": "first"})
    second = wasdi.asynchExecuteProcessor("hello", {"name": "second"})
    wasdi.wasdiLog(f"children {first} {second}")
    statuses = wasdi.waitProcesses([first, second])
    wasdi.setPayload({"children": [first, second], "statuses": statuses})
'''

FAILING = '''
def run():
    raise ValueError("the app broke on purpose")
'''

SLEEPER = '''
import os
import time

import wasdi


def run():
    wasdi.wasdiLog(f"sleeping pid={os.getpid()}")
    time.sleep(600)
'''

WITH_SIX = '''
import wasdi


def run():
    import six
    wasdi.setPayload({"six": six.__version__})
'''

WITHOUT_SIX = '''
import wasdi


def run():
    try:
        import six
        found = six.__version__
    except ImportError:
        found = None
    wasdi.setPayload({"six": found})
'''


@pytest.fixture
def apps_server(servers: ServerFactory, data_dir_with_workspace: Path, tmp_path: Path) -> RunningServer:
    config = tmp_path / "apps.toml"
    # One worker: a parent waiting for its children must free its slot for them, or the tests hang.
    config.write_text(f"apps_find_links = [{json.dumps(str(wheelhouse()))}]\napps_offline = true\n"
                      "launcher_workers = 1\n")
    return servers.start(data_dir_with_workspace, extra_args=("--config", str(config)))


class Api:
    def __init__(self, server: RunningServer, user: str = ALICE) -> None:
        self.http = server.http(user)
        self.workspace = next(w["workspaceId"] for w in self.http.get("/ws/byuser").json() if w["workspaceName"]
                              == "precious")

    def upload(self, name: str, files: dict[str, str], **params: Any) -> None:
        r = self.http.post("/processors/uploadprocessor", params={"name": name, "workspace": self.workspace, **params},
                           files={"file": (f"{name}.zip", app_zip(files))})
        assert r.status_code == 200 and r.json()["boolValue"] is True, r.text
        deploy = r.json()["stringValue"]
        assert self.wait(deploy) == "DONE", self.log(deploy)

    def run(self, name: str, params: dict[str, Any] | None = None) -> str:
        r = self.http.post("/processors/run", params={"name": name, "workspace": self.workspace},
                           content=json.dumps(params or {}))
        body = r.json()
        assert r.status_code == 200 and body["status"] != "ERROR", body
        return str(body["processingIdentifier"])

    def status(self, process_id: str) -> str:
        return self.http.get("/process/getstatusbyid", params={"procws": process_id}).text.strip('"')

    def wait(self, process_id: str, timeout: float = 90.0, until: frozenset[str] | set[str] = FINAL) -> str:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            status = self.status(process_id)
            if status in until:
                return status
            time.sleep(0.1)
        raise AssertionError(f"{process_id} still {self.status(process_id)} after {timeout} s")

    def process(self, process_id: str) -> dict[str, Any]:
        return dict(self.http.get("/process/byid", params={"procws": process_id}).json())

    def payload(self, process_id: str) -> Any:
        value = self.http.get("/process/payload", params={"procws": process_id}).json()
        return json.loads(value) if isinstance(value, str) else value

    def log(self, process_id: str) -> list[str]:
        return [row["logRow"] for row in
                self.http.get("/processors/logs/list", params={"processworkspace": process_id}).json()]

    def products(self) -> list[str]:
        return [p["fileName"] for p in
                self.http.get("/product/byws", params={"workspace": self.workspace}).json()]


def test_an_app_reads_its_parameters_logs_writes_an_output_and_sets_a_payload(apps_server: RunningServer) -> None:
    api = Api(apps_server)
    api.upload("hello", {"myProcessor.py": HELLO})
    process_id = api.run("hello", {"name": "moon"})
    assert api.wait(process_id) == "DONE"
    record = api.process(process_id)
    assert record["progressPerc"] == 100
    assert api.payload(process_id) == {"greeting": "hello moon"}
    lines = api.log(process_id)
    assert "hello moon" in lines
    assert "printed by moon" in lines
    assert not any(apps_server.token(ALICE) in line for line in lines)
    assert "greeting-moon.txt" in api.products()
    params = api.http.get("/process/paramsbyid", params={"procws": process_id}).json()
    assert (json.loads(params) if isinstance(params, str) else params) == {"name": "moon"}


def test_an_apps_text_and_json_outputs_leave_no_gdal_chatter_in_the_server_log(apps_server: RunningServer) -> None:
    api = Api(apps_server)
    api.upload("notes", {"myProcessor.py": NOTES})
    process_id = api.run("notes")
    assert api.wait(process_id) == "DONE", api.log(process_id)
    assert {"notes.txt", "summary.json"} <= set(api.products())
    server_log = apps_server.output()
    assert "Serving on" in server_log  # the log is the server's, read whole
    assert "not recognized as being in a supported file format" not in server_log, server_log
    assert "GDAL signalled an error" not in server_log, server_log


def test_a_parent_app_runs_two_children_asynchronously_and_waits_for_them(apps_server: RunningServer) -> None:
    api = Api(apps_server)
    api.upload("hello", {"myProcessor.py": HELLO})
    api.upload("parent", {"myProcessor.py": PARENT})
    parent = api.run("parent")
    assert api.wait(parent, timeout=120) == "DONE", api.log(parent)
    payload = api.payload(parent)
    assert payload["statuses"] == ["DONE", "DONE"]
    for child in payload["children"]:
        assert api.status(child) == "DONE"
        assert api.process(child).get("parentId", parent) in (parent, None)
        assert api.payload(child)["greeting"].startswith("hello ")
    assert {"greeting-first.txt", "greeting-second.txt"} <= set(api.products())


def test_a_failing_app_ends_in_error_with_its_traceback_in_the_log(apps_server: RunningServer) -> None:
    api = Api(apps_server)
    api.upload("failing", {"myProcessor.py": FAILING})
    process_id = api.run("failing")
    assert api.wait(process_id) == "ERROR"
    text = "\n".join(api.log(process_id))
    assert "Traceback (most recent call last)" in text
    assert "ValueError: the app broke on purpose" in text


def _host_pid_of_app(data_dir: Path, name: str) -> int:
    """The host's pid of the run of app ``name`` (inside its own PID namespace it has another): the process
    whose command line is its environment's interpreter."""
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                words = handle.read().split(b"\0")
        except OSError:
            continue
        if words and words[0].startswith(str(data_dir.resolve()).encode()) and \
                f"/app-environments/{name}/venv/bin/python".encode() in words[0]:
            return int(entry)
    return 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").exists() and Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


def test_a_sleeping_app_is_stopped_at_once_by_process_delete(apps_server: RunningServer) -> None:
    api = Api(apps_server)
    api.upload("sleeper", {"myProcessor.py": SLEEPER})
    process_id = api.run("sleeper")
    end = time.monotonic() + 60
    pid = 0
    while time.monotonic() < end and not pid:
        if any("pid=" in line for line in api.log(process_id)):
            pid = _host_pid_of_app(apps_server.data_dir, "sleeper")
        time.sleep(0.1)
    assert pid and _alive(pid)
    r = api.http.get("/process/delete", params={"procws": process_id})
    assert r.status_code == 200
    assert api.wait(process_id, timeout=10) == "STOPPED"
    end = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < end:
        time.sleep(0.05)
    assert not _alive(pid)


def test_pip_txt_packages_are_isolated_per_app(apps_server: RunningServer) -> None:
    api = Api(apps_server)
    api.upload("withsix", {"myProcessor.py": WITH_SIX, "pip.txt": "six==1.16.0\n"})
    api.upload("withoutsix", {"myProcessor.py": WITHOUT_SIX})
    first, second = api.run("withsix"), api.run("withoutsix")
    assert api.wait(first) == "DONE", api.log(first)
    assert api.wait(second) == "DONE", api.log(second)
    assert api.payload(first) == {"six": "1.16.0"}
    assert api.payload(second) == {"six": None}


def test_the_run_endpoint_takes_url_encoded_bodies_and_query_parameters(apps_server: RunningServer) -> None:
    api = Api(apps_server)
    api.upload("hello", {"myProcessor.py": HELLO})
    encoded = httpx.QueryParams({"x": json.dumps({"name": "web"})}).get("x")
    from urllib.parse import quote
    r = api.http.post("/processors/run", params={"name": "hello", "workspace": api.workspace},
                      content=quote(json.dumps({"name": "web"})), headers={"Content-Type": "text/plain"})
    assert r.json()["status"] != "ERROR", r.text
    assert encoded is not None
    via_get = api.http.get("/processors/run", params={"name": "hello", "workspace": api.workspace,
                                                       "encodedJson": json.dumps({"name": "query"})}).json()
    assert api.wait(r.json()["processingIdentifier"]) == "DONE"
    assert api.wait(via_get["processingIdentifier"]) == "DONE"
    assert api.payload(via_get["processingIdentifier"]) == {"greeting": "hello query"}


def test_the_sdk_runs_an_app_and_waits_for_its_end(apps_server: RunningServer) -> None:
    api = Api(apps_server)
    api.upload("hello", {"myProcessor.py": HELLO})
    api.upload("failing", {"myProcessor.py": FAILING})
    with apps_server.sdk(ALICE) as sdk:
        done = sdk.processors.run_and_wait(name="hello", workspace=api.workspace, params={"name": "sdk"}, timeout=60)
        assert done.status == "DONE"
        failed = sdk.processors.run_and_wait(name="failing", workspace=api.workspace, timeout=60,
                                             raise_on_failure=False)
        assert failed.status == "ERROR"
    assert api.payload(str(done.process_id)) == {"greeting": "hello sdk"}


def test_an_app_ends_with_a_killed_server_and_is_an_error_after_the_restart(apps_server: RunningServer,
                                                                            servers: ServerFactory,
                                                                            tmp_path: Path) -> None:
    api = Api(apps_server)
    api.upload("sleeper", {"myProcessor.py": SLEEPER})
    process_id = api.run("sleeper")
    end = time.monotonic() + 60
    pid = 0
    while time.monotonic() < end and not pid:
        if any("pid=" in line for line in api.log(process_id)):
            pid = _host_pid_of_app(apps_server.data_dir, "sleeper")
        time.sleep(0.1)
    assert pid and _alive(pid)
    apps_server.kill()
    # The run's supervisor hears its server die (parent-death signal) and ends the whole run.
    end = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < end:
        time.sleep(0.05)
    assert not _alive(pid)
    config = tmp_path / "apps.toml"
    restarted = servers.start(apps_server.data_dir, extra_args=("--config", str(config)))
    assert Api(restarted).status(process_id) == "ERROR"
