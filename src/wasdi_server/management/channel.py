"""The local admin channel: how ``wasdi-server user ...`` reaches a running server.

A running server owns its data directory (the store's lock), so operator commands cannot open the
store beside it.  Instead the server listens on a Unix socket, ``<data_dir>/admin.sock``, created
with mode 0600 and answering only peers running as the same OS user as the server (or root) that also
present the channel's key: a random secret the server writes at each start to ``<data_dir>/admin.key``
(mode 0600).  Whoever may read the data directory may manage its accounts, nobody else: not another OS
user, and not an app run, which runs as the server's OS user but in a box that cannot read the data
directory (Landlock does not govern connecting to an existing socket file, so the socket alone would
not keep a run out).  One JSON request per connection (``{"key": ..., "operation": ..., "arguments":
{...}}``), one JSON answer (``{"ok": true, "result": ...}`` or ``{"ok": false, "error": "..."}``).
Nothing sent or answered is logged: it may hold passwords.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import os
import secrets
import socket
import socketserver
import struct
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import DomainError
from . import accounts

if TYPE_CHECKING:
    from ..composition import Services

log = logging.getLogger("wasdi_server.admin_channel")
SOCKET_NAME = "admin.sock"
KEY_NAME = "admin.key"
REFUSED = "only the owner of the data directory may use this channel"
MAX_REQUEST_BYTES = 64 * 1024
TIMEOUT_SECONDS = 30.0


class ChannelError(Exception):
    """The channel could not be used, or the server refused the operation (``message`` says why)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def socket_path(data_dir: Path) -> Path:
    return Path(data_dir) / SOCKET_NAME


def key_path(data_dir: Path) -> Path:
    return Path(data_dir) / KEY_NAME


def _write_key(path: Path) -> str:
    """A new key in a file only the server's OS user can read (a leftover one is replaced)."""
    key = secrets.token_urlsafe(32)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(key)
    return key


def _peer_uid(connection: socket.socket) -> int | None:
    try:
        raw = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except (AttributeError, OSError):
        return None
    _pid, uid, _gid = struct.unpack("3i", raw)
    return int(uid)


class _Handler(socketserver.StreamRequestHandler):
    server: _ChannelServer

    def handle(self) -> None:
        uid = _peer_uid(self.connection)
        if uid is None or uid not in (os.getuid(), 0):
            self._answer({"ok": False, "error": REFUSED})
            return
        try:
            line = self.rfile.readline(MAX_REQUEST_BYTES)
            request = json.loads(line)
            if not isinstance(request, dict) or not hmac.compare_digest(str(request.get("key") or ""),
                                                                         self.server.key):
                self._answer({"ok": False, "error": REFUSED})
                return
            operation = str(request["operation"])
            arguments = request.get("arguments") or {}
            if not isinstance(arguments, dict):
                raise ValueError("arguments must be an object")
        except (ValueError, KeyError, TypeError):
            self._answer({"ok": False, "error": "malformed request"})
            return
        try:
            result = accounts.run(self.server.services, operation, arguments)
        except DomainError as e:
            self._answer({"ok": False, "error": e.message})
            return
        except (KeyError, TypeError, ValueError) as e:
            self._answer({"ok": False, "error": f"bad arguments for {operation}: {e}"})
            return
        self._answer({"ok": True, "result": result})

    def _answer(self, answer: dict[str, Any]) -> None:
        with contextlib.suppress(OSError):
            self.wfile.write(json.dumps(answer).encode() + b"\n")


class _ChannelServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def __init__(self, path: str, services: Services, key: str) -> None:
        self.services = services
        self.key = key
        previous = os.umask(0o177)  # the socket is created 0600: no window where others could connect
        try:
            super().__init__(path, _Handler)
        finally:
            os.umask(previous)


class AdminChannel:
    """The listening side, run by ``wasdi-server serve`` for as long as it serves."""

    def __init__(self, services: Services) -> None:
        self.path = socket_path(services.settings.data_dir)
        self.key_file = key_path(services.settings.data_dir)
        self._server: _ChannelServer | None = None
        self._thread: threading.Thread | None = None
        self.services = services

    def start(self) -> bool:
        """Listen; ``False`` (and a warning) when the platform or the path does not allow it."""
        if not hasattr(socket, "AF_UNIX"):
            log.warning("no Unix sockets here: manage users with the server stopped")
            return False
        # The store's lock is ours, so a socket left here is a dead server's.
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        try:
            self._server = _ChannelServer(str(self.path), self.services, _write_key(self.key_file))
        except OSError as e:  # e.g. a path longer than sockets allow
            log.warning("local admin channel not available (%s): manage users with the server stopped", e)
            return False
        self._thread = threading.Thread(target=self._server.serve_forever, name="admin-channel", daemon=True)
        self._thread.start()
        return True

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
            for leftover in (self.path, self.key_file):
                with contextlib.suppress(FileNotFoundError):
                    leftover.unlink()


def available(data_dir: Path) -> bool:
    """Whether a server of ``data_dir`` listens on its channel."""
    path = socket_path(data_dir)
    if not path.exists():
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(2.0)
            s.connect(str(path))
    except OSError:
        return False
    return True


def call(data_dir: Path, operation: str, arguments: dict[str, Any] | None = None) -> Any:
    """Run ``operation`` in the server that owns ``data_dir``; its result, or ``ChannelError``."""
    path = socket_path(data_dir)
    try:
        key = key_path(data_dir).read_text(encoding="ascii").strip()
    except OSError as e:
        raise ChannelError(f"cannot read the admin channel's key {key_path(data_dir)}: {e.strerror} (run this "
                           "command as the OS user the server runs as)") from e
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(TIMEOUT_SECONDS)
            s.connect(str(path))
            request = {"key": key, "operation": operation, "arguments": arguments or {}}
            s.sendall(json.dumps(request).encode() + b"\n")
            with s.makefile("rb") as reader:
                line = reader.readline(MAX_REQUEST_BYTES * 16)
    except OSError as e:
        raise ChannelError(f"cannot reach the server of {data_dir} through {path}: {e}") from e
    try:
        answer = json.loads(line)
    except ValueError as e:
        raise ChannelError("the server answered something unreadable on its admin channel") from e
    if not answer.get("ok"):
        raise ChannelError(str(answer.get("error") or "refused"))
    return answer.get("result")
