"""An app folder's ``pip.txt`` kept in step with ``wasdi apps packages --add/--remove/--upgrade``: a change made
on the server's environment only is dropped by the next deploy, which rebuilds from the folder's ``pip.txt``."""

from __future__ import annotations

import re
from pathlib import Path

from .errors import USAGE, CliError

FILE_NAME = "pip.txt"
_NAME_END = re.compile(r"[\s<>=!~\[;@]")


def _key(name: str) -> str:
    """A package name as the index compares them (PEP 503: case and runs of ``-_.`` do not matter)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _package_of(line: str) -> str | None:
    text = line.split("#", 1)[0].strip()
    if not text or text.startswith("-"):
        return None
    return _key(_NAME_END.split(text, 1)[0])


def record(folder: Path, action: str, package: str, version: str | None) -> tuple[Path, str]:
    """Apply ``action`` (``addPackage``, ``removePackage``, ``upgradePackage``) to ``folder/pip.txt``, written
    atomically; the file and what changed, as a sentence."""
    if not folder.is_dir():
        raise CliError(f"--dir {folder} is not a folder: give the app's folder (the one you deploy)", USAGE)
    path = folder / FILE_NAME
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    key = _key(package)
    kept = [line for line in lines if _package_of(line) != key]
    if action == "removePackage":
        change = f"removed {package} from {path}" if len(kept) < len(lines) else f"{package} was not in {path}"
    else:
        # add: the spec as given; upgrade: unpinned, so a rebuild takes the newest as the upgrade did
        spec = f"{package}=={version}" if action == "addPackage" and version else package
        kept.append(spec)
        change = f"wrote {spec} into {path}"
    from wasdi_sdk.atomic_files import write_atomic  # here: importing wasdi_sdk loads httpx and pydantic

    write_atomic(path, "".join(f"{line}\n" for line in kept))
    return path, change
