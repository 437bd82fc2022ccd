"""The package cache servers before issue 27 shared between all apps (``app-environments/.package-cache``), undone.

uv hard-linked that cache's files into every environment, so two apps' environments built from it share the very
inodes of the files they import: a build of one (a package action runs its packages' code with write on its own
environment) could still change another's, until each is deployed again.  On the first start with private caches
the server gives every file of every environment that has another link a copy of its own (written beside it,
then put in its place), then removes the old cache; a server stopped half-way does the rest at its next start.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from wasdi_sdk.atomic_files import replace_durably

LEGACY_CACHE = ".package-cache"


def unshare(environments: Path) -> int:
    """Give each hard-linked file of the environments under ``environments`` an inode of its own, then remove
    the old shared cache; the number of files copied (0 when there was no shared cache)."""
    shared = environments / LEGACY_CACHE
    if not shared.is_dir():
        return 0
    copied = 0
    for app in sorted(environments.iterdir()):
        venv = app / "venv"
        if app.name == LEGACY_CACHE or app.is_symlink() or not venv.is_dir() or venv.is_symlink():
            continue
        for folder, _, files in os.walk(venv):
            for name in files:
                path = Path(folder) / name
                if _unlink_shared(path):
                    copied += 1
    shutil.rmtree(shared, ignore_errors=True)
    return copied


def _unlink_shared(path: Path) -> bool:
    info = path.lstat()
    if not path.is_file() or path.is_symlink() or info.st_nlink < 2:
        return False
    own = path.with_name(f".{path.name}.unshared")
    shutil.copy2(path, own, follow_symlinks=False)
    replace_durably(own, path)
    return True
