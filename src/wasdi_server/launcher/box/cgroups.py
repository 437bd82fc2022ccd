"""Finding where a run's cgroups can go: below the server's own cgroup, for the ``pids`` and ``memory``
controllers, where this process may create them.

Why cgroups, beside the supervisor's sweep: a cgroup counts a run's processes and memory as one, which
resource limits cannot (``RLIMIT_NPROC`` counts every process of the OS user, ``RLIMIT_DATA`` one process at
a time), and its counters tell afterwards which limit a run passed.  They need write access to the
cgroup tree (root, or a delegated subtree), so they are used where found and the box falls back to
resource limits elsewhere; ``wasdi-server doctor`` says which.

Version 1 (one hierarchy per controller) is used where the server's cgroup of that controller is
writable.  Version 2 (one hierarchy) where the server's cgroup delegates the controller to its children
(its ``cgroup.subtree_control`` lists it) and is writable.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

CONTROLLERS = ("pids", "memory")
RUNS_FOLDER = "wasdi-runs"


@dataclass(frozen=True)
class CgroupPlace:
    """Where the runs' cgroups of one controller go: ``<parent>/<run id>``."""

    controller: str
    parent: Path
    version: int

    def for_run(self, run_id: str, folder: str = "") -> dict[str, object]:
        """Where a run's cgroup goes: in ``folder`` (a server's own, ``runs_folder``) beside the shared one."""
        parent = self.parent.with_name(folder) if folder else self.parent
        return {"path": str(parent / run_id), "version": self.version}


def runs_folder(data_dir: Path) -> str:
    """The folder of one server's runs' cgroups, named after its data directory: a run's cgroup namespace
    and the operator's tools then show one server's runs, not every server's on the host."""
    digest = hashlib.sha256(str(data_dir).encode()).hexdigest()[:12]
    return f"{RUNS_FOLDER}-{digest}"


def _mounts() -> list[tuple[str, str, set[str]]]:
    """(mount point, filesystem type, super options) of the cgroup mounts."""
    found = []
    try:
        with open("/proc/self/mountinfo", encoding="utf-8") as handle:
            for line in handle:
                left, _, right = line.partition(" - ")
                fields, tail = left.split(), right.split()
                if len(fields) > 4 and len(tail) > 2 and tail[0] in ("cgroup", "cgroup2"):
                    found.append((fields[4], tail[0], set(tail[2].split(","))))
    except OSError:
        return []
    return found


def _own_paths() -> dict[str, str]:
    """This process's cgroup per controller (``""`` is the version 2 hierarchy)."""
    own: dict[str, str] = {}
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as handle:
            for line in handle:
                parts = line.rstrip("\n").split(":", 2)
                if len(parts) == 3:
                    for controller in parts[1].split(",") if parts[1] else [""]:
                        own[controller] = parts[2]
    except OSError:
        return {}
    return own


def _usable(folder: Path) -> bool:
    """Whether runs' cgroups can be made in ``folder`` (tried for real, and left as found)."""
    if not os.access(folder, os.W_OK):
        return False
    probe = folder / RUNS_FOLDER
    existed = probe.is_dir()
    try:
        probe.mkdir(exist_ok=True)
    except OSError:
        return False
    if not existed:
        with contextlib.suppress(OSError):
            probe.rmdir()
    return True


def find_places() -> dict[str, CgroupPlace]:
    """The controllers the runs' cgroups can use here, and where."""
    own = _own_paths()
    places: dict[str, CgroupPlace] = {}
    for mount, kind, options in _mounts():
        for controller in CONTROLLERS:
            if controller in places:
                continue
            if kind == "cgroup" and controller in options and controller in own:
                folder = Path(mount + own[controller].rstrip("/"))
                if _usable(folder):
                    places[controller] = CgroupPlace(controller, folder / RUNS_FOLDER, 1)
            elif kind == "cgroup2" and "" in own:
                folder = Path(mount + own[""].rstrip("/"))
                try:
                    delegated = (folder / "cgroup.subtree_control").read_text().split()
                except OSError:
                    continue
                if controller in delegated and _usable(folder):
                    places[controller] = CgroupPlace(controller, folder / RUNS_FOLDER, 2)
    return places


def remove_leftovers(places: dict[str, CgroupPlace], folder: str = "") -> int:
    """Remove the empty run cgroups a killed supervisor left behind; how many went.  Each is named
    ``<run id>.<supervisor pid>``: one whose supervisor lives belongs to a run (maybe of another server on
    this machine, maybe not joined yet) and is left alone, and so is one still holding processes."""
    removed = 0
    for place in places.values():
        if folder:
            place = CgroupPlace(place.controller, place.parent.with_name(folder), place.version)
        if not place.parent.is_dir():
            continue
        for child in place.parent.iterdir():
            pid = child.name.rsplit(".", 1)[-1]
            if not child.is_dir() or not pid.isdigit() or Path(f"/proc/{pid}").exists():
                continue
            try:
                child.rmdir()
                removed += 1
            except OSError:
                continue
        with contextlib.suppress(OSError):
            place.parent.rmdir()
    return removed
