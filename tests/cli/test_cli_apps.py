"""``wasdi apps ...`` against the in-process server (environments built offline from the local wheelhouse).

``/processors/getdeployed`` (behind ``apps list`` and every name lookup) belongs to the app store, served
elsewhere: here ``client.processors.list`` is answered from the server's own records."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.app_support import app_settings
from tests.cli.conftest import ALICE, ALICE_PASSWORD, BOB, BOB_PASSWORD, Cli, lines
from wasdi_sdk.models import DeployedProcessorViewModel
from wasdi_sdk.resources.processors import ProcessorsResource
from wasdi_server import create_app, load_settings
from wasdi_server.app import WasdiApp
from wasdi_server.launcher.box import Job
from wasdi_server.launcher.engines import AppLayout, Launch


@pytest.fixture
def wasdi_app(tmp_path: Path) -> Iterator[WasdiApp]:
    app = create_app(load_settings(data_dir=tmp_path / "data", environ={}, **app_settings()))
    app.services.users.add(ALICE, ALICE_PASSWORD, name="Alice", surname="Liddell")
    app.services.users.add(BOB, BOB_PASSWORD, name="Bob", surname="Builder")
    yield app
    app.services.close()


@pytest.fixture
def alice(cli: Cli, wasdi_app: WasdiApp, monkeypatch: pytest.MonkeyPatch) -> Cli:
    def deployed(self: ProcessorsResource, **options: Any) -> list[DeployedProcessorViewModel]:
        return [DeployedProcessorViewModel(processor_id=d["processorId"], processor_name=d["name"], type=d["type"],
                                           processor_description=d["description"], publisher=d["userId"],
                                           is_public=d["isPublic"], deployment_ongoing=d["deploymentOngoing"],
                                           shared_with_me=False, read_only=False)
                for d in wasdi_app.services.apps.records.processors.all()]

    monkeypatch.setattr(ProcessorsResource, "list", deployed)
    cli.login()
    return cli


@pytest.fixture
def workspace(alice: Cli) -> str:
    result = alice("ws", "create", "Floods")
    assert result.exit_code == 0, result.output
    return "Floods"


class ScriptEngine:
    """Runs a shell line in place of the app, to drive ``apps run`` without an HTTP server."""

    family = "test"

    def __init__(self, script: str) -> None:
        self.script = script

    def run(self, app: AppLayout, launch: Launch, runner: Any) -> int:
        return int(runner(Job(["sh", "-c", self.script], {"PATH": "/usr/bin:/bin"}, app.folder)))

    def delete(self, app: AppLayout) -> None:
        pass


def deploy_scaffold(cli: Cli, tmp_path: Path, name: str = "hello") -> Path:
    folder = tmp_path / name
    assert cli("apps", "new", name, "--dir", str(folder)).exit_code == 0
    (folder / "config.json").write_text('{"USER": "secret"}')
    (folder / "notes.log").write_text("x")
    result = cli("apps", "deploy", str(folder), "--wait")
    assert result.exit_code == 0, result.output
    assert "environment ready" in result.stderr
    return folder


def test_new_scaffolds_an_app_that_deploys_and_honours_wasdiignore(alice: Cli, wasdi_app: WasdiApp,
                                                                   tmp_path: Path) -> None:
    folder = deploy_scaffold(alice, tmp_path)
    assert {p.name for p in folder.iterdir()} >= {"myProcessor.py", "params.json", "pip.txt", "readme.md"}
    stored = {p.name for p in (wasdi_app.services.settings.apps_root / "hello").iterdir()}
    assert "myProcessor.py" in stored and "config.json" not in stored and "notes.log" not in stored
    doc = wasdi_app.services.apps.records.by_name("hello")
    assert json.loads(doc["paramsSample"]) == {"NAME": "world", "OUTPUT": "hello.txt"}
    assert alice("apps", "new", "Bad Name").exit_code == 2
    # Deploying one's own app again is how it is changed: its files are replaced and it is built again.
    (folder / "myProcessor.py").write_text("def run():\n    pass  # second version\n")
    again = alice("apps", "deploy", str(folder), "--wait")
    assert again.exit_code == 0, again.output
    stored = wasdi_app.services.settings.apps_root / "hello" / "myProcessor.py"
    assert "second version" in stored.read_text()
    # Another user's app of that name is never replaced: the refusal says what to do instead.
    alice.login(BOB, BOB_PASSWORD)
    taken = alice("apps", "deploy", str(folder))
    assert taken.exit_code == 1 and "taken by an app that is not yours" in taken.stderr
    assert "second version" in stored.read_text()


def test_list_show_update_build_log_packages_download_delete(alice: Cli, wasdi_app: WasdiApp, tmp_path: Path,
                                                            workspace: str) -> None:
    deploy_scaffold(alice, tmp_path)
    listed = alice("apps", "list", "-q")
    assert lines(listed.stdout) == [wasdi_app.services.apps.records.by_name("hello")["processorId"]]
    shown = json.loads(alice("apps", "show", "hello", "--json").stdout)
    assert shown["processorName"] == "hello"
    unknown = alice("apps", "show", "nope")
    assert unknown.exit_code == 1 and "no app has the id or name 'nope'" in unknown.stderr
    assert alice("apps", "update", "hello", "--description", "greets", "--timeout", "9").exit_code == 0
    doc = wasdi_app.services.apps.records.by_name("hello")
    assert (doc["description"], doc["minuteTimeout"]) == ("greets", 9)
    assert alice("apps", "update", "hello").exit_code == 2
    assert alice("apps", "build-log", "hello").stdout.splitlines()[-1] == "environment ready"
    assert "wasdi" in alice("apps", "packages", "hello", "-q").stdout.split()
    assert alice("apps", "packages", "hello", "--add", "six").exit_code == 2
    queued = alice("apps", "packages", "hello", "--add", "six==1.16.0", "--ws", workspace)
    assert queued.exit_code == 0, queued.output
    target = tmp_path / "copy.zip"
    assert alice("apps", "download", "hello", "-o", str(target)).exit_code == 0
    with zipfile.ZipFile(target) as bundle:
        assert "myProcessor.py" in bundle.namelist()
    assert alice("apps", "download", "hello", "-o", "-").stdout_bytes == target.read_bytes()
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path)
        assert alice("apps", "download", "hello").exit_code == 0 and (tmp_path / "hello.zip").is_file()
    assert alice("apps", "delete", "hello").exit_code == 2
    assert alice("apps", "delete", "hello", "--yes").exit_code == 0
    assert wasdi_app.services.apps.records.by_name("hello") is None


def test_packages_add_reaches_the_folders_pip_txt_so_a_deploy_keeps_it(alice: Cli, wasdi_app: WasdiApp,
                                                                       tmp_path: Path, workspace: str) -> None:
    folder = deploy_scaffold(alice, tmp_path)
    server_only = alice("apps", "packages", "hello", "--add", "six==1.16.0", "--ws", workspace)
    assert server_only.exit_code == 0, server_only.output
    assert "Note: six==1.16.0 changes the environment on the server only; the next deploy rebuilds it from your " \
           "folder's pip.txt and drops the change" in server_only.stderr

    added = alice("apps", "packages", "hello", "--add", "six==1.16.0", "--ws", workspace, "--dir", str(folder))
    assert added.exit_code == 0, added.output
    pip_txt = folder / "pip.txt"
    assert pip_txt.read_text().splitlines()[-1] == "six==1.16.0"
    assert f"Also wrote six==1.16.0 into {pip_txt}: the next 'wasdi apps deploy {folder}' keeps it" in added.stderr
    assert alice("apps", "deploy", str(folder)).exit_code == 0
    stored = wasdi_app.services.settings.apps_root / "hello" / "pip.txt"
    assert "six==1.16.0" in stored.read_text().splitlines()  # what the next build installs

    upgraded = alice("apps", "packages", "hello", "--upgrade", "Six", "--ws", workspace, "--dir", str(folder))
    assert upgraded.exit_code == 0, upgraded.output
    assert [line for line in pip_txt.read_text().splitlines() if "six" in line.lower()] == ["Six"]
    assert alice("apps", "packages", "hello", "--remove", "six", "--ws", workspace, "--dir", str(folder)).exit_code == 0
    assert "six" not in pip_txt.read_text().lower()
    assert pip_txt.read_text().startswith("# One package a line")  # the rest of the file is kept
    missing = alice("apps", "packages", "hello", "--add", "x", "--ws", workspace, "--dir", str(tmp_path / "nope"))
    assert missing.exit_code == 2 and "is not a folder" in missing.stderr


@pytest.mark.parametrize(("script", "code", "final"), [("echo first line; echo second line", 0, "DONE"),
                                                        ("echo about to fail; exit 3", 1, "ERROR")])
def test_run_follows_the_log_and_exits_non_zero_unless_done(alice: Cli, wasdi_app: WasdiApp, tmp_path: Path,
                                                            workspace: str, monkeypatch: pytest.MonkeyPatch,
                                                            script: str, code: int, final: str) -> None:
    deploy_scaffold(alice, tmp_path)
    monkeypatch.setattr(wasdi_app.services.apps, "engine", lambda doc: ScriptEngine(script))
    result = alice("apps", "run", "hello", "--ws", workspace, "--params", '{"NAME": "cli"}', "--follow",
                   "--interval", "0.1")
    assert result.exit_code == code, result.output
    process_id = result.stdout.strip()
    assert wasdi_app.services.processes.get(process_id)["status"] == final
    assert wasdi_app.services.processes.get(process_id)["parameter"] == {"NAME": "cli"}
    assert script.split(";")[0].removeprefix("echo ") in result.stderr
    logs = alice("apps", "logs", process_id)
    assert script.split(";")[0].removeprefix("echo ") in logs.stdout


def test_ctrl_c_on_a_followed_run_says_the_run_goes_on_and_how_to_stop_it(
        alice: Cli, wasdi_app: WasdiApp, tmp_path: Path, workspace: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from wasdi_sdk.events.updates import ProcessUpdates

    deploy_scaffold(alice, tmp_path)
    monkeypatch.setattr(wasdi_app.services.apps, "engine", lambda doc: ScriptEngine("sleep 30"))

    def interrupt(self: ProcessUpdates, seconds: float, process_id: str | None = None) -> None:
        raise KeyboardInterrupt  # what Ctrl-C raises in the wait

    monkeypatch.setattr(ProcessUpdates, "sleep", interrupt)
    result = alice("apps", "run", "hello", "--ws", workspace, "--follow")
    assert result.exit_code == 130
    process_id = result.stdout.strip()
    assert lines(result.stderr)[-1] == (
        f"Error: interrupted: only the wait ended, the run {process_id} of 'hello' goes on on the server: wait again "
        f"with 'wasdi apps logs {process_id} --follow', or stop it with 'wasdi processes stop {process_id}'")
    assert wasdi_app.services.processes.get(process_id)["status"] not in ("STOPPED", "ERROR")
    assert alice("processes", "stop", process_id).exit_code == 0


def test_run_reports_a_refusal_as_a_sentence(alice: Cli, workspace: str) -> None:
    result = alice("apps", "run", "nope", "--ws", workspace)
    assert result.exit_code == 1
    assert "Processors not found" not in result.stderr
    assert "there is no app named 'nope' that you can run; 'wasdi apps list' lists them" in result.stderr
    assert alice("apps", "run", "nope", "--ws", workspace, "--params", "[1]").exit_code == 2


def test_help_ui_and_cwl(alice: Cli, wasdi_app: WasdiApp, tmp_path: Path) -> None:
    deploy_scaffold(alice, tmp_path)
    assert "Says hello" in alice("apps", "help", "hello").stdout
    assert json.loads(alice("apps", "ui", "hello").stdout) == {"tabs": []}
    form = tmp_path / "ui.json"
    form.write_text('{"tabs": [{"name": "Basic", "controls": []}]}')
    assert alice("apps", "ui", "hello", "--save", str(form)).exit_code == 0
    assert json.loads(alice("apps", "ui", "hello").stdout)["tabs"][0]["name"] == "Basic"
    form.write_text("{not json")
    assert alice("apps", "ui", "hello", "--save", str(form)).exit_code == 2
    missing = alice("apps", "cwl", "hello")
    assert missing.exit_code == 1 and "no CWL descriptor" in missing.stderr
    (wasdi_app.services.settings.apps_root / "hello" / "hello.cwl").write_text("cwlVersion: v1.2\n")
    assert alice("apps", "cwl", "hello").stdout == "cwlVersion: v1.2\n"
    target = tmp_path / "hello.cwl"
    assert alice("apps", "cwl", "hello", "-o", str(target)).exit_code == 0
    assert target.read_text() == "cwlVersion: v1.2\n"


def test_redeploy_libupdate_and_clear_build_flag(alice: Cli, wasdi_app: WasdiApp, tmp_path: Path,
                                                 workspace: str) -> None:
    deploy_scaffold(alice, tmp_path)
    app_id = wasdi_app.services.apps.records.by_name("hello")["processorId"]
    assert alice("apps", "redeploy", "hello", "--ws", workspace).exit_code == 0
    assert alice("apps", "libupdate", "hello", "--ws", workspace).exit_code == 0
    queued = json.loads(alice("processes", "list", "--ws", workspace, "--json").stdout)
    assert sorted(p["operationType"] for p in queued) == ["LIBRARYUPDATE", "REDEPLOYPROCESSOR"]
    for process in queued:
        assert alice("processes", "wait", process["processObjId"], "--interval", "0.1").exit_code == 0
    wasdi_app.services.apps.records.processors.update(app_id, {"deploymentOngoing": True})
    assert alice("apps", "clear-build-flag", "hello").exit_code == 0
    assert wasdi_app.services.apps.records.by_name("hello")["deploymentOngoing"] is False
    assert alice("apps", "redeploy", "nope").exit_code == 1


def test_node_delete_is_for_compute_nodes(alice: Cli, wasdi_app: WasdiApp, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    deploy_scaffold(alice, tmp_path)
    assert alice("apps", "node-delete", "hello").exit_code == 2  # no terminal to confirm on
    main = alice("apps", "node-delete", "hello", "--yes")
    assert main.exit_code != 0 and "compute nodes" in main.stderr
    monkeypatch.setattr(type(wasdi_app.services.apps), "is_main", property(lambda self: False))
    assert alice("apps", "node-delete", "hello", "--yes").exit_code == 0
    assert wasdi_app.services.apps.records.by_name("hello") is None


def test_packages_history_reset_and_manager_version(alice: Cli, wasdi_app: WasdiApp, tmp_path: Path,
                                                    workspace: str) -> None:
    deploy_scaffold(alice, tmp_path)
    app_id = wasdi_app.services.apps.records.by_name("hello")["processorId"]
    empty = alice("apps", "packages", "hello", "--history")
    assert empty.exit_code == 0 and "No changes" in empty.stderr
    wasdi_app.services.apps.records.processors.update(app_id, {"environmentActions": ["2026-01-01 addPackage six"]})
    assert alice("apps", "packages", "hello", "--history").stdout.splitlines() == ["2026-01-01 addPackage six"]
    assert json.loads(alice("apps", "packages", "hello", "--history", "--json").stdout) == [
        "2026-01-01 addPackage six"]
    manager = json.loads(alice("apps", "packages", "hello", "--manager-version", "--json").stdout)
    assert manager["name"] in ("pip", "uv") and manager["version"]
    assert manager["version"] in alice("apps", "packages", "hello", "--manager-version").stdout
    assert alice("apps", "packages", "hello", "--reset").exit_code == 2
    assert alice("apps", "packages", "hello", "--reset", "--history").exit_code == 2
    assert alice("apps", "packages", "hello", "--reset", "--ws", workspace).exit_code == 0
    assert wasdi_app.services.apps.records.by_name("hello")["environmentActions"] == []


def test_run_get_form_and_log_line(alice: Cli, wasdi_app: WasdiApp, tmp_path: Path, workspace: str,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    deploy_scaffold(alice, tmp_path)
    monkeypatch.setattr(wasdi_app.services.apps, "engine", lambda doc: ScriptEngine("echo ran"))
    result = alice("apps", "run", "hello", "--ws", workspace, "--params", '{"NAME": "get"}', "--get", "--wait",
                   "--interval", "0.1")
    assert result.exit_code == 0, result.output
    process_id = result.stdout.strip()
    assert wasdi_app.services.processes.get(process_id)["parameter"] == {"NAME": "get"}
    assert alice("apps", "log", process_id, "checked by the operator").exit_code == 0
    assert alice("apps", "logs", process_id).stdout.splitlines()[-1].endswith("checked by the operator")
    assert alice("apps", "log", "nope", "x").exit_code == 1


def test_package_changes_and_rebuilds_can_be_waited_for(alice: Cli, wasdi_app: WasdiApp, tmp_path: Path,
                                                        workspace: str) -> None:
    folder = deploy_scaffold(alice, tmp_path)
    (folder / "readme.md").write_text("# hello\n\nSays hello, louder.\n")
    updated = alice("apps", "update", "hello", "--file", str(folder), "--wait")
    assert updated.exit_code == 0 and "App 'hello'" in updated.stderr and "is ready with its new files" in \
        updated.stderr, updated.output
    added = alice("apps", "packages", "hello", "--add", "six==1.16.0", "--ws", workspace, "--wait")
    assert added.exit_code == 0, added.output
    assert "Installed six==1.16.0 in app 'hello'" in added.stderr
    assert "six" in alice("apps", "packages", "hello", "-q").stdout.split()  # done, not only queued
    missing = alice("apps", "packages", "hello", "--add", "no-such-package-anywhere==9.9", "--ws", workspace, "--wait")
    assert missing.exit_code == 1, missing.output
    assert "Installing no-such-package-anywhere==9.9 in app 'hello' failed" in missing.stderr
    assert "'wasdi apps build-log hello' has all of it" in missing.stderr
    assert "no-such-package-anywhere" in missing.stderr.split("Error:")[0]  # the log's tail, before the error
    for command in ("redeploy", "libupdate"):
        done = alice("apps", command, "hello", "--ws", workspace, "--wait")
        assert done.exit_code == 0 and ("Rebuilt app" in done.stderr or "Updated the library" in done.stderr), \
            done.output
    statuses = {p["operationType"]: p["status"] for p in json.loads(
        alice("processes", "list", "--ws", workspace, "--json").stdout) if p["status"] != "ERROR"}
    assert statuses["REDEPLOYPROCESSOR"] == "DONE" and statuses["LIBRARYUPDATE"] == "DONE"
