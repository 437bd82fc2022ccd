"""Serving the app with waitress, with one repair: an answer waitress cannot spill ends the connection.

Waitress keeps an answer it cannot send at once in memory and, beyond ``outbuf_overflow`` bytes, in a
temporary file.  When that file cannot be written (a full disk, a file-size limit), waitress's own
channel leaves the client waiting forever.  ``SpillSafeChannel`` turns that failure into a closed
connection, and the log says why.
"""

from __future__ import annotations

import logging
from typing import Any

from waitress import create_server
from waitress.buffers import OverflowableBuffer
from waitress.channel import ClientDisconnected, HTTPChannel
from waitress.server import BaseWSGIServer

log = logging.getLogger("wasdi_server")


class SpillSafeChannel(HTTPChannel):  # type: ignore[misc]
    def write_soon(self, data: Any) -> Any:
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


def make_server(app: Any, **options: Any) -> Any:
    """A waitress server for ``app`` (the options of ``waitress.serve``) using ``SpillSafeChannel``."""
    server = create_server(app, **options)
    # One listening socket gives a BaseWSGIServer; several give a MultiSocketServer holding them in its map.
    listeners = [server] if isinstance(server, BaseWSGIServer) else \
        [each for each in server.map.values() if isinstance(each, BaseWSGIServer)]
    for listener in listeners:
        listener.channel_class = SpillSafeChannel
    return server


def serve(app: Any, **options: Any) -> None:
    """Like ``waitress.serve``: serve until interrupted."""
    server = make_server(app, **options)
    server.print_listen("Serving on http://{}:{}")
    server.run()
