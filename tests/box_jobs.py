"""Boxed jobs for tests: this test process's Python running a snippet, with what it needs to read."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from wasdi_server.launcher.box import Job
from wasdi_server.launcher.box.system import interpreter_paths


def python_job(code: str, *, read: Sequence[Path] = (), write: Sequence[Path] = (), cwd: Path = Path("/"),
               env: dict[str, str] | None = None, **options: Any) -> Job:
    """``python -c code`` as a box job (the interpreter readable, nothing else unless given)."""
    return Job([sys.executable, "-c", code], {"PATH": "/usr/bin:/bin", **(env or {})}, cwd,
               read=[*interpreter_paths(sys.executable), *read], write=write, **options)
