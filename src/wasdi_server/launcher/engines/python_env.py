"""The Python engine: one isolated virtual environment per app, built with ``uv`` (``venv`` + ``pip`` when
``uv`` cannot run), holding the official ``wasdi`` library and the packages of the app's ``pip.txt``; a
run is the one-shot executor (package data of the server) started with the environment's interpreter.

Nothing of the server's environment reaches the installer or the app beyond what they need: ``PATH``,
``HOME``, ``TMPDIR``, ``LANG`` (and ``UV_CACHE_DIR`` when the operator set it), plus the ``WASDI_*``
variables of a run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from .base import AppLayout, EngineError, Launch, LogLine, Runner
from .paths_util import remove_home
from .requirements import package_name, read_requirements

BUILD_TIMEOUT = 30 * 60
"""Seconds one installer command may take."""
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
INSTALLER_VARIABLES = frozenset({
    "UV_CACHE_DIR", "UV_INDEX_URL", "UV_EXTRA_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX", "UV_NATIVE_TLS",
    "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_CERT", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE",
    "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
})
"""What the installers (uv, pip) may read of the server's environment: how to reach the package index."""
NOT_APPLIED = {
    "packages.txt": "packages.txt lists system packages: they are not applied on this server (no system "
                    "package manager for apps); the build goes on",
    "env.yml": "env.yml describes a conda environment: it is not applied on this server (Python apps get a "
               "virtual environment with pip.txt); the build goes on",
}


def _uv_binary() -> str | None:
    try:
        import uv

        path = uv.find_uv_bin()
    except (ImportError, FileNotFoundError):
        path = shutil.which("uv") or ""
    if not path:
        return None
    try:
        subprocess.run([path, "--version"], capture_output=True, timeout=30, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return str(path)


def executor_path() -> Path:
    """The one-shot executor shipped with the server."""
    return Path(str(resources.files("wasdi_server") / "data" / "app_executor.py"))


@dataclass
class PythonEngine:
    """Python + pip apps in a per-app virtual environment."""

    library: str
    python: str = ""
    find_links: Sequence[str] = ()
    offline: bool = False
    family: str = "python"
    uv: str | None = field(default=None)

    def __post_init__(self) -> None:
        self.python = self.python or sys.executable
        if self.uv is None:
            self.uv = _uv_binary() or ""

    # -- the environment -------------------------------------------------------------------------------
    @staticmethod
    def venv(app: AppLayout) -> Path:
        return app.home / "venv"

    def interpreter(self, app: AppLayout) -> Path:
        return self.venv(app) / "bin" / "python"

    def _tool_env(self, app: AppLayout) -> dict[str, str]:
        env = {"PATH": SYSTEM_PATH, "HOME": os.environ.get("HOME", str(app.home)), "LANG": "C.UTF-8",
               "TMPDIR": os.environ.get("TMPDIR", "/tmp")}
        # How this machine reaches the package index: its trust store, proxies and index addresses (an
        # installer that cannot verify the index's certificate builds nothing).  Never the server's secrets.
        env.update({name: value for name, value in os.environ.items() if name in INSTALLER_VARIABLES})
        return env

    def _call(self, app: AppLayout, command: list[str], log: LogLine) -> None:
        try:
            done = subprocess.run(command, env=self._tool_env(app), cwd=app.home, capture_output=True, text=True,
                                  timeout=BUILD_TIMEOUT, check=False)
        except subprocess.TimeoutExpired as e:
            raise EngineError(f"{Path(command[0]).name} took longer than {BUILD_TIMEOUT // 60} minutes") from e
        except OSError as e:
            raise EngineError(f"cannot start {Path(command[0]).name}: {e.strerror}") from e
        for line in (done.stdout + done.stderr).splitlines():
            if line.strip():
                log(line)
        if done.returncode != 0:
            raise EngineError(f"{Path(command[0]).name} {command[1]} failed (exit code {done.returncode})")

    def _index_options(self) -> list[str]:
        options: list[str] = []
        for folder in self.find_links:
            options += ["--find-links", str(folder)]
        if self.offline:
            options += ["--offline", "--no-index"] if self.uv else ["--no-index"]
        return options

    def _install(self, app: AppLayout, specs: list[str], log: LogLine, *extra: str) -> None:
        if self.uv:
            command = [self.uv, "pip", "install", "--python", str(self.interpreter(app)), *self._index_options(),
                       *extra, *specs]
        else:
            command = [str(self.interpreter(app)), "-m", "pip", "install", "--disable-pip-version-check",
                       *self._index_options(), *extra, *specs]
        self._call(app, command, log)

    def deploy(self, app: AppLayout, log: LogLine) -> None:
        for file_name, why in NOT_APPLIED.items():
            if (app.folder / file_name).is_file():
                log(why)
        specs, refused = self._requirements(app)
        for line in refused:
            log(f"pip.txt: {line!r} is not a plain package spec (options, URLs and paths are not allowed): skipped")
        shutil.rmtree(self.venv(app), ignore_errors=True)
        app.home.mkdir(parents=True, exist_ok=True)
        if self.uv:
            log(f"creating the environment with uv ({self.python})")
            self._call(app, [self.uv, "venv", "--quiet", "--python", self.python, str(self.venv(app))], log)
        else:
            log(f"uv cannot run here: creating the environment with venv and pip ({self.python})")
            self._call(app, [self.python, "-m", "venv", str(self.venv(app))], log)
        log(f"installing {self.library}" + (f" and {', '.join(specs)}" if specs else ""))
        self._install(app, [self.library, *specs], log)
        log("environment ready")

    def _requirements(self, app: AppLayout) -> tuple[list[str], list[str]]:
        pip_txt = app.folder / "pip.txt"
        if not pip_txt.is_file():
            return [], []
        return read_requirements(pip_txt.read_text(encoding="utf-8", errors="replace"))

    def _require_environment(self, app: AppLayout) -> None:
        if not self.interpreter(app).exists():
            raise EngineError(f"the app {app.name} has no environment: deploy it first")

    def update_library(self, app: AppLayout, log: LogLine) -> None:
        self._require_environment(app)
        log(f"refreshing {self.library}")
        extra = ["--reinstall-package", package_name(self.library)] if self.uv else ["--force-reinstall", "--no-deps"]
        self._install(app, [self.library], log, *extra)

    def update_environment(self, app: AppLayout, action: str, package: str, log: LogLine) -> None:
        self._require_environment(app)
        if action == "removePackage":
            if package_name(package).lower() == package_name(self.library).lower():
                raise EngineError("the official library cannot be removed from an app's environment")
            log(f"removing {package}")
            if self.uv:
                command = [self.uv, "pip", "uninstall", "--python", str(self.interpreter(app)), package_name(package)]
            else:
                command = [str(self.interpreter(app)), "-m", "pip", "uninstall", "-y", package_name(package)]
            self._call(app, command, log)
            return
        log(f"{'upgrading' if action == 'upgradePackage' else 'adding'} {package}")
        self._install(app, [package], log, *(["--upgrade"] if action == "upgradePackage" else []))

    def packages(self, app: AppLayout) -> list[dict[str, str]]:
        self._require_environment(app)
        if self.uv:
            command = [self.uv, "pip", "list", "--python", str(self.interpreter(app)), "--format", "json"]
        else:
            command = [str(self.interpreter(app)), "-m", "pip", "list", "--disable-pip-version-check",
                       "--format", "json"]
        done = subprocess.run(command, env=self._tool_env(app), capture_output=True, text=True, timeout=120,
                              check=False)
        if done.returncode != 0:
            raise EngineError(f"cannot list the packages of {app.name}")
        try:
            rows = json.loads(done.stdout or "[]")
        except ValueError as e:
            raise EngineError(f"cannot read the package list of {app.name}") from e
        return [{"name": str(r.get("name")), "version": str(r.get("version"))} for r in rows if isinstance(r, dict)]

    def manager(self, app: AppLayout) -> dict[str, str]:
        command = [self.uv, "--version"] if self.uv else [str(self.interpreter(app)), "-m", "pip", "--version"]
        done = subprocess.run(command, env=self._tool_env(app), capture_output=True, text=True, timeout=60,
                              check=False)
        words = (done.stdout or "").split()
        return {"name": "uv" if self.uv else "pip", "version": words[1] if len(words) > 1 else ""}

    def run(self, app: AppLayout, launch: Launch, runner: Runner) -> int:
        self._require_environment(app)
        venv_bin = str(self.venv(app) / "bin")
        env = {"PATH": f"{venv_bin}:{SYSTEM_PATH}", "HOME": str(launch.scratch), "TMPDIR": str(launch.scratch),
               "LANG": "C.UTF-8", "PYTHONUNBUFFERED": "1", "VIRTUAL_ENV": str(self.venv(app)),
               **launch.variables, **launch.extra}
        return runner([str(self.interpreter(app)), str(executor_path())], env, app.folder)

    def delete(self, app: AppLayout) -> None:
        remove_home(app)
