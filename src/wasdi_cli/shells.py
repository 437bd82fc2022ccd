"""Which server this shell last logged in to, so a command sent elsewhere can say so.

"This shell" is the terminal session the command runs in: its POSIX session id (``os.getsid(0)``, the process id
of the session's leader, usually the login shell of a terminal window or tab; ``ps -o sid=`` shows it).  Every
command typed in one terminal, its subshells, pipelines and the scripts it starts share it; another terminal
window is another shell.  Where there are no sessions (Windows) the parent process stands for it.

The record is ``<config dir>/shells.toml``, one table per session id, written atomically with mode 0600; an entry
whose session leader has ended is dropped at the next login, so a reused id does not inherit an old login.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from .profiles import config_dir, dumps_toml, normalize_url, write_private

FILE_NAME = "shells.toml"


@dataclass(frozen=True)
class LastLogin:
    """The server and profile of the last ``wasdi login`` typed in one shell."""

    base_url: str
    profile: str


def shell_id() -> int:
    """The id of this shell: the session id, else the parent process id."""
    getsid = getattr(os, "getsid", None)
    if getsid is not None:
        try:
            return int(getsid(0))
        except OSError:
            pass
    return os.getppid()


def _path() -> Path:
    return config_dir() / FILE_NAME


def _load(path: Path) -> dict[str, dict[str, str]]:
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError):
        return {}  # a lost or damaged record only costs a hint, never a command
    return {key: value for key, value in data.items() if isinstance(value, dict)}


def _alive(session: str) -> bool:
    try:
        os.kill(int(session), 0)
    except (ValueError, ProcessLookupError):
        return False
    except (PermissionError, OSError):
        return True  # it exists, owned by someone else (or the platform cannot tell): keep it
    return True


def last_login() -> LastLogin | None:
    """This shell's last login, if it made one."""
    entry = _load(_path()).get(str(shell_id()))
    if not entry or not isinstance(entry.get("base_url"), str) or not isinstance(entry.get("profile"), str):
        return None
    return LastLogin(normalize_url(entry["base_url"]), entry["profile"])


def record_login(base_url: str, profile: str) -> None:
    """Remember that this shell last logged in to ``base_url`` with ``profile``."""
    path = _path()
    entries = {key: value for key, value in _load(path).items() if _alive(key)}
    entries[str(shell_id())] = {"base_url": normalize_url(base_url), "profile": profile}
    write_private(path, dumps_toml(entries))
