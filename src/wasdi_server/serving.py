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
"""

from __future__ import annotations

import ctypes
import logging
import os
import socket
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from waitress.buffers import OverflowableBuffer
from waitress.channel import ClientDisconnected, HTTPChannel
from waitress.parser import HTTPRequestParser
from waitress.receiver import FixedStreamReceiver
from waitress.server import BaseWSGIServer, create_server
from waitress.task import WSGITask
from waitress.utilities import InternalServerError

from .api.multipart_stream import SPOOL_PREFIX, MultipartSpool, boundary_of

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


def make_server(app: Any, *, upload_spool: Path | None = None, **options: Any) -> Any:
    """A waitress server for ``app`` (the options of ``waitress.serve``) using ``SpillSafeChannel``; with
    ``upload_spool``, big multipart uploads are parsed as they arrive, their files written into that folder."""
    options.setdefault("recv_bytes", RECV_BYTES)
    server = create_server(app, **options)
    channel: type[HTTPChannel] = SpillSafeChannel
    if upload_spool is not None:
        clear_spool(upload_spool)
        parser = type("UploadSpoolingParser", (UploadSpoolingParser,),
                      {"upload_spool": upload_spool, "spool_from_bytes": server.adj.inbuf_overflow})
        channel = type("UploadSpoolingChannel", (SpillSafeChannel,), {"parser_class": parser})
    # One listening socket gives a BaseWSGIServer; several give a MultiSocketServer holding them in its map.
    # (the stubs type the map's values as sockets: they are waitress's dispatchers)
    candidates: Iterable[object] = [server] if isinstance(server, BaseWSGIServer) else (server.map or {}).values()
    for listener in candidates:
        if isinstance(listener, BaseWSGIServer):
            listener.channel_class = channel
    return server


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
    listeners = [server] if isinstance(server, BaseWSGIServer) else \
        [each for each in list(server.map.values()) if isinstance(each, BaseWSGIServer)]
    for listener in listeners:
        if listener.socket is not None:
            listener.close()
