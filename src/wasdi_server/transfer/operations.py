"""The transfer operations of the launcher: COPYTOSFTP and FTPUPLOAD.

COPYTOSFTP copies a workspace file (with its sidecars, e.g. a SNAP product's ``.data`` folder) into the
user's transfer folder, where their SFTP client fetches it; each file appears only when complete (a
hidden partial file is renamed into place) and the account's quota is respected.  The COPYTOSFTP message
(payload: the path inside the folder) tells the workspace's clients when it is done.

FTPUPLOAD sends a workspace file to the FTP, FTPS or SFTP server the user named (``ftp_export.py``),
with its progress in ``progressPerc``; a failure ends the operation in ERROR with the server's reply.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from wasdi_sdk.units import human_size

from ..domains.products import product_files
from ..domains.products.service import copy_items
from ..files_beneath import NotRegularFile, open_regular_fd
from ..launcher.http_import import Progress
from ..launcher.operations import OperationContext, OperationFailed, operation
from ..launcher.ops_products import reported
from ..messages import OK
from ..paths import folder_size
from ..providers.outbound import OutboundPolicy
from .confined_folder import ConfinedFolder, LeavesFolder
from .ftp_export import Destination, ExportFailed, Outgoing, send
from .requests import COPY_TO_SFTP, FTP_UPLOAD, folder_parts


def _size(path: Path) -> int:
    return folder_size(path) if path.is_dir() else path.stat().st_size


@operation(COPY_TO_SFTP)
@reported
def copy_to_sftp(ctx: OperationContext) -> bool:
    services = ctx.services
    uploads = services.uploads
    file_name = str(ctx.parameter.get("fileName") or "")
    workspace = services.workspaces.load(ctx.workspace_id)
    source = services.products.file_path(workspace, file_name)
    if not source.exists():
        raise OperationFailed(f"{file_name} is no longer in the workspace")
    user_id = str(ctx.record["userId"])
    parts = folder_parts(str(ctx.parameter.get("path") or ""))
    try:  # a link planted in the folder is not followed out of it
        target_folder = ConfinedFolder(uploads.folder(user_id)).local("/".join(parts).encode())
    except LeavesFolder as e:
        raise OperationFailed(f"cannot copy into {'/'.join(parts)}: {e}") from e
    items = [source, *product_files.sidecars(services.workspaces.folder(workspace), file_name)]
    needed = sum(_size(item) for item in items)
    if uploads.quota_bytes:
        used = uploads.used_bytes(user_id)
        if used + needed > uploads.quota_bytes:
            raise OperationFailed(f"{file_name} ({human_size(needed)}) does not fit in your transfer folder: "
                                  f"{human_size(used)} of {human_size(uploads.quota_bytes)} used; delete files there "
                                  "or ingest them into a workspace")
    services.processes.set_file_size(ctx.process_id, needed)
    target_folder.mkdir(parents=True, exist_ok=True)
    progress = Progress(ctx, _size(source))
    ctx.check_stopped()
    try:
        copy_items(source, items[1:], target_folder, progress)
    except NotRegularFile as e:
        raise OperationFailed(f"{file_name} cannot be copied: {e.strerror}") from e
    shown = "/".join([*parts, file_name])
    ctx.set_payload(shown)
    services.messages.send(COPY_TO_SFTP, shown, ctx.workspace_id, result=OK)
    return True


@operation(FTP_UPLOAD)
@reported
def ftp_upload(ctx: OperationContext) -> bool:
    services = ctx.services
    transfers = services.transfers
    try:
        password = transfers.password_of(ctx.process_id)
        if password is None:
            raise OperationFailed("the transfer's password is gone (the server restarted before the transfer "
                                  "began): ask for the transfer again")
        p = ctx.parameter
        workspace = services.workspaces.load(ctx.workspace_id)
        file_name = str(p.get("fileName") or "")
        services.products.file_path(workspace, file_name)  # the path guard
        destination = Destination(protocol=str(p["protocol"]), host=str(p["server"]), port=int(p["port"]),
                                  user=str(p.get("user") or ""), password=password,
                                  folder=str(p.get("remotePath") or ""),
                                  timeout=services.settings.ftp_timeout_seconds)
        try:  # opened once, beneath the workspace folder, a regular file only: what is checked is what is sent
            fd, info = open_regular_fd(services.workspaces.folder(workspace), file_name)
        except (OSError, NotRegularFile) as e:
            raise OperationFailed(f"{file_name} is no longer a file of the workspace ({e.strerror or e})") from e
        with os.fdopen(fd, "rb") as stream:
            size = info.st_size
            services.processes.set_file_size(ctx.process_id, size)
            logs = services.process_logs

            def note(line: str) -> None:
                logs.write(ctx.process_id, line)

            note(f"sending {file_name} ({human_size(size)}) to {destination.shown}"
                 + (f", folder {destination.folder}" if destination.folder else ""))
            try:
                send(Outgoing(file_name, stream, size), destination,
                     OutboundPolicy.from_hosts(services.settings.import_allowed_hosts), Progress(ctx, size), note)
            except ExportFailed as e:
                raise OperationFailed(str(e)) from e
        note(f"sent {file_name} to {destination.shown}")
        summary = f"{file_name} sent to {destination.host}:{destination.port}" + \
            (f" ({destination.folder})" if destination.folder else "")
        ctx.set_payload(summary)
        services.messages.send(FTP_UPLOAD, summary, ctx.workspace_id, result=OK)
        return True
    finally:
        with contextlib.suppress(Exception):
            transfers.forget(ctx.process_id)
