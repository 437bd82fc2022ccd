"""``client.files``: the /catalog file calls the official library makes (find, fetch, describe, ingest)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Unpack, cast

from .._exceptions import NotFoundError
from .._resource import APIResource, RequestOptions
from .._streams import Progress, download_to
from ..models import PrimitiveResult, StringResult
from ..models.file_buffer import FtpTransferViewModel


class FilesResource(APIResource):
    """/catalog."""

    def check_available(self, filename: str, workspace: str, *, procws: str | None = None,
                        **options: Unpack[RequestOptions]) -> PrimitiveResult:
        """``bool_value`` true when the file is in the workspace; ``NotFoundError`` when it is not."""
        return cast(PrimitiveResult, self._call("files.check_available", query={
            "filename": filename, "workspace": workspace, "procws": procws}, **options))

    def exists(self, filename: str, workspace: str, **options: Unpack[RequestOptions]) -> bool:
        """Whether the file is in the workspace (``check_available`` without the exception)."""
        try:
            result = self.check_available(filename, workspace, **options)
        except NotFoundError:
            return False
        return bool(getattr(result, "bool_value", True))

    def download(self, filename: str, workspace: str, to: str | os.PathLike[str], *, procws: str | None = None,
                 on_progress: Progress | None = None, overwrite: bool = True,
                 **options: Unpack[RequestOptions]) -> Path:
        """Stream a workspace file to ``to`` (a file path, or an existing folder: the server's name is used).

        The bytes go to a temporary file beside the target, renamed into place when complete, so ``to``
        never holds a partial file.  ``on_progress`` is called with the bytes received since the previous
        call.  A SNAP ``.dim`` product arrives as ``<name>.zip``.  The path written is returned.  With
        ``overwrite=False`` an existing file raises ``FileExistsError`` and is left untouched.
        """
        if not filename or not workspace:
            raise ValueError("filename and workspace are required")
        query = {"filename": filename, "workspace": workspace, "procws": procws}
        return download_to(self._client, "files.download", query, to, filename, on_progress, options, overwrite)

    def on_node(self, filename: str, workspace: str, **options: Unpack[RequestOptions]) -> PrimitiveResult:
        """``bool_value``: whether the file is on this node's disk."""
        return cast(PrimitiveResult, self._call("files.on_node", query={"filename": filename,
                                                                        "workspace": workspace}, **options))

    def properties(self, file: str, workspace: str, *, getchecksum: bool | None = None,
                   **options: Unpack[RequestOptions]) -> dict[str, Any]:
        """``fileName, friendlyName, size, lastUpdateTimestampMs, style`` (and ``checksum``, the MD5, on request)."""
        return cast(dict[str, Any], self._call("files.properties", query={
            "file": file, "workspace": workspace, "getchecksum": getchecksum}, **options))

    def ingest(self, file: str, workspace: str, *, style: str | None = None, parent: str | None = None,
               platform: str | None = None, **options: Unpack[RequestOptions]) -> StringResult:
        """Queue an INGEST of a file already in the workspace folder; ``string_value`` is the process id."""
        return cast(StringResult, self._call("files.ingest", query={
            "file": file, "workspace": workspace, "style": style, "parent": parent, "platform": platform},
            **options))

    def ingest_upload(self, file: str, workspace: str, *, style: str | None = None, parent: str | None = None,
                      platform: str | None = None, **options: Unpack[RequestOptions]) -> StringResult:
        """Move ``file`` from the caller's upload (file-transfer) account into the workspace and queue its
        INGEST; ``string_value`` is the process id.  ``NotFoundError`` when the account has no such file."""
        return cast(StringResult, self._call("files.ingest_upload", query={
            "file": file, "workspace": workspace, "style": style, "parent": parent, "platform": platform},
            **options))

    def ftp_upload(self, workspace: str, *, parent: str | None = None, transfer: FtpTransferViewModel | None = None,
                   **options: Unpack[RequestOptions]) -> PrimitiveResult:
        """Queue an FTPUPLOAD: send ``transfer.file_name`` to the FTP, FTPS (``ftps``) or SFTP (``sftp``) server
        ``transfer`` names; ``string_value`` is the process id (wait for it: a refused login or path ends it in
        ERROR with the server's reply).  ``BadRequestError`` for a bad transfer, ``NotFoundError`` when the
        workspace has no such file."""
        return cast(PrimitiveResult, self._call("files.ftp_upload", query={"workspace": workspace, "parent": parent},
                                                body=transfer, **options))

    def copy_to_sftp(self, file: str, workspace: str, *, parent: str | None = None, path: str | None = None,
                     **options: Unpack[RequestOptions]) -> PrimitiveResult:
        """Queue a COPYTOSFTP: copy a workspace file into the caller's transfer (SFTP) folder, into its
        sub-folder ``path`` if given; ``string_value`` is the process id.  ``BadRequestError`` without a
        file-transfer account, ``NotFoundError`` when the workspace has no such file."""
        return cast(PrimitiveResult, self._call("files.copy_to_sftp", query={
            "file": file, "workspace": workspace, "parent": parent, "path": path}, **options))
