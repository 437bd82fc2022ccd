"""The Python engine: one isolated virtual environment per app, built with ``uv`` (``venv`` + ``pip`` when
``uv`` cannot run), holding the official ``wasdi`` library and the packages of the app's ``pip.txt``; a
run is the one-shot executor (package data of the server) started with the environment's interpreter.

Every command that touches an app's environment runs in the box (``launcher.box``): installing a package
runs its build code, and starting the environment's interpreter runs the ``.pth`` files of whatever is
installed.  A build may write the app's environment folder (its ``venv``, and its own package cache beside
it), read the interpreter and the local wheel folders, and reach the package index through the box's proxy door
(an offline build gets no proxy door); a run may read its app and environment and write its scratch and workspace
folders.

Each app has a package cache of its own, never shared: a build runs its packages' code, which may write the
cache it is given, and the installer hard-links the cached files into the environment; a cache shared by every
app let one build change the very files every other app imports.  A private cache costs nothing on a second
deploy of the same app (its packages are in it) and is removed with the app.

Nothing of the server's environment reaches the installer or the app beyond what they need: ``PATH``,
``HOME``, ``TMPDIR``, ``LANG``, the installer's index, proxy and certificate variables, plus the
``WASDI_*`` variables of a run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from urllib.parse import urlsplit

from ...domains.apps.engines import AppLayout, EngineError, LogLine
from ...domains.apps.requirements import package_name, read_requirements
from ..box import Box, BoxUnavailable, Job
from ..box.system import interpreter_paths
from .base import Launch, Runner
from .paths_util import remove_home

BUILD_TIMEOUT = 30 * 60
"""Seconds one installer command may take."""
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
INSTALLER_VARIABLES = frozenset({
    "UV_INDEX_URL", "UV_EXTRA_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX", "UV_NATIVE_TLS",
    "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_CERT", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE",
    "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
})
"""What the installers (uv, pip) may read of the server's environment: how to reach the package index."""
CERTIFICATE_VARIABLES = ("SSL_CERT_FILE", "SSL_CERT_DIR", "PIP_CERT", "REQUESTS_CA_BUNDLE")
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")
NOT_APPLIED = {
    "packages.txt": "packages.txt lists system packages: they are not applied on this server (no system "
                    "package manager for apps); the build goes on",
    "env.yml": "env.yml describes a conda environment: it is not applied on this server (Python apps get a "
               "virtual environment with pip.txt); the build goes on",
}


NAME_LOOKUP_FAILURES = ("Temporary failure in name resolution", "failed to lookup address",
                        "Name or service not known", "getaddrinfo failed")
NAME_LOOKUP_HINT = ("the build could not look up the package index's address: a build reaches the index only through "
                    "the box's proxy, which looks names up with the server's own resolver (its log line above says "
                    "which name); check that the server can resolve it, or install offline instead (apps_offline "
                    "with apps_find_links: docs/server.md)")


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


def _proxy_ports() -> list[int]:
    """The ports of the proxies the installers are told to use (they must be reachable from the box)."""
    ports = []
    for name in PROXY_VARIABLES:
        value = os.environ.get(name, "")
        if value:
            try:
                parts = urlsplit(value if "://" in value else f"http://{value}")
                ports.append(parts.port or (443 if parts.scheme == "https" else 80))
            except ValueError:
                continue
    return ports


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
    box: Box = field(default_factory=Box)
    family: str = "python"
    uv: str | None = field(default=None)

    def __post_init__(self) -> None:
        # The interpreter the server's own (virtual) environment was made from: the apps' environments need
        # nothing of the server's packages, and their builds and runs may read only what they stand on.
        self.python = self.python or getattr(sys, "_base_executable", "") or sys.executable
        if self.uv is None:
            self.uv = _uv_binary() or ""

    # -- the environment -------------------------------------------------------------------------------
    @staticmethod
    def venv(app: AppLayout) -> Path:
        return app.home / "venv"

    def interpreter(self, app: AppLayout) -> Path:
        return self.venv(app) / "bin" / "python"

    @staticmethod
    def cache(app: AppLayout) -> Path:
        """The app's own package cache: only its builds write it, only its environment links to its files."""
        return app.home / "cache"

    @staticmethod
    def scratch(app: AppLayout) -> Path:
        """HOME and TMPDIR of the installers (source builds unpack there), emptied after each command."""
        return app.home / "tmp"

    def _tool_env(self, app: AppLayout) -> dict[str, str]:
        scratch = str(self.scratch(app))
        env = {"PATH": SYSTEM_PATH, "HOME": scratch, "LANG": "C.UTF-8", "TMPDIR": scratch}
        # How this machine reaches the package index: its trust store, proxies and index addresses (an
        # installer that cannot verify the index's certificate builds nothing).  Never the server's secrets.
        env.update({name: value for name, value in os.environ.items() if name in INSTALLER_VARIABLES})
        # uv looks for pyproject.toml and uv.toml in every folder above its working folder (the app's home,
        # inside the data directory): a data directory inside a project, as `make run` makes it, would have it
        # read a file the box hides, and fail; a build takes its settings from the server alone.
        env.update(UV_NO_CONFIG="1", UV_NO_PROJECT="1")
        env.update(UV_CACHE_DIR=str(self.cache(app)), PIP_CACHE_DIR=str(self.cache(app) / "pip"))
        return env

    def _build_job(self, app: AppLayout, command: list[str]) -> Job:
        env = self._tool_env(app)
        read = [*interpreter_paths(self.python), *(Path(f) for f in self.find_links)]
        read += [Path(os.environ[v]) for v in CERTIFICATE_VARIABLES if os.environ.get(v)]
        if self.uv:
            read.append(Path(self.uv))
        write = [app.home]
        return Job(command, env, app.home, read=read, write=write, connect_ports=_proxy_ports())

    def _box_run(self, app: AppLayout, command: list[str], on_output: LogLine, timeout: float,
                 stop: threading.Event | None = None) -> int:
        """Run an installer command in the box; its exit code (``EngineError`` when it could not run, or was
        ended because ``stop`` was set)."""
        job = self._build_job(app, command)
        for folder in job.write:
            folder.mkdir(parents=True, exist_ok=True)
        try:
            outcome = self.box.run(job, on_output=on_output, timeout=timeout, stop=stop)
        except BoxUnavailable as e:
            raise EngineError(str(e)) from e
        except OSError as e:
            raise EngineError(f"cannot start {Path(command[0]).name}: {e.strerror}") from e
        finally:
            shutil.rmtree(self.scratch(app), ignore_errors=True)
        limits = self.box.limits
        for name in outcome.limits:
            on_output(limits.explain(name))
        if outcome.timed_out:
            raise EngineError(f"{Path(command[0]).name} took longer than {timeout / 60:g} minutes")
        if outcome.stopped:
            raise EngineError(f"{Path(command[0]).name} was stopped")
        return outcome.code

    def _call(self, app: AppLayout, command: list[str], log: LogLine, stop: threading.Event | None = None) -> None:
        no_names: list[str] = []

        def watched(line: str) -> None:
            if not no_names and any(sign in line for sign in NAME_LOOKUP_FAILURES):
                no_names.append(line)
            log(line)

        code = self._box_run(app, command, watched, BUILD_TIMEOUT, stop)
        if code != 0:
            if no_names:
                log(NAME_LOOKUP_HINT)
            raise EngineError(f"{Path(command[0]).name} {command[1]} failed (exit code {code})")

    def _output(self, app: AppLayout, command: list[str], what: str, timeout: float) -> str:
        lines: list[str] = []
        if self._box_run(app, command, lines.append, timeout) != 0:
            raise EngineError(f"cannot {what} of {app.name}")
        return "\n".join(lines)

    def _index_options(self) -> list[str]:
        options: list[str] = []
        for folder in self.find_links:
            options += ["--find-links", str(folder)]
        if self.offline:
            options += ["--offline", "--no-index"] if self.uv else ["--no-index"]
        return options

    def _install(self, app: AppLayout, specs: list[str], log: LogLine, *extra: str,
                 stop: threading.Event | None = None) -> None:
        if self.uv:
            # Compiled now, while the environment may be written: a run may not write it, and would otherwise
            # compile every module it imports each time it starts (pip compiles by default).
            command = [self.uv, "pip", "install", "--python", str(self.interpreter(app)), "--compile-bytecode",
                       *self._index_options(), *extra, *specs]
        else:
            command = [str(self.interpreter(app)), "-m", "pip", "install", "--disable-pip-version-check",
                       *self._index_options(), *extra, *specs]
        self._call(app, command, log, stop)

    def deploy(self, app: AppLayout, log: LogLine, *, stop: threading.Event | None = None) -> None:
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
            self._call(app, [self.uv, "venv", "--quiet", "--python", self.python, str(self.venv(app))], log, stop)
        else:
            log(f"uv cannot run here: creating the environment with venv and pip ({self.python})")
            self._call(app, [self.python, "-m", "venv", str(self.venv(app))], log, stop)
        log(f"installing {self.library}" + (f" and {', '.join(specs)}" if specs else ""))
        self._install(app, [self.library, *specs], log, stop=stop)
        log("environment ready")

    def _requirements(self, app: AppLayout) -> tuple[list[str], list[str]]:
        pip_txt = app.folder / "pip.txt"
        if not pip_txt.is_file():
            return [], []
        return read_requirements(pip_txt.read_text(encoding="utf-8", errors="replace"))

    def _require_environment(self, app: AppLayout) -> None:
        if not self.interpreter(app).exists():
            raise EngineError(f"the app {app.name} has no environment: deploy it first")

    def update_library(self, app: AppLayout, log: LogLine, *, stop: threading.Event | None = None) -> None:
        self._require_environment(app)
        log(f"refreshing {self.library}")
        extra = ["--reinstall-package", package_name(self.library)] if self.uv else ["--force-reinstall", "--no-deps"]
        self._install(app, [self.library], log, *extra, stop=stop)

    def update_environment(self, app: AppLayout, action: str, package: str, log: LogLine, *,
                           stop: threading.Event | None = None) -> None:
        self._require_environment(app)
        if action == "removePackage":
            if package_name(package).lower() == package_name(self.library).lower():
                raise EngineError("the official library cannot be removed from an app's environment")
            log(f"removing {package}")
            if self.uv:
                command = [self.uv, "pip", "uninstall", "--python", str(self.interpreter(app)), package_name(package)]
            else:
                command = [str(self.interpreter(app)), "-m", "pip", "uninstall", "-y", package_name(package)]
            self._call(app, command, log, stop)
            return
        log(f"{'upgrading' if action == 'upgradePackage' else 'adding'} {package}")
        self._install(app, [package], log, *(["--upgrade"] if action == "upgradePackage" else []), stop=stop)

    def packages(self, app: AppLayout) -> list[dict[str, str]]:
        self._require_environment(app)
        if self.uv:
            command = [self.uv, "pip", "list", "--python", str(self.interpreter(app)), "--format", "json"]
        else:
            command = [str(self.interpreter(app)), "-m", "pip", "list", "--disable-pip-version-check",
                       "--format", "json"]
        text = self._output(app, command, "list the packages", 120)
        listing = next((line for line in text.splitlines() if line.startswith("[")), "[]")
        try:
            rows = json.loads(listing)
        except ValueError as e:
            raise EngineError(f"cannot read the package list of {app.name}") from e
        return [{"name": str(r.get("name")), "version": str(r.get("version"))} for r in rows if isinstance(r, dict)]

    def manager(self, app: AppLayout) -> dict[str, str]:
        if self.uv:
            # uv itself, not the app's environment: nothing of the app runs.
            done = subprocess.run([self.uv, "--version"], env={"PATH": SYSTEM_PATH}, capture_output=True, text=True,
                                  timeout=60, check=False)
            words = (done.stdout or "").split()
        else:
            try:
                words = self._output(app, [str(self.interpreter(app)), "-m", "pip", "--version"],
                                     "read the package manager", 60).split()
            except EngineError:
                words = []
        return {"name": "uv" if self.uv else "pip", "version": words[1] if len(words) > 1 else ""}

    def run(self, app: AppLayout, launch: Launch, runner: Runner) -> int:
        self._require_environment(app)
        venv_bin = str(self.venv(app) / "bin")
        env = {"PATH": f"{venv_bin}:{SYSTEM_PATH}", "HOME": str(launch.scratch), "TMPDIR": str(launch.scratch),
               "LANG": "C.UTF-8", "PYTHONUNBUFFERED": "1", "VIRTUAL_ENV": str(self.venv(app)),
               **launch.variables, **launch.extra}
        read = [app.folder, self.venv(app), executor_path(), *interpreter_paths(self.interpreter(app))]
        return runner(Job([str(self.interpreter(app)), str(executor_path())], env, app.folder, read=read,
                          write=[launch.scratch, launch.workspace], connect_ports=launch.api_ports))

    def delete(self, app: AppLayout) -> None:
        remove_home(app)
