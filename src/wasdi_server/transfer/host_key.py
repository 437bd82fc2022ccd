"""The SFTP service's host key: made at the first start, then kept, so clients recognise the server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wasdi_sdk.atomic_files import write_atomic


def load_or_create(path: Path) -> Any:
    """The Ed25519 host key at ``path``, generated there (mode 0600, written atomically) when missing."""
    import asyncssh

    if path.exists():
        return asyncssh.read_private_key(str(path))
    key = asyncssh.generate_private_key("ssh-ed25519", comment="wasdi-server sftp host key")
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, key.export_private_key(), mode=0o600)
    write_atomic(path.with_name(path.name + ".pub"), key.export_public_key())
    return key


def fingerprint(key: Any) -> str:
    """``SHA256:...``, as ``ssh-keygen -l`` and OpenSSH's first-connection prompt show it."""
    return str(key.convert_to_public().get_fingerprint("sha256"))
