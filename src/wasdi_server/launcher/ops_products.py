"""Launcher operations on products: INGEST, READMETADATA, DOWNLOAD, SHARE, PUBLISHBAND and DELETE.

Each operation ends with the broker message the original service sends: the operation's code with the
product's ProductViewModel as payload (INGEST, DOWNLOAD, SHARE), the PublishBandResultViewModel
(PUBLISHBAND) or null (DELETE).  Failures raise ``OperationFailed``; the launcher then records ERROR and
sends the same code with ``KO`` and the message.

DOWNLOAD fetches ``fileUrl``: ``http``/``https`` streamed with httpx through the outbound guard
(``providers/outbound.py``: no loopback or private addresses unless allowed, redirects judged hop by hop;
a non-200 answer fails), ``file://`` copied from an allowed folder; both into a hidden partial file in the
workspace folder that is renamed into place only when complete.  Progress goes to ``progressPerc`` (0-95 while
transferring, at most one update a second), and the file size to ``fileSize``.
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
from ..errors import DomainError
from ..messages import OK
from ..providers.mapserver import MapServerError
from ..providers.outbound import OutboundPolicy, OutboundRefused, open_stream, redact
from ..services import readers
from ..services.paths import temporary_name
from ..services.products import CHUNK, copy_item
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
            size = _fetch_http(ctx, url, partial, services.settings.import_timeout_seconds)
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
    _say_if_unreadable(ctx, record)
    services.messages.send("DOWNLOAD", products.view(record), ctx.workspace_id, result=OK)
    return True


def _fetch_http(ctx: OperationContext, url: str, partial: Path, timeout: float) -> int:
    import httpx

    policy = OutboundPolicy.from_hosts(ctx.services.settings.import_allowed_hosts)
    shown = redact(url)
    done = 0
    try:
        with httpx.Client(timeout=httpx.Timeout(timeout), headers={"User-Agent": USER_AGENT}) as client, \
                open_stream(client, url, policy) as response:
            if response.status_code != 200:
                raise OperationFailed(f"the server of {shown} answered {response.status_code}")
            length = response.headers.get("content-length")
            progress = Progress(ctx, int(length) if length and length.isdigit() else None)
            with open(partial, "wb") as handle:
                for chunk in response.iter_bytes(CHUNK):
                    handle.write(chunk)
                    done += len(chunk)
                    progress(done)
    except OutboundRefused as e:
        raise OperationFailed(str(e)) from e
    except httpx.HTTPError as e:
        detail = str(e)
        if "://" in detail or "?" in detail:  # httpx may quote the URL, and a signed URL's query is a secret
            detail = type(e).__name__
        raise OperationFailed(f"cannot fetch {shown}: {detail}") from e
    return done


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
