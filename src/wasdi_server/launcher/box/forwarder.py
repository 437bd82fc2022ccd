"""The inside half of the box's doors (``doors.py``): in the run's own network namespace, where nothing
but loopback exists, it listens on ``127.0.0.1:<port>`` for each door and splices every connection to
the door's Unix socket, which the server answers.

Started by the run's supervisor inside the world, before the program, as a process of its own (the
program's process becomes the program).  Standard library C modules only (``_socket``, ``_thread``), for
the reason ``supervisor.py`` gives: an interpreter started with ``-I -S`` and nothing more starts fast.
"""
# ruff: noqa: SIM105  (contextlib would be one more import: see supervisor.py)

from __future__ import annotations

import _socket
import _thread
import os

BACKLOG = 64
CHUNK = 65536


def listen(forwards: list[tuple[int, str]]) -> list[tuple[_socket.socket, str]]:
    """A listening socket on the run's loopback for each (port, Unix socket path)."""
    found = []
    for port, path in forwards:
        listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
        listener.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", int(port)))
        listener.listen(BACKLOG)
        found.append((listener, path))
    return found


def _pump(source: _socket.socket, target: _socket.socket, done: _thread.LockType) -> None:
    try:
        while True:
            data = source.recv(CHUNK)
            if not data:
                break
            target.sendall(data)
    except OSError:
        pass
    try:
        target.shutdown(_socket.SHUT_WR)
    except OSError:
        pass
    done.release()


def _connection(client: _socket.socket, path: str) -> None:
    door = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        door.connect(path)
    except OSError:
        client.close()
        door.close()
        return
    done = _thread.allocate_lock()
    done.acquire()
    _thread.start_new_thread(_pump, (door, client, done))
    other = _thread.allocate_lock()
    other.acquire()
    _pump(client, door, other)
    done.acquire()
    client.close()
    door.close()


def _accept(listener: _socket.socket, path: str) -> None:
    while True:
        try:
            fd, _ = listener._accept()  # type: ignore[attr-defined]  # the C socket's own accept
        except OSError:
            continue
        client = _socket.socket(fileno=fd)
        _thread.start_new_thread(_connection, (client, path))


def serve(listeners: list[tuple[_socket.socket, str]]) -> None:
    """Forward every connection, for as long as the run lives (its PID namespace ends this process)."""
    for listener, path in listeners[1:]:
        _thread.start_new_thread(_accept, (listener, path))
    if listeners:
        _accept(*listeners[0])
    os._exit(0)
