"""Serving the app with waitress, with two changes to waitress's own channel (waitress's internals, hence
the upper bound on its version in pyproject.toml):

- an answer waitress cannot spill ends the connection.  Waitress keeps an answer it cannot send at once in
  memory and, beyond ``outbuf_overflow`` bytes, in a temporary file.  When that file cannot be written (a
  full disk, a file-size limit), waitress's own channel leaves the client waiting forever.
  ``SpillSafeChannel`` turns that failure into a closed connection, and the log says why.
- a request may take its connection out of waitress (``TAKE_CONNECTION`` in its environ): a WebSocket
  handshake to a notebook's lab (``api/notebook_proxy.py``) is checked by the app like any request, then its
  socket leaves waitress's loop, so the bytes of the WebSocket flow between the browser and the lab and
  waitress sends nothing more on it.
- a big multipart upload is parsed while it arrives (``UploadSpoolingParser``).  Waitress receives a whole
  request body before the app runs, into a temporary file; for a multipart body of more than
  ``inbuf_overflow`` bytes with a ``Content-Length`` the body goes instead into a ``MultipartSpool``
  (``api/multipart_stream.py``), which writes each file part straight into its own file of
  ``upload_spool`` (a folder on the data directory's disk), where ``api.images.receive_file`` renames it
  into place: the bytes are written once, not spooled, read back and copied.

And the server around that channel (``BudgetedServer``) treats connections as a budget
(``connection_budget.py``): at most ``connections`` in all and ``connections_per_address`` per address, the
idlest closed first to make room; a request's headers must arrive within ``header_seconds`` of its first byte;
and the main loop runs on ``epoll`` (``serving_loop.py``), never ``select()``, whatever the descriptor numbers.
"""

from __future__ import annotations

import ctypes
import errno
import logging
import os
import socket
import threading
import time
from pathlib import Path
from typing import Any

from waitress.adjustments import Adjustments
from waitress.buffers import OverflowableBuffer
from waitress.channel import ClientDisconnected, HTTPChannel
from waitress.parser import HTTPRequestParser
from waitress.receiver import FixedStreamReceiver
from waitress.server import BaseWSGIServer, MultiSocketServer, TcpWSGIServer
from waitress.task import ThreadedTaskDispatcher, WSGITask
from waitress.utilities import InternalServerError

from . import serving_loop
from .api.multipart_stream import SPOOL_PREFIX, MultipartSpool, boundary_of
from .connection_budget import IDLE, STARTED, ConnectionBudget

log = logging.getLogger("wasdi_server")
UPLOAD_SPOOL = ".upload-spool"
"""The spool folder's name in the workspace files' root (on their disk; no user id starts with a dot)."""
RECV_BYTES = 256 * 1024
"""What one read of a socket takes (waitress reads 8 KiB by default: a 1 GiB upload would be 131,072 reads)."""
TAKE_CONNECTION = "wasdi.take_connection"
"""The environ key of a function that takes the request's connection out of waitress: it answers the socket
(blocking, the caller's to close), and waitress then drops its own copy without sending anything more."""
MMAP_THRESHOLD = 1024 * 1024
"""Blocks from this size up are mapped on their own and unmapped when freed (socket reads stay below it)."""
MAINTENANCE_SECONDS = 1
"""How often the header deadline and waitress's idle timeout are checked."""
ACCEPT_PAUSE_SECONDS = 0.5
"""How long accepting pauses when the process is out of descriptors (instead of failing in a tight loop)."""


class UploadSpoolingParser(HTTPRequestParser):
    """Waitress's request parser, with the body of a big multipart request going to a ``MultipartSpool``."""

    upload_spool: Path
    spool_from_bytes: int

    def parse_header(self, header_plus: bytes) -> None:
        super().parse_header(header_plus)
        receiver = self.body_rcv
        if not isinstance(receiver, FixedStreamReceiver) or self.content_length <= self.spool_from_bytes:
            return
        boundary = boundary_of(self.headers.get("CONTENT_TYPE"))
        if boundary is not None:
            self.body_rcv = SpoolingReceiver(self.content_length, MultipartSpool(boundary, self.upload_spool))


class SpoolingReceiver(FixedStreamReceiver):
    """Waitress's body receiver over a ``MultipartSpool``: a spool that cannot be written (a full disk) ends the
    request with a 500 that says why, instead of an error in the server's main loop."""

    def __init__(self, content_length: int, spool: MultipartSpool) -> None:
        # waitress's receiver only appends to its buffer, measures and hands it over (its IStreamConsumer),
        # which the spool does; the stubs name waitress's own buffer class only
        super().__init__(content_length, spool)  # type: ignore[arg-type]
        self.spool = spool

    def received(self, data: bytes) -> int:
        try:
            taken = super().received(data)
            if self.completed:
                self.spool.flush()  # the spool writes behind the parsing: a failed write is known here at the latest
            return taken
        except OSError as e:
            log.error("an upload could not be written to the spool (%s): answered 500", e)
            # the parser passes any receiver's error on to the answer; the stubs type this one's as always None
            self.error = InternalServerError(  # type: ignore[assignment]
                f"the upload could not be written on the server ({e.strerror or e})")
            self.completed = True
            return len(data)


class HandOverTask(WSGITask):
    """Waitress's WSGI task, whose environ offers the request's connection (``TAKE_CONNECTION``)."""

    def get_environment(self) -> Any:
        environ = super().get_environment()
        channel = self.channel
        if isinstance(channel, SpillSafeChannel):
            environ[TAKE_CONNECTION] = channel.hand_over
        return environ


class SpillSafeChannel(HTTPChannel):
    task_class = HandOverTask
    handed_over = False

    def hand_over(self) -> socket.socket:
        """The connection, taken out of waitress (called by the task's thread while its request is served:
        waitress's loop does not read a channel then).  Waitress closes only its own descriptor of it."""
        if self.socket is None:
            raise ClientDisconnected("the connection is closed")
        taken = socket.socket(fileno=os.dup(self.socket.fileno()))
        taken.setblocking(True)
        # waitress's lock around its list of requests (not in its stubs)
        lock: threading.Lock = self.requests_lock  # type: ignore[attr-defined]
        with lock:
            self.handed_over = True
            self.will_close = True  # never read again; closed (its descriptor only) by the loop
        self.server.pull_trigger()
        return taken

    def write_soon(self, data: Any) -> Any:
        if self.handed_over:
            return len(data) if data else 0  # the answer of a handed-over request is its new owner's
        try:
            return super().write_soon(data)
        except ClientDisconnected:
            raise
        except OSError as error:
            log.error("could not buffer the answer to %s for sending (%s: the temporary folder is full or "
                      "a file-size limit was hit); the connection is closed", self.addr[0] if self.addr else "?",
                      error)
            self._abandon_output()
            raise ClientDisconnected(str(error)) from error

    def _abandon_output(self) -> None:
        # Drop what cannot be sent, and let the main loop close the socket (it owns it).
        with self.outbuf_lock:
            for buffer in self.outbufs:
                try:
                    buffer.close()
                except Exception:
                    log.debug("closing an output buffer failed", exc_info=True)
            self.outbufs = [OverflowableBuffer(self.adj.outbuf_overflow)]
            self.total_outbufs_len = 0
            self.current_outbuf_count = 0
            self.will_close = True
        self.server.pull_trigger()


class BudgetedChannel(SpillSafeChannel):
    """A connection the server's budget may shed: idle ones first, then those still sending headers."""

    server: BudgetedServer
    headers_since: float | None = None
    """When the request whose headers are arriving sent its first byte (``None``: no headers arriving)."""

    def received(self, data: bytes) -> bool:
        done = super().received(data)
        request = self.request
        if request is None or request.headers_finished:
            self.headers_since = None
        elif self.headers_since is None:
            self.headers_since = time.time()
        return done

    def shed_rank(self) -> tuple[int, float] | None:
        if self.requests or self.total_outbufs_len:
            return None  # a request being served or its answer going out
        request = self.request
        if request is None:
            return IDLE, self.last_activity
        if not request.headers_finished:
            return STARTED, self.headers_since or self.last_activity
        return None  # a body arriving (an upload): in use

    def shed(self) -> None:
        self.handle_close()

    def del_channel(self, map: Any = None) -> None:
        super().del_channel(map)
        self.server.budget.release(self)


class BudgetedServer(TcpWSGIServer):
    """Waitress's TCP listener, admitting connections through a budget, on the ``epoll`` loop."""

    budget: ConnectionBudget
    header_seconds: float
    _paused_until = 0.0
    # what waitress's stubs leave out or type too narrowly
    _map: serving_loop.EpollMap
    effective_host: str
    effective_port: int

    def handle_accept(self) -> None:
        try:
            accepted = self.accept()
            if accepted is None:
                return
            conn, addr = accepted
            self.set_socket_options(conn)
        except OSError as e:
            if e.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                # the connection waits in the backlog; accepting again at once would only spin
                self._paused_until = time.monotonic() + ACCEPT_PAUSE_SECONDS
                log.warning("the API cannot accept a connection (%s): pausing %.1f s", e, ACCEPT_PAUSE_SECONDS)
            elif self.adj.log_socket_errors:
                log.info("accepting a connection failed: %s", e)
            return
        addr = self.fix_addr(addr)
        channel = self.channel_class(self, conn, addr, self.adj, map=self._map)
        if isinstance(channel, BudgetedChannel) and not self.budget.admit(str(addr[0]), channel):
            channel.handle_close()

    def readable(self) -> bool:
        accepting = bool(super().readable())
        return accepting and time.monotonic() >= self._paused_until

    def maintenance(self, now: float) -> None:
        super().maintenance(now)  # type: ignore[arg-type]  # waitress's own (idle past channel_timeout); its stubs say int
        cutoff = now - self.header_seconds
        channels: dict[int, HTTPChannel] = self.active_channels  # type: ignore[assignment]  # the stubs: one channel
        late = [channel for channel in channels.values()
                if isinstance(channel, BudgetedChannel) and channel.headers_since is not None
                and channel.headers_since < cutoff and not channel.requests]
        for channel in late:
            channel.handle_close()
        if late:  # one line per pass, however many: a storm of half-sent requests must not flood the log
            log.info("closed %d connection(s) whose request's headers did not arrive within %g s (from %s)",
                     len(late), self.header_seconds, ", ".join(sorted({str(c.addr[0]) for c in late if c.addr})[:5]))

    def run(self) -> None:
        try:
            serving_loop.loop(self._map, self.adj.asyncore_loop_timeout)
        except (SystemExit, KeyboardInterrupt):
            self.task_dispatcher.shutdown()


class BudgetedListeners(MultiSocketServer):
    """Several listening sockets (a host name with several addresses) sharing one loop and one budget."""

    map: serving_loop.EpollMap

    def run(self) -> None:
        try:
            serving_loop.loop(self.map, self.adj.asyncore_loop_timeout)
        except (SystemExit, KeyboardInterrupt):
            self.close()


def make_server(app: Any, *, upload_spool: Path | None = None, connections: int = 4096,
                connections_per_address: int = 256, header_seconds: float = 10.0, **options: Any) -> Any:
    """A waitress server for ``app`` on TCP (the options of ``waitress.serve``) using ``BudgetedChannel``: at
    most ``connections`` in all and ``connections_per_address`` from one address, headers within
    ``header_seconds``; with ``upload_spool``, big multipart uploads are parsed as they arrive, their files
    written into that folder."""
    options.setdefault("recv_bytes", RECV_BYTES)
    options.setdefault("cleanup_interval", MAINTENANCE_SECONDS)
    options["connection_limit"] = 1 << 30  # the budget decides: waitress would stop accepting for everyone
    adj = Adjustments(**options)
    channel: type[HTTPChannel] = BudgetedChannel
    if upload_spool is not None:
        clear_spool(upload_spool)
        parser = type("UploadSpoolingParser", (UploadSpoolingParser,),
                      {"upload_spool": upload_spool, "spool_from_bytes": adj.inbuf_overflow})
        channel = type("UploadSpoolingChannel", (BudgetedChannel,), {"parser_class": parser})
    budget = ConnectionBudget("the API", connections, connections_per_address)
    server_class = type("BudgetedServer", (BudgetedServer,),
                        {"channel_class": channel, "budget": budget, "header_seconds": header_seconds})
    socket_map = serving_loop.EpollMap()
    dispatcher = ThreadedTaskDispatcher()
    dispatcher.set_thread_count(adj.threads)
    listeners: list[BudgetedServer] = []
    try:
        for sockinfo in adj.listen:
            listeners.append(server_class(app, socket_map, dispatcher=dispatcher, adj=adj, sockinfo=sockinfo))
    except BaseException:
        for listener in listeners:
            listener.close()
        socket_map.close()
        raise
    if len(listeners) == 1:
        return listeners[0]
    return BudgetedListeners(socket_map, adj, [(each.effective_host, each.effective_port) for each in listeners],
                             dispatcher, listeners[0].log_info)


def clear_spool(folder: Path) -> None:
    """Remove the upload files a previous run left (a crash, a kill) in ``folder``; create it."""
    folder.mkdir(parents=True, exist_ok=True)
    for leftover in folder.glob(SPOOL_PREFIX + "*"):
        try:
            os.unlink(leftover)
        except OSError as e:
            log.warning("could not remove the partial upload %s: %s", leftover, e)


def return_freed_memory() -> bool:
    """glibc's allocator, tuned for a long-lived threaded server: two arenas instead of one per thread, and
    blocks of 1 MiB and more mapped on their own, so what a request freed (a password check's 8 MiB, a
    transfer's buffers) goes back to the system instead of staying in some thread's arena.  False where the
    C library is not glibc (nothing is changed)."""
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    m_mmap_threshold, m_arena_max = -3, -8
    return bool(mallopt(m_arena_max, 2)) and bool(mallopt(m_mmap_threshold, MMAP_THRESHOLD))


def serve(app: Any, **options: Any) -> None:
    """Like ``waitress.serve``: serve until interrupted (``make_server``'s options)."""
    run(make_server(app, **options))


def run(server: Any) -> None:
    """Serve with ``server`` (``make_server``'s, its sockets listening) until interrupted (KeyboardInterrupt)."""
    return_freed_memory()
    server.print_listen("Serving on http://{}:{}")
    server.run()


def close(server: Any) -> None:
    """Stop ``server``'s worker threads and close its sockets (whether or not it ran; again is fine)."""
    server.task_dispatcher.shutdown()
    socket_map = getattr(server, "_map", None) if isinstance(server, BaseWSGIServer) else server.map
    listeners = [server] if isinstance(server, BaseWSGIServer) else \
        [each for each in list(server.map.values()) if isinstance(each, BaseWSGIServer)]
    for listener in listeners:
        if listener.socket is not None:
            listener.close()
    if isinstance(socket_map, serving_loop.EpollMap):
        socket_map.close()
