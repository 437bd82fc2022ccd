"""Sending one file to an FTP, FTPS (explicit TLS) or SFTP server: the work of an FTPUPLOAD operation.

FTP and FTPS use the standard library's ``ftplib``; SFTP uses AsyncSSH's client.  Every connection goes
through the outbound guard (``providers/outbound.py``): the host is resolved once, a loopback, private
or link-local address is refused unless the operator allows the host (``import_allowed_hosts``), and the
connection goes to the address that was judged.  FTP data connections go to that same address, whatever
the server's passive reply says (``ftplib``'s default), so a server cannot point them elsewhere.  FTPS
checks the server's certificate against its host name.

Failures raise ``ExportFailed`` with a sentence for the run log that quotes the server's reply; the
password never appears in one.
"""

from __future__ import annotations

import asyncio
import ftplib
import posixpath
import ssl
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import BinaryIO

from ..providers.outbound import OutboundPolicy, OutboundRefused, resolve
from .requests import FTPS, SFTP

BLOCK = 1024 * 1024
SFTP_BLOCK = 256 * 1024


class ExportFailed(Exception):
    """The file could not be sent; the message says why (with the server's reply when there is one)."""


@dataclass
class Destination:
    protocol: str
    host: str
    port: int
    user: str
    password: str = field(repr=False)
    folder: str
    timeout: float

    @property
    def shown(self) -> str:
        return f"{self.protocol} server {self.host}:{self.port}"


@dataclass
class Outgoing:
    """The file to send: opened once by the caller (``files_beneath``), its name and its size then."""

    name: str
    stream: BinaryIO
    size: int


def send(source: Outgoing, destination: Destination, policy: OutboundPolicy, progress: Callable[[int], None],
         note: Callable[[str], None]) -> None:
    """Send ``source`` into ``destination.folder`` under its own name; ``progress`` gets the bytes sent so
    far, ``note`` the lines worth keeping in the run log."""
    try:
        address = resolve(destination.host, destination.port, policy, what="exports to")
    except OutboundRefused as e:
        raise ExportFailed(str(e)) from e
    if destination.protocol == SFTP:
        asyncio.run(_send_sftp(source, destination, address, progress, note))
    else:
        _send_ftp(source, destination, address, progress, note)


# -- FTP and FTPS --------------------------------------------------------------------------------------
def _send_ftp(source: Outgoing, destination: Destination, address: str, progress: Callable[[int], None],
              note: Callable[[str], None]) -> None:
    secure = destination.protocol == FTPS
    client: ftplib.FTP = ftplib.FTP_TLS(context=ssl.create_default_context(), timeout=destination.timeout) \
        if secure else ftplib.FTP(timeout=destination.timeout)
    step = f"connecting to {destination.shown}"
    try:
        client.connect(address, destination.port)
        client.host = destination.host  # the name TLS checks the certificate against (the address is pinned)
        step = "logging in"
        client.login(destination.user or "anonymous", destination.password)
        if isinstance(client, ftplib.FTP_TLS):
            client.prot_p()
        note(f"connected to {destination.shown} as {destination.user or 'anonymous'}"
             + (" over TLS" if secure else ""))
        step = f"opening the folder {destination.folder}"
        _enter_folder(client, destination.folder)
        step = f"sending {source.name}"
        sent = 0

        def counted(block: bytes) -> None:
            nonlocal sent
            sent += len(block)
            progress(sent)

        client.storbinary(f"STOR {source.name}", source.stream, blocksize=BLOCK, callback=counted)
        step = "checking the size on the server"
        _check_size(client, source, note)
        client.quit()
    except ftplib.Error as e:
        raise ExportFailed(f"{destination.shown} refused while {step}: the server answered {_reply(e)}") from e
    except ssl.SSLCertVerificationError as e:
        raise ExportFailed(f"TLS with {destination.shown} failed while {step}: its certificate is not trusted "
                           f"({e.verify_message})") from e
    except ssl.SSLError as e:
        raise ExportFailed(f"TLS with {destination.shown} failed while {step}: {e.reason or e}") from e
    except (OSError, EOFError) as e:
        raise ExportFailed(f"{destination.shown}: {step} failed: {e or type(e).__name__}") from e
    finally:
        client.close()


def _reply(error: ftplib.Error) -> str:
    text = " ".join(str(error).split())
    return f'"{text[:300]}"' if text else type(error).__name__


def _enter_folder(client: ftplib.FTP, folder: str) -> None:
    """Change into ``folder`` (relative to the login folder unless absolute), making what is missing."""
    if not folder or folder in (".", "./"):
        return
    try:
        client.cwd(folder)
        return
    except ftplib.error_perm:
        pass
    if folder.startswith("/"):
        client.cwd("/")
    for part in [p for p in folder.split("/") if p and p != "."]:
        try:
            client.cwd(part)
        except ftplib.error_perm:
            client.mkd(part)
            client.cwd(part)


def _check_size(client: ftplib.FTP, source: Outgoing, note: Callable[[str], None]) -> None:
    expected = source.size
    try:
        size = client.size(source.name)
    except ftplib.error_perm:
        note("the server does not tell file sizes (SIZE): the transfer is not double-checked")
        return
    if size is not None and size != expected:
        raise ExportFailed(f"the server holds {size} bytes of {source.name} after the transfer, not {expected}")


# -- SFTP -----------------------------------------------------------------------------------------------
async def _send_sftp(source: Outgoing, destination: Destination, address: str, progress: Callable[[int], None],
                     note: Callable[[str], None]) -> None:
    import asyncssh

    step = f"connecting to {destination.shown}"
    try:
        # No known_hosts: the caller names a server of their own, whose key this server cannot know (the
        # fingerprint goes to the run log, to compare).
        async with asyncssh.connect(address, destination.port, username=destination.user,
                                    password=destination.password, known_hosts=None, client_keys=None,
                                    agent_path=None, preferred_auth="password,keyboard-interactive",
                                    connect_timeout=destination.timeout, login_timeout=destination.timeout) as conn:
            key = conn.get_server_host_key()
            note(f"connected to {destination.shown} as {destination.user} (host key "
                 f"{key.get_fingerprint('sha256') if key else 'unknown'})")
            step = "starting SFTP"
            async with conn.start_sftp_client() as sftp:
                target = posixpath.join(destination.folder, source.name) if destination.folder else source.name
                if destination.folder:
                    step = f"making the folder {destination.folder}"
                    await sftp.makedirs(destination.folder, exist_ok=True)
                step = f"sending {source.name}"
                async with sftp.open(target, "wb") as remote:
                    done = 0
                    while chunk := source.stream.read(SFTP_BLOCK):
                        await remote.write(chunk, done)
                        done += len(chunk)
                        progress(done)
                step = "checking the size on the server"
                size = (await sftp.stat(target)).size
                if size != source.size:
                    raise ExportFailed(f"the server holds {size} bytes of {source.name} after the transfer, "
                                       f"not {source.size}")
    except asyncssh.PermissionDenied as e:
        raise ExportFailed(f"{destination.shown} refused the login of {destination.user}: {e.reason}") from e
    except asyncssh.SFTPError as e:
        raise ExportFailed(f"{destination.shown} refused while {step}: the server answered "
                           f'"{e.reason}"') from e
    except asyncssh.Error as e:
        raise ExportFailed(f"{destination.shown}: {step} failed: {e.reason}") from e
    except (TimeoutError, OSError) as e:
        raise ExportFailed(f"{destination.shown}: {step} failed: {e or type(e).__name__}") from e
