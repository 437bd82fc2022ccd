"""Apps on compute nodes: deployed on the main node, installed on a compute node at its first run there.

The original logs "APP NOT ON NODE" and installs the app before running it (gaps §8); so does this node.
The app's files come from the main node (``endpoints.APP_FILES``, a node-only call in the session of the
user whose run needs them, whose read rights the main node checks again), are unpacked into this node's
apps folder, and the engine builds the environment here, replaying the app's package actions.  A marker
beside the environment records which version of the app (its ``lastUpdate``) is installed: an app changed
on the main node since is installed again at its next run here, whatever propagation reached this node.

The shared record (``deployed``, the build flags, the package list) belongs to the main node's build and
is never written here.
"""

from __future__ import annotations

import json
import logging
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..domains.platform.main_node import MAIN_NODE
from .client import NodeClient, NodeUnreachable
from .identity import NodeIdentity

if TYPE_CHECKING:
    from ..domains.apps.apps import AppService
    from ..launcher.engines import Engine

log = logging.getLogger("wasdi_server.nodes")

APP_FILES = "/nodes/appfiles"
MARKER = "node-install.json"
CHUNK = 256 * 1024
LogLine = Callable[[str], None]


class AppNotInstallable(Exception):
    """The app could not be installed on this node (the main node is down, say); the message says why."""


class AppInstaller:
    """Whether an app is installed on this compute node, and installing it from the main node."""

    def __init__(self, identity: NodeIdentity, client: NodeClient, apps: AppService[Engine]) -> None:
        self.identity = identity
        self.client = client
        self.apps = apps
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    @property
    def needed(self) -> bool:
        """Only compute nodes install apps; the main node builds them where they are deployed."""
        return self.identity.in_deployment and not self.identity.is_main

    def lock(self, name: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(name, threading.Lock())

    def _marker(self, doc: dict[str, Any]) -> Path:
        return self.apps.layout(doc).home / MARKER

    def installed_version(self, doc: dict[str, Any]) -> Any:
        """The ``lastUpdate`` of the app as installed here, or ``None``."""
        try:
            return json.loads(self._marker(doc).read_text(encoding="utf-8")).get("lastUpdate")
        except (OSError, ValueError, AttributeError):
            return None

    def is_installed(self, doc: dict[str, Any]) -> bool:
        """Whether this node has the app (any version): changes propagated to it concern it."""
        return not self.needed or self.installed_version(doc) is not None

    def is_current(self, doc: dict[str, Any]) -> bool:
        return not self.needed or (self.installed_version(doc) == doc.get("lastUpdate")
                                   and self.apps.layout(doc).folder.is_dir())

    def ensure(self, doc: dict[str, Any], session: str, log_line: LogLine, *, force: bool = False) -> None:
        """Install the app here unless its current version already is (``force``: again in any case)."""
        if not self.needed:
            return
        with self.lock(str(doc["name"])):
            if not force and self.is_current(doc):
                return
            log_line(f"APP NOT ON NODE: installing {doc['name']} on node {self.identity.code} from the main node"
                     if not self.is_installed(doc) else
                     f"installing the current version of {doc['name']} on node {self.identity.code}")
            self._install(doc, session, log_line)

    def _install(self, doc: dict[str, Any], session: str, log_line: LogLine) -> None:
        # Imported here: the services package imports this module, so a module-level import closes a cycle for
        # whoever imports the launcher first (``wasdi-server doctor`` does).
        from ..domains.apps.app_files import replace_folder, staging_folder, unpack

        settings = self.apps.settings
        layout = self.apps.layout(doc)
        staged = staging_folder(settings.apps_root)
        archive = staged.with_suffix(".zip")
        try:
            self._download(doc, session, archive, settings.apps_max_zip_bytes)
            unpack(archive, staged, settings.apps_max_zip_bytes)
            archive.unlink(missing_ok=True)
            self._marker(doc).unlink(missing_ok=True)  # a half-done install is never taken for a finished one
            replace_folder(staged, layout.folder)
            engine = self.apps.engine(doc)
            engine.deploy(layout, log_line)
            for entry in doc.get("environmentActions") or []:
                parts = str(entry).split()
                if len(parts) >= 2 and parts[-2] in ("addPackage", "removePackage", "upgradePackage"):
                    engine.update_environment(layout, parts[-2], parts[-1], log_line)
            layout.home.mkdir(parents=True, exist_ok=True)
            self._marker(doc).write_text(json.dumps({"lastUpdate": doc.get("lastUpdate"),
                                                     "processorId": doc["processorId"],
                                                     "type": doc.get("type") or ""}), encoding="utf-8")
            log_line(f"{doc['name']} is installed on node {self.identity.code}")
        finally:
            archive.unlink(missing_ok=True)
            shutil.rmtree(staged, ignore_errors=True)

    def _download(self, doc: dict[str, Any], session: str, target: Path, limit: int) -> None:
        try:
            main = self.client.peer(MAIN_NODE)
            with self.client.open(main, "GET", APP_FILES, query={"processorId": doc["processorId"]},
                                  headers={"x-session-token": session}) as response:
                if response.status_code != 200:
                    text = response.read().decode("utf-8", "replace")[:300]
                    raise AppNotInstallable(f"the main node refused the files of {doc['name']} "
                                            f"({response.status_code}: {text})")
                written = 0
                with open(target, "wb") as out:
                    for chunk in response.iter_bytes(CHUNK):
                        written += len(chunk)
                        if written > limit:
                            raise AppNotInstallable(f"the files of {doc['name']} are larger than {limit} bytes")
                        out.write(chunk)
        except NodeUnreachable as e:
            raise AppNotInstallable(f"the app {doc['name']} is not on this node and the main node cannot be "
                                    f"reached to install it: {e}") from e

    def forget(self, doc: dict[str, Any]) -> None:
        """The app's copy on this node goes (its files, environment and marker); the shared record stays."""
        layout = self.apps.layout(doc)
        try:
            self.apps.engine(doc).delete(layout)
        except Exception:
            log.exception("the environment of %s could not be deleted on this node", doc.get("name"))
        shutil.rmtree(layout.home, ignore_errors=True)
        shutil.rmtree(layout.folder, ignore_errors=True)
