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

from wasdi_server.services.login_throttle import LoginThrottle
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
