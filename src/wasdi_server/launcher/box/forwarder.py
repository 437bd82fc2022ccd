"""The inside half of the box's doors (``doors.py``): in the run's own network namespace, where nothing
but loopback exists, it listens on ``127.0.0.1:<port>`` for each door and splices every connection to
the door's Unix socket, which the server answers.

Started by the run's supervisor inside the world, before the program, as a process of its own (the
program's process becomes the program).  Standard library C modules only (``_socket``, ``select``), for
the reason ``supervisor.py`` gives: an interpreter started with ``-I -S`` and nothing more starts fast.
"""
# ruff: noqa: SIM105  (contextlib would be one more import: see supervisor.py)

from __future__ import annotations

import _socket
import select

BACKLOG = 64
CHUNK = 65536


def listen(forwards: list[tuple[int, str]]) -> list[tuple[_socket.socket, str]]:
    """A listening socket for each door: (a port of the run's loopback, the server's Unix socket it leads to)."""
    found = []
    for port, target in forwards:
        listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
        listener.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(BACKLOG)
        found.append((listener, target))
    return found


class _Side:
    """One socket of a spliced pair: what waits to be written to it, whether it has said all it had to say
    (end of file read), and whether writing to it is over (its peer ended, and all was written)."""

    def __init__(self, sock: _socket.socket) -> None:
        self.sock = sock
        self.fd = sock.fileno()
        self.pending = b""
        self.said_all = False
        self.shut = False
        self.other: _Side = self

    def mask(self) -> int:
        wanted = 0
        if not self.said_all and len(self.other.pending) < CHUNK * 4:
            wanted |= select.POLLIN
        if self.pending:
            wanted |= select.POLLOUT
        return wanted


def serve(listeners: list[tuple[_socket.socket, str]]) -> None:
    """Forward every connection, for as long as the run lives (its PID namespace ends this process).

    One thread, one ``poll`` loop: the forwarder never starts a task, so a run that spent its process limit
    still reaches its doors (the official library reports the failure through the API door)."""
    poller = select.poll()
    accepting: dict[int, tuple[_socket.socket, str]] = {}
    sides: dict[int, _Side] = {}
    for listener, target in listeners:
        accepting[listener.fileno()] = (listener, target)
        poller.register(listener.fileno(), select.POLLIN)

    def close(side: _Side) -> None:
        for one in (side, side.other):
            if one.fd in sides:
                del sides[one.fd]
                poller.unregister(one.fd)
                one.sock.close()

    while True:
        for fd, events in poller.poll():
            if fd in accepting:
                _accept(poller, sides, *accepting[fd])
                continue
            side = sides.get(fd)
            if side is None:
                continue
            if events & select.POLLERR:
                close(side)
                continue
            if events & (select.POLLIN | select.POLLHUP) and not side.said_all:
                try:
                    data = side.sock.recv(CHUNK)
                except BlockingIOError:
                    data = None
                except OSError:
                    data = b""
                if data == b"":
                    side.said_all = True
                elif data:
                    side.other.pending += data
            if events & select.POLLOUT and side.pending:
                try:
                    side.pending = side.pending[side.sock.send(side.pending):]
                except BlockingIOError:
                    pass
                except OSError:
                    close(side)
                    continue
            for one in (side, side.other):
                if one.other.said_all and not one.pending and not one.shut:
                    one.shut = True
                    try:
                        one.sock.shutdown(_socket.SHUT_WR)
                    except OSError:
                        pass
            if (side.shut and side.other.shut) or (events & select.POLLHUP and side.said_all and side.shut):
                close(side)
                continue
            poller.modify(side.fd, side.mask())
            poller.modify(side.other.fd, side.other.mask())


def _accept(poller: select.poll, sides: dict[int, _Side], listener: _socket.socket, target: str) -> None:
    try:
        client_fd, _ = listener._accept()  # type: ignore[attr-defined]  # the C socket's own accept
    except OSError:
        return
    client = _socket.socket(fileno=client_fd)
    door = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        door.connect(target)
    except OSError:
        client.close()
        door.close()
        return
    one, two = _Side(client), _Side(door)
    one.other, two.other = two, one
    for side in (one, two):
        side.sock.setblocking(False)
        sides[side.fd] = side
        poller.register(side.fd, select.POLLIN)
