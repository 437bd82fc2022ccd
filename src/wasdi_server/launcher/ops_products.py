"""Launcher operations on products: INGEST, READMETADATA, DOWNLOAD, SHARE, PUBLISHBAND and DELETE.

Each operation ends with the broker message the original service sends: the operation's code with the
product's ProductViewModel as payload (INGEST, DOWNLOAD, SHARE), the PublishBandResultViewModel
(PUBLISHBAND) or null (DELETE).  Failures raise ``OperationFailed``; the launcher then records ERROR and
sends the same code with ``KO`` and the message.

DOWNLOAD fetches ``fileUrl``: ``http``/``https`` streamed with httpx through the outbound guard
(``providers/outbound.py``: no loopback or private addresses unless allowed, redirects judged hop by hop;
a non-200 answer fails), ``file://`` copied from an allowed folder; both into a hidden partial file in the
workspace folder that is put into place only when complete, never over another file (see
``domains/products/service/imports.py``).  A dropped connection is continued with an HTTP range from the bytes already
received (``If-Range`` on the first answer's validator; ``import_resume_attempts`` times), the bytes are checked
against the item's ``file:checksum`` or the answer's ``Content-MD5`` where either is known, and at most
``import_downloads_per_provider`` imports of one provider download at once.  Progress goes to ``progressPerc``
(0-95 while transferring, at most one update a second), and the file size to ``fileSize``; the catalogue
item's properties stay with the product.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..dates import now_ms
from ..domains.products import readers
from ..domains.products.service import CHUNK, copy_item
from ..domains.products.service.imports import expected_digest
from ..errors import DomainError
from ..messages import OK
from ..paths import temporary_name
from ..providers.mapserver import MapServerError
from ..providers.outbound import OutboundPolicy, OutboundRefused, open_stream, redact
from ..providers.search import SearchProviders
from ..providers.search.base import DownloadAuth
from ..providers.search.credentials import CredentialsError
from .operations import OperationContext, OperationFailed, operation

Handler = Callable[[OperationContext], bool | None]
USER_AGENT = "wasdi-server-import/1"


def reported(handler: Handler) -> Handler:
    """Domain and map-server errors become ``OperationFailed`` (their message, not a traceback)."""

    @functools.wraps(handler)
    def run(ctx: OperationContext) -> bool | None:
        try:
            return handler(ctx)
        except (DomainError, MapServerError) as e:
            raise OperationFailed(str(e) or type(e).__name__) from e

    return run


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


log = logging.getLogger("wasdi_server.launcher.products")
NO_RASTER_READER = ("{name}: no bands and no footprint: this server cannot read rasters without the geo extra "
                    "(pip install 'wasdi-toolkit[geo]'); the product is kept with file-level metadata only")
RASTER_SUFFIXES = (".tif", ".tiff", ".jp2", ".nc", ".img", ".vrt", ".zip", ".dim", ".h5", ".hdf", ".grib", ".grb")


def _say_if_unreadable(ctx: OperationContext, record: dict[str, Any]) -> None:
    """A raster ingested without rasterio would silently have no bands: say why in the run log and the log."""
    name = str(record.get("fileName") or "")
    if record.get("bands") or not name.lower().endswith(RASTER_SUFFIXES) or readers.rasterio_available():
        return
    text = NO_RASTER_READER.format(name=name)
    log.warning(text)
    ctx.services.process_logs.logs.append(ctx.process_id, text, now_ms())


def _parameter(ctx: OperationContext, name: str) -> Any:
    value = ctx.parameter.get(name)
    if value in (None, ""):
        raise OperationFailed(f"the operation has no {name}")
    return value


@operation("INGEST")
@reported
def ingest(ctx: OperationContext) -> bool:
    services = ctx.services
    file_name = str(_parameter(ctx, "fileName"))
    workspace = services.workspaces.load(ctx.workspace_id)
    record = services.products.ingest_file(workspace, file_name, style=ctx.parameter.get("style"),
                                           platform=ctx.parameter.get("platform"))
    _say_if_unreadable(ctx, record)
    services.processes.set_file_size(ctx.process_id, int(record.get("fileSize") or 0))
    services.messages.send("INGEST", services.products.view(record), ctx.workspace_id, result=OK)
    return True


@operation("READMETADATA")
@reported
def read_metadata(ctx: OperationContext) -> bool:
    services = ctx.services
    workspace = services.workspaces.load(ctx.workspace_id)
    services.messages.send("INFO", "Read Metadata Operation<br>Retrieving File Metadata<br>Try again later",
                           ctx.workspace_id, result=OK)
    services.products.write_metadata(workspace, str(_parameter(ctx, "fileName")))
    return True


@operation("DOWNLOAD")
@reported
def download(ctx: OperationContext) -> bool:
    services = ctx.services
    products = services.products
    url = str(_parameter(ctx, "fileUrl"))
    file_name = str(_parameter(ctx, "fileName"))
    workspace = services.workspaces.load(ctx.workspace_id)
    target = products.file_path(workspace, file_name)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(temporary_name(file_name))
    try:
        if url.lower().startswith("file:"):
            source = products.local_source(url)
            if target.exists():  # never copied over: the same bytes are kept, others refused
                products.check_same_as_existing(source, target)
            else:
                copy_item(source, target, Progress(ctx, source.stat().st_size))  # atomic and durable itself
            size = target.stat().st_size
        else:
            slot = products.download_slot(str(ctx.parameter.get("provider") or "").upper() or _host(url))
            while not slot.acquire(timeout=0.5):
                ctx.check_stopped()
            auth = _download_auth(services.search.providers, url, str(ctx.parameter.get("searchProvider") or
                                                                       ctx.parameter.get("provider") or ""))
            try:
                size = _fetch_http(ctx, url, partial, services.settings.import_timeout_seconds,
                                   checksum=expected_digest(ctx.parameter.get("checksum")),
                                   resumes=max(0, int(services.settings.import_resume_attempts)),
                                   auth=auth)
            finally:
                slot.release()
            products.place_import(partial, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            partial.unlink()
        services.workspaces.refresh_storage_size(workspace)
    services.processes.set_file_size(ctx.process_id, size)
    ctx.check_stopped()
    record = products.ingest_file(workspace, file_name, platform=ctx.parameter.get("platform"),
                                  footprint=ctx.parameter.get("bbox"))
    products.record_import_source(ctx.workspace_id, file_name, url)
    products.record_item_properties(ctx.workspace_id, file_name, ctx.parameter.get("itemProperties"))
    _say_if_unreadable(ctx, record)
    services.messages.send("DOWNLOAD", products.view(record), ctx.workspace_id, result=OK)
    return True


def _download_auth(providers: SearchProviders, url: str, code: str) -> DownloadAuth | None:
    """The credentials of the provider that found the link, else of the one whose download hosts serve it."""
    found_by = providers.get(code) if code else None
    if found_by is not None and found_by.download_auth is not None:
        return found_by.download_auth
    return next((p.download_auth for p in providers.providers
                 if p.download_auth is not None and p.download_auth.serves(url)), None)


def _host(url: str) -> str:
    from urllib.parse import urlsplit

    return (urlsplit(url).hostname or "").lower()


def _fetch_http(ctx: OperationContext, url: str, partial: Path, timeout: float, *,
                checksum: tuple[str, str] | None = None, resumes: int = 0, auth: DownloadAuth | None = None) -> int:
    """Download ``url`` into ``partial``, continuing a dropped transfer with a range; the bytes received.

    ``auth`` signs the URL or gives the headers the provider's hosts need (never logged)."""
    import httpx

    policy = OutboundPolicy.from_hosts(ctx.services.settings.import_allowed_hosts)
    shown = redact(url)
    transfer = _Transfer()
    # identity: the ranges of a continued transfer count the bytes of the file, not of a compressed answer
    headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity"}
    with httpx.Client(timeout=httpx.Timeout(timeout), headers=headers) as client, open(partial, "wb") as handle:
        while True:
            try:
                _read_answer(ctx, client, url, policy, handle, transfer, shown, auth)
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
        handle.flush()
    _check_digests(partial, checksum, transfer.content_md5, shown)
    return transfer.done


class _Transfer:
    """Where a download stands: bytes received, whether the server takes ranges, what validates them."""

    def __init__(self) -> None:
        self.done = 0
        self.resumes = 0
        self.ranges = False
        self.validator: str | None = None
        self.total: int | None = None
        self.content_md5: str | None = None
        self.progress: Progress | None = None


def _read_answer(ctx: OperationContext, client: Any, url: str, policy: OutboundPolicy, handle: Any,
                 transfer: _Transfer, shown: str, auth: DownloadAuth | None) -> None:
    headers = {}
    if transfer.done:
        headers["Range"] = f"bytes={transfer.done}-"
        if transfer.validator:
            headers["If-Range"] = transfer.validator
    target = auth.signed_url(url) if auth is not None else url  # signed anew on each attempt: tokens expire
    hop_headers = auth.headers_for if auth is not None else None
    with open_stream(client, target, policy, headers=headers, hop_headers=hop_headers) as response:
        if response.status_code == 206 and transfer.done:
            first = response.headers.get("content-range", "").removeprefix("bytes ").split("-", 1)[0]
            if first != str(transfer.done):
                raise OperationFailed(f"the server of {shown} sent another range than asked")
        elif response.status_code == 200:
            if transfer.done:  # the file changed, or the range was ignored: start again
                handle.seek(0)
                handle.truncate()
                transfer.done = 0
            length = response.headers.get("content-length")
            transfer.total = int(length) if length and length.isdigit() else None
            transfer.ranges = response.headers.get("accept-ranges", "").strip().lower() == "bytes"
            transfer.validator = response.headers.get("etag") or response.headers.get("last-modified")
            transfer.content_md5 = response.headers.get("content-md5")
            transfer.progress = Progress(ctx, transfer.total)
        else:
            raise OperationFailed(f"the server of {shown} answered {response.status_code}")
        encoded = response.headers.get("content-encoding", "identity").strip().lower() not in ("", "identity")
        # as it arrives (a dropped connection keeps every byte received); raw where nothing is to be decoded
        for chunk in response.iter_bytes() if encoded else response.iter_raw():
            handle.write(chunk)
            transfer.done += len(chunk)
            if transfer.progress is not None:
                transfer.progress(transfer.done)


def _check_digests(path: Path, checksum: tuple[str, str] | None, content_md5: str | None, shown: str) -> None:
    """The downloaded bytes against the item's checksum and the answer's ``Content-MD5``, where known."""
    import base64
    import binascii
    import hashlib

    wanted: list[tuple[str, str]] = [checksum] if checksum else []
    if content_md5:
        try:
            wanted.append(("md5", base64.b64decode(content_md5, validate=True).hex()))
        except (binascii.Error, ValueError):
            log.info("ignoring an unreadable Content-MD5 from %s", shown)
    if not wanted:
        return
    digests = {name: hashlib.new(name, usedforsecurity=False) for name, _ in wanted}
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(CHUNK), b""):
            for digest in digests.values():
                digest.update(chunk)
    for name, expected in wanted:
        if digests[name].hexdigest() != expected.lower():
            raise OperationFailed(f"the file from {shown} does not match its {name} checksum: the transfer was "
                                  "damaged, or the provider changed the file; import it again")


def _detail(error: Exception) -> str:
    detail = str(error)
    if "://" in detail or "?" in detail:  # httpx may quote the URL, and a signed URL's query is a secret
        return type(error).__name__
    return detail or type(error).__name__


@operation("SHARE")
@reported
def share(ctx: OperationContext) -> bool:
    services = ctx.services
    origin = str(_parameter(ctx, "originWorkspaceId"))
    destination = str(_parameter(ctx, "destinationWorkspaceId"))
    file_name = str(_parameter(ctx, "fileName"))
    source = services.products.get(origin, file_name)
    size = int((source or {}).get("fileSize") or 0)
    record = services.products.copy_to(origin, destination, file_name, progress=Progress(ctx, size))
    services.processes.set_file_size(ctx.process_id, int(record.get("fileSize") or 0))
    services.messages.send("SHARE", services.products.view(record), destination, result=OK)
    return True


@operation("PUBLISHBAND")
@reported
def publish_band(ctx: OperationContext) -> bool:
    services = ctx.services
    result = services.products.publish(ctx.workspace_id, str(_parameter(ctx, "fileName")),
                                       str(_parameter(ctx, "band")), ctx.parameter.get("style"),
                                       str(ctx.parameter.get("baseUrl") or services.settings.public_url or ""))
    services.messages.send("PUBLISHBAND", result, ctx.workspace_id, result=OK)
    ctx.set_payload(str(result.get("layerId") or ""))
    return True


@operation("DELETE")
@reported
def delete_products(ctx: OperationContext) -> bool:
    services = ctx.services
    names = [str(n) for n in ctx.parameter.get("names") or []]
    missing = services.products.delete_many(ctx.workspace_id, names, bool(ctx.parameter.get("deleteFile", True)),
                                            bool(ctx.parameter.get("deleteLayer", True)))
    if missing:
        raise OperationFailed(f"deleted {len(names) - len(missing)} of {len(names)}; not in the workspace: "
                              + ", ".join(missing)[:500])
    services.messages.send("DELETE", None, ctx.workspace_id, result=OK)
    ctx.set_payload(f"deleted {len(names)}")
    return True
