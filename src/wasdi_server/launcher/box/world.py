"""The world a boxed program sees: what ``bwrap`` (bubblewrap, the tool Flatpak relies on) builds around it.

A ``World`` says what exists in the program's root and nothing else does: folders bound read-only or
read-write (each at its own path, so every path a program was given stays valid), private size-limited
tmpfs folders (``/tmp``, ``/dev/shm``), a fresh ``/proc`` of its own processes, a minimal ``/dev``, and new
mount, PID, network, IPC, UTS, cgroup and user namespaces.  The network namespace holds only loopback:
whether the box puts its doors there (``doors``) or leaves the program with no network at all is the
caller's choice; the doors themselves are ``doors.py``.

``bwrap_argv`` turns a world into the command line; the environment is not on it (another OS user can read
a command line): pass ``World.env`` as the environment of the ``bwrap`` process, which hands it to the
program unchanged.  ``probe()`` tells whether worlds can be built on this machine, namespace by namespace,
for ``wasdi-server doctor`` and ``app_isolation = required``.
"""

from __future__ import annotations

import functools
import glob
import os
import shutil
import subprocess
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

BWRAP = "/usr/bin/bwrap"
MB = 1024 * 1024
NAMESPACES = ("user", "mount", "pid", "network", "ipc", "uts", "cgroup")
"""Every namespace a world gets, as ``probe`` reports them."""
_UNSHARE = {"user": "--unshare-user", "pid": "--unshare-pid", "network": "--unshare-net", "ipc": "--unshare-ipc",
            "uts": "--unshare-uts", "cgroup": "--unshare-cgroup"}
"""The mount namespace is not an option of bwrap: every world has one."""
SYSTEM_FOLDERS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt/conda")
"""The system's libraries and interpreters, bound read-only where they exist (a symbolic link, as ``/bin`` is
on a merged-``/usr`` system, is made again as the same link)."""
SYSTEM_DEVICES_INFO = ("/sys/devices/system/cpu", "/sys/devices/system/node")
"""What of ``/sys`` programs read (how many CPUs, NUMA nodes); the rest of ``/sys`` (the host's cgroups among it)
does not exist in a world."""
ETC_ENTRIES = (
    "passwd", "group", "nsswitch.conf", "hosts", "host.conf", "gai.conf", "services", "protocols",
    "networks", "localtime", "timezone", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "mime.types", "os-release",
    "lsb-release", "debian_version", "ssl/certs", "ssl/openssl.cnf", "ca-certificates", "ca-certificates.conf",
    "pki/tls/certs", "pki/ca-trust", "crypto-policies", "alternatives", "fonts", "java-*", "java", "gdal", "proj",
    "pip.conf", "xdg/pip", "uv", "inputrc", "environment",
)
"""The few files of ``/etc`` programs need to start and verify certificates, one by one: ``/etc`` whole would
hold ``shadow`` and private keys.  No ``resolv.conf``: names are resolved by the server, behind the proxy door."""


@dataclass(frozen=True)
class Tmpfs:
    """A private in-memory folder of at most ``size_mb`` (its pages count in the run's memory cgroup)."""

    path: str
    size_mb: int


def default_tmpfs(tmp_mb: int = 1024, shm_mb: int = 256) -> tuple[Tmpfs, ...]:
    """A world's private ``/tmp`` and ``/dev/shm``."""
    return (Tmpfs("/tmp", tmp_mb), Tmpfs("/dev/shm", shm_mb))


@dataclass(frozen=True)
class World:
    """What exists for one boxed program.

    ``read_only`` and ``read_write`` folders or files are bound at their own paths (a symbolic link in a
    path is followed on the host, and the link's own path is bound too); the system's libraries and
    interpreters, the few files of ``/etc`` programs need, ``/proc`` and ``/dev`` are added by
    ``bwrap_argv`` unless ``system`` is false.  ``doors``: whether the network namespace will get the box's
    doors (``doors.py``); either way it holds only loopback."""

    read_only: tuple[Path, ...] = ()
    read_write: tuple[Path, ...] = ()
    tmpfs: tuple[Tmpfs, ...] = field(default_factory=default_tmpfs)
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: Path = Path("/")
    doors: bool = False
    hostname: str = "box"
    system: bool = True


def _depth(path: str) -> int:
    """How deep an absolute, normalised path is (``/`` 1, ``/usr`` 2), as ``Path.parts`` counts, for less."""
    return len(path.rstrip("/").split("/"))


def _binds(paths: Iterable[Path], option: str) -> list[tuple[str, list[str]]]:
    found: list[tuple[str, list[str]]] = []
    for raw in paths:
        given = Path(os.path.abspath(raw))
        resolved = given.resolve()
        if not resolved.exists():
            continue
        found.append((str(resolved), [option, str(resolved), str(resolved)]))
        if given != resolved:
            found.append((str(given), [option, str(resolved), str(given)]))
    return found


def system_mounts() -> list[tuple[str, list[str]]]:
    """The read-only system part of every world: (path, bwrap options), looked up at most once a minute (a file
    of ``/etc`` added meanwhile is bound from the next minute on)."""
    return [(path, list(options)) for path, options in _system_mounts(int(time.monotonic() // 60))]


@functools.lru_cache(maxsize=1)
def _system_mounts(_minute: int) -> tuple[tuple[str, tuple[str, ...]], ...]:
    found: list[tuple[str, list[str]]] = []
    for folder in SYSTEM_FOLDERS:
        if os.path.islink(folder):
            found.append((folder, ["--symlink", os.readlink(folder), folder]))
        elif os.path.isdir(folder):
            found.append((folder, ["--ro-bind", folder, folder]))
    for folder in SYSTEM_DEVICES_INFO:
        if os.path.isdir(folder):
            found.append((folder, ["--ro-bind", folder, folder]))
    for entry in ETC_ENTRIES:
        for path in sorted(glob.glob(os.path.join("/etc", entry))):
            found.append((path, ["--ro-bind", path, path]))
    return tuple((path, tuple(options)) for path, options in found)


def bwrap_argv(world: World, command: Sequence[str], *, bwrap: str = BWRAP) -> list[str]:
    """The ``bwrap`` command line that runs ``command`` in ``world`` (run it with ``world.env`` as its
    environment).  Mounts are ordered parents first, so a workspace below ``/tmp`` is bound over the
    private ``/tmp`` rather than hidden by it."""
    # --cap-drop ALL: a server started as root would otherwise hand every capability of the new user namespace
    # to the world's first process (a reader has no stage of its own that drops them)
    argv = [bwrap, *(_UNSHARE[name] for name in NAMESPACES if name in _UNSHARE), "--cap-drop", "ALL",
            "--die-with-parent", "--new-session", "--hostname", world.hostname,
            "--proc", "/proc", "--dev", "/dev"]
    mounts: list[tuple[str, int, list[str]]] = []
    if world.system:
        mounts += [(path, 0, options) for path, options in system_mounts()]
    for space in world.tmpfs:
        mounts.append((space.path, 1, ["--size", str(max(1, space.size_mb) * MB), "--tmpfs", space.path]))
    mounts += [(path, 2, options) for path, options in _binds(world.read_only, "--ro-bind")]
    mounts += [(path, 3, options) for path, options in _binds(world.read_write, "--bind")]
    cwd = os.path.abspath(world.cwd)
    bound = [path for path, _kind, options in mounts if options[0] in ("--ro-bind", "--bind")]
    if not any(cwd == path or cwd.startswith(path.rstrip("/") + "/") for path in bound):
        # A working folder outside everything the world holds exists there, empty, and nothing more.
        mounts.append((cwd, 4, ["--dir", cwd]))
    seen: set[tuple[str, ...]] = set()
    applied: dict[str, list[str]] = {}
    for path, _kind, options in sorted(mounts, key=lambda m: (_depth(m[0]), m[1], m[0])):
        if tuple(options) in seen or _shown_already(applied, path, options):
            continue
        seen.add(tuple(options))
        applied[path] = options
        argv += options
    argv += ["--chdir", str(world.cwd), "--", *[str(part) for part in command]]
    return argv


def _shown_already(applied: Mapping[str, list[str]], path: str, options: Sequence[str]) -> bool:
    """Whether a read-only bind of ``path`` at its own place would show nothing new: the mount that shows
    ``path`` now (the deepest applied at or above it: mounts are applied parents first) is a read-only bind of
    a folder above it at its own place, which holds the same files, read-only alike.  bubblewrap makes each bind
    read-only by walking every mount of the world, so a bind saved is worth it."""
    if list(options) != ["--ro-bind", path, path]:
        return False
    parts = path.rstrip("/").split("/")
    for end in range(len(parts), 0, -1):
        above = "/".join(parts[:end]) or "/"
        if above in applied:
            return applied[above] == ["--ro-bind", above, above]
    return False


@dataclass(frozen=True)
class WorldSupport:
    """Whether worlds can be built here: the tool, each namespace, and a live start of one."""

    bwrap: str | None
    namespaces: Mapping[str, bool] = field(default_factory=dict)
    error: str = ""

    @property
    def works(self) -> bool:
        return self.bwrap is not None and not self.error and all(self.namespaces.get(n) for n in NAMESPACES)

    def missing(self) -> list[str]:
        """What is lacking, one phrase each naming what to install or enable (empty: worlds work)."""
        if self.bwrap is None:
            return ["no bubblewrap (/usr/bin/bwrap): install the Debian/Ubuntu package 'bubblewrap' "
                    "(apt-get install bubblewrap; 'bubblewrap' on Fedora, Arch and Alpine too)"]
        lacks = []
        absent = [n for n in NAMESPACES if not self.namespaces.get(n)]
        if absent:
            lacks.append(f"bubblewrap cannot create {', '.join(absent)} namespaces here ({self.error or 'refused'}): "
                         "enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, "
                         "user.max_user_namespaces > 0, and on Ubuntu 24.04 or later "
                         "kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for bwrap), or, "
                         "in a container, allow it to create namespaces (e.g. docker --security-opt "
                         "seccomp=unconfined --security-opt apparmor=unconfined)")
        elif self.error:
            lacks.append(f"bubblewrap fails here: {self.error}")
        return lacks


def _try(bwrap: str, options: Sequence[str]) -> str:
    """Start ``true`` with ``options`` in a minimal world: ``""`` when it worked, else bwrap's complaint."""
    argv = [bwrap, *options, "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--", "true"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=20, env={}, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return str(e)
    if done.returncode == 0:
        return ""
    return done.stderr.decode(errors="replace").strip().splitlines()[-1:][0] if done.stderr.strip() else \
        f"exit code {done.returncode}"


@functools.cache
def probe(bwrap: str = BWRAP) -> WorldSupport:
    """Whether worlds can be built here (tried for real, once per process)."""
    found = bwrap if os.access(bwrap, os.X_OK) else shutil.which("bwrap")
    if not found:
        return WorldSupport(None)
    whole = _try(found, list(_UNSHARE.values()))
    if not whole:
        return WorldSupport(found, {name: True for name in NAMESPACES})
    namespaces = {"mount": not _try(found, [])}
    for name, option in _UNSHARE.items():
        namespaces[name] = namespaces["mount"] and not _try(found, [option])
    return WorldSupport(found, namespaces, whole)
