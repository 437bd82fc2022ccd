"""/processors (lifecycle, runs, build logs, files, UI) and /packageManager through the real app: every
status and failure style of the contract, the owner/writer/reader/stranger/admin matrix on changes, and
environments really built (offline, from the local wheelhouse)."""

from __future__ import annotations

import io
import json
import stat
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.app_support import HELLO_APP, app_settings, app_zip
from tests.conftest import Person, Server

from wasdi_server.domains.apps.app_records import processor_resource
from wasdi_server.launcher import ops_apps
from wasdi_server.launcher.box import Job
from wasdi_server.launcher.engines import AppLayout, Launch

BASE = "http://testserver"
ROLES = ("owner", "writer", "reader", "stranger", "admin")
WRITE_RIGHTS = {"owner": True, "writer": True, "reader": False, "stranger": False, "admin": True}
FINAL = {"DONE", "ERROR", "STOPPED"}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    s = Server(tmp_path / "data", **app_settings())
    yield s
    s.close()


@pytest.fixture
def http(server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(transport=httpx.WSGITransport(app=server.app), base_url=BASE) as client:
        yield client


@pytest.fixture
def workspace(server: Server, alice: Person) -> str:
    return str(server.services.workspaces.create(server.services.sessions.resolve(alice.token), "W")["workspaceId"])


def hdr(who: Person | None) -> dict[str, str]:
    return who.headers if who else {}


def upload(http: httpx.Client, who: Person | None, name: str, files: dict[str, str] | None = None, *,
           data: bytes | None = None, **params: Any) -> httpx.Response:
    content = data if data is not None else app_zip(files or {"myProcessor.py": HELLO_APP})
    return http.post("/processors/uploadprocessor", params={"name": name, **params}, headers=hdr(who),
                     files={"file": (f"{name}.zip", content)})


def wait(server: Server, process_id: str, timeout: float = 60.0) -> str:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        status = str(server.services.processes.get(process_id)["status"])
        if status in FINAL:
            return status
        time.sleep(0.05)
    raise AssertionError(f"{process_id} did not end")


def deploy(server: Server, http: httpx.Client, who: Person, name: str, files: dict[str, str] | None = None,
           **params: Any) -> dict[str, Any]:
    r = upload(http, who, name, files, **params)
    assert r.status_code == 200 and r.json()["boolValue"] is True, r.text
    wait(server, r.json()["stringValue"])
    return dict(server.services.apps.records.by_name(name))


def give(server: Server, doc: dict[str, Any], owner: Person, writer: Person, reader: Person) -> None:
    caller = server.services.sessions.resolve(owner.token)
    server.services.sharing.share(caller, processor_resource(doc), writer.user_id, "write", notify=False)
    server.services.sharing.share(caller, processor_resource(doc), reader.user_id, "read", notify=False)


@pytest.fixture
def people(alice: Person, writer: Person, reader: Person, stranger: Person, admin: Person) -> dict[str, Person]:
    return {"owner": alice, "writer": writer, "reader": reader, "stranger": stranger, "admin": admin}


@pytest.fixture
def hello(server: Server, http: httpx.Client, people: dict[str, Person]) -> dict[str, Any]:
    doc = deploy(server, http, people["owner"], "hello", paramsSample='{"name": "x"}')
    give(server, doc, people["owner"], people["writer"], people["reader"])
    return doc


# -- upload and deploy ------------------------------------------------------------------------------------
def test_upload_builds_an_environment_with_the_library_and_logs_the_build(
        server: Server, http: httpx.Client, alice: Person) -> None:
    files = {"myProcessor.py": HELLO_APP, "pip.txt": "six==1.16.0\n--index-url http://example.org/evil\n",
             "packages.txt": "gdal-bin\n", "env.yml": "name: x\n"}
    doc = deploy(server, http, alice, "hello", files)
    assert doc["deployed"] is True and doc["deploymentOngoing"] is False
    assert doc["type"] == "ubuntu_python37_snap"
    log = http.get("/processors/logs/build", params={"processorId": doc["processorId"]}, headers=alice.headers).json()
    text = "\n".join(log)
    assert "packages.txt" in text and "not applied" in text
    assert "env.yml" in text
    assert "'--index-url http://example.org/evil' is not a plain package spec" in text
    assert log[-1] == "environment ready"
    names = {p["packageName"] for p in http.get("/packageManager/listPackages", params={"name": "hello"},
                                                headers=alice.headers).json()}
    assert {"wasdi", "six", "requests"} <= names
    assert (server.settings.apps_root / "hello" / "myProcessor.py").is_file()


def test_a_zip_of_the_app_folder_is_unpacked_from_inside_it(server: Server, http: httpx.Client, alice: Person) -> None:
    r = upload(http, alice, "folder", data=app_zip({"myProcessor.py": HELLO_APP, "readme.md": "# Folder"},
                                                   top="folder/"))
    assert r.json()["boolValue"] is True
    assert (server.settings.apps_root / "folder" / "myProcessor.py").is_file()


@pytest.mark.parametrize(("name", "code"), [("a/b", 400), ("a#b", 400), (".incoming", 400), ("Hello", 500),
                                          ("he llo", 500)])
def test_upload_refuses_bad_names_in_the_marker_style(http: httpx.Client, alice: Person, name: str, code: int) -> None:
    r = upload(http, alice, name)
    assert r.status_code == 200
    assert r.json()["boolValue"] is False and r.json()["intValue"] == code


def test_upload_refuses_a_taken_name_unless_the_owner_forces_it(
        server: Server, http: httpx.Client, alice: Person, bob: Person) -> None:
    deploy(server, http, alice, "hello")
    taken = upload(http, bob, "hello").json()
    assert taken["boolValue"] is False and taken["intValue"] == 409
    assert "already used" in taken["stringValue"]
    assert upload(http, bob, "hello", force="true").json()["intValue"] == 409
    forced = upload(http, alice, "hello", {"myProcessor.py": HELLO_APP, "help.txt": "new help"}, force="true").json()
    assert forced["boolValue"] is True
    assert wait(server, forced["stringValue"]) == "DONE"
    assert (server.settings.apps_root / "hello" / "help.txt").read_text() == "new help"


def _zip_with_link() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        bundle.writestr("myProcessor.py", HELLO_APP)
        info = zipfile.ZipInfo("link")
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        bundle.writestr(info, "/etc/passwd")
    return buffer.getvalue()


@pytest.mark.parametrize("data", [
    app_zip({"myProcessor.py": HELLO_APP, "../escape.py": "x"}),
    app_zip({"myProcessor.py": HELLO_APP, "/abs.py": "x"}),
    _zip_with_link(),
    b"not a zip at all",
    app_zip({"other.py": "x"}),
], ids=["dotdot", "absolute", "link", "not-zip", "no-entry-point"])
def test_upload_refuses_unsafe_or_unusable_zips(server: Server, http: httpx.Client, alice: Person,
                                                data: bytes) -> None:
    r = upload(http, alice, "bad", data=data)
    assert r.json()["boolValue"] is False and r.json()["intValue"] == 400
    assert server.services.apps.records.by_name("bad") is None
    assert not (server.settings.data_dir / "escape.py").exists()
    assert not (server.settings.apps_root / "escape.py").exists()


def test_upload_checks_params_sample_and_session(http: httpx.Client, alice: Person) -> None:
    bad = upload(http, alice, "hello", paramsSample="{not json").json()
    assert bad["boolValue"] is False and bad["intValue"] == 500
    assert bad["stringValue"] == "Parameter Sample is not a valid JSON"
    assert upload(http, None, "hello").json()["intValue"] == 401


def test_an_unsupported_type_is_stored_but_its_build_ends_in_error_with_the_reason(
        server: Server, http: httpx.Client, alice: Person, workspace: str) -> None:
    r = upload(http, alice, "matlab", {"main.m": "disp(1)"}, type="octave", workspace=workspace)
    assert r.json()["boolValue"] is True
    assert wait(server, r.json()["stringValue"]) == "ERROR"
    said = {(m["messageCode"], m["messageResult"]): m["payload"] for m in server.messages_of(workspace)
            if m["messageCode"] != "UPDATEPROCESSES"}
    assert said[("INFO", "OK")] == "GURU MEDITATION<br>There was an error deploying matlab :("
    assert "cannot be built or run here" in said[("DEPLOYPROCESSOR", "KO")]
    doc = server.services.apps.records.by_name("matlab")
    assert doc["type"] == "octave" and doc["deployed"] is False and doc["deploymentOngoing"] is False
    log = http.get("/processors/logs/build", params={"processorId": doc["processorId"]}, headers=alice.headers).json()
    assert "Octave" in log[-1] and "cannot be built or run here" in log[-1]
    # The deploy's run log says why once (the launcher writes an operation's failure; the build does not too).
    run_log = [row["logRow"] for row in server.services.process_logs.logs.read(r.json()["stringValue"])]
    assert sum("cannot be built or run here" in line for line in run_log) == 1, run_log
    assert http.get("/packageManager/listPackages", params={"name": "matlab"}, headers=alice.headers).status_code == 500


def test_an_unknown_type_becomes_the_default_type(server: Server, http: httpx.Client, alice: Person) -> None:
    assert deploy(server, http, alice, "hello", type="no-such-type")["type"] == "ubuntu_python37_snap"


# -- changes: the permission matrix ------------------------------------------------------------------------
@pytest.mark.parametrize("role", ROLES)
def test_update_needs_write_rights(http: httpx.Client, server: Server, hello: dict[str, Any],
                                   people: dict[str, Person], role: str) -> None:
    body = {"processorDescription": f"by {role}", "isPublic": 1, "minuteTimeout": 5, "paramsSample": '{"a": 1}'}
    r = http.post("/processors/update", params={"processorId": hello["processorId"]}, headers=people[role].headers,
                  json=body)
    doc = server.services.apps.records.get(hello["processorId"])
    if WRITE_RIGHTS[role]:
        assert r.status_code == 200
        assert (doc["description"], doc["isPublic"], doc["minuteTimeout"]) == (f"by {role}", 1, 5)
    else:
        assert r.status_code == 403
        assert doc["description"] == ""


@pytest.mark.parametrize("path", ["/processors/redeploy", "/processors/libupdate", "/processors/cleadbuildflag"])
@pytest.mark.parametrize("role", ROLES)
def test_build_requests_need_write_rights(http: httpx.Client, server: Server, hello: dict[str, Any],
                                          people: dict[str, Person], role: str, path: str) -> None:
    r = http.get(path, params={"processorId": hello["processorId"]}, headers=people[role].headers)
    assert r.status_code == (200 if WRITE_RIGHTS[role] else 403)


def test_update_and_build_requests_fail_in_the_status_style(http: httpx.Client, hello: dict[str, Any],
                                                            alice: Person) -> None:
    pid = hello["processorId"]
    assert http.post("/processors/update", params={"processorId": pid}, headers=alice.headers,
                     json={"paramsSample": "{bad"}).status_code == 400
    assert http.post("/processors/update", params={"processorId": "nope"}, headers=alice.headers,
                     json={}).status_code == 400
    for path in ("/processors/redeploy", "/processors/libupdate", "/processors/cleadbuildflag", "/processors/delete"):
        assert http.get(path, params={"processorId": pid}).status_code == 401
    assert http.get("/processors/redeploy", params={"processorId": pid, "workspace": "nope"},
                    headers=alice.headers).status_code in (400, 403)


def test_redeploy_with_an_unchanged_pip_txt_rebuilds_from_the_cache(server: Server, http: httpx.Client,
                                                                    hello: dict[str, Any], alice: Person) -> None:
    http.get("/processors/cleadbuildflag", params={"processorId": hello["processorId"]}, headers=alice.headers)
    process_id = server.services.apps.redeploy(server.services.sessions.resolve(alice.token), hello["processorId"],
                                               None)
    assert server.services.apps.records.get(hello["processorId"])["deploymentOngoing"] is True
    assert wait(server, process_id) == "DONE"
    doc = server.services.apps.records.get(hello["processorId"])
    assert doc["deployed"] is True and doc["deploymentOngoing"] is False


def test_updatefiles_rebuilds_only_when_pip_txt_changes(server: Server, http: httpx.Client, hello: dict[str, Any],
                                                        alice: Person, workspace: str) -> None:
    def send(name: str, data: bytes) -> str:
        r = http.post("/processors/updatefiles", params={"processorId": hello["processorId"], "workspace": workspace},
                      headers=alice.headers, files={"file": (name, data)})
        assert r.status_code == 200, r.text
        latest = server.services.processes.by_workspace(workspace)[0]
        assert wait(server, latest["processObjId"]) == "DONE"
        return str(latest["operationType"])

    assert send("readme.md", b"# Hello\nSays hello.") == "LIBRARYUPDATE"
    assert (server.settings.apps_root / "hello" / "readme.md").is_file()
    # What the web client's app list waits for to refresh (an INFO saying "Re Deploy").
    assert [m["payload"] for m in server.messages_of(workspace) if m["messageCode"] == "INFO"] == \
        ["Re Deploy Done<br>hello is now available"]
    assert send("update.zip", app_zip({"pip.txt": "six==1.16.0\n"})) == "REDEPLOYPROCESSOR"
    assert send("pip.txt", b"six==1.16.0\n") == "LIBRARYUPDATE"
    names = {p["packageName"] for p in http.get("/packageManager/listPackages", params={"name": "hello"},
                                                headers=alice.headers).json()}
    assert "six" in names
    r = http.post("/processors/updatefiles", params={"processorId": hello["processorId"]}, headers=alice.headers,
                  files={"file": ("../x.py", b"x")})
    assert r.status_code == 400


# -- delete -----------------------------------------------------------------------------------------------
def test_the_owner_deletes_the_app_its_files_environment_and_sharings(
        server: Server, http: httpx.Client, hello: dict[str, Any], people: dict[str, Person], workspace: str) -> None:
    seen: list[str] = []
    server.services.apps.delete_hooks.append(lambda doc: seen.append(doc["processorId"]))
    layout = server.services.apps.layout(hello)
    assert layout.home.is_dir() and layout.folder.is_dir()
    r = http.get("/processors/delete", params={"processorId": hello["processorId"], "workspace": workspace},
                 headers=people["owner"].headers)
    assert r.status_code == 200
    assert seen == [hello["processorId"]]
    # What the web client's app list waits for to refresh.
    assert [(m["messageCode"], m["messageResult"], m["payload"]) for m in server.messages_of(workspace)] == \
        [("DELETEPROCESSOR", "OK", "Delete App<br>hello has been deleted")]
    assert server.services.apps.records.get(hello["processorId"]) is None
    assert not layout.home.exists() and not layout.folder.exists()
    assert server.services.sharing.sharings_of(processor_resource(hello)) == []
    again = http.get("/processors/delete", params={"processorId": hello["processorId"]},
                     headers=people["owner"].headers)
    assert again.status_code == 400


class Crash(Exception):
    """Stands for the process dying at this instant."""


@pytest.mark.parametrize("point", ["after the hooks", "after the record, before the files"])
def test_an_app_delete_a_crash_interrupted_is_finished_by_the_next_start(
        server: Server, http: httpx.Client, hello: dict[str, Any], people: dict[str, Person],
        monkeypatch: pytest.MonkeyPatch, point: str) -> None:
    apps = server.services.apps
    layout = apps.layout(hello)

    def boom(*args: Any, **kwargs: Any) -> None:
        raise Crash

    with monkeypatch.context() as patch:
        if point == "after the hooks":
            patch.setattr(apps.sharing, "remove_all", boom)
        else:
            patch.setattr("wasdi_server.domains.apps.apps.shutil.rmtree", boom)
        with pytest.raises(Crash):
            apps.delete(server.services.sessions.resolve(people["owner"].token), hello["processorId"])
    server.close()

    restarted = Server(server.settings.data_dir, **app_settings())  # finishes pending intents at start
    try:
        assert restarted.services.apps.records.get(hello["processorId"]) is None
        assert restarted.services.sharing.sharings_of(processor_resource(hello)) == []
        assert not layout.home.exists() and not layout.folder.exists()
        assert restarted.services.intents.pending() == []
    finally:
        restarted.close()


@pytest.mark.parametrize("role", ["writer", "reader"])
def test_a_sharer_deleting_removes_only_the_sharing(server: Server, http: httpx.Client, hello: dict[str, Any],
                                                    people: dict[str, Person], role: str) -> None:
    r = http.get("/processors/delete", params={"processorId": hello["processorId"]}, headers=people[role].headers)
    assert r.status_code == 200
    assert server.services.apps.records.get(hello["processorId"]) is not None
    users = {s["userId"] for s in server.services.sharing.sharings_of(processor_resource(hello))}
    assert people[role].user_id not in users


def test_a_stranger_cannot_delete_and_nodedelete_is_for_compute_nodes(
        server: Server, http: httpx.Client, hello: dict[str, Any], people: dict[str, Person]) -> None:
    r = http.get("/processors/delete", params={"processorId": hello["processorId"]}, headers=people["stranger"].headers)
    assert r.status_code == 401
    assert server.services.apps.records.get(hello["processorId"]) is not None
    node = http.get("/processors/nodedelete", params={"processorId": hello["processorId"], "processorName": "hello"},
                    headers=people["owner"].headers)
    assert node.status_code == 400


def test_delete_all_of_user_removes_every_app_and_is_idempotent(server: Server, http: httpx.Client,
                                                                hello: dict[str, Any], alice: Person) -> None:
    server.services.apps.delete_all_of_user(alice.user_id)
    assert server.services.apps.records.processors.find(userId=alice.user_id) == []
    assert not (server.settings.apps_root / "hello").exists()
    assert not (server.settings.app_environments_root / "hello").exists()
    server.services.apps.delete_all_of_user(alice.user_id)


# -- reading ----------------------------------------------------------------------------------------------
def test_help_ui_cwl_and_download(server: Server, http: httpx.Client, alice: Person, stranger: Person) -> None:
    deploy(server, http, alice, "hello", {"myProcessor.py": HELLO_APP, "README.md": "read me", "help.txt": "help me",
                                           "hello.cwl": "cwlVersion: v1.0"})
    doc = server.services.apps.records.by_name("hello")
    help_text = http.get("/processors/help", params={"name": "hello"}, headers=alice.headers).json()
    assert help_text["boolValue"] is True and "read me" in help_text["stringValue"]
    assert "help me" in help_text["stringValue"]
    assert http.get("/processors/help", params={"name": "hello"}, headers=stranger.headers).json()["boolValue"] is False
    assert http.get("/processors/ui", params={"name": "hello"}, headers=alice.headers).json() == {"tabs": []}
    ui = {"tabs": [{"name": "Basic", "controls": []}]}
    assert http.post("/processors/saveui", params={"name": "hello"}, headers=alice.headers,
                     content=json.dumps(ui)).status_code == 200
    assert http.get("/processors/ui", params={"name": "hello"}, headers=alice.headers).json() == ui
    assert http.post("/processors/saveui", params={"name": "hello"}, headers=alice.headers,
                     content="{bad").status_code == 400
    assert http.post("/processors/saveui", params={"name": "hello"}, headers=stranger.headers,
                     content="{}").status_code == 403
    assert http.get("/processors/ui", params={"name": "hello"}, headers=stranger.headers).status_code == 403
    assert http.get("/processors/ui", params={"name": "nope"}, headers=alice.headers).status_code == 400
    cwl = http.get("/processors/getcwl", params={"processorName": "hello"}, headers=alice.headers)
    assert cwl.status_code == 200 and cwl.content == b"cwlVersion: v1.0"
    assert http.get("/processors/getcwl", params={"processorName": "nope"}, headers=alice.headers).status_code == 404
    download = http.get("/processors/downloadprocessor", params={"processorId": doc["processorId"],
                                                                 "token": alice.token})
    assert download.status_code == 200
    with zipfile.ZipFile(io.BytesIO(download.content)) as bundle:
        assert set(bundle.namelist()) == {"myProcessor.py", "README.md", "help.txt", "hello.cwl"}
        assert bundle.read("myProcessor.py").decode() == HELLO_APP
    assert http.get("/processors/downloadprocessor", params={"processorId": doc["processorId"],
                                                             "token": stranger.token}).status_code == 403
    assert http.get("/processors/downloadprocessor", params={"processorId": doc["processorId"]}).status_code == 401


def test_build_log_needs_read_rights(http: httpx.Client, hello: dict[str, Any], people: dict[str, Person]) -> None:
    for role in ROLES:
        r = http.get("/processors/logs/build", params={"processorId": hello["processorId"]},
                     headers=people[role].headers)
        assert r.status_code == (403 if role == "stranger" else 200)
    assert http.get("/processors/logs/build", params={"processorId": "nope"},
                    headers=people["owner"].headers).status_code == 400


# -- runs -------------------------------------------------------------------------------------------------
def run(http: httpx.Client, who: Person | None, name: str, workspace: str, body: str = "{}",
        **params: Any) -> dict[str, Any]:
    r = http.post("/processors/run", params={"name": name, "workspace": workspace, **params}, headers=hdr(who),
                  content=body)
    assert r.status_code == 200
    return dict(r.json())


def test_run_creates_a_process_with_its_parameters(server: Server, http: httpx.Client, hello: dict[str, Any],
                                                   alice: Person, workspace: str) -> None:
    view = run(http, alice, "hello", workspace, '{"name": "moon"}')
    assert view["status"] == "CREATED" and view["processorId"] == hello["processorId"]
    record = server.services.processes.get(view["processingIdentifier"])
    assert record["operationType"] == "RUNPROCESSOR" and record["productName"] == "hello"
    assert record["parameter"] == {"name": "moon"}
    encoded = run(http, alice, "hello", workspace, "%7B%22name%22%3A%22web%22%7D")
    assert server.services.processes.get(encoded["processingIdentifier"])["parameter"] == {"name": "web"}


def test_run_failures_are_status_error_with_a_message(server: Server, http: httpx.Client, hello: dict[str, Any],
                                                      alice: Person, stranger: Person, workspace: str) -> None:
    assert run(http, None, "hello", workspace)["status"] == "ERROR"
    nows = run(http, alice, "hello", "nope")
    assert nows["status"] == "ERROR" and nows["message"] == "Workspace cannot be accessed or does not exists."
    noapp = run(http, alice, "nope", workspace)
    assert noapp["status"] == "ERROR" and noapp["message"] == "Processors not found nope"
    assert run(http, alice, "hello", workspace, "{bad json")["status"] == "ERROR"
    assert run(http, alice, "hello", workspace, "[1, 2]")["status"] == "ERROR"
    stranger_ws = str(server.services.workspaces.create(server.services.sessions.resolve(stranger.token),
                                                        "S")["workspaceId"])
    denied = run(http, stranger, "hello", stranger_ws)
    assert denied["status"] == "ERROR" and denied["message"] == "Processor cannot be accessed."
    assert not [r for r in server.services.processes.by_workspace(workspace) if r["operationType"] == "RUNPROCESSOR"]


def test_run_guards_can_refuse_a_run_before_its_process_exists(server: Server, http: httpx.Client,
                                                               hello: dict[str, Any], alice: Person,
                                                               workspace: str) -> None:
    from wasdi_server.errors import Forbidden

    seen: list[tuple[str, str, str]] = []

    def guard(caller: Any, doc: dict[str, Any], params: str) -> None:
        seen.append((caller.user_id, doc["name"], params))
        raise Forbidden("The app has a price and has not be paid")

    server.services.apps.run_guards.append(guard)
    view = run(http, alice, "hello", workspace, '{"a": 1}')
    assert view["status"] == "ERROR" and view["message"] == "The app has a price and has not be paid"
    assert seen == [(alice.user_id, "hello", '{"a": 1}')]
    assert not [r for r in server.services.processes.by_workspace(workspace) if r["operationType"] == "RUNPROCESSOR"]


def test_an_app_that_was_never_built_cannot_run(server: Server, http: httpx.Client, alice: Person,
                                                workspace: str) -> None:
    r = upload(http, alice, "matlab", {"main.m": "x"}, type="octave")
    wait(server, r.json()["stringValue"])
    view = run(http, alice, "matlab", workspace)
    assert view["status"] == "ERROR" and "no working build" in view["message"]


class SleepingEngine:
    """Runs ``sleep`` in place of an app (the timeout rule does not depend on what the app is)."""

    family = "test"

    def run(self, app: AppLayout, launch: Launch, runner: Any) -> int:
        return int(runner(Job(["sleep", "600"], {"PATH": "/usr/bin:/bin"}, app.folder)))

    def delete(self, app: AppLayout) -> None:
        pass


def test_an_app_running_past_its_minute_timeout_is_stopped_and_logged(
        server: Server, http: httpx.Client, hello: dict[str, Any], alice: Person, workspace: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ops_apps, "SECONDS_PER_MINUTE", 0.3)
    monkeypatch.setattr(server.services.apps, "engine", lambda doc: SleepingEngine())
    server.services.apps.records.processors.update(hello["processorId"], {"minuteTimeout": 1})
    view = run(http, alice, "hello", workspace)
    process_id = view["processingIdentifier"]
    assert wait(server, process_id, timeout=30) == "STOPPED"
    rows = server.services.process_logs.rows(server.services.sessions.resolve(alice.token), process_id, None, None)
    assert rows[-1]["logRow"] == "stopped: the app ran longer than its timeout of 1 minutes"


# -- package manager --------------------------------------------------------------------------------------
def test_environment_updates_add_and_remove_packages_and_keep_a_history(
        server: Server, http: httpx.Client, hello: dict[str, Any], alice: Person, workspace: str) -> None:
    def update(command: str | None) -> httpx.Response:
        params = {"processorId": hello["processorId"], "workspace": workspace}
        if command is not None:
            params["updateCommand"] = command
        return http.get("/packageManager/environmentupdate", params=params, headers=alice.headers)

    def packages() -> set[str]:
        return {p["packageName"] for p in http.get("/packageManager/listPackages", params={"name": "hello"},
                                                   headers=alice.headers).json()}

    def settle() -> None:
        latest = server.services.processes.by_workspace(workspace)[0]
        assert latest["operationType"] == "ENVIRONMENTUPDATE"
        assert wait(server, latest["processObjId"]) == "DONE"

    assert "six" not in packages()
    assert update("addPackage/six/1.16.0").status_code == 200
    settle()
    assert "six" in packages()
    # What the web client's package manager waits for to refresh its list.
    (done,) = [m for m in server.messages_of(workspace) if m["messageCode"] == "ENVIRONMENTUPDATE"]
    assert done["messageResult"] == "OK" and done["payload"] == "hello application<br>Environment Updated"
    assert update("removePackage/six").status_code == 200
    settle()
    assert "six" not in packages()
    assert update(None).status_code == 200
    settle()
    history = http.get("/packageManager/environmentActions", params={"name": "hello"}, headers=alice.headers).json()
    assert [h.split(" ", 2)[-1] for h in history] == ["addPackage six==1.16.0", "removePackage six"]
    assert http.get("/packageManager/reset", params={"processorId": hello["processorId"], "workspace": workspace},
                    headers=alice.headers).status_code == 200
    assert http.get("/packageManager/environmentActions", params={"name": "hello"}, headers=alice.headers).json() == []


@pytest.mark.parametrize("command", ["addPackage/--index-url=http://x", "addPackage/../../etc", "addPackage/six/1 2",
                                     "install/six", "addPackage/https:", "addPackage/-e", "removePackage"])
def test_environment_update_refuses_anything_but_a_package(http: httpx.Client, hello: dict[str, Any], alice: Person,
                                                           workspace: str, command: str) -> None:
    r = http.get("/packageManager/environmentupdate", params={"processorId": hello["processorId"],
                                                              "workspace": workspace, "updateCommand": command},
                 headers=alice.headers)
    assert r.status_code == 400


def test_package_manager_access_rules(http: httpx.Client, hello: dict[str, Any], people: dict[str, Person],
                                     workspace: str) -> None:
    manager = http.get("/packageManager/managerVersion", params={"name": "hello"},
                       headers=people["reader"].headers).json()
    assert manager["name"] in ("uv", "pip") and manager["version"]
    for role in ROLES:
        status = http.get("/packageManager/listPackages", params={"name": "hello"},
                          headers=people[role].headers).status_code
        assert status == (403 if role == "stranger" else 200)
    params = {"processorId": hello["processorId"], "workspace": workspace, "updateCommand": "addPackage/six"}
    r = http.get("/packageManager/environmentupdate", params=params, headers=people["reader"].headers)
    assert r.status_code == 403
    assert http.get("/packageManager/listPackages", params={"name": "hello"}).status_code == 401
    assert http.get("/packageManager/environmentupdate",
                    params={"processorId": "nope", "workspace": workspace},
                    headers=people["owner"].headers).status_code == 400


class QuickEngine:
    """Runs ``true`` in place of an app."""

    family = "test"

    def run(self, app: AppLayout, launch: Launch, runner: Any) -> int:
        return int(runner(Job(["true"], {"PATH": "/usr/bin:/bin"}, app.folder)))

    def delete(self, app: AppLayout) -> None:
        pass


def test_notify_mails_the_user_when_the_run_ends(server: Server, http: httpx.Client, hello: dict[str, Any],
                                                 alice: Person, workspace: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server.services.apps, "engine", lambda doc: QuickEngine())
    quiet = run(http, alice, "hello", workspace)["processingIdentifier"]
    assert wait(server, quiet) == "DONE"
    before = len(server.mails())
    loud = run(http, alice, "hello", workspace, notify="true")["processingIdentifier"]
    assert wait(server, loud) == "DONE"
    for _ in range(100):
        if len(server.mails()) > before:
            break
        time.sleep(0.05)
    mails = server.mails()[before:]
    assert len(mails) == 1
    assert mails[0]["To"] == alice.user_id and "hello ended DONE" in mails[0]["Subject"]


def test_on_a_compute_node_nodedelete_works_and_main_node_calls_are_refused(tmp_path: Path) -> None:
    node = Server(tmp_path / "node", node_code="node1", **app_settings())
    try:
        owner = node.add_user("alice@example.org")
        other = node.add_user("bob@example.org")
        with httpx.Client(transport=httpx.WSGITransport(app=node.app), base_url=BASE) as client:
            doc = deploy(node, client, owner, "hello")
            ws = str(node.services.workspaces.create(node.services.sessions.resolve(owner.token), "W")["workspaceId"])
            pid = doc["processorId"]
            assert client.get("/processors/delete", params={"processorId": pid},
                              headers=owner.headers).status_code == 400
            assert client.get("/packageManager/environmentActions", params={"name": "hello"},
                              headers=owner.headers).status_code == 400
            assert client.get("/packageManager/reset", params={"processorId": pid, "workspace": ws},
                              headers=owner.headers).status_code == 400
            assert client.get("/processors/nodedelete", params={"processorId": pid, "processorName": "other"},
                              headers=owner.headers).status_code == 400
            assert client.get("/processors/nodedelete", params={"processorId": pid, "processorName": "hello"},
                              headers=other.headers).status_code == 401
            assert client.get("/processors/nodedelete", params={"processorId": pid, "processorName": "hello"},
                              headers=owner.headers).status_code == 200
            assert node.services.apps.records.get(pid) is None
            assert not (node.settings.apps_root / "hello").exists()
    finally:
        node.close()


def test_getcwl_without_a_descriptor_is_204(server: Server, http: httpx.Client, hello: dict[str, Any],
                                             alice: Person) -> None:
    assert http.get("/processors/getcwl", params={"processorName": "hello"}, headers=alice.headers).status_code == 204


def test_a_public_app_runs_for_everyone_but_its_files_and_build_stay_with_its_team(
        server: Server, http: httpx.Client, hello: dict[str, Any], people: dict[str, Person]) -> None:
    server.services.apps.records.processors.update(hello["processorId"], {"isPublic": 1})
    stranger = people["stranger"]
    assert http.get("/processors/help", params={"name": "hello"}, headers=stranger.headers).json()["boolValue"]
    assert http.get("/processors/downloadprocessor", params={"processorId": hello["processorId"]},
                    headers=stranger.headers).status_code == 403
    assert http.get("/processors/logs/build", params={"processorId": hello["processorId"]},
                    headers=stranger.headers).status_code == 403
    assert http.get("/processors/downloadprocessor", params={"processorId": hello["processorId"]},
                    headers=people["reader"].headers).status_code == 200


def test_a_processor_id_among_the_parameters_does_not_pick_another_app(
        server: Server, http: httpx.Client, alice: Person, bob: Person, monkeypatch: pytest.MonkeyPatch) -> None:
    public = deploy(server, http, alice, "public", public=1)
    private = deploy(server, http, alice, "private")
    ran: list[str] = []

    class Recording(QuickEngine):
        def run(self, app: AppLayout, launch: Launch, runner: Any) -> int:
            ran.append(app.name)
            return super().run(app, launch, runner)

    monkeypatch.setattr(server.services.apps, "engine", lambda doc: Recording())
    bob_ws = str(server.services.workspaces.create(server.services.sessions.resolve(bob.token), "B")["workspaceId"])
    view = run(http, bob, "public", bob_ws, json.dumps({"processorId": private["processorId"]}))
    assert view["processorId"] == public["processorId"]
    assert wait(server, view["processingIdentifier"]) == "DONE"
    assert ran == ["public"]
