"""The built-in SFTP service: upload accounts log in with their mailed password and see only their folder.

``wasdi-server serve`` starts it beside the API (``sftp_port``, default 2222, on the API's ``host``) and
stops it with the server.  It runs AsyncSSH (a maintained SSH implementation, not one of ours) on an
event loop of its own thread.  What a session may do is exactly what a transfer folder is for:

* log in with the account's password only (checked against the stored hash, in a worker thread so a
  slow check holds up no transfer); failures are throttled per account and per address like the API's
  logins (``domains/accounts/login_throttle.py``); a removed account, a changed password or a deleted user
  ends the account's open sessions at once (``UploadAccountService.session_enders``);
* the ``sftp`` subsystem and nothing else: no shell, no exec, no scp, no port, agent or X11 forwarding,
  no terminal;
* upload, resume, list, download, rename, delete, and folders, inside the account's folder
  (``ConfinedFolder``: no path leaves it, links included; making links is refused; permissions and owners
  sent by clients are ignored); writes count against the account's quota (``sftp_quota_bytes``).

Connections are a budget (``connection_budget.py``: ``sftp_connections`` in all and per address), counted from
the accept: the oldest ones not logged in are closed first to make room, a logged-in one never; an SSH
connection must have logged in within ``handshake_seconds`` (key exchange and password).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import asyncssh
from asyncssh import SFTPAttrs, SFTPName, SFTPVFSAttrs

from ..connection_budget import IDLE, LISTEN_BACKLOG, ConnectionBudget
from ..domains.accounts.identity import normalise_user_id
from ..files_beneath import NotRegularFile, open_fd_beneath, regular_fd
from . import host_key
from .confined_folder import ConfinedFolder, LeavesFolder, Quota, QuotaExceeded

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from asyncssh.connection import SSHConnection

    from ..domains.accounts.login_throttle import LoginThrottle
    from ..domains.accounts.uploads import UploadAccountService

log = logging.getLogger("wasdi_server.sftp")
LOGIN_GRACE_SECONDS = 30.0
"""An unauthenticated connection is closed after this long (unless ``handshake_seconds`` says otherwise)."""


class SftpService:
    """The SFTP service of one server: ``start`` listens, ``stop`` ends every session and stops listening."""

    def __init__(self, uploads: UploadAccountService, *, host: str, port: int, host_key_path: Path,
                 quota_bytes: int, throttle: LoginThrottle, connections: int = 256,
                 connections_per_address: int = 16, handshake_seconds: float = LOGIN_GRACE_SECONDS) -> None:
        self.uploads = uploads
        self.host = host
        self.port = port
        self.host_key_path = host_key_path
        self.quota_bytes = quota_bytes
        self.throttle = throttle
        self.budget = ConnectionBudget("the SFTP service", connections, connections_per_address)
        """Used by the service's loop thread only (accepts and closes)."""
        self.handshake_seconds = handshake_seconds
        self.fingerprint = ""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._acceptor: Any = None
        self._lock = threading.Lock()
        self._sessions: dict[str, set[asyncssh.SSHServerConnection]] = {}
        self._account_of: dict[SSHConnection, str] = {}
        self._quotas: dict[str, Quota] = {}
        uploads.session_enders.append(self.end_sessions)

    # -- lifecycle -------------------------------------------------------------------------------------
    def start(self) -> None:
        """Listen on ``host:port`` (``port`` becomes the bound port); ``OSError`` when that is impossible."""
        key = host_key.load_or_create(self.host_key_path)
        self.fingerprint = host_key.fingerprint(key)
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name="wasdi-sftp", daemon=True)
        thread.start()
        self._loop, self._thread = loop, thread
        try:
            self._acceptor = asyncio.run_coroutine_threadsafe(self._listen(key), loop).result(30)
        except BaseException:
            self._stop_loop()
            raise
        self.port = int(self._acceptor.get_port())
        log.info("SFTP service on %s:%d (host key %s)", self.host, self.port, self.fingerprint)

    async def _listen(self, key: Any) -> Any:
        return await asyncssh.create_server(
            lambda: _AccountLogin(self), self.host, self.port, server_host_keys=[key],
            sftp_factory=self._sftp_session, allow_scp=False, allow_pty=False, agent_forwarding=False,
            x11_forwarding=False, login_timeout=self.handshake_seconds, encoding=None,
            backlog=LISTEN_BACKLOG)

    def stop(self) -> None:
        """End every session and stop listening (done already is fine)."""
        loop = self._loop
        if loop is None:
            return
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(self._close_all(), loop).result(15)
        self._stop_loop()

    async def _close_all(self) -> None:
        if self._acceptor is not None:
            self._acceptor.close()
            await self._acceptor.wait_closed()
        with self._lock:
            connections = list(self._account_of)
        for connection in connections:
            connection.close()
        if connections:
            await asyncio.wait([asyncio.ensure_future(c.wait_closed()) for c in connections], timeout=10)

    def _stop_loop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join(15)
        if not loop.is_running():
            loop.close()
        self._loop, self._thread, self._acceptor = None, None, None

    @property
    def address(self) -> str:
        """``host:port`` clients connect to."""
        return f"{self.host}:{self.port}"

    # -- sessions --------------------------------------------------------------------------------------
    def end_sessions(self, user_id: str) -> None:
        """Close every open session of ``user_id`` (account removed, password changed, user deleted)."""
        with self._lock:
            connections = list(self._sessions.get(user_id, ()))
        loop = self._loop
        if not connections or loop is None:
            return
        for connection in connections:
            loop.call_soon_threadsafe(connection.close)
        log.info("ended %d SFTP session(s) of %s", len(connections), user_id)

    def open_sessions(self, user_id: str) -> int:
        with self._lock:
            return len(self._sessions.get(user_id, ()))

    def _opened(self, connection: asyncssh.SSHServerConnection, user_id: str) -> None:
        with self._lock:
            self._account_of[connection] = user_id
            self._sessions.setdefault(user_id, set()).add(connection)

    def _closed(self, connection: asyncssh.SSHServerConnection) -> None:
        with self._lock:
            user_id = self._account_of.pop(connection, None)
            if user_id is not None:
                self._sessions.get(user_id, set()).discard(connection)

    def _quota(self, user_id: str) -> Quota:
        with self._lock:
            quota = self._quotas.get(user_id)
            if quota is None:
                quota = self._quotas[user_id] = Quota(self.quota_bytes, lambda: self.uploads.used_bytes(user_id))
            return quota

    async def check_password(self, connection: asyncssh.SSHServerConnection, login: str, password: str) -> bool:
        """Whether ``login``/``password`` open an account (throttled like the API's logins)."""
        address = str((connection.get_extra_info("peername") or ("?",))[0])
        login = normalise_user_id(login) or login
        if self.throttle.wait_seconds(login, address) > 0:
            log.info("SFTP login of %s from %s refused: too many failed logins", login, address)
            return False  # not even checked: guessing while throttled earns nothing
        user_id = await asyncio.get_running_loop().run_in_executor(None, self.uploads.authenticate, login, password)
        if user_id is None:
            self.throttle.failed(login, address)
            log.info("SFTP login of %s from %s failed", login, address)
            return False
        self.throttle.succeeded(login, address)
        self._opened(connection, user_id)
        log.info("SFTP login of %s from %s", user_id, address)
        return True

    def _sftp_session(self, channel: asyncssh.SSHServerChannel[bytes]) -> asyncssh.SFTPServer:
        connection = channel.get_connection()
        with self._lock:
            user_id = self._account_of.get(connection)
        if user_id is None or not self.uploads.has_account(user_id):
            connection.close()
            raise asyncssh.SFTPPermissionDenied("the transfer account no longer exists")
        folder = self.uploads.folder(user_id)
        folder.mkdir(parents=True, exist_ok=True)
        return ConfinedSftpSession(channel, ConfinedFolder(folder), self._quota(user_id))


class _AccountLogin(asyncssh.SSHServer):
    """One connection's login: passwords only, and nothing but the SFTP subsystem once in."""

    def __init__(self, service: SftpService) -> None:
        self.service = service
        self.connection: asyncssh.SSHServerConnection | None = None
        self.accepted_at = time.time()
        self.logged_in = False

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        self.connection = conn
        peer = conn.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, tuple) and peer else "?"
        if not self.service.budget.admit(address, self):
            # after asyncssh's own start of the connection (it writes its version next): on the next turn
            asyncio.get_running_loop().call_soon(conn.abort)

    def connection_lost(self, exc: Exception | None) -> None:
        self.service.budget.release(self)
        if self.connection is not None:
            self.service._closed(self.connection)

    def shed_rank(self) -> tuple[int, float] | None:
        return None if self.logged_in else (IDLE, self.accepted_at)

    def shed(self) -> None:
        if self.connection is not None:
            self.connection.abort()

    def begin_auth(self, username: str) -> bool:
        return True

    def password_auth_supported(self) -> bool:
        return True

    async def validate_password(self, username: str, password: str) -> bool:
        assert self.connection is not None
        self.logged_in = await self.service.check_password(self.connection, username, password)
        return self.logged_in


class _OpenFile:
    """A file opened by a client: its descriptor, and whether its writes append."""

    def __init__(self, fd: int, append: bool) -> None:
        self.fd = fd
        self.append = append


def _denied(error: LeavesFolder) -> asyncssh.SFTPPermissionDenied:
    return asyncssh.SFTPPermissionDenied(str(error))


def _over_quota(error: QuotaExceeded) -> asyncssh.SFTPQuotaExceeded:
    return asyncssh.SFTPQuotaExceeded(str(error))


class ConfinedSftpSession(asyncssh.SFTPServer):
    """The SFTP operations of one session, inside one account's folder and quota."""

    def __init__(self, channel: asyncssh.SSHServerChannel[bytes], folder: ConfinedFolder, quota: Quota) -> None:
        super().__init__(channel)
        self.folder = folder
        self.quota = quota
        self._handles: set[_OpenFile] = set()

    def _local(self, path: bytes, *, allow_final_link: bool = False) -> Path:
        try:
            return self.folder.local(path, allow_final_link=allow_final_link)
        except LeavesFolder as e:
            raise _denied(e) from None

    def _relative(self, path: bytes) -> str:
        """``path`` below the folder, for ``files_beneath`` (which refuses links on the way itself)."""
        relative = self._local(path).relative_to(self.folder.root).as_posix()
        if relative == ".":
            raise asyncssh.SFTPFailure("the transfer folder itself is not a file")
        return relative

    def map_path(self, path: bytes) -> bytes:
        return os.fsencode(self._local(path))

    def reverse_map_path(self, path: bytes) -> bytes:
        try:
            return self.folder.client_path(Path(os.fsdecode(path)))
        except ValueError:
            raise asyncssh.SFTPNoSuchFile("no such file") from None

    def format_user(self, uid: int | None) -> str:
        return "wasdi"  # the server's own accounts are nobody's business

    def format_group(self, gid: int | None) -> str:
        return "wasdi"

    # -- files -----------------------------------------------------------------------------------------
    def _open_fd(self, path: bytes, flags: int) -> int:
        """``path`` opened once beneath the folder (``files_beneath``: no link followed) and, whatever it was
        opened for, only if it is a regular file; a truncation asked for at open counts as a resize."""
        relative = self._relative(path)
        truncate = bool(flags & os.O_TRUNC)
        try:
            fd = open_fd_beneath(self.folder.root, relative, (flags & ~os.O_TRUNC) | os.O_NONBLOCK)
            regular_fd(fd, relative)
        except NotRegularFile as e:
            raise asyncssh.SFTPPermissionDenied(str(e)) from None
        if truncate:
            try:
                self.quota.resize(fd, 0)
            except BaseException:
                os.close(fd)
                raise
        return fd

    def open(self, path: bytes, pflags: int, attrs: SFTPAttrs) -> _OpenFile:
        writing = bool(pflags & (asyncssh.FXF_WRITE | asyncssh.FXF_APPEND))
        flags = os.O_RDWR if pflags & asyncssh.FXF_READ and writing else os.O_WRONLY if writing else os.O_RDONLY
        for sftp_flag, os_flag in ((asyncssh.FXF_CREAT, os.O_CREAT), (asyncssh.FXF_TRUNC, os.O_TRUNC),
                                   (asyncssh.FXF_EXCL, os.O_EXCL), (asyncssh.FXF_APPEND, os.O_APPEND)):
            if pflags & sftp_flag:
                flags |= os_flag
        if writing:
            self.quota.refresh()  # what other programs did to the folder since
        opened = _OpenFile(self._open_fd(path, flags), bool(flags & os.O_APPEND))
        self.quota.opened(opened.fd)
        self._handles.add(opened)
        return opened

    def close(self, file_obj: object) -> None:
        assert isinstance(file_obj, _OpenFile)
        self._handles.discard(file_obj)
        self.quota.closed(file_obj.fd)
        os.close(file_obj.fd)

    def exit(self) -> None:
        """The session ended: close what its client left open (a removed file's disk is then given back)."""
        for opened in list(self._handles):
            with contextlib.suppress(OSError):
                self.close(opened)

    def read(self, file_obj: object, offset: int, size: int) -> bytes:
        assert isinstance(file_obj, _OpenFile)
        return os.pread(file_obj.fd, size, offset)

    def write(self, file_obj: object, offset: int, data: bytes) -> int:
        assert isinstance(file_obj, _OpenFile)
        # appends land at the end, whatever the offset (and pwrite on an O_APPEND descriptor appends too)
        start = os.fstat(file_obj.fd).st_size if file_obj.append else offset
        try:
            return self.quota.write(file_obj.fd, data, start)
        except QuotaExceeded as e:
            raise _over_quota(e) from None

    def fstat(self, file_obj: object) -> os.stat_result:
        assert isinstance(file_obj, _OpenFile)
        return os.fstat(file_obj.fd)

    def fsync(self, file_obj: object) -> None:
        assert isinstance(file_obj, _OpenFile)
        os.fsync(file_obj.fd)

    def fsetstat(self, file_obj: object, attrs: SFTPAttrs) -> None:
        assert isinstance(file_obj, _OpenFile)
        self._apply(file_obj.fd, attrs)

    def setstat(self, path: bytes, attrs: SFTPAttrs) -> None:
        if attrs.size is None:
            self._apply_times(self._local(path), attrs)
            return
        fd = self._open_fd(path, os.O_WRONLY)
        try:
            self._apply(fd, attrs)
        finally:
            os.close(fd)

    def lsetstat(self, path: bytes, attrs: SFTPAttrs) -> None:
        self.setstat(path, attrs)

    def _apply(self, fd: int, attrs: SFTPAttrs) -> None:
        """A size (truncate or extend, counted against the quota) and times; permissions and owners are
        ignored (the server decides who may read its files)."""
        if attrs.size is not None:
            try:
                self.quota.resize(fd, attrs.size)
            except QuotaExceeded as e:
                raise _over_quota(e) from None
        if attrs.atime is not None and attrs.mtime is not None:
            os.utime(fd, (attrs.atime, attrs.mtime))

    @staticmethod
    def _apply_times(local: Path, attrs: SFTPAttrs) -> None:
        if attrs.atime is not None and attrs.mtime is not None:
            os.utime(local, (attrs.atime, attrs.mtime), follow_symlinks=False)

    # -- names -----------------------------------------------------------------------------------------
    def stat(self, path: bytes) -> os.stat_result:
        return os.lstat(self._local(path))

    def lstat(self, path: bytes) -> os.stat_result:
        return os.lstat(self._local(path, allow_final_link=True))

    async def scandir(self, path: bytes) -> AsyncIterator[SFTPName]:
        local = self._local(path)
        for name in (b".", b".."):
            yield SFTPName(name, attrs=SFTPAttrs.from_local(os.lstat(local)))
        with os.scandir(local) as entries:
            for entry in entries:
                yield SFTPName(os.fsencode(entry.name), attrs=SFTPAttrs.from_local(entry.stat(follow_symlinks=False)))

    def remove(self, path: bytes) -> None:
        os.remove(self._local(path, allow_final_link=True))
        self.quota.refresh()  # a handle still open on it keeps it counted

    def mkdir(self, path: bytes, attrs: SFTPAttrs) -> None:
        os.mkdir(self._local(path), 0o755)

    def rmdir(self, path: bytes) -> None:
        local = self._local(path)
        if local == self.folder.root:
            raise asyncssh.SFTPPermissionDenied("the transfer folder itself cannot be removed")
        os.rmdir(local)

    def realpath(self, path: bytes) -> bytes:
        return os.fsencode(self.folder.virtual(path))

    def rename(self, oldpath: bytes, newpath: bytes) -> None:
        old, new = self._local(oldpath, allow_final_link=True), self._local(newpath)
        if os.path.lexists(new):
            raise asyncssh.SFTPFileAlreadyExists("a file of that name already exists")
        os.rename(old, new)
        self.quota.refresh()

    def posix_rename(self, oldpath: bytes, newpath: bytes) -> None:
        os.replace(self._local(oldpath, allow_final_link=True), self._local(newpath))
        self.quota.refresh()  # a replaced file is freed, or still counted while a handle keeps it open

    def readlink(self, path: bytes) -> bytes:
        raise asyncssh.SFTPPermissionDenied("links are not followed in a transfer folder")

    def symlink(self, oldpath: bytes, newpath: bytes) -> None:
        raise asyncssh.SFTPPermissionDenied("links cannot be made in a transfer folder")

    def link(self, oldpath: bytes, newpath: bytes) -> None:
        raise asyncssh.SFTPPermissionDenied("links cannot be made in a transfer folder")

    def statvfs(self, path: bytes) -> SFTPVFSAttrs:
        """The quota, as a file system: what ``df`` in a client shows."""
        self._local(path)
        vfs = os.statvfs(self.folder.root)
        block = 4096
        disk_free = vfs.f_bavail * vfs.f_frsize
        quota_free = self.quota.free
        total = (self.quota.limit or vfs.f_blocks * vfs.f_frsize) // block
        free = (disk_free if quota_free is None else quota_free) // block  # total - free: what the folder uses
        available = (disk_free if quota_free is None else min(quota_free, disk_free)) // block
        return SFTPVFSAttrs(bsize=block, frsize=block, blocks=total, bfree=free, bavail=available,
                            files=vfs.f_files, ffree=vfs.f_ffree, favail=vfs.f_favail, fsid=0, flag=0,
                            namemax=255)

    def fstatvfs(self, file_obj: object) -> SFTPVFSAttrs:
        return self.statvfs(b"/")


__all__ = ["ConfinedSftpSession", "SftpService"]
