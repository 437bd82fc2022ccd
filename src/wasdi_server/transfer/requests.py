"""Asking for a transfer: ``copytosfpt`` (COPYTOSFTP) and ``upload/ftp`` (FTPUPLOAD) become queued operations.

Both are ordinary operations of the workspace's launcher, so they run on the workspace's node, show in
its process list and can be stopped.  What the operation needs is checked here, before anything is
queued, so a mistake is answered at once.

An export's password is not part of the operation's parameters (which ``/process/paramsbyid`` and the
process listings show): it waits in the ``transfer_secrets`` collection, keyed by the process id, and is
removed when the operation ends.  Secrets whose operation is over or gone are dropped at start.
"""

from __future__ import annotations

import re
import uuid
from typing import TYPE_CHECKING, Any

from ..domains.processes.processes import TERMINAL
from ..domains.products.service import check_product_name
from ..errors import BadRequest, NotFound
from ..paths import safe_name

if TYPE_CHECKING:
    from wasdi_sdk.models.file_buffer import FtpTransferViewModel

    from ..domains.accounts.identity import User
    from ..domains.accounts.uploads import UploadAccountService
    from ..domains.processes.processes import ProcessService
    from ..domains.products.service import ProductService
    from ..store import Collection

COPY_TO_SFTP = "COPYTOSFTP"
FTP_UPLOAD = "FTPUPLOAD"
SFTP, FTP, FTPS = "SFTP", "FTP", "FTPS"
DEFAULT_PORTS = {SFTP: 22, FTP: 21, FTPS: 21}
_HOST = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|[0-9A-Fa-f:.]+)$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def folder_parts(path: str | None) -> list[str]:
    """The sub-folders of a relative path inside a transfer folder (``a/b``); each part goes through the
    path guard, so nothing leaves the folder."""
    text = (path or "").strip().strip("/")
    if ";" in text:
        raise BadRequest("path: copying into another user's transfer folder ('user;path') is not possible; "
                         "give a folder inside your own")
    return [safe_name(part, "path element") for part in text.split("/") if part] if text else []


class TransferRequests:
    """Checks and queues COPYTOSFTP and FTPUPLOAD operations; keeps the exports' passwords meanwhile."""

    def __init__(self, products: ProductService, processes: ProcessService, uploads: UploadAccountService,
                 secrets: Collection) -> None:
        self.products = products
        self.processes = processes
        self.uploads = uploads
        self.secrets = secrets

    # -- copy to the transfer folder ---------------------------------------------------------------------
    def queue_copy_to_sftp(self, user: User, workspace_id: str | None, file_name: str | None,
                           path: str | None = None, parent: str | None = None) -> str:
        """Queue a copy of a workspace file into the caller's transfer folder (``path``: a sub-folder);
        the process id.  400 without an upload account or with a bad name, 403, 404 no such file."""
        name = check_product_name(file_name, "file name")
        workspace = self.products.writable(user, workspace_id)
        if not self.products.file_path(workspace, name).exists():
            raise NotFound(f"{name} is not in the workspace")
        parts = folder_parts(path)
        if not self.uploads.has_account(user.user_id):
            raise BadRequest("you have no file-transfer account yet: create one first (/auth/upload/createaccount)")
        record = self.processes.create(user, workspace["workspaceId"], COPY_TO_SFTP, name, parent=parent,
                                       parameter={"fileName": name, "path": "/".join(parts)})
        return str(record["processObjId"])

    # -- export to an FTP, FTPS or SFTP server -----------------------------------------------------------
    def queue_ftp_export(self, user: User, workspace_id: str | None, transfer: FtpTransferViewModel | None,
                         parent: str | None = None) -> str:
        """Queue the sending of a workspace file to the server ``transfer`` names; the process id."""
        workspace = self.products.writable(user, workspace_id)
        if transfer is None:
            raise BadRequest("the transfer is missing: send server, port, user, password, fileName and "
                             "destinationAbsolutePath as JSON")
        name = check_product_name(transfer.file_name, "fileName (the workspace file to send)")
        if not self.products.file_path(workspace, name).is_file():
            raise NotFound(f"{name} is not a file of the workspace")
        protocol = SFTP if transfer.sftp else FTPS if transfer.ftps else FTP
        host = (transfer.server or transfer.server_ip or "").strip()
        if not host or not _HOST.match(host):
            raise BadRequest("server: a host name or address is required (no scheme, no path)")
        port = transfer.port if transfer.port is not None else DEFAULT_PORTS[protocol]
        if not 0 < port < 65536:
            raise BadRequest("port: a number from 1 to 65535 is required")
        login = (transfer.user or "").strip()
        if protocol == SFTP and not login:
            raise BadRequest("user: an SFTP login is required")
        remote = (transfer.destination_absolute_path or "").strip()
        for field, value in (("user", login), ("destinationAbsolutePath", remote), ("password", transfer.password)):
            if value and (_CONTROL.search(value) or len(value) > 1024):
                raise BadRequest(f"{field}: control characters and more than 1024 characters are not allowed")
        process_id = str(uuid.uuid4())
        # The secret first: the launcher may start the operation as soon as its record exists.
        self.secrets.insert({"processObjId": process_id, "password": transfer.password or ""})
        try:
            self.processes.create(user, workspace["workspaceId"], FTP_UPLOAD, name, parent=parent,
                                  process_id=process_id,
                                  parameter={"fileName": name, "protocol": protocol, "server": host, "port": port,
                                             "user": login, "remotePath": remote})
        except BaseException:
            self.secrets.delete(process_id)
            raise
        return process_id

    def password_of(self, process_id: str) -> str | None:
        """The export's password (``None``: it is gone, e.g. the operation was queued before a crash)."""
        secret = self.secrets.get(process_id)
        return None if secret is None else str(secret.get("password") or "")

    def forget(self, process_id: str) -> None:
        self.secrets.delete(process_id)

    def forget_finished(self) -> int:
        """Drop the secrets of operations that ended or were deleted; how many."""
        stale: list[Any] = []
        for secret in self.secrets.all():
            record = self.processes.get(str(secret["processObjId"]))
            if record is None or record.get("status") in TERMINAL:
                stale.append(secret["processObjId"])
        for process_id in stale:
            self.secrets.delete(process_id)
        return len(stale)
