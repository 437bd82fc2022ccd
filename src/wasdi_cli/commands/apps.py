"""``wasdi apps ...``: write, deploy, run and watch apps (processors) (``client.processors`` and
``client.package_manager``)."""

import fnmatch
import json as jsonlib
import os
import shlex
import sys
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from .. import connection, output
from ..errors import USAGE, CliError
from ..lookup import by_id_or_name, named
from ..options import BaseUrlOpt, DownloadOutOpt, JsonOpt, ProfileOpt, PublicOpt, QuietOpt, WorkspaceOpt, YesOpt
from ..output import Output, message, progress, save_download
from ..waiting import follow, interrupted, wait_bar
from . import app_sharing, app_templates
from .processes import logs as process_logs
from .workspaces import optional_workspace, resolve_workspace

if TYPE_CHECKING:
    from wasdi_sdk import WasdiClient
    from wasdi_sdk.models import DeployedProcessorViewModel

app = typer.Typer(name="apps", help="Apps: scaffold, deploy, run, follow, list, update, download and delete.",
                  no_args_is_help=True)

AppArg = Annotated[str, typer.Argument(metavar="ID_OR_NAME", help="App id, or its name.")]
DescriptionOpt = Annotated[str | None, typer.Option("--description", help="Description of the app.")]
TimeoutOpt = Annotated[int | None, typer.Option("--timeout", help="Minutes a run may take (0: no limit).")]
IGNORE_FILE = ".wasdiignore"
ALWAYS_IGNORED = (".git", ".git/*", "__pycache__", "*/__pycache__", "*.pyc", "*/*.pyc", ".venv", ".venv/*",
                  IGNORE_FILE, ".DS_Store")

LIST_COLUMNS = (
    ("id", lambda p: p.processor_id),
    ("name", lambda p: p.processor_name),
    ("version", lambda p: p.processor_version),
    ("type", lambda p: p.type),
    ("owner", lambda p: p.publisher),
    ("public", lambda p: p.is_public),
    ("building", lambda p: p.deployment_ongoing),
    ("description", lambda p: p.processor_description),
)
SHOW_FIELDS = (
    ("id", lambda p: p.processor_id),
    ("name", lambda p: p.processor_name),
    ("version", lambda p: p.processor_version),
    ("description", lambda p: p.processor_description),
    ("type", lambda p: p.type),
    ("owner", lambda p: p.publisher),
    ("public", lambda p: p.is_public),
    ("timeout (minutes)", lambda p: p.minute_timeout),
    ("shared with me", lambda p: p.shared_with_me),
    ("read-only", lambda p: p.read_only),
    ("building", lambda p: p.deployment_ongoing),
    ("sample parameters", lambda p: p.params_sample),
)
MANAGER_FIELDS = (
    ("manager", lambda m: m.name),
    ("version", lambda m: m.version),
)
PACKAGE_COLUMNS = (
    ("package", lambda p: p.package_name),
    ("version", lambda p: p.current_version),
    ("manager", lambda p: p.manager_name),
)

SCAFFOLD = {
    "myProcessor.py": '''"""{name}: a WASDI app.  WASDI calls run() with the parameters of the run."""

import wasdi


def run():
    name = wasdi.getParameter("NAME", "world")
    wasdi.wasdiLog(f"Hello {{name}}")
    wasdi.updateProgressPerc(50)

    output = wasdi.getParameter("OUTPUT", "hello.txt")
    with open(wasdi.getPath(output), "w") as handle:
        handle.write(f"Hello {{name}}\\n")
    wasdi.addFileToWASDI(output)

    wasdi.setPayload({{"greeting": f"Hello {{name}}", "output": output}})
    wasdi.updateStatus("DONE", 100)


if __name__ == "__main__":
    # Local runs read config.json and params.json (see the official library's documentation).
    wasdi.init("./config.json")
    run()
''',
    "params.json": '{\n  "NAME": "world",\n  "OUTPUT": "hello.txt"\n}\n',
    "pip.txt": "# One package a line (name and optional version), installed in the app's environment.\n",
    "readme.md": "# {name}\n\nSays hello: set `NAME` in the parameters, find `OUTPUT` in the workspace.\n",
    IGNORE_FILE: "# Files deploy leaves out of the zip (one pattern a line)\nconfig.json\n*.log\n",
}


def resolve_app(client: "WasdiClient", id_or_name: str) -> tuple[str, "DeployedProcessorViewModel"]:
    """The app ``id_or_name`` identifies or names among the ones the user can see; an unknown one is an error."""
    # (not unpacked in the same statement: mypy then solves the list entries' type as optional)
    found = by_id_or_name(client.processors.list(), id_or_name, id_of=lambda p: p.processor_id,
                          name_of=lambda p: p.processor_name, noun="app", casefold=True)
    app_id, entry = found
    if entry is None:
        raise CliError(f"no app '{id_or_name}' among yours, the public ones and those shared with you "
                       "(see 'wasdi apps list')")
    return app_id, entry


def _ignored(relative: str, patterns: list[str]) -> bool:
    parts = relative.split("/")
    return any(fnmatch.fnmatch(relative, p) or any(fnmatch.fnmatch(part, p) for part in parts) for p in patterns)


def app_files(folder: Path) -> Iterator[tuple[Path, str]]:
    """The files of an app folder deploy zips: ``.wasdiignore`` patterns and tool folders left out."""
    patterns = list(ALWAYS_IGNORED)
    ignore = folder / IGNORE_FILE
    if ignore.is_file():
        patterns += [line.strip() for line in ignore.read_text().splitlines()
                     if line.strip() and not line.lstrip().startswith("#")]
    for current, dirs, files in os.walk(folder):
        base = Path(current)
        dirs[:] = sorted(d for d in dirs if not _ignored((base / d).relative_to(folder).as_posix(), patterns))
        for file_name in sorted(files):
            relative = (base / file_name).relative_to(folder).as_posix()
            if not _ignored(relative, patterns) and not (base / file_name).is_symlink():
                yield base / file_name, relative


def zip_folder(folder: Path, target: Path) -> int:
    """Zip an app folder into ``target``; the number of files."""
    import zipfile

    count = 0
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        for path, relative in app_files(folder):
            bundle.write(path, relative)
            count += 1
    return count


@app.command()
def new(
    name: Annotated[str, typer.Argument(help="Name of the app (lower case, no spaces).")],
    directory: Annotated[Path | None, typer.Option("--dir", help="Folder to create (default: ./NAME).")] = None,
) -> None:
    """Create a working app folder: myProcessor.py, params.json, pip.txt, readme.md, .wasdiignore."""
    if name != name.strip().lower() or " " in name or "/" in name or not name:
        raise CliError(f"'{name}' is not a valid app name: use lower case letters, digits, '_' or '-', no spaces",
                       USAGE)
    folder = directory or Path(name)
    if folder.exists() and any(folder.iterdir()):
        raise CliError(f"{folder} exists and is not empty: choose another --dir", USAGE)
    folder.mkdir(parents=True, exist_ok=True)
    for file_name, text in SCAFFOLD.items():
        (folder / file_name).write_text(text.format(name=name) if "{name}" in text else text)
    message(f"Created app '{name}' in {folder}: edit myProcessor.py, then 'wasdi apps deploy "
            f"{shlex.quote(str(folder))} --wait'")


@app.command()
def deploy(
    source: Annotated[Path, typer.Argument(metavar="DIR|ZIP", exists=True, help="The app folder, or its zip.")],
    name: Annotated[str | None, typer.Option("--name", help="App name (default: the folder or zip name).")] = None,
    app_type: Annotated[str | None, typer.Option("--type", help="App type (default: the server's Python "
                                                                "type).")] = None,
    description: DescriptionOpt = None,
    public: PublicOpt = None,
    timeout: TimeoutOpt = None,
    workspace: Annotated[str | None, typer.Option("--ws", metavar="ID_OR_NAME",
                                                  help="Workspace to list the deploy in.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an app of the same name that is not yours but "
                                                        "you may change (admins); yours is always replaced.")] = False,
    wait: Annotated[bool, typer.Option("--wait", help="Wait for the build and show its log.")] = False,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Upload an app (zipping a folder, honouring .wasdiignore) and build it; prints the deploy's process id."""
    import tempfile

    app_name = (name or source.stem).strip().lower()
    params_sample = None
    with tempfile.TemporaryDirectory(prefix="wasdi-app-") as scratch:
        if source.is_dir():
            archive = Path(scratch) / f"{app_name}.zip"
            if zip_folder(source, archive) == 0:
                raise CliError(f"{source} has no files to deploy (check {IGNORE_FILE})", USAGE)
            sample = source / "params.json"
            params_sample = sample.read_text() if sample.is_file() else None
        else:
            archive = source
        from wasdi_sdk import ConflictError

        with connection.client(profile, base_url) as client:
            workspace_id = optional_workspace(client, workspace)
            with progress(f"Uploading {app_name}", archive.stat().st_size) as advance:
                # Deploying again under the name of one's own app is how an app is changed ("fix the app and
                # deploy again"); another user's name is never replaced, not even by an admin, unless --force.
                replace = force or _is_own_app(client, app_name)
                try:
                    result = client.processors.upload(archive, name=app_name, workspace=workspace_id,
                                                      description=description, type=app_type,
                                                      params_sample=params_sample, public=1 if public else 0,
                                                      minute_timeout=timeout, force=replace or None,
                                                      on_progress=advance)
                except ConflictError as e:
                    raise CliError(f"the name '{app_name}' is taken by an app that is not yours: deploy under "
                                   f"another --name") from e
            process_id = str(result.string_value or "")
            Output().value(process_id)
            message(f"Deploying app '{app_name}'")
            if wait:
                _wait_for_build(client, process_id, app_name)


def _is_own_app(client: "WasdiClient", app_name: str) -> bool:
    """Whether the caller already has an app of this name (deploying it again replaces its files)."""
    owners = {p.publisher for p in client.processors.list() if (p.processor_name or "").casefold() == app_name}
    return bool(owners) and client.auth.check_session().user_id in owners


def _wait_for_build(client: "WasdiClient", process_id: str, app_name: str) -> None:
    from wasdi_sdk import ProcessFailedError
    from wasdi_sdk.events.waits import wait_for_process

    try:
        wait_for_process(client, process_id, poll_interval=0.5, max_interval=2.0)
        failed = None
    except ProcessFailedError as e:
        failed = e
    for row in client.processors.list_logs(process_id):
        message(row.log_row or "")
    if failed is not None:
        raise CliError(f"the build of '{app_name}' failed: see the log above, fix the app and deploy again")
    message(f"App '{app_name}' is ready: wasdi apps run {app_name} --ws WORKSPACE --wait")


WaitOpt = Annotated[bool, typer.Option("--wait", help="Wait until the server has done it (the end of the build log "
                                                     "is shown if it fails).")]
FILE_CHANGE_OPERATIONS = ("REDEPLOYPROCESSOR", "LIBRARYUPDATE")
"""What new files queue: a rebuild when pip.txt changed, else a library refresh."""
LOG_TAIL = 20
"""How many of the last log lines a failed environment change shows."""


def _process_ids(client: "WasdiClient", workspace_id: str | None, operation: str | tuple[str, ...],
                 app_name: str) -> list[str]:
    """The ids of the ``operation`` processes (one, or any of several) of app ``app_name``, newest first (in a
    workspace, or the user's)."""
    operations = (operation,) if isinstance(operation, str) else operation
    found = (client.processes.list_by_workspace(workspace_id, operation_type=operations[0])
             if workspace_id and len(operations) == 1 else client.processes.list_by_user())
    return [str(p.process_id) for p in found
            if p.operation_type in operations and p.product_name == app_name and p.process_id]


def _wait_for_queued(client: "WasdiClient", workspace_id: str | None, operation: str | tuple[str, ...], app_name: str,
                     before: set[str], doing: str, done: str) -> None:
    """Wait for the ``operation`` the server queued after ``before`` was listed (its answer gives no id): say
    ``done`` when it ends DONE, else fail with the end of its log."""
    import time

    from wasdi_sdk import ProcessFailedError, ProcessTimeoutError
    from wasdi_sdk.events.waits import wait_for_process

    deadline = time.monotonic() + 30
    new = [pid for pid in _process_ids(client, workspace_id, operation, app_name) if pid not in before]
    while not new and time.monotonic() < deadline:
        time.sleep(0.3)
        new = [pid for pid in _process_ids(client, workspace_id, operation, app_name) if pid not in before]
    if not new:  # nothing queued on this node (a compute node applies it at the app's first run)
        message(f"{done} (nothing to wait for on this node)")
        return
    process_id = new[0]
    try:
        with wait_bar(doing) as advance:
            wait_for_process(client, process_id, poll_interval=0.5, max_interval=2.0, on_update=follow(advance))
    except (ProcessFailedError, ProcessTimeoutError) as e:
        rows = [row.log_row or "" for row in client.processors.list_logs(process_id)]
        for line in rows[-LOG_TAIL:]:
            message(line)
        raise CliError(f"{doing} failed ({e}): {'the end of its log is above; ' if rows else ''}"
                       f"'wasdi apps build-log {shlex.quote(app_name)}' has all of it") from e
    message(done)


def _queue_and_wait(client: "WasdiClient", workspace_id: str | None, operation: str | tuple[str, ...],
                    app_name: str, start: Callable[[], object], wait: bool, doing: str, done: str) -> bool:
    """Ask the server to queue ``operation`` (``start``); with ``wait``, wait for it as ``_wait_for_queued``
    does (the processes listed before the call tell the new one).  Whether it waited."""
    before = set(_process_ids(client, workspace_id, operation, app_name)) if wait else set()
    start()
    if wait:
        _wait_for_queued(client, workspace_id, operation, app_name, before, doing, done)
    return wait


def _parameters(value: str | None) -> str:
    import json

    if value is None:
        return "{}"
    text = Path(value).read_text() if not value.lstrip().startswith("{") and Path(value).is_file() else value
    try:
        parsed = json.loads(text)
    except ValueError as e:
        raise CliError(f"--params is neither a JSON object nor a JSON file: {e}", USAGE) from e
    if not isinstance(parsed, dict):
        raise CliError("--params must be a JSON object", USAGE)
    return json.dumps(parsed)


@app.command()
def run(
    app_name: Annotated[str, typer.Argument(metavar="NAME", help="The app's name.")],
    workspace: WorkspaceOpt = None,
    params: Annotated[str | None, typer.Option("--params", metavar="FILE|JSON",
                                               help="Parameters: a JSON object, or a JSON file.")] = None,
    wait: Annotated[bool, typer.Option("--wait", help="Wait for the end, with a progress bar.")] = False,
    follow: Annotated[bool, typer.Option("--follow", "-f", help="Print the run's log lines as they arrive "
                                                                "(implies --wait).")] = False,
    interval: Annotated[float, typer.Option("--interval", min=0.05, help="Polling interval, seconds.")] = 1.0,
    get: Annotated[bool, typer.Option("--get", help="Send the parameters in the URL (the GET form older "
                                                    "clients use; short parameters only).")] = False,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Run an app in a workspace; prints the run's process id.  With --wait/--follow exits 1 when the run ends
    in ERROR or STOPPED.  Ctrl-C ends the wait (exit 130), not the run."""
    from wasdi_sdk import APIError

    body = _parameters(params)
    with connection.client(profile, base_url) as client:
        workspace_id, _ = resolve_workspace(client, workspace)
        try:
            if get:
                started = client.processors.run_by_query(name=app_name, workspace=workspace_id, encoded_json=body)
            else:
                started = client.processors.run(name=app_name, workspace=workspace_id, params=body)
        except APIError as e:
            if not any(p.processor_name == app_name for p in client.processors.list()):
                raise CliError(f"there is no app named '{app_name}' that you can run; 'wasdi apps list' lists "
                               "them (names are exact)") from e
            raise CliError(f"the server refused to run '{app_name}': {e.args[0] if e.args else e}") from e
        process_id = str(started.process_id)
        Output().value(process_id)
        if not (wait or follow):
            message(f"Started '{app_name}': follow it with 'wasdi apps logs {process_id} --follow'")
            return
        try:
            status = _watch_run(client, workspace_id, app_name, process_id, follow, interval)
        except KeyboardInterrupt as e:
            again = f"wasdi apps logs {process_id} --follow" if follow else f"wasdi processes wait {process_id}"
            raise interrupted(f"the run {process_id} of '{app_name}'", process_id, again) from e
    if status != "DONE":
        raise CliError(f"the run {process_id} of '{app_name}' ended {status}: see 'wasdi apps logs {process_id}'")
    message(f"The run {process_id} of '{app_name}' is DONE")


def _watch_run(client: "WasdiClient", workspace_id: str, app_name: str, process_id: str, follow: bool,
               interval: float) -> str:
    """Show the run's progress (and with ``follow`` its log lines) until it ends; its final status."""
    from wasdi_sdk.events.updates import ProcessUpdates
    from wasdi_sdk.helpers import FINAL_STATES

    next_row, done, status = 0, 0, ""
    # The workspace's messages wake the loop when the run changes; without them it polls.
    with wait_bar(f"Running {app_name}") as advance, ProcessUpdates(client, workspace_id) as updates:
        while True:
            state = client.processes.get(process_id)
            status = str(state.status)
            perc = int(state.progress_perc or 0)
            advance(max(0, perc - done))
            done = max(done, perc)
            if follow:
                rows = client.processors.list_logs(process_id, startrow=next_row)
                for row in rows:
                    message(row.log_row or "")
                    next_row = max(next_row, (row.row_number or 0) + 1)
            if status in FINAL_STATES:
                break
            updates.sleep(interval, process_id)
        if follow:
            for row in client.processors.list_logs(process_id, startrow=next_row):
                message(row.log_row or "")
    return status


@app.command("list")
def list_(profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False,
          quiet: QuietOpt = False) -> None:
    """Apps you own, public ones, and those shared with you."""
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        apps = client.processors.list()
    out.items(apps, LIST_COLUMNS, id_of=lambda p: p.processor_id, empty="No apps.")


@app.command()
def show(app_ref: AppArg, profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False,
         quiet: QuietOpt = False) -> None:
    """Details of one app."""
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        _, entry = resolve_app(client, app_ref)
    out.item(entry, SHOW_FIELDS, id_of=lambda p: p.processor_id)


@app.command()
def update(
    app_ref: AppArg,
    file: Annotated[Path | None, typer.Option("--file", exists=True, help="New files: a folder, a .zip (unpacked "
                                                                          "over the app) or one file.")] = None,
    description: DescriptionOpt = None,
    public: PublicOpt = None,
    timeout: TimeoutOpt = None,
    params_sample: Annotated[str | None, typer.Option("--params-sample", help="Sample parameters (JSON).")] = None,
    wait: WaitOpt = False,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Change an app's files (rebuilt when pip.txt changes, else its library refreshed; --wait waits for it) or
    its description, visibility, timeout, sample."""
    import tempfile

    if file is None and description is None and public is None and timeout is None and params_sample is None:
        raise CliError("nothing to change: give --file, --description, --public/--private, --timeout or "
                       "--params-sample", USAGE)
    with connection.client(profile, base_url) as client:
        app_id, entry = resolve_app(client, app_ref)
        label = named(app_id, entry)
        if description is not None or public is not None or timeout is not None or params_sample is not None:
            changes: dict[str, Any] = {"processorDescription": description, "minuteTimeout": timeout,
                                       "paramsSample": params_sample}
            if public is not None:
                changes["isPublic"] = 1 if public else 0
            client.processors.update(app_id, processor={k: v for k, v in changes.items() if v is not None})
            message(f"Updated app {label}")
        if file is not None:
            with tempfile.TemporaryDirectory(prefix="wasdi-app-") as scratch:
                upload = file
                if file.is_dir():
                    upload = Path(scratch) / "update.zip"
                    zip_folder(file, upload)
                name = str(entry.processor_name)

                def send() -> None:
                    client.processors.update_files(upload, processor_id=app_id)
                    message(f"Sent new files to app {label}")

                _queue_and_wait(client, None, FILE_CHANGE_OPERATIONS, name, send, wait,
                                f"Applying the new files of app '{name}'", f"App '{name}' is ready with its new files")


@app.command()
def delete(app_ref: AppArg, yes: YesOpt = False, profile: ProfileOpt = None, base_url: BaseUrlOpt = None) -> None:
    """Delete an app you own (its files and environment), or stop having one shared with you."""
    if not yes and not output.stdin_is_tty():
        raise CliError("refusing to delete without confirmation: stdin is not a terminal; pass --yes", USAGE)
    with connection.client(profile, base_url) as client:
        app_id, entry = resolve_app(client, app_ref)
        label = named(app_id, entry)
        leaving = bool(entry.shared_with_me)
        if not yes:
            question = f"Leave app {label}, shared with you?" if leaving else f"Delete app {label}?"
            if not typer.confirm(question, default=False, err=True):
                message("Cancelled")
                raise typer.Exit(1)
        client.processors.delete(app_id)
    message(f"Left app {label}" if leaving else f"Deleted app {label}")


@app.command()
def download(
    app_ref: AppArg,
    out: DownloadOutOpt = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Download an app's files as a zip."""
    with connection.client(profile, base_url) as client:
        app_id, entry = resolve_app(client, app_ref)
        save_download(out, app_ref, partial(client.processors.download, app_id),
                      default=Path.cwd() / f"{entry.processor_name or app_id}.zip")


@app.command("build-log")
def build_log(app_ref: AppArg, profile: ProfileOpt = None, base_url: BaseUrlOpt = None) -> None:
    """The log of an app's last build (and later library or package changes)."""
    with connection.client(profile, base_url) as client:
        app_id, _ = resolve_app(client, app_ref)
        lines = client.processors.build_logs(app_id)
    for line in lines:
        typer.echo(line)


@app.command()
def packages(
    app_ref: AppArg,
    add: Annotated[str | None, typer.Option("--add", metavar="NAME[==VERSION]", help="Install a package.")] = None,
    remove: Annotated[str | None, typer.Option("--remove", metavar="NAME", help="Remove a package.")] = None,
    upgrade: Annotated[str | None, typer.Option("--upgrade", metavar="NAME", help="Upgrade a package.")] = None,
    history: Annotated[bool, typer.Option("--history", help="The changes made to the environment, "
                                                            "oldest first.")] = False,
    reset: Annotated[bool, typer.Option("--reset", help="Forget those changes and rebuild the environment from "
                                                        "pip.txt (with --ws).")] = False,
    manager_version: Annotated[bool, typer.Option("--manager-version", help="The package manager of the "
                                                                            "environment and its version.")] = False,
    workspace: Annotated[str | None, typer.Option("--ws", metavar="ID_OR_NAME",
                                                  help="Workspace to list a change in (needed to change; default: "
                                                       "the profile's).")] = None,
    folder: Annotated[Path | None, typer.Option("--dir", metavar="DIR", help="The app's folder you deploy from: "
                                                "--add/--remove/--upgrade also change its pip.txt, so the next "
                                                "deploy keeps the change.")] = None,
    wait: WaitOpt = False,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
    json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """The packages of an app's environment; --add/--remove/--upgrade queue a change (with --ws; --wait waits for
    it); --history, --reset and --manager-version show or reset the environment's record."""
    changes = [(action, value) for action, value in (("addPackage", add), ("removePackage", remove),
                                                     ("upgradePackage", upgrade)) if value]
    if len(changes) + history + reset + manager_version > 1:
        raise CliError("give one of --add, --remove, --upgrade, --history, --reset, --manager-version", USAGE)
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        app_id, entry = resolve_app(client, app_ref)
        name = str(entry.processor_name)
        if history:
            actions = client.package_manager.environment_actions(name)
            if json:
                typer.echo(jsonlib.dumps(actions, indent=2, ensure_ascii=False))
            elif not actions:
                message(f"No changes to the environment of app '{name}'.")
            for action in [] if json else actions:
                typer.echo(action)
            return
        if manager_version:
            manager = client.package_manager.manager_version(name)
            if manager is None:
                raise CliError(f"app '{name}' has no package manager (its environment is not built, or its type "
                               "has none)")
            out.item(manager, MANAGER_FIELDS, id_of=lambda m: m.version)
            return
        if reset:
            workspace_id, _ = resolve_workspace(client, workspace)
            if _queue_and_wait(client, workspace_id, "REDEPLOYPROCESSOR", name,
                               lambda: client.package_manager.reset_actions(processor_id=app_id,
                                                                            workspace=workspace_id),
                               wait, f"Rebuilding the environment of app '{name}'",
                               f"Reset the environment of app '{name}' to pip.txt"):
                return
            message(f"Reset the environment of app '{name}' to pip.txt: see 'wasdi apps build-log "
                    f"{shlex.quote(name)}'")
            return
        if changes:
            action, value = changes[0]
            spec_name, _, version = value.partition("==")
            command = f"{action}/{spec_name}" + (f"/{version}" if version else "")
            workspace_id, _ = resolve_workspace(client, workspace)
            if folder is not None and not folder.is_dir():
                raise CliError(f"--dir {folder} is not a folder: give the app's folder (the one you deploy)", USAGE)
            if not _queue_and_wait(client, workspace_id, "ENVIRONMENTUPDATE", name,
                                   lambda: client.package_manager.update_environment(
                                       processor_id=app_id, workspace=workspace_id, update_command=command),
                                   wait, f"{PACKAGE_VERBS[action][0]} {value} in app '{name}'",
                                   f"{PACKAGE_VERBS[action][1]} {value} in app '{name}'"):
                message(f"Queued {action} {value} for app '{name}' (--wait waits for it): see 'wasdi apps "
                        f"build-log {shlex.quote(name)}'")
            if folder is None:
                message(f"Note: {value} changes the environment on the server only; the next deploy rebuilds it "
                        "from your folder's pip.txt and drops the change: write it there too, or give --dir DIR "
                        "(the app's folder) to have it written")
                return
            from ..pip_file import record

            _, change = record(folder, action, spec_name, version or None)
            message(f"Also {change}: the next 'wasdi apps deploy {shlex.quote(str(folder))}' keeps it")
            return
        rows = client.package_manager.list_packages(name)
    out.items(rows, PACKAGE_COLUMNS, id_of=lambda p: p.package_name, empty="No packages.")


PACKAGE_VERBS = {"addPackage": ("Installing", "Installed"), "removePackage": ("Removing", "Removed"),
                 "upgradePackage": ("Upgrading", "Upgraded")}

NameArg = Annotated[str, typer.Argument(metavar="NAME", help="The app's name.")]


@app.command("help")
def help_(app_name: NameArg, profile: ProfileOpt = None, base_url: BaseUrlOpt = None) -> None:
    """An app's help: its readme.md or help.md (or .txt), as its author wrote it."""
    with connection.client(profile, base_url) as client:
        text = client.processors.help(app_name)
    if not text.strip():
        message(f"App '{app_name}' has no help: its author can add a readme.md")
        return
    typer.echo(text.rstrip("\n"))


@app.command()
def ui(
    app_name: NameArg,
    save: Annotated[Path | None, typer.Option("--save", metavar="FILE", exists=True, dir_okay=False,
                                              help="Store this JSON file as the app's UI descriptor.")] = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """The app's UI descriptor (the form the web client shows for its parameters), as JSON; --save replaces it."""
    with connection.client(profile, base_url) as client:
        if save is None:
            typer.echo(jsonlib.dumps(client.processors.get_ui(app_name), indent=2, ensure_ascii=False))
            return
        text = save.read_text()
        try:
            jsonlib.loads(text)
        except ValueError as e:
            raise CliError(f"{save} is not JSON: {e}", USAGE) from e
        client.processors.save_ui(app_name, ui=text)
    message(f"Saved the UI of app '{app_name}' from {save}")


@app.command()
def cwl(
    app_name: NameArg,
    out: Annotated[Path | None, typer.Option("--output", "-o", metavar="FILE",
                                             help="Write it to this file (default: stdout).")] = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """The app's CWL descriptor (Common Workflow Language), to run it from OGC and CWL tools."""
    from wasdi_sdk import NoContentError

    with connection.client(profile, base_url) as client:
        try:
            content = client.processors.get_cwl(app_name)
        except NoContentError as e:
            raise CliError(f"app '{app_name}' has no CWL descriptor (a {app_name}.cwl file in its files)") from e
    if out is None:
        sys.stdout.buffer.write(content)
        sys.stdout.flush()
        return
    out.write_bytes(content)
    message(f"Saved {out}")


RebuildWorkspaceOpt = Annotated[str | None, typer.Option("--ws", metavar="ID_OR_NAME",
                                                         help="Workspace to list the operation in (default: "
                                                              "the profile's, if set).")]


@app.command()
def redeploy(app_ref: AppArg, workspace: RebuildWorkspaceOpt = None, wait: WaitOpt = False,
             profile: ProfileOpt = None, base_url: BaseUrlOpt = None) -> None:
    """Rebuild an app's environment from its files (after a failed build, or to pick up new base images)."""
    with connection.client(profile, base_url) as client:
        app_id, entry = resolve_app(client, app_ref)
        workspace_id = optional_workspace(client, workspace)
        name = str(entry.processor_name)
        if _queue_and_wait(client, workspace_id, "REDEPLOYPROCESSOR", name,
                           lambda: client.processors.redeploy(app_id, workspace=workspace_id), wait,
                           f"Rebuilding app '{name}'", f"Rebuilt app {named(app_id, entry)}"):
            return
    message(f"Queued a rebuild of app {named(app_id, entry)} (--wait waits for it): see 'wasdi apps build-log "
            f"{shlex.quote(app_ref)}'")


@app.command()
def libupdate(app_ref: AppArg, workspace: RebuildWorkspaceOpt = None, wait: WaitOpt = False,
              profile: ProfileOpt = None, base_url: BaseUrlOpt = None) -> None:
    """Refresh the official WASDI library in an app's environment, without a full rebuild."""
    with connection.client(profile, base_url) as client:
        app_id, entry = resolve_app(client, app_ref)
        workspace_id = optional_workspace(client, workspace)
        name = str(entry.processor_name)
        if _queue_and_wait(client, workspace_id, "LIBRARYUPDATE", name,
                           lambda: client.processors.update_libraries(app_id, workspace=workspace_id), wait,
                           f"Updating the library of app '{name}'",
                           f"Updated the library of app {named(app_id, entry)}"):
            return
    message(f"Queued a library update of app {named(app_id, entry)} (--wait waits for it): see 'wasdi apps "
            f"build-log {shlex.quote(app_ref)}'")


@app.command("clear-build-flag")
def clear_build_flag(app_ref: AppArg, profile: ProfileOpt = None, base_url: BaseUrlOpt = None) -> None:
    """Mark an app as not building any more (when a build died and left it stuck as building)."""
    with connection.client(profile, base_url) as client:
        app_id, entry = resolve_app(client, app_ref)
        client.processors.clear_build_flag(app_id)
    message(f"App {named(app_id, entry)} is no longer marked as building")


@app.command("node-delete")
def node_delete(app_ref: AppArg, yes: YesOpt = False, profile: ProfileOpt = None,
                base_url: BaseUrlOpt = None) -> None:
    """Delete a compute node's copy of an app (run against that node; the main node keeps the app)."""
    if not yes and not output.stdin_is_tty():
        raise CliError("refusing to delete without confirmation: stdin is not a terminal; pass --yes", USAGE)
    with connection.client(profile, base_url) as client:
        app_id, entry = resolve_app(client, app_ref)
        label = named(app_id, entry)
        if not yes and not typer.confirm(f"Delete this node's copy of app {label}?", default=False, err=True):
            message("Cancelled")
            raise typer.Exit(1)
        client.processors.node_delete(app_id, processor_name=entry.processor_name, processor_type=entry.type,
                                      version=entry.processor_version)
    message(f"Deleted this node's copy of app {label}")


@app.command("log")
def log_line(
    process: Annotated[str, typer.Argument(metavar="PROCESS_ID", help="The run's process id.")],
    line: Annotated[str, typer.Argument(metavar="LINE", help="The line to append.")],
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Append a line to the log of a run (as the app's wasdiLog does; from a script around a run)."""
    from wasdi_sdk import EmptyResultError

    with connection.client(profile, base_url) as client:
        try:
            client.processes.get(process)
        except EmptyResultError as e:
            raise CliError(f"no process '{process}' (or it is not accessible)") from e
        client.processors.add_log(process, line)
    message(f"Logged to process {process}")


app.command("logs", help="The log lines of a run (what the app printed and logged).")(process_logs)
app.add_typer(app_templates.app, name="templates")
app_sharing.add_app_share_commands(app)
