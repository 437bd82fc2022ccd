"""/catalog: the file calls of the official ``wasdi`` library (not in the contract).

- ``checkdownloadavaialibitybyname``: ``boolValue`` true when the file is in the workspace folder, 404
  when it is not (the library reads 404 as "not on WASDI").
- ``downloadbyname``: the file, streamed, with ``Content-Disposition: attachment; filename="<name>"``
  and its length.  A SNAP product (``.dim``) comes as a zip of the ``.dim`` and its ``.data`` folder,
  named ``<stem>.zip`` and streamed as it is built (the library unzips it).
- ``fileOnNode``: ``boolValue`` whether the file is on this node's disk (200 either way).
- ``properties``: ``fileName, friendlyName, size, lastUpdateTimestampMs, style`` and, with
  ``getchecksum=true``, the MD5 ``checksum`` (hex) the library compares with its local copy.
- ``upload/ingestinws``: queue an INGEST of a file already in the folder; ``stringValue`` is the process id.
- ``upload/ingest``: move a file of the caller's transfer folder into the workspace and queue its INGEST.
- ``copytosfpt`` and ``upload/ftp``: queue a COPYTOSFTP or FTPUPLOAD operation (``transfer/``);
  ``stringValue`` is the process id.
"""

from __future__ import annotations

from typing import Any

from wasdi_sdk.models import PrimitiveResult

from ..domains.products.service import ZippedFiles
from ..errors import BadRequest
from ..zip_streams import zip_chunks
from .answers import FileResult
from .framework import Call, handles


@handles("files.check_available")
def check_available(call: Call) -> PrimitiveResult:
    call.services.products.existing_file(call.caller, call.params["workspace"], call.params["filename"])
    return PrimitiveResult(bool_value=True, int_value=200)


def _spelled(call: Call, name: str, alias: str) -> str:
    """A parameter, or the spelling the web client's attachment link uses for it; 400 when neither is there."""
    value = call.params.get(name) or next((v for v in call.extra.get(alias, []) if v), None)
    if not value:
        raise BadRequest(f"missing parameter {name}")
    return str(value)


@handles("files.download")
def download(call: Call) -> FileResult:
    """``filename``/``workspace`` (the official library, the web client's CatalogService) or
    ``fileName``/``worskpaceId`` (the web client's attachment link)."""
    served = call.services.products.download(call.caller, _spelled(call, "workspace", "worskpaceId"),
                                             _spelled(call, "filename", "fileName"))
    if isinstance(served, ZippedFiles):
        return FileResult(zip_chunks(served.members), media_type="application/zip", filename=served.filename)
    return FileResult(served.stream, filename=served.filename, length=served.size)


@handles("files.on_node")
def on_node(call: Call) -> PrimitiveResult:
    p = call.params
    return PrimitiveResult(bool_value=call.services.products.on_node(call.caller, p["workspace"], p["filename"]))


@handles("files.properties")
def properties(call: Call) -> dict[str, Any]:
    p = call.params
    return call.services.products.properties(call.caller, p["workspace"], p["file"], bool(p["getchecksum"]))


@handles("files.ingest")
def ingest(call: Call) -> PrimitiveResult:
    p = call.params
    process_id = call.services.products.ingest_existing(call.caller, p["workspace"], p["file"], style=p["style"],
                                                        platform=p["platform"], parent=p["parent"])
    return PrimitiveResult(bool_value=True, int_value=200, string_value=process_id)


@handles("files.ingest_upload")
def ingest_upload(call: Call) -> PrimitiveResult:
    p = call.params
    process_id = call.services.products.ingest_from_folder(
        call.caller, call.services.uploads.folder(call.caller.user_id), p["workspace"], p["file"], style=p["style"],
        platform=p["platform"], parent=p["parent"])
    return PrimitiveResult(bool_value=True, int_value=200, string_value=process_id)


@handles("files.ftp_upload")
def ftp_upload(call: Call) -> PrimitiveResult:
    p = call.params
    process_id = call.services.transfers.queue_ftp_export(call.caller, p["workspace"], call.body, parent=p["parent"])
    return PrimitiveResult(bool_value=True, int_value=200, string_value=process_id)


@handles("files.copy_to_sftp")
def copy_to_sftp(call: Call) -> PrimitiveResult:
    p = call.params
    process_id = call.services.transfers.queue_copy_to_sftp(call.caller, p["workspace"], p["file"], p["path"],
                                                            parent=p["parent"])
    return PrimitiveResult(bool_value=True, int_value=200, string_value=process_id)
