"""Launcher operations on products: INGEST, READMETADATA, DOWNLOAD, SHARE, PUBLISHBAND and DELETE.

Each operation ends with the broker message the original service sends: the operation's code with the
product's ProductViewModel as payload (INGEST, DOWNLOAD, SHARE), the PublishBandResultViewModel
(PUBLISHBAND) or null (DELETE).  Failures raise ``OperationFailed``; the launcher then records ERROR and
sends the same code with ``KO`` and the message.

DOWNLOAD fetches ``fileUrl``: ``http``/``https`` through the outbound guard (``launcher/http_import.py``: ranges
after a dropped connection, ``import_resume_attempts`` times; the item's ``file:checksum`` and the answer's
``Content-MD5`` checked as the bytes are written), ``file://`` copied from an allowed folder; both into a hidden
partial file in the workspace folder that is put into place only when complete and durable, never over another
file (see ``domains/products/service/imports.py``).  At most ``import_downloads_per_provider`` imports of one provider
download at once.  The workspace's reader is started when the operation begins, so the ingestion read that gives
the product its bands and footprint (before DONE) rarely waits for one.  Progress goes to ``progressPerc`` (0-95
while transferring, at most one update a second), and the file size to ``fileSize``; the catalogue item's
properties stay with the product.  Each import logs one line of where its time went (``launcher/phases.py``).
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Callable
from typing import Any

from ..dates import now_ms
from ..domains.products import readers
from ..domains.products.service import copy_item
from ..domains.products.service.imports import expected_digest
from ..errors import DomainError
from ..messages import OK
from ..paths import temporary_name
from ..providers.mapserver import MapServerError
from ..providers.search import SearchProviders
from ..providers.search.base import DownloadAuth
from .http_import import Progress, fetch_http
from .operations import OperationContext, OperationFailed, operation
from .phases import Phases

Handler = Callable[[OperationContext], bool | None]


def reported(handler: Handler) -> Handler:
    """Domain and map-server errors become ``OperationFailed`` (their message, not a traceback)."""

    @functools.wraps(handler)
    def run(ctx: OperationContext) -> bool | None:
        try:
            return handler(ctx)
        except (DomainError, MapServerError) as e:
            raise OperationFailed(str(e) or type(e).__name__) from e

    return run


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
    phases = Phases()
    url = str(_parameter(ctx, "fileUrl"))
    file_name = str(_parameter(ctx, "fileName"))
    queued = float(ctx.record.get("operationTimestamp") or 0)
    if queued:
        phases.add("pick-up", now_ms() / 1000 - queued / 1000)
    workspace = services.workspaces.load(ctx.workspace_id)
    target = products.file_path(workspace, file_name)
    target.parent.mkdir(parents=True, exist_ok=True)
    # the reader that will read the file starts while the bytes arrive, not after them
    products.warm_reader(workspace, file_name)
    partial = target.with_name(temporary_name(file_name))
    try:
        if url.lower().startswith("file:"):
            source = products.local_source(url)
            with phases.timing("copy"):
                if target.exists():  # never copied over: the same bytes are kept, others refused
                    products.check_same_as_existing(source, target)
                else:
                    copy_item(source, target, Progress(ctx, source.stat().st_size))  # atomic and durable itself
            size = target.stat().st_size
        else:
            slot = products.download_slot(str(ctx.parameter.get("provider") or "").upper() or _host(url))
            with phases.timing("slot wait"):
                while not slot.acquire(timeout=0.5):
                    ctx.check_stopped()
            auth = _download_auth(services.search.providers, url, str(ctx.parameter.get("searchProvider") or
                                                                       ctx.parameter.get("provider") or ""))
            try:
                size = fetch_http(ctx, url, partial, services.settings.import_timeout_seconds,
                                  checksum=expected_digest(ctx.parameter.get("checksum")),
                                  resumes=max(0, int(services.settings.import_resume_attempts)),
                                  auth=auth, phases=phases)
            finally:
                slot.release()
            with phases.timing("place"):
                products.place_import(partial, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            partial.unlink()
        with phases.timing("records"):
            services.workspaces.refresh_storage_size(workspace)
    with phases.timing("records"):
        services.processes.set_file_size(ctx.process_id, size)
    ctx.check_stopped()
    with phases.timing("ingestion read"):
        info = products.read_product(workspace, products.reader_path(workspace, file_name))
    with phases.timing("records"):
        record = products.ingest_file(workspace, file_name, platform=ctx.parameter.get("platform"),
                                      footprint=ctx.parameter.get("bbox"), info=info)
        products.record_import_source(ctx.workspace_id, file_name, url)
        products.record_item_properties(ctx.workspace_id, file_name, ctx.parameter.get("itemProperties"))
        _say_if_unreadable(ctx, record)
        services.messages.send("DOWNLOAD", products.view(record), ctx.workspace_id, result=OK)
    log.info("import of %s, %d bytes: %s", file_name, size, phases.line())
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
