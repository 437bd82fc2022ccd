"""Models of /filebuffer: imports, band publishing and broker messages."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ._base import WasdiModel


class ImageImportViewModel(WasdiModel):
    """What to import into a workspace: a provider's file URL and where it goes."""

    file_url: str | None = None
    name: str | None = None
    provider: str | None = None
    workspace: str | None = None
    bbox: str | None = None
    parent: str | None = None
    volume_name: str | None = None
    volume_path: str | None = None
    platform: str | None = None


class RabbitMessageViewModel(WasdiModel):
    """A broker message (also the answer of publishband)."""

    message_code: str | None = None
    message_result: str | None = None
    """OK or KO."""
    payload: Any = None
    workspace_id: str | None = None


class PublishBandResultViewModel(WasdiModel):
    """Where a published band can be seen on the map server."""

    bounding_box: str | None = None
    band_name: str | None = None
    layer_id: str | None = None
    product_name: str | None = None
    geoserver_bounding_box: str | None = None
    geoserver_url: str | None = None


class FtpTransferViewModel(WasdiModel):
    """A workspace file to send to an FTP, FTPS or SFTP server (the body of ``PUT /catalog/upload/ftp``).

    ``server`` is the original's name for the host and ``serverIp`` the web client's (either is read);
    ``sftp`` true sends over SFTP (the web client's default), else FTP, over TLS (explicit FTPS) when
    ``ftps`` is true.  ``port`` defaults to 22 for SFTP and 21 otherwise.  The password is never shown in
    the model's ``repr``.
    """

    server: str | None = None
    server_ip: str | None = None
    port: int | None = None
    sftp: bool | None = None
    ftps: bool | None = None
    user: str | None = None
    password: str | None = Field(default=None, repr=False)
    file_name: str | None = None
    destination_absolute_path: str | None = None
