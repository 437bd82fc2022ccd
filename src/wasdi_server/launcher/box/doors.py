"""The doors: the only way out of a boxed run's network namespace, which holds nothing but loopback.

The server opens a run's doors as Unix sockets in a folder of that run (``OpenDoors``), bound into its
world; inside, the run's supervisor listens on ``127.0.0.1:<port>`` of the run's own loopback for each door
and splices every connection to the door's socket (``forwarder.py``).  On the server's side each accepted
connection is handed, on a thread of its own, to the door's ``DoorService``:

- the API door (``ApiRelay``) relays to the server's own API listener, so the official library's
  ``BASEURL`` ``http://127.0.0.1:<api port>/...`` works unchanged inside the box;
- the proxy door hands the connection to the outbound proxy service the composition root passes in
  (``HTTP_PROXY``/``HTTPS_PROXY``/``NO_PROXY`` are set for the run, ``proxy_env``); where none is
  configured there is no proxy door and no proxy variable.

Nothing else of the host's network exists for the run: no other address, no host socket.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import socket
import tempfile
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

log = logging.getLogger("wasdi_server.box.doors")
PROXY_PORT = 3128
"""The proxy door's port on a run's loopback (the port HTTP proxies are known by)."""
API = "api"
PROXY = "proxy"
BACKLOG = 64
CHUNK = 65536


@dataclass(frozen=True)
class RunIdentity:
    """Whose run made a connection through a door, and where that run's log lines go."""

    user_id: str
    workspace_id: str
    process_id: str
    """The process workspace id; "" for builds, package actions and notebooks."""
    log: Callable[[str], None]
    """Appends one line to that run's own log (the processor log, or the build log)."""


class DoorService(Protocol):
    """What answers the connections a run makes through one door."""

    def serve(self, connection: socket.socket, run: RunIdentity) -> None:
        """Answer one connection a run made through this door; blocking; returns when it is done; closes it."""


def splice(one: socket.socket, other: socket.socket) -> tuple[int, int]:
    """Copy both ways between two connected sockets until both sides are done; the bytes copied
    (``one`` → ``other``, ``other`` → ``one``).  Closes neither."""
    counts = [0, 0]

    def pump(source: socket.socket, target: socket.socket, slot: int) -> None:
        try:
            while True:
                data = source.recv(CHUNK)
                if not data:
                    break
                target.sendall(data)
                counts[slot] += len(data)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                target.shutdown(socket.SHUT_WR)

    helper = threading.Thread(target=pump, args=(other, one, 1), daemon=True, name="door-splice")
    helper.start()
    pump(one, other, 0)
    helper.join()
    return counts[0], counts[1]


@dataclass(frozen=True)
class ApiRelay:
    """The API door's service: each connection relayed to the server's own API listener."""

    host: str
    port: int
    connect_timeout: float = 10.0

    def serve(self, connection: socket.socket, run: RunIdentity) -> None:
        with connection:
            try:
                upstream = socket.create_connection((self.host, self.port), timeout=self.connect_timeout)
            except OSError as e:
                run.log(f"the API door could not reach this server's API at {self.host}:{self.port}: {e}")
                return
            with upstream:
                upstream.settimeout(None)
                splice(connection, upstream)


@dataclass(frozen=True)
class Door:
    """One door of a run: its name (the socket's), its port on the run's loopback, and what answers it."""

    name: str
    port: int
    service: DoorService


def proxy_env(port: int = PROXY_PORT) -> dict[str, str]:
    """The variables that send a run's HTTP(S) clients (pip, uv, requests, curl…) through the proxy door;
    the run's own loopback (the API door) is reached directly."""
    url = f"http://127.0.0.1:{port}"
    no_proxy = "127.0.0.1,localhost,::1"
    return {"HTTP_PROXY": url, "HTTPS_PROXY": url, "http_proxy": url, "https_proxy": url,
            "NO_PROXY": no_proxy, "no_proxy": no_proxy}


@dataclass(frozen=True)
class DoorPlan:
    """The doors a server gives its runs: the API relay (its own listener, reached inside at ``api_port``)
    and, where the composition root passes one, the outbound proxy service."""

    api_port: int
    api: DoorService
    proxy: DoorService | None = None
    proxy_port: int = PROXY_PORT

    def doors(self) -> list[Door]:
        found = [Door(API, self.api_port, self.api)] if self.api_port else []
        if self.proxy is not None:
            port = self.proxy_port if self.proxy_port != self.api_port else self.proxy_port + 1
            found.append(Door(PROXY, port, self.proxy))
        return found

    def env(self) -> dict[str, str]:
        """What a run's environment gets for these doors (the proxy variables, where there is a proxy)."""
        door = next((d for d in self.doors() if d.name == PROXY), None)
        return proxy_env(door.port) if door else {}


@dataclass
class OpenDoors:
    """A run's doors, open: a folder of Unix sockets (bind it into the run's world at the same path), one
    accepting thread per door, one serving thread per connection.  ``close()`` (or leaving the ``with``)
    shuts them and removes the folder; connections being served end with the run's side."""

    doors: list[Door]
    run: RunIdentity
    folder: Path = field(init=False)
    _listeners: list[socket.socket] = field(default_factory=list, init=False)
    _threads: list[threading.Thread] = field(default_factory=list, init=False)
    _closed: threading.Event = field(default_factory=threading.Event, init=False)

    def __post_init__(self) -> None:
        # Short on purpose: a Unix socket's path holds at most 107 bytes.
        self.folder = Path(tempfile.mkdtemp(prefix="wasdi-doors-"))
        try:
            for door in self.doors:
                listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self._listeners.append(listener)
                listener.bind(str(self.socket_path(door)))
                listener.listen(BACKLOG)
                thread = threading.Thread(target=self._accept, args=(listener, door), daemon=True,
                                          name=f"door-{door.name}")
                self._threads.append(thread)
            # The run connects as whatever user it is inside its user namespace: the folder is the server's.
            os.chmod(self.folder, 0o755)
        except OSError:
            self.close()
            raise
        for thread in self._threads:
            thread.start()

    def socket_path(self, door: Door) -> Path:
        return self.folder / f"{door.name}.sock"

    def forwards(self) -> list[tuple[int, str]]:
        """What the run's forwarder listens on and where it sends it: (loopback port, door socket) for each door."""
        return [(door.port, str(self.socket_path(door))) for door in self.doors]

    def _accept(self, listener: socket.socket, door: Door) -> None:
        while not self._closed.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(door, connection), daemon=True,
                             name=f"door-{door.name}-connection").start()

    def _serve(self, door: Door, connection: socket.socket) -> None:
        try:
            door.service.serve(connection, self.run)
        except Exception:
            log.warning("the %s door of a run of %s failed on a connection", door.name, self.run.user_id,
                        exc_info=True)
        finally:
            with contextlib.suppress(OSError):
                connection.close()

    def close(self) -> None:
        self._closed.set()
        for listener in self._listeners:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                listener.close()
        for thread in self._threads:
            thread.join(2.0)
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> OpenDoors:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_doors(plan: DoorPlan | None, run: RunIdentity) -> OpenDoors | None:
    """A run's doors opened from the server's plan (``None`` where there is no door)."""
    doors = plan.doors() if plan is not None else []
    return OpenDoors(doors, run) if doors else None


def describe(plan: DoorPlan | None) -> Mapping[str, str]:
    """The doors, one phrase each (for ``doctor`` and a run's log)."""
    if plan is None:
        return {}
    return {door.name: f"127.0.0.1:{door.port} inside the box" for door in plan.doors()}
