"""The package manager of an app (/packageManager): what its environment holds, its action history, and
changes to it queued as ENVIRONMENTUPDATE operations.

- the package record (``packageInfo`` of the app: ``packageManager``, ``outdated``, ``uptodate``, ``all``)
  is read from the real environment after every build, update and change (``refresh``);
  ``listPackages`` serves it (500 when there is none yet) with each package's latest version from the
  package index when it answers in time (``providers.package_index``), else without them and with a
  warning; ``managerVersion`` serves its manager (else a live lookup);
- ``updateCommand`` is ``action/package[/version]`` with action ``addPackage``, ``removePackage`` or
  ``upgradePackage``; the package must be a plain spec (``requirements``): no options, URLs or
  paths reach the installer (400 otherwise); an empty command only refreshes the record;
- the action history (``environmentActions``) lists each applied command; ``reset`` empties it and
  rebuilds the environment from ``pip.txt`` (a REDEPLOYPROCESSOR); both are main-node only (400 elsewhere);
- reading needs read rights on the app; changing needs write rights (403).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from ...dates import format_ms_or_none, now_ms
from ...errors import BadRequest, ServerFailure
from ...providers.package_index import normalise
from ..accounts.identity import User
from .app_records import PYTHON_TYPES
from .engines import AppEngine, EngineError
from .requirements import package_spec

if TYPE_CHECKING:
    from ...providers.package_index import PackageIndex
    from .apps import AppService

ACTIONS = ("addPackage", "removePackage", "upgradePackage")
ENVIRONMENT_UPDATE = "ENVIRONMENTUPDATE"


def parse_command(command: str | None) -> tuple[str, str] | None:
    """``(action, spec)`` of an update command; ``None`` for an empty one; ``BadRequest`` when invalid."""
    text = (command or "").strip().strip("/")
    if not text:
        return None
    parts = [p.strip() for p in text.split("/")]
    if len(parts) not in (2, 3) or parts[0] not in ACTIONS:
        raise BadRequest(f"updateCommand must be action/package[/version] with action one of {', '.join(ACTIONS)}")
    name = parts[1]
    version = parts[2] if len(parts) == 3 else ""
    spec = package_spec(f"{name}=={version}" if version and parts[0] != "removePackage" else name)
    if spec is None or package_spec(name) is None or (version and package_spec(f"x=={version}") is None):
        raise BadRequest("invalid package: a package name and an optional version only")
    return parts[0], spec


def _version_parts(version: str) -> dict[str, Any]:
    numbers = [int(p) if p.isdigit() else 0 for p in [*version.split("."), "0", "0", "0"][:3]]
    return {"major": numbers[0], "minor": numbers[1], "patch": numbers[2]}


class AppEnvironmentService:
    """Package lists, manager versions and environment changes of apps."""

    def __init__(self, apps: AppService[AppEngine], index: PackageIndex | None = None) -> None:
        self.apps = apps
        self.records = apps.records
        self.index = index

    # -- the stored record -----------------------------------------------------------------------------
    def refresh(self, doc: dict[str, Any]) -> dict[str, Any]:
        """Read the environment of the app and store its package record (raises ``EngineError``)."""
        engine = self.apps.engine(doc)
        layout = self.apps.layout(doc)
        manager = engine.manager(layout)
        rows = [{"managerName": manager["name"], "packageName": p["name"], "currentVersion": p["version"],
                 "currentBuild": "", "latestVersion": p["version"], "type": "pypi", "channel": ""}
                for p in engine.packages(layout)]
        record = {"packageManager": {"name": manager["name"], "version": manager["version"],
                                     **_version_parts(manager["version"])},
                  "outdated": [], "uptodate": rows, "all": rows}
        self.records.processors.update(doc["processorId"], {"packageInfo": record})
        return record

    def list_packages(self, user: User, name: str | None) -> tuple[list[dict[str, Any]], bool]:
        """The app's packages sorted by name, with their latest versions; whether the index was asked in time."""
        doc = self.apps.readable_by_name(user, name)
        record = doc.get("packageInfo")
        if not isinstance(record, dict) or not any(record.get(k) for k in ("outdated", "uptodate", "all")):
            raise ServerFailure("the app has no package list yet: deploy it first")
        merged: dict[str, dict[str, Any]] = {}
        for section in ("outdated", "uptodate", "all"):
            for row in record.get(section) or []:
                if isinstance(row, dict) and row.get("packageName"):
                    merged.setdefault(str(row["packageName"]).lower(), row)
        rows = [dict(merged[k]) for k in sorted(merged)]
        python = [r for r in rows if r.get("type") in ("pypi", None, "")]
        latest = self.index.latest_versions(str(r["packageName"]) for r in python) if self.index else None
        for row in python:
            row["latestVersion"] = latest.get(normalise(str(row["packageName"]))) if latest is not None else None
        return rows, latest is not None

    def manager_version(self, user: User, name: str | None) -> dict[str, Any] | None:
        if not name:
            raise BadRequest("missing name")
        doc = self.apps.readable_by_name(user, name)
        record = doc.get("packageInfo")
        if isinstance(record, dict) and isinstance(record.get("packageManager"), dict):
            return dict(record["packageManager"])
        try:
            manager = self.apps.engine(doc).manager(self.apps.layout(doc))
        except EngineError:
            return None
        return {"name": manager["name"], "version": manager["version"], **_version_parts(manager["version"])}

    def actions(self, user: User, name: str | None) -> list[str]:
        if not self.apps.is_main:
            raise BadRequest("environment actions are kept on the main node")
        doc = self.apps.readable_by_name(user, name)
        return [str(a) for a in doc.get("environmentActions") or [] if str(a).strip()]

    # -- changes ---------------------------------------------------------------------------------------
    def queue_update(self, user: User, processor_id: str | None, workspace_id: str | None,
                     command: str | None) -> str:
        doc = self.apps.writable(user, processor_id)
        if doc.get("type") not in PYTHON_TYPES:
            raise BadRequest("the app has no package manager on this server")
        parsed = parse_command(command)
        installer = self.apps.installer
        if self.apps.keeps_copies and (installer is None or not installer.is_installed(doc)):
            return ""  # no copy here: the app is installed with its package actions at its first run
        workspace = self.apps.workspaces.readable(user, workspace_id)
        parameter = {"updateCommand": f"{parsed[0]}/{parsed[1]}" if parsed else ""}
        record = self.apps.processes.create(user, str(workspace["workspaceId"]), ENVIRONMENT_UPDATE,
                                            str(doc["name"]), subtype=str(doc.get("type") or ""),
                                            parameter={"processorId": doc["processorId"], **parameter})
        return str(record["processObjId"])

    def apply(self, doc: dict[str, Any], command: str, log: Any, stop: threading.Event | None = None) -> None:
        """Run one queued command in the environment and record it (the ENVIRONMENTUPDATE operation); ``stop``
        set ends it (``EngineError``)."""
        parsed = parse_command(command)
        if self.apps.keeps_copies:  # a compute node's copy: the history and package list are the main node's
            if parsed is not None:
                self.apps.engine(doc).update_environment(self.apps.layout(doc), parsed[0], parsed[1], log,
                                                         stop=stop)
            return
        if parsed is not None:
            action, spec = parsed
            self.apps.engine(doc).update_environment(self.apps.layout(doc), action, spec, log, stop=stop)
            history = [*(doc.get("environmentActions") or []), f"{format_ms_or_none(now_ms())} {action} {spec}"]
            self.records.processors.update(doc["processorId"], {"environmentActions": history})
        self.refresh(self.records.get(doc["processorId"]) or doc)

    def reset(self, user: User, processor_id: str | None, workspace_id: str | None) -> None:
        if not self.apps.is_main:
            raise BadRequest("environment actions are kept on the main node")
        workspace = self.apps.workspaces.readable(user, workspace_id)
        doc = self.apps.writable(user, processor_id)
        self.records.processors.update(doc["processorId"], {"environmentActions": []})
        if doc.get("type") in PYTHON_TYPES:
            self.apps.queue(user, doc, "REDEPLOYPROCESSOR", str(workspace["workspaceId"]))
