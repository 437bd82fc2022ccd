"""What the box will do on this machine, in words: ``wasdi-server doctor`` prints it and the start-up log
gives its verdict.  A live check starts one boxed program that tries to read the data directory and to
signal this process, so the report says what the kernel really did, not only what it advertises."""

from __future__ import annotations

import os
import platform
import socket
import sys
import time
from pathlib import Path
from typing import Any

from . import confine
from .box import Box, BoxUnavailable
from .doors import describe as describe_doors
from .job import Job
from .system import interpreter_paths
from .world import NAMESPACES

LIVE_CHECK = """
import os, resource, socket, sys
data_dir, server, outside, door, host = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
refused = []
def connect(port):
    with socket.create_connection(("127.0.0.1", port), 3):
        pass
for name, action in (("the data directory", lambda: os.listdir(data_dir)),
                     ("a signal to the server", lambda: os.kill(server, 0)),
                     ("the server's limits", lambda: resource.prlimit(server, resource.RLIMIT_CPU)),
                     ("the host's sockets (/run, /var/run)", lambda: os.listdir("/var/run") + os.listdir("/run")),
                     ("a TCP port of the host's loopback", lambda: connect(outside))):
    try:
        action()
    except OSError:
        refused.append(name)
print("refused: " + ", ".join(refused))
if door:
    try:
        connect(door)
        print("door: yes")
    except OSError as e:
        print("door: no: " + str(e))
if host:
    try:
        socket.getaddrinfo(host, 443, type=socket.SOCK_STREAM)
        print("resolved: yes")
    except OSError as e:
        print("resolved: no: " + str(e))
"""
NAME_CHECK_HOST = "pypi.org"
"""The name a boxed program looks up, as a build does to reach the package index (over TCP: the box refuses
UDP, and some resolvers do not answer over TCP)."""


def live_check(box: Box, data_dir: Path, name_host: str = NAME_CHECK_HOST) -> dict[str, Any]:
    """Start one boxed program; whether it started, how long that took, what it could not reach (the data
    directory, this process's signals and limits, the host's sockets, a TCP port this process listens on),
    whether the API door answered inside, and whether it could look up ``name_host`` (empty: not tried)."""
    door = box.doors.api_port if box.in_worlds and box.doors is not None else 0
    with socket.create_server(("127.0.0.1", 0)) as outside:
        job = Job([sys.executable, "-c", LIVE_CHECK, str(data_dir), str(os.getpid()),
                   str(outside.getsockname()[1]), str(door), name_host],
                  {"PATH": "/usr/bin:/bin"}, Path("/"), read=interpreter_paths(sys.executable),
                  connect_ports=[door] if door else [], name=f"doctor-{os.getpid()}")
        lines: list[str] = []
        started = time.perf_counter()
        try:
            outcome = box.run(job, on_output=lines.append, timeout=60)
        except BoxUnavailable as e:
            return {"started": False, "reason": str(e)}
    seconds = time.perf_counter() - started
    refused = next((line.split(": ", 1)[1] for line in lines if line.startswith("refused: ")), "")
    resolved = next((line.split(": ", 1)[1] for line in lines if line.startswith("resolved: ")), None)
    opened = next((line.split(": ", 1)[1] for line in lines if line.startswith("door: ")), None)
    check: dict[str, Any] = {"started": outcome.exit_code == 0, "milliseconds": round(seconds * 1000),
                             "refused": refused, "output": lines[-5:] if outcome.exit_code != 0 else []}
    if opened is not None:
        check["api_door"] = {"port": door, "answered": opened == "yes",
                             "error": opened.removeprefix("no: ") if opened != "yes" else ""}
    if name_host and resolved is not None:
        check["names"] = {"host": name_host, "resolved": resolved == "yes",
                          "error": resolved.removeprefix("no: ") if resolved != "yes" else ""}
    return check


def describe(box: Box, data_dir: Path, api_port: int, live: bool = True,
             name_host: str = NAME_CHECK_HOST) -> dict[str, Any]:
    """Everything ``wasdi-server doctor`` reports, as data (``name_host``: the name the live check looks up;
    empty: none, as for a server whose builds install offline)."""
    support = box.support
    limits = box.limits
    refusal = box.refusal()
    facts: dict[str, Any] = {
        "kernel": f"{platform.system()} {platform.release()} {confine.machine()}",
        "landlock_abi": support.landlock_abi,
        "landlock_needed": confine.REQUIRED_ABI,
        "seccomp": support.seccomp,
        "subreaper": support.subreaper,
        "runs_as_root": os.geteuid() == 0,
        "cgroups": {name: {"parent": str(place.parent.with_name(box.cgroups_folder) if box.cgroups_folder
                                          else place.parent), "version": place.version}
                    for name, place in support.cgroups.items()},
        "app_isolation": box.isolation,
        "tcp_ports": sorted({api_port, *box.outbound_ports} | ({53} if box.confined else set())),
        "world": {"bwrap": support.world.bwrap, "namespaces": dict(support.world.namespaces),
                  "error": support.world.error, "stage": str(box.stage() or "")},
        "doors": dict(describe_doors(box.doors)) if box.in_worlds else {},
        "limits": {"memory_mb": limits.memory_mb, "memory_by": support.memory_by,
                   "processes": limits.processes, "processes_by": support.processes_by,
                   "open_files": limits.open_files, "file_mb": limits.file_mb, "cpu_seconds": limits.cpu_seconds},
        "refusal": refusal,
    }
    if box.confined and refusal:
        facts["verdict"] = "runs are refused"
    elif box.confined:
        facts["verdict"] = "runs are boxed"
    else:
        facts["verdict"] = "runs are NOT boxed (app_isolation = off)"
    if live and refusal is None:
        facts["live_check"] = live_check(box, data_dir, name_host if box.confined else "")
    return facts


def lines(facts: dict[str, Any]) -> list[str]:
    """The report for people, one ``label  text`` line each."""
    abi = facts["landlock_abi"]
    needed = facts["landlock_needed"]
    limits = facts["limits"]
    cgroups = facts["cgroups"]
    rows = [
        ("kernel", facts["kernel"]),
        ("Landlock", f"ABI {abi}" + (" (files, TCP ports, signal and abstract-socket scoping)" if abi >= needed
                                      else f": a box needs ABI {needed}") if abi else "not available"),
        ("seccomp", "socket filter: TCP only, no UDP or raw sockets" if facts["seccomp"] else "not available"),
        ("capabilities", "every run drops them all" + (" (the server runs as root)" if facts["runs_as_root"] else "")),
        ("a run ends whole", "yes: its supervisor is a subreaper and sweeps every process it leaves"
         if facts["subreaper"] else "only its process group"),
        ("cgroups", "; ".join(f"{name} in {c['parent']} (v{c['version']})" for name, c in cgroups.items())
         or "none writable here: limits are per process (resource limits)"),
        ("app_isolation", facts["app_isolation"]),
    ]
    world = facts.get("world") or {}
    namespaces = world.get("namespaces") or {}
    rows.append(("bubblewrap", world.get("bwrap") or "not installed (apt-get install bubblewrap)"))
    rows.append(("namespaces", ", ".join(f"{name} {'yes' if namespaces.get(name) else 'NO'}" for name in NAMESPACES)
                 + (f" ({world['error']})" if world.get("error") else "")))
    if facts["app_isolation"] != "off":
        rows.append(("world's stage", f"compiled ({world['stage']})" if world.get("stage") else
                     "Python (the compiled stage is not built: 'make stage' with a C compiler starts each run "
                     "about 20 ms sooner; the walls are the same)"))
    doors = facts.get("doors") or {}
    if facts["app_isolation"] != "off":
        rows.append(("doors", "; ".join(f"{name} at {where}" for name, where in doors.items())
                     + ("" if "proxy" in doors else "; no proxy door (no proxy service here: builds install "
                        "offline, from apps_find_links)")))
        rows.append(("each run may", "read the system's libraries and interpreters, its app and its environment; "
                     "write its workspace and scratch folders and its private /dev/shm; reach the network "
                     "only through its doors; see only its own processes; nothing else of the data directory"))
    memory_scope = "per run" if limits["memory_by"] == "cgroup" else "per process"
    rows.append(("limits", f"memory {limits['memory_mb']} MB ({memory_scope}), "
                 f"{limits['processes']} processes and threads "
                 f"({'per run' if limits['processes_by'] == 'cgroup' else 'of the OS user, over what runs now'}), "
                 f"{limits['open_files']} open files, files up to {limits['file_mb']} MB, "
                 f"{limits['cpu_seconds']} s of CPU per process"))
    check = facts.get("live_check")
    if check:
        if check.get("started"):
            rows.append(("live check", f"a boxed program started in {check['milliseconds']} ms and could not reach "
                         + (check.get("refused") or "anything it tried")))
            door = check.get("api_door")
            if door:
                rows.append(("API door", f"answered inside the box on 127.0.0.1:{door['port']}" if door["answered"]
                             else f"did not answer inside the box on 127.0.0.1:{door['port']} ({door['error']})"))
        else:
            rows.append(("live check", "a boxed program did not start: "
                         + (check.get("reason") or " / ".join(check.get("output") or []))))
        names = check.get("names")
        if names and names["resolved"]:
            rows.append(("names", f"a boxed program looked up {names['host']} (over TCP, as builds do)"))
        elif names:
            rows.append(("names", f"a boxed program could not look up {names['host']} ({names['error']}): a run "
                         "has no resolver of its own; builds reach the package index only through the proxy "
                         "door, which resolves names itself, or install offline (apps_offline with "
                         "apps_find_links)"))
    if facts.get("refusal"):
        rows.append(("why", facts["refusal"]))
    rows.append(("verdict", facts["verdict"]))
    width = max(len(label) for label, _ in rows)
    return [f"{label:<{width}}  {text}" for label, text in rows]
