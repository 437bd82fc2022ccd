"""Launcher operations on apps: DEPLOYPROCESSOR, REDEPLOYPROCESSOR, LIBRARYUPDATE, ENVIRONMENTUPDATE and
RUNPROCESSOR.  Each asks the app's engine (``engines``) to do the work; nothing here knows how an
environment is built or an app started.

Builds write the app's build log (what ``/processors/logs/build`` returns) and copy it to the operation's
run log; a failed build leaves the app not runnable (``deployed`` false) with the reason as the last line.
A run gets a session of its caller scoped to the run (``services.run_scope``) for its duration, a private
scratch folder, its parameters file, and the ``WASDI_*`` variables, and runs in the box; its output goes to
the run log line by line; its ``minuteTimeout`` stops it (STOPPED, logged); a limit it passes ends it in
ERROR with a log line naming the limit.
"""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from ..domains.apps.apps import NOTIFY_FIELD
from ..domains.apps.engines import AppLayout, EngineError
from ..domains.processes.processes import DONE, STOPPED, TERMINAL
from ..domains.processes.run_scope import run_scope
from ..nodes.app_install import AppNotInstallable
from ..providers.mail import send_quietly
from .box import Box, BoxUnavailable, Job
from .box.doors import RunIdentity
from .box.job import MB
from .engines import Launch
from .operations import OperationContext, OperationFailed, OperationStopped, OperationTimedOut, operation

SECONDS_PER_MINUTE = 60.0
"""An app's ``minuteTimeout`` in seconds is this times its minutes (a test shortens the minute)."""


def _app(ctx: OperationContext) -> dict[str, Any]:
    """The app an operation is about: by the id its build operations carry, else by the record's name.

    A run's parameter is the user's own JSON, so a RUNPROCESSOR is always found by name (a ``processorId``
    among the user's parameters must not pick another app)."""
    records = ctx.services.apps.records
    processor_id = ctx.parameter.get("processorId") if ctx.record.get("operationType") != "RUNPROCESSOR" else None
    doc = records.get(str(processor_id)) if processor_id else None
    if doc is None:
        doc = records.by_name(str(ctx.record.get("productName") or ""))
    if doc is None:
        raise OperationFailed(f"the app {str(ctx.record.get('productName'))[:100]} no longer exists")
    return doc


def _run_log(ctx: OperationContext) -> Callable[[str], None]:
    logs = ctx.services.process_logs

    def write(line: str) -> None:
        logs.write(ctx.process_id, line)

    return write


class BuildLog:
    """The app's build log file, copied line by line to the operation's run log."""

    def __init__(self, layout: AppLayout, ctx: OperationContext, fresh: bool) -> None:
        layout.home.mkdir(parents=True, exist_ok=True)
        self.path = layout.build_log
        self.run_log = _run_log(ctx)
        if fresh:
            self.path.write_text("", encoding="utf-8")

    def __call__(self, line: str) -> None:
        text = line.rstrip("\r\n")
        self._append(text)
        self.run_log(text)

    def failed(self, error: Exception) -> None:
        """The build's failure, in the build log; the run log gets it from the launcher (``OperationFailed``)."""
        self._append(f"ERROR: {error}")

    def _append(self, text: str) -> None:
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(text + "\n")


_BUILD_LOCKS: dict[str, threading.Lock] = {}
_BUILD_LOCKS_GUARD = threading.Lock()


def _build_lock(name: str) -> threading.Lock:
    """One change at a time to an app's environment (two builds of one venv would corrupt it)."""
    with _BUILD_LOCKS_GUARD:
        return _BUILD_LOCKS.setdefault(name, threading.Lock())


def _build(ctx: OperationContext, title: str) -> bool:
    with _build_lock(str(_app(ctx)["name"])):
        return _locked_build(ctx, title)


def _install_copy(ctx: OperationContext, doc: dict[str, Any], *, force: bool) -> None:
    """On a compute node: this node's copy of the app, installed from the main node (``nodes.app_install``)."""
    installer = ctx.services.app_installer
    if installer is None or (not force and installer.is_current(doc)):
        return
    session = ctx.services.sessions.open(str(ctx.record["userId"]))
    try:
        installer.ensure(doc, session, _run_log(ctx), force=force)
    except (AppNotInstallable, EngineError) as e:
        raise OperationFailed(str(e)) from e
    finally:
        ctx.services.sessions.close(session)


def _locked_build(ctx: OperationContext, title: str) -> bool:
    services = ctx.services
    apps = services.apps
    doc = _app(ctx)
    if apps.keeps_copies:  # the build that decides whether the app runs is the main node's
        _install_copy(ctx, doc, force=True)
        return True
    layout = apps.layout(doc)
    # Runs are refused while the environment is rebuilt under them.
    apps.records.processors.update(doc["processorId"], {"deployed": False, "deploymentOngoing": True})
    log = BuildLog(layout, ctx, fresh=True)
    log(f"{title} of {doc['name']} (type {doc.get('type')})")
    try:
        apps.engine(doc).deploy(layout, log, stop=ctx.stop_event)
        services.app_environments.refresh(doc)
    except EngineError as e:
        apps.records.processors.update(doc["processorId"], {"deploymentOngoing": False, "deployed": False})
        ctx.check_stopped()  # asked to stop (or the server is stopping): STOPPED, not a failed build
        log.failed(e)
        services.messages.send("INFO", f"GURU MEDITATION<br>There was an error {title.lower()}ing {doc['name']} :(",
                               ctx.workspace_id or None)
        raise OperationFailed(str(e)) from e
    apps.records.processors.update(doc["processorId"], {"deploymentOngoing": False, "deployed": True})
    services.messages.send("INFO", f"{title} Done<br>{doc['name']} is now available", ctx.workspace_id or None)
    return True


@operation("DEPLOYPROCESSOR")
def deploy_app(ctx: OperationContext) -> bool:
    return _build(ctx, "Deploy")


@operation("REDEPLOYPROCESSOR")
def redeploy_app(ctx: OperationContext) -> bool:
    return _build(ctx, "Re Deploy")


@operation("LIBRARYUPDATE")
def update_library(ctx: OperationContext) -> bool:
    with _build_lock(str(_app(ctx)["name"])):
        return _update_library(ctx)


def _update_library(ctx: OperationContext) -> bool:
    services = ctx.services
    doc = _app(ctx)
    layout = services.apps.layout(doc)
    log = BuildLog(layout, ctx, fresh=False)
    try:
        services.apps.engine(doc).update_library(layout, log, stop=ctx.stop_event)
        if not services.apps.keeps_copies:  # the package list on record is the main node's environment's
            services.app_environments.refresh(doc)
    except EngineError as e:
        ctx.check_stopped()
        log.failed(e)
        services.messages.send("INFO", f"GURU MEDITATION<br>There was an error re-deploying {doc['name']} :(",
                               ctx.workspace_id or None)
        raise OperationFailed(str(e)) from e
    log("library updated")
    services.messages.send("INFO", f"Re Deploy Done<br>{doc['name']} is now available", ctx.workspace_id or None)
    return True


@operation("ENVIRONMENTUPDATE")
def update_environment(ctx: OperationContext) -> bool:
    with _build_lock(str(_app(ctx)["name"])):
        return _update_environment(ctx)


def _update_environment(ctx: OperationContext) -> bool:
    services = ctx.services
    doc = _app(ctx)
    layout = services.apps.layout(doc)
    log = BuildLog(layout, ctx, fresh=False)
    command = str(ctx.parameter.get("updateCommand") or "")
    try:
        services.app_environments.apply(doc, command, log, ctx.stop_event)
    except EngineError as e:
        ctx.check_stopped()
        log.failed(e)
        raise OperationFailed(str(e)) from e  # the launcher's KO message says why
    ctx.set_payload(command or "refresh")
    services.messages.send("ENVIRONMENTUPDATE", f"{doc['name']} application<br>Environment Updated",
                           ctx.workspace_id or None)
    return True


@operation("RUNPROCESSOR")
def run_app(ctx: OperationContext) -> bool:
    services = ctx.services
    apps = services.apps
    log = _run_log(ctx)
    doc = _app(ctx)
    if not doc.get("deployed"):
        raise OperationFailed(f"the app {doc['name']} has no working build")
    if apps.keeps_copies:
        _install_copy(ctx, doc, force=False)  # APP NOT ON NODE: installed at its first run here
    layout = apps.layout(doc)
    workspace = services.workspaces.load(ctx.workspace_id)
    folder = services.workspaces.folder(workspace)
    folder.mkdir(parents=True, exist_ok=True)
    scratch = services.settings.data_dir / "app-runs" / ctx.process_id
    scratch.mkdir(parents=True, exist_ok=True)
    parameters = scratch / "params.json"
    parameters.write_text(json.dumps(ctx.record.get("parameter") or {}), encoding="utf-8")
    user_id = str(ctx.record["userId"])
    session = services.sessions.open(user_id, scope=run_scope(services.settings.app_account_scope_apps, doc,
                                                                    ctx.workspace_id, ctx.process_id))
    minutes = int(doc.get("minuteTimeout") or 0)
    ceiling = services.settings.app_max_minutes
    box = Box.from_settings(services.settings, proxy=services.door_proxy)
    box = box.with_limits(disk_mb=_disk_limit_mb(services.settings.app_disk_mb, services.products.storage_left,
                                                 user_id))
    url = box.api_url(apps.server_url)
    variables = {
        "WASDI_WEBSERVER_URL": url, "WASDI_USER": user_id, "WASDI_SESSION_ID": session,
        "WASDI_WORKSPACE_ID": str(workspace["workspaceId"]), "WASDI_PROCESS_WORKSPACE_ID": ctx.process_id,
        "WASDI_BASE_PATH": str(services.settings.files_root) + "/", "WASDI_PARAMETERS_FILE": str(parameters),
    }
    identity = RunIdentity(user_id, str(workspace["workspaceId"]), ctx.process_id, log)
    # The app's own timeout, never past the operator's ceiling (an app declaring none included).
    own_limit = minutes > 0 and minutes <= ceiling
    seconds = (minutes if own_limit else ceiling) * SECONDS_PER_MINUTE

    def runner(job: Job) -> int:
        job = replace(job, grows=folder, identity=identity, limits=box.limits)
        log(box.summary(job))
        try:
            outcome = ctx.run(job, timeout=seconds, on_output=log, box=box)
        except OperationTimedOut:
            if own_limit:
                raise
            log(f"the run passed the ceiling on an app's run time (app_max_minutes = {ceiling} minutes) "
                "and was ended")
            return 1
        for name in outcome.limits:
            log(box.limits.explain(name))
        if outcome.killed:
            log(f"{outcome.killed} process(es) the app left running were ended with it")
        return 1 if outcome.limits else outcome.code

    outcome = "ERROR"
    try:
        code = apps.engine(doc).run(layout, Launch(variables, scratch, folder, api_ports(url)), runner)
    except (EngineError, BoxUnavailable) as e:
        raise OperationFailed(str(e)) from e
    except OperationTimedOut:
        outcome = STOPPED
        log(f"stopped: the app ran longer than its timeout of {minutes} minutes")
        raise
    except OperationStopped:
        outcome = STOPPED
        log("stopped on request")
        raise
    else:
        current = services.processes.get(ctx.process_id) or {}
        said_done_then_failed = code != 0 and current.get("status") == DONE
        if current.get("status") in TERMINAL and not said_done_then_failed:
            outcome = str(current["status"])
        else:
            if code != 0:
                log(f"the app ended with exit code {code}")
            outcome = DONE if code == 0 else "ERROR"
            if said_done_then_failed:
                # The app said DONE before a limit (or a crash) ended it: the run failed all the same.
                services.processes.set_status(ctx.process_id, "ERROR", notify=True)
        return outcome == DONE
    finally:
        services.sessions.close(session)
        shutil.rmtree(scratch, ignore_errors=True)
        _notify(ctx, str(doc["name"]), outcome)


def _disk_limit_mb(configured_mb: int, storage_left: Callable[[str], int | None], user_id: str) -> int:
    """How much a run of ``user_id`` may grow its workspace (MB; 0: no limit): ``app_disk_mb``, else what the
    owner's subscription storage has left where one applies."""
    if configured_mb:
        return configured_mb
    left = storage_left(user_id)
    return 0 if left is None else max(1, left // MB)


def api_ports(url: str) -> list[int]:
    """The TCP port of the API a run calls (from the URL given to the official library)."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    return [port or (443 if parts.scheme == "https" else 80)]


def _notify(ctx: OperationContext, app_name: str, outcome: str) -> None:
    """The mail a run started with ``notify`` sends its user when it ends."""
    record = ctx.services.processes.get(ctx.process_id) or {}
    if not record.get(NOTIFY_FIELD):
        return
    send_quietly(ctx.services.mailer, str(record["userId"]), f"WASDI: your app {app_name} ended {outcome}",
                 f"The run {ctx.process_id} of {app_name} in workspace {ctx.workspace_id} ended {outcome}.\n")


