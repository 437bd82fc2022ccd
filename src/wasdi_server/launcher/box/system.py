"""What every boxed program may read of the machine: its libraries, interpreters and the few files of
``/etc`` that programs need to start, resolve names and verify certificates.

``/etc`` is listed file by file rather than opened whole: a server running as root would otherwise let
every run read ``/etc/shadow`` and private keys (the box drops root's capabilities, but root still owns
those files).  ``/proc`` is listed the same way: the boxed program's own entries (``/proc/self``, resolved
by the program itself just before it starts, so they are its own) and the machine-wide figures programs
read (CPU, memory, load, kernel settings).  Another process's entries are not opened: Landlock refuses the
environment, memory and open files of a process outside the box anyway, but its command line and status
(a server started with a database address holding a password, another user's run) would be readable, and
so would the list of every process on the machine.  A process the program forks does not see its own
entries (they did not exist when the rules were made): programs fall back (Python closes its descriptors
without ``/proc/self/fd``).
"""

from __future__ import annotations

import functools
import glob
import os
import time
from pathlib import Path

SYSTEM_FOLDERS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/sys")
PROC_ENTRIES = (
    "self", "thread-self", "cpuinfo", "meminfo", "stat", "loadavg", "uptime", "version", "filesystems",
    "sys", "mounts", "swaps", "zoneinfo", "vmstat", "pressure",
)
"""What a boxed program may read of ``/proc``: ``self`` and ``thread-self`` are opened by the program
itself when the rules are made, so they name its own entries."""
ETC_ENTRIES = (
    "passwd", "group", "nsswitch.conf", "hosts", "host.conf", "resolv.conf", "gai.conf", "services", "protocols",
    "networks", "localtime", "timezone", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "mime.types", "os-release",
    "lsb-release", "debian_version", "ssl/certs", "ssl/openssl.cnf", "ca-certificates", "ca-certificates.conf",
    "pki/tls/certs", "pki/ca-trust", "crypto-policies", "alternatives", "fonts", "java-*", "java", "gdal", "proj",
    "pip.conf", "xdg/pip", "uv", "inputrc", "environment",
)
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
SHARED_MEMORY = "/dev/shm"
"""POSIX shared memory and semaphores (Python's multiprocessing locks live there): shared by every process
of the machine, so boxed runs may use it, and nothing of the server is kept there."""


def system_read() -> list[str]:
    """Folders and files every boxed program may read and execute (looked up at most once a minute)."""
    return list(_system_read(int(time.monotonic() // 60)))


@functools.lru_cache(maxsize=1)
def _system_read(_minute: int) -> tuple[str, ...]:
    paths = [p for p in SYSTEM_FOLDERS if os.path.exists(p)]
    paths += [f"/proc/{entry}" for entry in PROC_ENTRIES]
    for entry in ETC_ENTRIES:
        paths += sorted(glob.glob(os.path.join("/etc", entry)))
    return tuple(paths)


def devices() -> list[str]:
    return [d for d in DEVICES if os.path.exists(d)]


def program_root(executable: str | Path) -> Path:
    """The folder a program is installed in: ``<root>`` of ``<root>/bin/<program>``, else its own folder."""
    resolved = Path(executable).resolve()
    folder = resolved.parent
    return folder.parent if folder.name == "bin" else folder


def interpreter_paths(executable: str | Path) -> list[Path]:
    """What running ``executable`` reads besides itself: its folder and install root and, for a script, its
    interpreter's (a virtual environment's own folder and the interpreter it was made from).  Each root
    comes after the folder it contains, so a root the box must not open (one holding the data directory)
    still leaves the folder."""
    path = Path(executable)
    found = [path.resolve().parent, program_root(path)]
    if (path.parent.parent / "pyvenv.cfg").is_file():
        found.append(path.parent.parent)  # a virtual environment's interpreter reads its pyvenv.cfg
    try:
        with open(path, "rb") as handle:
            head = handle.readline(512)
    except OSError:
        return found
    if head.startswith(b"#!"):
        words = head[2:].decode(errors="replace").split()
        if words and not (Path(words[0]).name == "env" and len(words) > 1):
            interpreter = Path(words[0])
            found += [interpreter.parent, interpreter.parent.parent if interpreter.parent.name == "bin"
                      else interpreter.parent, interpreter.resolve().parent, program_root(interpreter)]
    return found
