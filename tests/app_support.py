"""What the app tests share: a local wheelhouse the app environments install from (built once, kept between
runs, so tests never build an environment from the network), and app zips made from source text."""

from __future__ import annotations

import functools
import io
import os
import subprocess
import sys
import zipfile
from pathlib import Path

from tests import environment

LIBRARY = "wasdi==0.8.7.8"
EXTRA_PACKAGE = "six==1.16.0"
"""A tiny package for the pip.txt tests."""
WHEELHOUSE = Path(os.environ.get("WASDI_TEST_WHEELHOUSE", Path.home() / ".cache" / "wasdi-toolkit-tests" / "wheels"))


@functools.cache
def wheelhouse() -> Path:
    """The folder of wheels (the official library, its dependencies and ``six``), downloaded only once."""
    needed = ("wasdi-0.8.7.8", "six-1.16.0", "requests-")
    present = [p.name for p in WHEELHOUSE.glob("*.whl")] if WHEELHOUSE.is_dir() else []
    if not all(any(name.startswith(n) for name in present) for n in needed):
        WHEELHOUSE.mkdir(parents=True, exist_ok=True)
        done = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:",
                               "-d", str(WHEELHOUSE), LIBRARY, EXTRA_PACKAGE], capture_output=True, text=True,
                              timeout=600, check=False)
        if done.returncode != 0:
            environment.unavailable(
                f"no local wheels for the app environments and no index to fetch them: {done.stderr[-300:]}")
    return WHEELHOUSE


def app_settings() -> dict[str, object]:
    """Server settings that build app environments offline from the wheelhouse."""
    return {"apps_find_links": [str(wheelhouse())], "apps_offline": True}


def app_zip(files: dict[str, str], *, top: str = "") -> bytes:
    """A zip of ``files`` (name -> text), optionally all under one top folder."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        for name, text in files.items():
            bundle.writestr(f"{top}{name}", text)
    return buffer.getvalue()


HELLO_APP = '''
import wasdi


def run():
    name = wasdi.getParameter("name", "world")
    wasdi.wasdiLog(f"hello {name}")
    wasdi.setPayload({"greeting": f"hello {name}"})
'''
