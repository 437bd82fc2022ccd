"""An import's HTTP transfer: ``fileUrl`` streamed through the outbound guard into a partial file.

- Every request goes through ``providers/outbound.open_stream`` (no loopback or private addresses unless
  allowed, redirects judged hop by hop); a non-200 first answer fails.
- A dropped connection is continued with an HTTP range from the bytes already received (``If-Range`` on the
  first answer's validator; ``resumes`` times); a server that answers a range with the whole file starts over.
- The bytes are hashed as they are written, against the item's ``file:checksum`` and the answer's
  ``Content-MD5`` where either is known: the file is never read back to be checked.
- The body of a plain HTTP/1.x answer of known length (``Content-Length``, no content encoding) is read from
  the connection's socket into one reused buffer of ``BUFFER_BYTES`` once httpx has read the headers (and the
  first body bytes it holds): httpx's own body loop hands over 64 KiB at a time, each copied three times by h11
  and httpcore, which costs an import of hundreds of MB about twice what ``curl`` takes.  Any other answer (a
  chunked or encoded body, a TLS stream that is not the origin's own, HTTP/2) goes through ``iter_raw``.
  Progress and the stop signal are looked at once a ``REPORT_BYTES``, not per read.
- The file is made durable before the transfer returns: its dirty pages are handed to the disk while the
  next ones arrive (``EARLY_SYNC_BYTES``), so the last ``fsync`` only waits for the tail.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import logging
import os
import socket
import ssl
import threading
import time
from pathlib import Path
from typing import Any, BinaryIO

from wasdi_sdk.atomic_files import fsync_file

from ..dates import now_ms
from ..providers.outbound import OutboundPolicy, OutboundRefused, open_stream, redact
from ..providers.search.base import DownloadAuth
from ..providers.search.credentials import CredentialsError
from .operations import OperationContext, OperationFailed
from .phases import Phases

log = logging.getLogger("wasdi_server.launcher.products")
USER_AGENT = "wasdi-server-import/1"
REPORT_BYTES = 1 << 20
BUFFER_BYTES = 1 << 20
"""The buffer a direct body read fills (reused: no allocation per read)."""
"""Progress and the stop signal are looked at after each this many bytes (and at the end)."""
EARLY_SYNC_BYTES = 32 << 20
"""Dirty bytes after which a background ``fdatasync`` starts writing them out while the transfer goes on."""


class Progress:
    """Byte progress mapped to ``low..high`` percent, written at most once a second."""

    def __init__(self, ctx: OperationContext, total: int | None, low: int = 0, high: int = 95) -> None:
        self.ctx = ctx
        self.total = total or 0
        self.low, self.high = low, high
        self.last_perc = -1
        self.last_time = 0.0

    def __call__(self, done: int) -> None:
        self.ctx.check_stopped()
        if self.total <= 0:
            return
        perc = self.low + int((self.high - self.low) * min(done, self.total) / self.total)
        now = time.monotonic()
        if perc != self.last_perc and (now - self.last_time >= 1.0 or done >= self.total):
            self.last_perc, self.last_time = perc, now
            self.ctx.progress(perc)


class _Transfer:
    """Where a download stands: bytes received, whether the server takes ranges, what validates them, and the
    digests of the bytes so far."""

    def __init__(self, checksum: tuple[str, str] | None) -> None:
        self.done = 0
        self.resumes = 0
        self.ranges = False
        self.validator: str | None = None
        self.total: int | None = None
        self.progress: Progress | None = None
        self.checksum = checksum
        self.wanted: list[tuple[str, str]] = []
        """(hashlib name, hex digest) the bytes must have."""
        self.digests: dict[str, Any] = {}

    def start_over(self, content_md5: str | None, shown: str) -> None:
        """A whole-file answer: the digests begin again, against the item's checksum and this answer's MD5."""
        self.done = 0
        self.wanted = [self.checksum] if self.checksum else []
        if content_md5:
            try:
                self.wanted.append(("md5", base64.b64decode(content_md5, validate=True).hex()))
            except (binascii.Error, ValueError):
                log.info("ignoring an unreadable Content-MD5 from %s", shown)
        self.digests = {name: hashlib.new(name, usedforsecurity=False) for name, _ in self.wanted}

    def check(self, shown: str) -> None:
        """``OperationFailed`` unless the bytes have every digest wanted."""
        for name, expected in self.wanted:
            if self.digests[name].hexdigest() != expected.lower():
                raise OperationFailed(f"the file from {shown} does not match its {name} checksum: the transfer "
                                      "was damaged, or the provider changed the file; import it again")


class _EarlySync:
    """``fdatasync`` of a file being written, in a thread, each time ``EARLY_SYNC_BYTES`` more were written: the
    disk works while the network does, and the final ``fsync`` has only the tail left."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.pending = 0
        self._wanted = threading.Event()
        self._closing = False
        self._thread = threading.Thread(target=self._run, name="import-sync", daemon=True)
        self._thread.start()

    def wrote(self, count: int) -> None:
        self.pending += count
        if self.pending >= EARLY_SYNC_BYTES:
            self.pending = 0
            self._wanted.set()

    def _run(self) -> None:
        while True:
            self._wanted.wait()
            self._wanted.clear()
            if self._closing:
                return
            try:
                os.fdatasync(self.fd)
            except OSError:  # the final fsync reports what matters
                return

    def finish(self) -> None:
        """Stop the thread (it may finish the sync under way) before the file is closed."""
        self._closing = True
        self._wanted.set()
        self._thread.join()


def fetch_http(ctx: OperationContext, url: str, partial: Path, timeout: float, *,
               checksum: tuple[str, str] | None = None, resumes: int = 0, auth: DownloadAuth | None = None,
               phases: Phases | None = None) -> int:
    """Download ``url`` into ``partial`` (created or emptied), durably, its digests checked; the bytes received.

    ``auth`` signs the URL or gives the headers the provider's hosts need (never logged).  ``phases`` gets
    ``connect`` (to each answer's headers), ``receive``, ``write``, ``checksum`` and ``fsync``."""
    import httpx

    phases = phases if phases is not None else Phases()
    policy = OutboundPolicy.from_hosts(ctx.services.settings.import_allowed_hosts)
    shown = redact(url)
    transfer = _Transfer(checksum)
    # identity: the ranges of a continued transfer count the bytes of the file, not of a compressed answer
    headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity"}
    with phases.timing("connect"):
        client = httpx.Client(timeout=httpx.Timeout(timeout), headers=headers, verify=_tls_context())
    with client, open(partial, "wb", buffering=0) as handle:
        syncing = _EarlySync(handle.fileno())
        try:
            while True:
                try:
                    _read_answer(ctx, client, url, policy, handle, transfer, shown, auth, phases, syncing, timeout)
                    break
                except OutboundRefused as e:
                    raise OperationFailed(str(e)) from e
                except CredentialsError as e:
                    raise OperationFailed(f"cannot fetch {shown}: {e}") from e
                except httpx.TransportError as e:
                    if transfer.resumes >= resumes or not transfer.ranges:
                        raise OperationFailed(f"cannot fetch {shown}: {_detail(e)}") from e
                    transfer.resumes += 1
                    ctx.services.process_logs.logs.append(
                        ctx.process_id, f"the connection dropped after {transfer.done} bytes ({_detail(e)}): "
                        f"continuing from there ({transfer.resumes} of {resumes})", now_ms())
                    time.sleep(min(0.2 * 2 ** transfer.resumes, 5.0))
                except httpx.HTTPError as e:
                    raise OperationFailed(f"cannot fetch {shown}: {_detail(e)}") from e
        finally:
            syncing.finish()
        with phases.timing("checksum"):
            transfer.check(shown)
        with phases.timing("fsync"):
            fsync_file(partial)  # the one fsync helper (atomic_files), as every durable write uses
    return transfer.done


def _read_answer(ctx: OperationContext, client: Any, url: str, policy: OutboundPolicy, handle: BinaryIO,
                 transfer: _Transfer, shown: str, auth: DownloadAuth | None, phases: Phases,
                 syncing: _EarlySync, timeout: float) -> None:
    headers = {}
    if transfer.done:
        headers["Range"] = f"bytes={transfer.done}-"
        if transfer.validator:
            headers["If-Range"] = transfer.validator
    target = auth.signed_url(url) if auth is not None else url  # signed anew on each attempt: tokens expire
    hop_headers = auth.headers_for if auth is not None else None
    asked = time.perf_counter()
    with open_stream(client, target, policy, headers=headers, hop_headers=hop_headers) as response:
        phases.add("connect", time.perf_counter() - asked)
        if response.status_code == 206 and transfer.done:
            first = response.headers.get("content-range", "").removeprefix("bytes ").split("-", 1)[0]
            if first != str(transfer.done):
                raise OperationFailed(f"the server of {shown} sent another range than asked")
        elif response.status_code == 200:
            if transfer.done:  # the file changed, or the range was ignored: start again
                handle.seek(0)
                handle.truncate()
            transfer.start_over(response.headers.get("content-md5"), shown)
            length = response.headers.get("content-length")
            transfer.total = int(length) if length and length.isdigit() else None
            transfer.ranges = response.headers.get("accept-ranges", "").strip().lower() == "bytes"
            transfer.validator = response.headers.get("etag") or response.headers.get("last-modified")
            transfer.progress = Progress(ctx, transfer.total)
        else:
            raise OperationFailed(f"the server of {shown} answered {response.status_code}")
        _Receiver(handle, transfer, syncing).receive(response, shown, timeout, phases)


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """One TLS context for every import (making one reads the CA bundle: a tenth of a second, per import)."""
    import httpx

    return httpx.create_ssl_context()


class _Receiver:
    """A body into the partial file, hashed as it is written; a dropped connection keeps every byte received."""

    def __init__(self, handle: BinaryIO, transfer: _Transfer, syncing: _EarlySync) -> None:
        self.handle = handle
        self.transfer = transfer
        self.syncing = syncing
        self.digests = list(transfer.digests.values())
        self.writing = self.hashing = 0.0
        self.next_report = transfer.done + REPORT_BYTES

    def receive(self, response: Any, shown: str, timeout: float, phases: Phases) -> None:
        began = time.perf_counter()
        try:
            length = _direct_length(response)
            chunks = response.iter_raw()  # raw: nothing to decode, no re-chunking copy
            if length is None:
                if response.headers.get("content-encoding", "identity").strip().lower() not in ("", "identity"):
                    chunks = response.iter_bytes()
                for chunk in chunks:
                    self.keep(chunk)
            else:
                # httpx reads the first body bytes with the headers: they come first, through it
                first = next(chunks, b"")
                self.keep(first)
                self.read_socket(response.extensions["network_stream"].get_extra_info("socket"),
                                 length - len(first), shown, timeout)
            if self.transfer.progress is not None:
                self.transfer.progress(self.transfer.done)
        finally:
            phases.add("write", self.writing)
            phases.add("checksum", self.hashing)
            phases.add("receive", time.perf_counter() - began - self.writing - self.hashing)

    def keep(self, chunk: bytes | memoryview) -> None:
        """Write, hash and count one piece of the body."""
        at = time.perf_counter()
        _write_all(self.handle, chunk)
        wrote = time.perf_counter()
        for digest in self.digests:
            digest.update(chunk)
        self.writing += wrote - at
        self.hashing += time.perf_counter() - wrote
        size = len(chunk)
        self.transfer.done += size
        self.syncing.wrote(size)
        if self.transfer.done >= self.next_report:
            self.next_report = self.transfer.done + REPORT_BYTES
            if self.transfer.progress is not None:
                self.transfer.progress(self.transfer.done)

    def read_socket(self, sock: socket.socket, left: int, shown: str, timeout: float) -> None:
        """The rest of a body of known length, straight from the connection; httpx's errors when it breaks."""
        import httpx

        buffer = bytearray(BUFFER_BYTES)
        view = memoryview(buffer)
        sock.settimeout(timeout)
        while left > 0:
            try:
                count = sock.recv_into(buffer, min(left, BUFFER_BYTES))
            except TimeoutError as e:  # socket.timeout
                raise httpx.ReadTimeout(f"no bytes from {shown} for {timeout:g} s") from e
            except OSError as e:
                raise httpx.ReadError(str(e) or type(e).__name__) from e
            if count == 0:
                raise httpx.RemoteProtocolError("the server closed the connection before the end of the file")
            self.keep(view[:count])
            left -= count


def _direct_length(response: Any) -> int | None:
    """The body length to read from the socket directly, or ``None`` when httpx must read it: only an HTTP/1.x
    answer of known length without content encoding, on a socket that is the origin's own (a TLS tunnel inside
    another TLS connection, through a proxy, hands out the outer socket: its bytes are not the body)."""
    length = response.headers.get("content-length", "")
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    if response.http_version not in ("HTTP/1.1", "HTTP/1.0") or not length.isdigit() \
            or encoding not in ("", "identity") or "transfer-encoding" in response.headers:
        return None
    stream = response.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    if not isinstance(sock, socket.socket):
        return None
    if response.url.scheme == "https":
        wanted = response.request.extensions.get("sni_hostname") or response.url.host
        if not isinstance(sock, ssl.SSLSocket) or sock.server_hostname != wanted:
            return None
    elif isinstance(sock, ssl.SSLSocket):
        return None
    return int(length)


def _write_all(handle: BinaryIO, chunk: bytes | memoryview) -> None:
    """``chunk`` to an unbuffered file: one system call unless the kernel takes less (then the rest)."""
    written = handle.write(chunk) or 0
    if written < len(chunk):
        view = memoryview(chunk)
        while written < len(chunk):
            written += handle.write(view[written:]) or 0


def _detail(error: Exception) -> str:
    detail = str(error)
    if "://" in detail or "?" in detail:  # httpx may quote the URL, and a signed URL's query is a secret
        return type(error).__name__
    return detail or type(error).__name__
