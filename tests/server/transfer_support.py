"""Helpers of the transfer tests: the SFTP service on a free port, upload accounts, real SFTP clients."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import asyncssh
from tests.conftest import Person, Server

from wasdi_server.domains.accounts.login_throttle import LoginThrottle
from wasdi_server.transfer.sftp_server import SftpService

T = TypeVar("T")
OPENSSH_SFTP = shutil.which("sftp")


@contextmanager
def sftp_service(server: Server, *, quota_bytes: int | None = None) -> Iterator[SftpService]:
    """The SFTP service of ``server``'s accounts on 127.0.0.1 and a free port, as ``wasdi-server serve`` runs it."""
    service = SftpService(server.services.uploads, host="127.0.0.1", port=0,
                          host_key_path=server.settings.sftp_host_key_path,
                          quota_bytes=server.settings.sftp_quota_bytes if quota_bytes is None else quota_bytes,
                          throttle=LoginThrottle())
    service.start()
    try:
        yield service
    finally:
        service.stop()
        server.services.uploads.session_enders.remove(service.end_sessions)


def create_account(server: Server, who: Person, email: str | None = None) -> str:
    """Create ``who``'s upload account through the API; the password it mailed."""
    address = email or who.user_id
    r = server.post("/auth/upload/createaccount", who, body=address, content_type="text/plain")
    assert r.status_code == 200, r.text
    return mailed_password(server, address)


def mailed_password(server: Server, address: str) -> str:
    mail = [m for m in server.mails() if m["To"] == address][-1]
    found = re.search(r"PASSWORD: (\S+)", mail.get_content())
    assert found, mail.get_content()
    return found.group(1)


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


def connect(service: SftpService, user: str, password: str) -> Any:
    """An AsyncSSH client connection (use with ``async with``): password only, no keys, no agent."""
    return asyncssh.connect("127.0.0.1", service.port, username=user, password=password, known_hosts=None,
                            client_keys=None, agent_path=None, preferred_auth="password")


def openssh_sftp(service: SftpService, user: str, password: str, commands: str, workdir: Path,
                 timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
    """OpenSSH's ``sftp`` running ``commands`` (one a line), the password given through ``SSH_ASKPASS``."""
    assert OPENSSH_SFTP
    askpass = workdir / "askpass.sh"
    askpass.write_text(f"#!/bin/sh\nprintf '%s\\n' '{password}'\n")
    askpass.chmod(0o700)
    env = {**os.environ, "SSH_ASKPASS": str(askpass), "SSH_ASKPASS_REQUIRE": "force", "DISPLAY": ":0"}
    return subprocess.run(
        [OPENSSH_SFTP, "-P", str(service.port), "-oStrictHostKeyChecking=accept-new",
         f"-oUserKnownHostsFile={workdir / 'known_hosts'}", "-oBatchMode=no", "-oPreferredAuthentications=password",
         "-oNumberOfPasswordPrompts=1", "-b", "-", f"{user}@127.0.0.1"],
        input=commands, text=True, capture_output=True, env=env, timeout=timeout, check=False)


def pattern_file(path: Path, size: int) -> Path:
    """``size`` bytes in which every MiB differs (so a misplaced block changes the digest)."""
    block = os.urandom(1 << 20)
    with open(path, "wb") as handle:
        written = 0
        index = 0
        while written < size:
            chunk = (index.to_bytes(8, "big") + block[8:])[: size - written]
            handle.write(chunk)
            written += len(chunk)
            index += 1
    return path


def digest(path: Path) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class FtpServer:
    """A real FTP server (pyftpdlib) on 127.0.0.1 and a free port, serving ``home`` to one user; with
    ``certificate`` (a PEM of key and certificate) it is an FTPS server that requires TLS on both channels."""

    def __init__(self, home: Path, user: str, password: str, certificate: Path | None = None) -> None:
        import threading

        from pyftpdlib.authorizers import DummyAuthorizer
        from pyftpdlib.handlers import FTPHandler, TLS_FTPHandler
        from pyftpdlib.servers import FTPServer as Listener

        authorizer = DummyAuthorizer()
        authorizer.add_user(user, password, str(home), perm="elradfmwMT")
        base: Any = TLS_FTPHandler if certificate else FTPHandler
        handler = type("Handler", (base,), {"authorizer": authorizer, "banner": "test ftp ready",
                                            "auth_failed_timeout": 0.05})
        if certificate:
            handler.certfile = str(certificate)
            handler.tls_control_required = True
            handler.tls_data_required = True
        self.listener = Listener(("127.0.0.1", 0), handler)
        self.port = int(self.listener.address[1])
        self.thread = threading.Thread(target=self.listener.serve_forever, kwargs={"timeout": 0.05},
                                       name="test-ftp", daemon=True)

    def __enter__(self) -> FtpServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.listener.close_all()
        self.thread.join(10)


def self_signed_certificate(folder: Path) -> Path:
    """A PEM holding a new key and a certificate for 127.0.0.1 (also usable as the CA file that trusts it)."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    path = folder / "ftps.pem"
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()) + cert.public_bytes(serialization.Encoding.PEM))
    return path
