"""What hostile code tries from inside the box, the same for an app, a build and a gpt graph: read the store,
another user's file and the admin channel's key; write another user's workspace, its owner's folder outside
the workspace and the folder above the data directory; use the admin channel; read the server's environment
or command line, or find it by walking up /proc; signal the server; connect to a TCP listener on another
loopback port; send UDP.

``attempt_all(targets)`` answers ``{attempt: "allowed" | "refused: <why>"}``.  Standard library only."""

import json
import os
import socket


def find_server_by_walking_up():
    """What an attacker does for the server's pid: walk up the parents in /proc until the server's command
    line; an ``OSError`` when /proc does not show them."""
    pid = os.getppid()
    for _ in range(30):
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            words = handle.read().split(b"\0")
        with open(f"/proc/{pid}/stat", "rb") as handle:
            parent = int(handle.read().rsplit(b")", 1)[1].split()[1])
        if b"serve" in words and any(b"wasdi_server" in w for w in words):
            return pid
        if parent <= 1:
            break
        pid = parent
    raise FileNotFoundError(2, "no server among the parents")


def _admin_channel(targets):
    request = {"operation": "user.add", "arguments": {"userId": "intruder@example.org",
                                                      "password": "Intruder-pass-1", "admin": True}}
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(10)
        s.connect(targets["admin_socket"])
        s.sendall(json.dumps(request).encode() + b"\n")
        answer = json.loads(s.makefile("rb").readline())
    if not answer.get("ok"):
        raise PermissionError(1, f"the channel answered: {answer.get('error')}")


def _read(path, mode="r"):
    with open(path, mode) as handle:
        return handle.read()


def _write(folder):
    with open(os.path.join(folder, "planted-by-intruder.txt"), "w") as handle:
        handle.write("planted")


def attempt_all(targets):
    pid = int(targets["server_pid"])  # the tests give it: an attacker could guess it from the pid range
    attempts = {
        "find the server by walking up /proc": find_server_by_walking_up,
        "read the server's command line": lambda: _read(f"/proc/{pid}/cmdline", "rb"),
        "read the store": lambda: _read(targets["store_file"]),
        "read another user's file": lambda: _read(targets["other_file"]),
        "read the admin channel's key": lambda: _read(targets["admin_key"]),
        "write another user's workspace": lambda: _write(targets["other_folder"]),
        "write the owner's folder outside the workspace": lambda: _write(targets["owner_folder"]),
        "write above the data directory": lambda: _write(targets["above"]),
        "use the admin channel": lambda: _admin_channel(targets),
        "read the server's environment": lambda: _read(f"/proc/{pid}/environ", "rb"),
        "signal the server": lambda: os.kill(pid, 0),
        "connect to another loopback port": lambda: socket.create_connection(("127.0.0.1", targets["other_port"]),
                                                                              5).close(),
        "send UDP to loopback": lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(
            b"x", ("127.0.0.1", targets["other_port"])),
    }
    results = {}
    for name, action in attempts.items():
        try:
            action()
            results[name] = "allowed"
        except OSError as e:
            results[name] = f"refused: {e.strerror or e}"
    return results
